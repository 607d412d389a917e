//===- ExecCvt.cpp - cvt and cvta -----------------------------------------===//
//
// cvt between every integer and float type, with the PTX ISA's rounding
// modifiers (float results: .rn .rz .rm .rp; integer results and float
// rounding in place: .rni .rzi .rmi .rpi), .sat, .ftz, saturation of float
// to integer with NaN -> 0; the packed conversions (f16x2/bf16x2 from two
// f32, the first source to the upper half; fp8 pairs to and from f16x2);
// and cvta between the generic and the specific address windows.
//
//===----------------------------------------------------------------------===//

#include "Exec.h"
#include "qfuse/sim/Half.h"
#include "PtxDecode.h"

#include <cmath>
#include <limits>

namespace qfuse::sim::ptx {
namespace {

enum Mode : uint8_t { Rn, Rz, Rm, Rp, Rni, Rzi, Rmi, Rpi };
enum Flag : uint8_t { Ftz = 1, Sat = 2, Relu = 4, SatFinite = 8 };

/// The source as an exact long double (every integer and float type fits).
long double readValue(const Exec &x, uint32_t slot, Ty t) {
  uint64_t v = x.r[slot];
  switch (t) {
  case Ty::S8: return int8_t(v);
  case Ty::S16: return int16_t(v);
  case Ty::S32: return int32_t(v);
  case Ty::S64: return int64_t(v);
  case Ty::U8: case Ty::B8: return uint8_t(v);
  case Ty::U16: case Ty::B16: return uint16_t(v);
  case Ty::U32: case Ty::B32: return uint32_t(v);
  case Ty::U64: case Ty::B64: return v;
  case Ty::F16: return halfToDouble(uint16_t(v));
  case Ty::BF16: return bf16ToDouble(uint16_t(v));
  case Ty::F32: return floatOf(uint32_t(v));
  case Ty::F64: return doubleOf(v);
  default: return 0;
  }
}

/// A 16-bit float pattern one step toward +inf (up) or -inf.
uint16_t step16(uint16_t h, bool up) {
  bool neg = h & 0x8000;
  if ((h & 0x7fff) == 0)
    return up ? 1 : 0x8001;
  return (neg != up) ? uint16_t(h + 1) : uint16_t(h - 1);
}

/// Rounds an exact value to a float type under `mode`; the bit pattern.
uint64_t roundFloat(long double v, Ty dst, uint8_t mode, uint8_t flags) {
  if (flags & Sat)
    v = v != v ? 0 : v < 0 ? 0 : v > 1 ? 1 : v;
  if (flags & Relu)
    v = v != v ? v : v < 0 ? 0 : v;
  bool directed = mode == Rz || mode == Rm || mode == Rp;
  auto wrongSide = [&](long double r) {
    return (mode == Rz && std::fabs(r) > std::fabs(v)) ||
           (mode == Rm && r > v) || (mode == Rp && r < v);
  };
  if (dst == Ty::F64) {
    double r = double(v);
    if (directed && wrongSide(r))
      r = std::nextafter(r, mode == Rp ? INFINITY
                            : mode == Rm ? -INFINITY
                                         : 0.0);
    return bitsOf(r);
  }
  if (dst == Ty::F32) {
    float r = float(v);
    if (directed && wrongSide(r))
      r = std::nextafter(r, mode == Rp ? INFINITY
                            : mode == Rm ? -INFINITY
                                         : 0.0f);
    if (flags & Ftz)
      r = flushSubnormal(r);
    return bitsOf(r);
  }
  // f16 / bf16 through a double with the dropped bits kept sticky.
  double d = double(v);
  d = stickyNudge(d, double(v - (long double)d));
  bool bf = dst == Ty::BF16;
  uint16_t h = bf ? bf16FromDouble(d) : halfFromDouble(d);
  if (directed && v == v) {
    long double r = bf ? bf16ToDouble(h) : halfToDouble(h);
    if (wrongSide(r))
      h = step16(h, mode == Rp || (mode == Rz && v < 0));
  }
  return h;
}

long double roundInteger(long double v, uint8_t mode) {
  switch (mode) {
  case Rni: return std::nearbyint(v); // ties to even
  case Rmi: return std::floor(v);
  case Rpi: return std::ceil(v);
  default: return std::trunc(v);
  }
}

template <class T> uint64_t clampTo(long double v) {
  if (v != v)
    return 0;
  if (v <= (long double)std::numeric_limits<T>::min())
    return uint64_t(int64_t(std::numeric_limits<T>::min()));
  if (v >= (long double)std::numeric_limits<T>::max())
    return uint64_t(std::numeric_limits<T>::max());
  return uint64_t(int64_t(T(v)));
}

uint64_t toInt(long double v, Ty dst, bool fromFloat, bool sat) {
  // Integer to integer without .sat: sign/zero extension and truncation.
  if (!fromFloat && !sat) {
    __int128 i = (__int128)v;
    switch (dst) {
    case Ty::S8: return uint64_t(int64_t(int8_t(i)));
    case Ty::S16: return uint64_t(int64_t(int16_t(i)));
    case Ty::S32: return uint64_t(int64_t(int32_t(i)));
    case Ty::S64: return uint64_t(int64_t(i));
    default: break;
    }
    uint64_t u = uint64_t(i);
    unsigned bits = 8 * tyBytes(dst);
    return bits == 64 ? u : u & ((1ull << bits) - 1);
  }
  switch (dst) {
  case Ty::S8: return clampTo<int8_t>(v);
  case Ty::S16: return clampTo<int16_t>(v);
  case Ty::S32: return clampTo<int32_t>(v);
  case Ty::S64: return clampTo<int64_t>(v);
  case Ty::U8: return clampTo<uint8_t>(v);
  case Ty::U16: return clampTo<uint16_t>(v);
  case Ty::U32: return clampTo<uint32_t>(v);
  default: break;
  }
  if (v != v || v <= 0)
    return 0;
  if (v >= 18446744073709551615.0L)
    return ~0ull;
  return uint64_t(v);
}

// in.width = destination Ty, in.vec = source Ty.
bool cvt(Exec &x, const Instr &in) {
  Ty dst = Ty(in.width), src = Ty(in.vec);
  long double v = readValue(x, in.op[1], src);
  if (tyFloat(src) && (in.flags & Ftz) && src == Ty::F32)
    v = flushSubnormal(float(v));
  uint64_t out;
  if (tyFloat(dst)) {
    if (in.mode >= Rni && tyFloat(src))
      v = roundInteger(v, in.mode);
    out = roundFloat(v, dst, in.mode >= Rni ? uint8_t(Rn) : in.mode, in.flags);
  } else {
    if (tyFloat(src))
      v = roundInteger(v, in.mode);
    out = toInt(v, dst, tyFloat(src), in.flags & Sat);
  }
  x.r[in.op[0]] = out;
  return true;
}

// Fast paths for the conversions the dequantization loops run.
bool cvtF32F16(Exec &x, const Instr &in) {
  set<float>(x, in.op[0], halfToFloat(get<uint16_t>(x, in.op[1])));
  return true;
}
bool cvtF16F32(Exec &x, const Instr &in) {
  set<uint16_t>(x, in.op[0], halfFromDouble(get<float>(x, in.op[1])));
  return true;
}
bool cvtU64U32(Exec &x, const Instr &in) {
  x.r[in.op[0]] = get<uint32_t>(x, in.op[1]);
  return true;
}

// cvt.rn[.relu][.satfinite].{f16x2,bf16x2,e4m3x2,e5m2x2}.f32 d, a, b:
// a to the upper half.
bool packTwo(Exec &x, const Instr &in) {
  Ty dst = Ty(in.width);
  float a = get<float>(x, in.op[1]), b = get<float>(x, in.op[2]);
  auto one = [&](float f) -> uint32_t {
    if (in.flags & Relu)
      f = f != f ? f : f < 0 ? 0.0f : f;
    bool satf = in.flags & SatFinite;
    switch (dst) {
    case Ty::F16x2: {
      uint16_t h = halfFromDouble(f);
      if (satf && (h & 0x7fff) == 0x7c00)
        h = (h & 0x8000) | 0x7bff;
      return h;
    }
    case Ty::BF16x2: return bf16FromDouble(f);
    case Ty::E4M3x2: return e4m3FromDouble(f, true);
    case Ty::E5M2x2: return e5m2FromDouble(f, satf);
    default: return uint32_t(roundToFormat(f, 1, 2, true, false)) & 0xf;
    }
  };
  unsigned bits = dst == Ty::E2M1x2 ? 4 : 8 * tyBytes(dst) / 2;
  x.r[in.op[0]] = (uint64_t(one(a)) << bits) | one(b);
  return true;
}

// cvt.rn.f16x2.{e4m3x2,e5m2x2,e2m1x2} d, a: the low element to the low half.
bool unpackFp8(Exec &x, const Instr &in) {
  Ty src = Ty(in.vec);
  uint32_t a = uint32_t(x.r[in.op[1]]);
  auto one = [&](uint32_t e) -> double {
    return src == Ty::E4M3x2   ? e4m3ToDouble(uint8_t(e))
           : src == Ty::E5M2x2 ? e5m2ToDouble(uint8_t(e))
                               : e2m1ToDouble(uint8_t(e));
  };
  unsigned bits = src == Ty::E2M1x2 ? 4 : 8;
  uint32_t mask = (1u << bits) - 1;
  uint32_t lo = halfFromDouble(one(a & mask));
  uint32_t hi = halfFromDouble(one((a >> bits) & mask));
  if (in.flags & Relu) {
    lo = (lo & 0x8000) ? 0 : lo;
    hi = (hi & 0x8000) ? 0 : hi;
  }
  x.r[in.op[0]] = (hi << 16) | lo;
  return true;
}

bool cvtaTo(Exec &x, const Instr &in) { // generic -> specific
  x.r[in.op[0]] = x.r[in.op[1]] & ~kWindowMask;
  return true;
}
bool cvtaFrom(Exec &x, const Instr &in) { // specific -> generic
  x.r[in.op[0]] = x.r[in.op[1]] | uint64_t(in.imm);
  return true;
}

Decoded decodeCvta(Decoder &d, const Statement &s, const Parts &p,
                   Instr &in) {
  if (!d.count(s, 2))
    return Decoded::Error;
  bool to = p.has("to");
  bool shared = p.has("shared") || p.has("shared::cta") || p.has("shared::cluster");
  bool local = p.has("local");
  in.imm = int64_t(shared ? kSharedWindow : local ? kLocalWindow : 0);
  in.fn = (shared || local) ? (to ? cvtaTo : cvtaFrom)
                            : [](Exec &x, const Instr &in) {
                                x.r[in.op[0]] = x.r[in.op[1]];
                                return true;
                              };
  in.op[0] = d.dst(s.ops[0]);
  in.op[1] = d.src(s.ops[1], Ty::U64);
  return d.error.empty() ? Decoded::Ok : Decoded::Error;
}

} // namespace

Decoded decodeCvt(Decoder &d, const Statement &s, const Parts &p,
                  Instr &in) {
  if (p[0] == "cvta")
    return decodeCvta(d, s, p, in);
  if (p[0] != "cvt")
    return Decoded::NotMine;
  Ty src = p.typeAt(0), dst = p.typeAt(1);
  if (src == Ty::None || dst == Ty::None)
    return Decoded::Error;
  static const std::pair<std::string_view, Mode> modes[] = {
      {"rn", Rn},   {"rz", Rz},   {"rm", Rm},   {"rp", Rp},
      {"rni", Rni}, {"rzi", Rzi}, {"rmi", Rmi}, {"rpi", Rpi}};
  for (const auto &[name, m] : modes)
    if (p.has(name))
      in.mode = m;
  in.flags = (p.has("ftz") ? Ftz : 0) | (p.has("sat") ? Sat : 0) |
             (p.has("relu") ? Relu : 0) | (p.has("satfinite") ? SatFinite : 0);
  in.width = uint8_t(dst);
  in.vec = uint8_t(src);
  bool packedDst = dst == Ty::F16x2 || dst == Ty::BF16x2 ||
                   dst == Ty::E4M3x2 || dst == Ty::E5M2x2 || dst == Ty::E2M1x2;
  bool fp8Src = src == Ty::E4M3x2 || src == Ty::E5M2x2 || src == Ty::E2M1x2;
  in.op[0] = d.dst(s.ops.empty() ? Operand() : s.ops[0]);
  if (packedDst && src == Ty::F32) {
    if (!d.count(s, 3))
      return Decoded::Error;
    in.fn = packTwo;
    in.op[1] = d.src(s.ops[1], src);
    in.op[2] = d.src(s.ops[2], src);
  } else if (dst == Ty::F16x2 && fp8Src) {
    if (!d.count(s, 2))
      return Decoded::Error;
    in.fn = unpackFp8;
    in.op[1] = d.src(s.ops[1], Ty::B16);
  } else if (packedDst || fp8Src) {
    return Decoded::Error;
  } else {
    if (!d.count(s, 2))
      return Decoded::Error;
    in.op[1] = d.src(s.ops[1], src);
    bool plain = in.flags == 0;
    in.fn = plain && dst == Ty::F32 && src == Ty::F16   ? cvtF32F16
            : plain && dst == Ty::F16 && src == Ty::F32 && in.mode == Rn
                ? cvtF16F32
            : plain && dst == Ty::U64 && src == Ty::U32 ? cvtU64U32
                                                        : cvt;
  }
  return d.error.empty() ? Decoded::Ok : Decoded::Error;
}

} // namespace qfuse::sim::ptx
