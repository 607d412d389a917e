//===- ExecMemory.cpp - loads, stores, cp.async, atomics, mapa ------------===//
//
// Every access is checked: global ones against GlobalMemory (the range of
// the last hit is cached per worker, so a loop over one buffer takes the
// lock once), shared ones against the CTA's shared size (or, for a
// .shared::cluster address from mapa, the target CTA's), local and param
// ones against theirs. Accesses must be naturally aligned, as on hardware.
// cp.async copies at once: the wait instructions then have nothing to wait
// for.
//
//===----------------------------------------------------------------------===//

#include "Exec.h"
#include "PtxDecode.h"

#include "qfuse/sim/GlobalMemory.h"

#include <cstdio>

namespace qfuse::sim::ptx {

uint8_t *Exec::globalSlow(uint64_t p, size_t n) {
  uintptr_t base;
  size_t size;
  const void *ptr = reinterpret_cast<const void *>(p);
  if (GlobalMemory::instance().rangeOf(ptr, n, base, size)) {
    okBase = base;
    okEnd = base + size;
    return reinterpret_cast<uint8_t *>(p);
  }
  error = "out-of-bounds global access of " + std::to_string(n) +
          " bytes: " + GlobalMemory::instance().describe(ptr);
  return nullptr;
}

uint8_t *Exec::sharedSlow(uint64_t a, size_t n) {
  uint64_t rank = a >> kRankShift;
  uint64_t offset = a & kOffsetMask;
  Cta *target = cta;
  if (rank != 0) {
    if (rank - 1 >= group->ctas.size()) {
      char text[160];
      std::snprintf(text, sizeof text,
                    "shared::cluster address 0x%llx names CTA rank %llu of a "
                    "cluster of %zu",
                    (unsigned long long)a, (unsigned long long)(rank - 1),
                    group->ctas.size());
      error = text;
      return nullptr;
    }
    target = group->ctas[rank - 1];
  }
  if (rank == 0 || offset + n > target->sharedBytes) {
    error = "out-of-bounds shared access of " + std::to_string(n) +
            " bytes at offset " + std::to_string(offset) +
            (rank ? " of CTA rank " + std::to_string(rank - 1) : "") +
            " (shared memory is " + std::to_string(target->sharedBytes) +
            " bytes)";
    return nullptr;
  }
  return target->shared + offset;
}

uint8_t *Exec::local(uint64_t a, size_t n) {
  if (a + n <= fn->localBytes && a + n >= a)
    return t->local + a;
  error = "out-of-bounds local access of " + std::to_string(n) +
          " bytes at offset " + std::to_string(a) + " (local memory is " +
          std::to_string(fn->localBytes) + " bytes)";
  return nullptr;
}

const uint8_t *Exec::param(uint64_t a, size_t n) {
  if (a + n <= paramBytes && a + n >= a)
    return params + a;
  error = "out-of-bounds param access of " + std::to_string(n) +
          " bytes at offset " + std::to_string(a) + " (parameters are " +
          std::to_string(paramBytes) + " bytes)";
  return nullptr;
}

uint8_t *Exec::memory(Space s, uint64_t a, size_t n, bool write) {
  switch (s) {
  case Space::Global:
  case Space::Const:
    return global(a, n);
  case Space::Shared:
  case Space::Cluster:
    return shared(a, n);
  case Space::Local:
    return local(a, n);
  case Space::Param:
    if (write) {
      error = "store to the parameter space";
      return nullptr;
    }
    return const_cast<uint8_t *>(param(a, n));
  case Space::Generic:
    break;
  }
  uint64_t window = a & kWindowMask;
  if (window == kSharedWindow)
    return shared(a & ~kWindowMask, n);
  if (window == kLocalWindow)
    return local(a & ~kWindowMask, n);
  return global(a, n);
}

namespace {

template <Space S> inline uint8_t *at(Exec &x, uint64_t a, size_t n,
                                      bool write) {
  if constexpr (S == Space::Shared)
    return x.shared(a, n);
  else if constexpr (S == Space::Global)
    return x.global(a, n);
  else
    return x.memory(S, a, n, write);
}

inline bool misaligned(Exec &x, uint64_t a, size_t n) {
  if ((a & (n - 1)) == 0)
    return false;
  x.error = "misaligned access of " + std::to_string(n) + " bytes at 0x" +
            [&] {
              char text[24];
              std::snprintf(text, sizeof text, "%llx", (unsigned long long)a);
              return std::string(text);
            }();
  return true;
}

// ld: op[0] the address base, op[1..vec] the destinations.
template <Space S, int W, bool SX> bool load(Exec &x, const Instr &in) {
  uint64_t a = x.r[in.op[0]] + uint64_t(in.imm);
  size_t n = size_t(W) * in.vec;
  if (misaligned(x, a, n))
    return false;
  const uint8_t *p = at<S>(x, a, n, false);
  if (!p)
    return false;
  for (unsigned i = 0; i < in.vec; ++i) {
    uint64_t v = 0;
    std::memcpy(&v, p + W * i, W);
    if (SX && W < 8 && (v >> (8 * W - 1) & 1))
      v |= ~0ull << (8 * W);
    x.r[in.op[1 + i]] = v;
  }
  return true;
}

// st: op[0] the address base, op[1..vec] the sources.
template <Space S, int W> bool store(Exec &x, const Instr &in) {
  uint64_t a = x.r[in.op[0]] + uint64_t(in.imm);
  size_t n = size_t(W) * in.vec;
  if (misaligned(x, a, n))
    return false;
  uint8_t *p = at<S>(x, a, n, true);
  if (!p)
    return false;
  for (unsigned i = 0; i < in.vec; ++i)
    std::memcpy(p + W * i, &x.r[in.op[1 + i]], W);
  return true;
}

template <Space S> Handler loadOf(unsigned w, bool sx) {
  switch (w) {
  case 1: return sx ? load<S, 1, true> : load<S, 1, false>;
  case 2: return sx ? load<S, 2, true> : load<S, 2, false>;
  case 4: return sx ? load<S, 4, true> : load<S, 4, false>;
  case 8: return load<S, 8, false>;
  default: return nullptr;
  }
}
template <Space S> Handler storeOf(unsigned w) {
  switch (w) {
  case 1: return store<S, 1>;
  case 2: return store<S, 2>;
  case 4: return store<S, 4>;
  case 8: return store<S, 8>;
  default: return nullptr;
  }
}

// cp.async [dst], [src], cp-size[, src-size]: op[0] dst base (imm), op[1]
// src base (aux = its offset), op[2] src-size (kNone: all).
bool cpAsync(Exec &x, const Instr &in) {
  uint64_t dst = x.r[in.op[0]] + uint64_t(in.imm);
  uint64_t src = x.r[in.op[1]] + uint64_t(int64_t(int32_t(in.aux)));
  uint32_t size = in.width;
  uint32_t srcSize = in.op[2] == kNone ? size : uint32_t(x.r[in.op[2]]);
  if (srcSize > size)
    srcSize = size;
  if (misaligned(x, dst, size))
    return false;
  uint8_t *d = x.shared(dst, size);
  if (!d)
    return false;
  if (srcSize) {
    const uint8_t *s = x.global(src, srcSize);
    if (!s)
      return false;
    std::memcpy(d, s, srcSize);
  }
  std::memset(d + srcSize, 0, size - srcSize);
  return true;
}

Space spaceOf(const Parts &p) {
  if (p.has("global"))
    return Space::Global;
  if (p.has("shared::cluster"))
    return Space::Cluster;
  if (p.has("shared") || p.has("shared::cta"))
    return Space::Shared;
  if (p.has("param") || p.has("param::entry") || p.has("param::func"))
    return Space::Param;
  if (p.has("local"))
    return Space::Local;
  if (p.has("const"))
    return Space::Const;
  return Space::Generic;
}

Decoded decodeLdSt(Decoder &d, const Statement &s, const Parts &p,
                   Instr &in) {
  bool isLoad = p[0] != "st";
  Ty t = p.lastType();
  if (!d.count(s, 2) || t == Ty::None)
    return Decoded::Error;
  in.space = spaceOf(p);
  in.vec = p.has("v2") ? 2 : p.has("v4") ? 4 : p.has("v8") ? 8 : 1;
  in.width = uint8_t(tyBytes(t));
  const Operand &addr = s.ops[isLoad ? 1 : 0];
  const Operand &val = s.ops[isLoad ? 0 : 1];
  if (!d.address(addr, in, 0))
    return Decoded::Error;
  if (in.vec > 1 && (val.kind != Operand::Vector || val.elems.size() != in.vec))
    return Decoded::Error;
  for (unsigned i = 0; i < in.vec; ++i) {
    const Operand &e = in.vec > 1 ? val.elems[i] : val;
    in.op[1 + i] = isLoad ? d.dst(e) : d.src(e, t);
  }
  bool sx = tySigned(t);
  bool shared = in.space == Space::Shared;
  bool global = in.space == Space::Global;
  if (isLoad)
    in.fn = shared   ? loadOf<Space::Shared>(in.width, sx)
            : global ? loadOf<Space::Global>(in.width, sx)
                     : loadOf<Space::Generic>(in.width, sx);
  else
    in.fn = shared   ? storeOf<Space::Shared>(in.width)
            : global ? storeOf<Space::Global>(in.width)
                     : storeOf<Space::Generic>(in.width);
  if (!shared && !global) {
    // Generic handlers take the space from the instruction.
    Space sp = in.space;
    if (isLoad)
      in.fn = sp == Space::Generic ? in.fn
              : sp == Space::Param ? loadOf<Space::Param>(in.width, sx)
              : sp == Space::Local ? loadOf<Space::Local>(in.width, sx)
              : sp == Space::Cluster ? loadOf<Space::Cluster>(in.width, sx)
                                     : loadOf<Space::Const>(in.width, sx);
    else
      in.fn = sp == Space::Generic ? in.fn
              : sp == Space::Local ? storeOf<Space::Local>(in.width)
              : sp == Space::Cluster ? storeOf<Space::Cluster>(in.width)
              : sp == Space::Param ? storeOf<Space::Param>(in.width)
                                   : storeOf<Space::Const>(in.width);
  }
  return in.fn && d.error.empty() ? Decoded::Ok : Decoded::Error;
}

Decoded decodeCpAsync(Decoder &d, const Statement &s, const Parts &p,
                      Instr &in) {
  // A trailing cache policy operand is a hint.
  size_t nops = s.ops.size() - (p.has("L2::cache_hint") ? 1 : 0);
  if (nops < 3)
    return Decoded::Error;
  Instr src;
  if (!d.address(s.ops[0], in, 0) || !d.address(s.ops[1], src, 0))
    return Decoded::Error;
  in.op[1] = src.op[0];
  in.aux = uint32_t(int32_t(src.imm));
  Number n;
  if (s.ops[2].kind != Operand::Number ||
      !parseNumber(s.ops[2].text, false, n))
    return Decoded::Error;
  in.width = uint8_t(n.bits);
  in.op[2] = kNone;
  if (nops >= 4 && s.ops[3].kind != Operand::Name &&
      s.ops[3].kind != Operand::Number)
    return Decoded::Error;
  if (nops >= 4)
    in.op[2] = d.src(s.ops[3], Ty::U32);
  in.fn = cpAsync;
  return d.error.empty() ? Decoded::Ok : Decoded::Error;
}

} // namespace

Decoded decodeAtomic(Decoder &d, const Statement &s, const Parts &p,
                     Instr &in);
Decoded decodeMapa(Decoder &d, const Statement &s, const Parts &p,
                   Instr &in);

Decoded decodeMemory(Decoder &d, const Statement &s, const Parts &p,
                     Instr &in) {
  std::string_view op = p[0];
  if (op == "ld" || op == "ldu" || op == "st")
    return decodeLdSt(d, s, p, in);
  if (op == "cp" && p.size() > 2 && p[1] == "async" &&
      (p[2] == "ca" || p[2] == "cg"))
    return decodeCpAsync(d, s, p, in);
  if (op == "atom" || op == "red")
    return decodeAtomic(d, s, p, in);
  if (op == "mapa")
    return decodeMapa(d, s, p, in);
  return Decoded::NotMine;
}

} // namespace qfuse::sim::ptx
