//===- ExecAtomic.cpp - atom, red and mapa --------------------------------===//
//
// Atomics are compare-exchange loops on host memory, so that CTAs run on
// several host threads still see each other's updates atomically (global
// memory); shared-memory atomics take the same path, which costs nothing
// there. mapa tags a shared address with the target CTA's rank.
//
//===----------------------------------------------------------------------===//

#include "Exec.h"
#include "qfuse/sim/Half.h"
#include "PtxDecode.h"

#include <cmath>

namespace qfuse::sim::ptx {
namespace {

enum AtomOp : uint8_t { Add, Min, Max, Exch, Cas, And, Or, Xor, Inc, Dec };

template <class T> T apply(uint8_t op, T old, T b, T c) {
  switch (op) {
  case Add: return T(old + b);
  case Min: return old < b ? old : b;
  case Max: return old > b ? old : b;
  case Exch: return b;
  case Cas: return old == b ? c : old;
  case Inc:
    if constexpr (std::is_integral_v<T>)
      return old >= b ? T(0) : T(old + 1);
    break;
  case Dec:
    if constexpr (std::is_integral_v<T>)
      return (old == 0 || old > b) ? b : T(old - 1);
    break;
  case And:
    if constexpr (std::is_integral_v<T>)
      return T(old & b);
    break;
  case Or:
    if constexpr (std::is_integral_v<T>)
      return T(old | b);
    break;
  case Xor:
    if constexpr (std::is_integral_v<T>)
      return T(old ^ b);
    break;
  }
  return old;
}

uint32_t applyHalf2(uint8_t op, uint32_t old, uint32_t b, bool bf) {
  uint32_t r = 0;
  for (int lane = 0; lane < 2; ++lane) {
    uint16_t o = uint16_t(old >> (16 * lane)), v = uint16_t(b >> (16 * lane));
    double a = bf ? bf16ToDouble(o) : halfToDouble(o);
    double w = bf ? bf16ToDouble(v) : halfToDouble(v);
    double s = op == Add ? a + w : op == Min ? std::fmin(a, w) : std::fmax(a, w);
    r |= uint32_t(bf ? bf16FromDouble(s) : halfFromDouble(s)) << (16 * lane);
  }
  return r;
}

// op[0] dest (red: unused), op[1] address base (imm), op[2] b, op[3] c.
template <class T, class I> bool atomic(Exec &x, const Instr &in) {
  uint64_t a = x.r[in.op[1]] + uint64_t(in.imm);
  if (a & (sizeof(T) - 1)) {
    x.error = "misaligned atomic";
    return false;
  }
  uint8_t *p = x.memory(in.space, a, sizeof(T), true);
  if (!p)
    return false;
  I *q = reinterpret_cast<I *>(p);
  T b = get<T>(x, in.op[2]), c = get<T>(x, in.op[3]);
  I old = __atomic_load_n(q, __ATOMIC_SEQ_CST);
  T prev;
  for (;;) {
    std::memcpy(&prev, &old, sizeof(T));
    I next;
    if constexpr (sizeof(T) == 4 && std::is_same_v<I, uint32_t> &&
                  !std::is_floating_point_v<T>)
      next = in.flags ? applyHalf2(in.mode, uint32_t(old), uint32_t(b),
                                   in.flags == 2)
                      : I(apply<T>(in.mode, prev, b, c));
    else {
      T n = apply<T>(in.mode, prev, b, c);
      std::memcpy(&next, &n, sizeof(T));
    }
    if (__atomic_compare_exchange_n(q, &old, next, false, __ATOMIC_SEQ_CST,
                                    __ATOMIC_SEQ_CST))
      break;
  }
  if (in.op[0] != kNone)
    set<T>(x, in.op[0], prev);
  return true;
}

Handler pick(Ty t) {
  switch (t) {
  case Ty::U32: case Ty::B32: case Ty::F16x2: case Ty::BF16x2:
    return atomic<uint32_t, uint32_t>;
  case Ty::S32: return atomic<int32_t, uint32_t>;
  case Ty::U64: case Ty::B64: return atomic<uint64_t, uint64_t>;
  case Ty::S64: return atomic<int64_t, uint64_t>;
  case Ty::F32: return atomic<float, uint32_t>;
  case Ty::F64: return atomic<double, uint64_t>;
  default: return nullptr;
  }
}

bool mapa(Exec &x, const Instr &in) {
  uint64_t a = x.r[in.op[1]];
  uint64_t rank = uint32_t(x.r[in.op[2]]);
  uint64_t window = a & kWindowMask;
  x.r[in.op[0]] = window | (a & kOffsetMask) | ((rank + 1) << kRankShift);
  if (in.width == 4)
    x.r[in.op[0]] &= 0xffffffffull;
  return true;
}

} // namespace

Decoded decodeAtomic(Decoder &d, const Statement &s, const Parts &p,
                     Instr &in) {
  bool red = p[0] == "red";
  static const std::pair<std::string_view, AtomOp> ops[] = {
      {"add", Add}, {"min", Min}, {"max", Max}, {"exch", Exch},
      {"cas", Cas}, {"and", And}, {"or", Or},   {"xor", Xor},
      {"inc", Inc}, {"dec", Dec}};
  bool found = false;
  for (const auto &[name, o] : ops)
    if (p.has(name)) {
      in.mode = o;
      found = true;
    }
  Ty t = p.lastType();
  in.fn = pick(t);
  in.flags = t == Ty::F16x2 ? 1 : t == Ty::BF16x2 ? 2 : 0;
  in.space = p.has("shared") || p.has("shared::cta") ? Space::Shared
             : p.has("shared::cluster")             ? Space::Cluster
             : p.has("global")                      ? Space::Global
                                                    : Space::Generic;
  size_t n = (red ? 2 : 3) + (in.mode == Cas ? 1 : 0);
  if (!found || !in.fn || !d.count(s, n))
    return Decoded::Error;
  size_t k = 0;
  in.op[0] = red ? kNone : d.dst(s.ops[k++]);
  if (!d.address(s.ops[k++], in, 1))
    return Decoded::Error;
  in.op[2] = d.src(s.ops[k++], t);
  in.op[3] = in.mode == Cas ? d.src(s.ops[k++], t) : in.op[2];
  return d.error.empty() ? Decoded::Ok : Decoded::Error;
}

Decoded decodeMapa(Decoder &d, const Statement &s, const Parts &p,
                   Instr &in) {
  if (!d.count(s, 3))
    return Decoded::Error;
  in.fn = mapa;
  in.width = uint8_t(tyBytes(p.lastType()));
  in.op[0] = d.dst(s.ops[0]);
  in.op[1] = d.src(s.ops[1], Ty::U64);
  in.op[2] = d.src(s.ops[2], Ty::U32);
  return d.error.empty() ? Decoded::Ok : Decoded::Error;
}

} // namespace qfuse::sim::ptx
