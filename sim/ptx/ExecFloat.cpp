//===- ExecFloat.cpp - floating-point arithmetic --------------------------===//
//
// f32 and f64 arithmetic in the host's IEEE arithmetic (round to nearest
// even; .ftz flushes f32 subnormal inputs and results, .sat clamps to
// [0, 1]); f16, bf16 and their x2 forms computed per lane in double, exactly
// or with a sticky bit, and rounded once to the narrow format. The .approx
// functions use the host's libm, which is closer than the hardware's.
//
//===----------------------------------------------------------------------===//

#include "Exec.h"
#include "qfuse/sim/Half.h"
#include "PtxDecode.h"

#include <cfenv>
#include <cmath>

namespace qfuse::sim::ptx {
namespace {

enum FOp : uint8_t {
  Add, Sub, Mul, Fma, Min, Max, MinNaN, MaxNaN, Div, Sqrt, Rcp, Rsqrt, Ex2,
  Lg2, Sin, Cos, Tanh, Copysign,
};
enum Flag : uint8_t { Ftz = 1, Sat = 2 };

template <class T> T fmin2(T a, T b, bool nan) {
  if (a != a || b != b)
    return nan ? T(NAN) : (a != a ? (b != b ? T(NAN) : b) : a);
  if (a == 0 && b == 0) // -0 is less than +0
    return std::signbit(a) ? a : b;
  return a < b ? a : b;
}
template <class T> T fmax2(T a, T b, bool nan) {
  if (a != a || b != b)
    return nan ? T(NAN) : (a != a ? (b != b ? T(NAN) : b) : a);
  if (a == 0 && b == 0)
    return std::signbit(a) ? b : a;
  return a > b ? a : b;
}

/// The operation on exact (or double) inputs, before the final rounding.
template <class T, int OP> T compute(T a, T b, T c) {
  switch (OP) {
  case Add: return a + b;
  case Sub: return a - b;
  case Mul: return a * b;
  case Fma: return std::fma(a, b, c);
  case Min: return fmin2(a, b, false);
  case Max: return fmax2(a, b, false);
  case MinNaN: return fmin2(a, b, true);
  case MaxNaN: return fmax2(a, b, true);
  case Div: return a / b;
  case Sqrt: return std::sqrt(a);
  case Rcp: return T(1) / a;
  case Rsqrt: return T(1) / std::sqrt(a);
  case Ex2: return std::exp2(a);
  case Lg2: return std::log2(a);
  case Sin: return std::sin(a);
  case Cos: return std::cos(a);
  case Tanh: return std::tanh(a);
  case Copysign: return std::copysign(b, a);
  }
  return a;
}

template <class T> T saturate(T v) {
  if (v != v)
    return 0;
  return v < 0 ? T(0) : v > 1 ? T(1) : v;
}

template <class T, int OP> bool wideOp(Exec &x, const Instr &in) {
  T a = get<T>(x, in.op[1]), b = get<T>(x, in.op[2]), c = get<T>(x, in.op[3]);
  if constexpr (sizeof(T) == 4)
    if (in.flags & Ftz)
      a = flushSubnormal(a), b = flushSubnormal(b), c = flushSubnormal(c);
  T r = compute<T, OP>(a, b, c);
  if constexpr (sizeof(T) == 4)
    if (in.flags & Ftz)
      r = flushSubnormal(r);
  if (in.flags & Sat)
    r = saturate(r);
  set<T>(x, in.op[0], r);
  return true;
}

/// One f16 / bf16 lane: exact where the format allows, rounded once.
template <bool BF, int OP> uint16_t halfLane(uint16_t ha, uint16_t hb,
                                             uint16_t hc, uint8_t flags) {
  double a = BF ? bf16ToDouble(ha) : halfToDouble(ha);
  double b = BF ? bf16ToDouble(hb) : halfToDouble(hb);
  double c = BF ? bf16ToDouble(hc) : halfToDouble(hc);
  double r;
  if (OP == Add)
    r = addSticky(a, b);
  else if (OP == Sub)
    r = addSticky(a, -b);
  else if (OP == Fma)
    r = fmaSticky(a, b, c);
  else if (OP == Ex2 || OP == Tanh || OP == Rcp || OP == Sqrt || OP == Rsqrt ||
           OP == Lg2 || OP == Sin || OP == Cos)
    r = double(compute<float, OP>(float(a), 0, 0));
  else
    r = compute<double, OP>(a, b, c);
  if (flags & Sat)
    r = saturate(r);
  return BF ? bf16FromDouble(r) : halfFromDouble(r);
}

template <bool BF, int OP, int LANES> bool halfOp(Exec &x, const Instr &in) {
  uint32_t a = get<uint32_t>(x, in.op[1]), b = get<uint32_t>(x, in.op[2]),
           c = get<uint32_t>(x, in.op[3]);
  uint32_t r = halfLane<BF, OP>(uint16_t(a), uint16_t(b), uint16_t(c), in.flags);
  if (LANES == 2)
    r |= uint32_t(halfLane<BF, OP>(uint16_t(a >> 16), uint16_t(b >> 16),
                                   uint16_t(c >> 16), in.flags))
         << 16;
  if (LANES == 2)
    set<uint32_t>(x, in.op[0], r);
  else
    set<uint16_t>(x, in.op[0], uint16_t(r));
  return true;
}

/// abs and neg: sign-bit operations (NaNs keep their payload).
template <int BYTES, int LANES, bool NEG> bool signOp(Exec &x, const Instr &in) {
  uint64_t v = x.r[in.op[1]];
  uint64_t sign = BYTES == 8 ? 1ull << 63
                  : BYTES == 4 ? 1ull << 31
                  : LANES == 2 ? 0x80008000ull
                               : 0x8000ull;
  v = NEG ? v ^ sign : v & ~sign;
  if (BYTES == 4 && (in.flags & Ftz))
    v = bitsOf(flushSubnormal(floatOf(uint32_t(v))));
  x.r[in.op[0]] = BYTES == 8 ? v : v & 0xffffffffull;
  return true;
}

/// An f32 / f64 op under a directed rounding mode (.rz .rm .rp): rare, so
/// the host's FP environment is switched around it.
template <class T, int OP> bool roundedOp(Exec &x, const Instr &in) {
  int old = std::fegetround();
  static const int modes[] = {FE_TONEAREST, FE_TOWARDZERO, FE_DOWNWARD,
                              FE_UPWARD};
  std::fesetround(modes[in.mode & 3]);
  volatile T a = get<T>(x, in.op[1]), b = get<T>(x, in.op[2]),
             c = get<T>(x, in.op[3]);
  T r = compute<T, OP>(a, b, c);
  std::fesetround(old);
  set<T>(x, in.op[0], r);
  return true;
}

template <int OP> Handler pickOp(Ty t, bool directed) {
  switch (t) {
  case Ty::F32: return directed ? roundedOp<float, OP> : wideOp<float, OP>;
  case Ty::F64: return directed ? roundedOp<double, OP> : wideOp<double, OP>;
  case Ty::F16: return halfOp<false, OP, 1>;
  case Ty::F16x2: return halfOp<false, OP, 2>;
  case Ty::BF16: return halfOp<true, OP, 1>;
  case Ty::BF16x2: return halfOp<true, OP, 2>;
  default: return nullptr;
  }
}

template <bool NEG> Handler pickSign(Ty t) {
  switch (t) {
  case Ty::F32: return signOp<4, 1, NEG>;
  case Ty::F64: return signOp<8, 1, NEG>;
  case Ty::F16: case Ty::BF16: return signOp<2, 1, NEG>;
  case Ty::F16x2: case Ty::BF16x2: return signOp<2, 2, NEG>;
  default: return nullptr;
  }
}

} // namespace

Decoded decodeFloat(Decoder &d, const Statement &s, const Parts &p,
                    Instr &in) {
  Ty t = p.lastType();
  if (!tyFloat(t))
    return Decoded::NotMine;
  std::string_view op = p[0];
  bool directed = p.has("rz") || p.has("rm") || p.has("rp");
  in.mode = p.has("rz") ? 1 : p.has("rm") ? 2 : p.has("rp") ? 3 : 0;
  in.flags = (p.has("ftz") ? Ftz : 0) | (p.has("sat") ? Sat : 0);
  bool nan = p.has("NaN");
  size_t n = 3;
  Handler h = nullptr;
  if (op == "add") h = pickOp<Add>(t, directed);
  else if (op == "sub") h = pickOp<Sub>(t, directed);
  else if (op == "mul") h = pickOp<Mul>(t, directed);
  else if (op == "fma" || op == "mad") { n = 4; h = pickOp<Fma>(t, directed); }
  else if (op == "min") h = nan ? pickOp<MinNaN>(t, false) : pickOp<Min>(t, false);
  else if (op == "max") h = nan ? pickOp<MaxNaN>(t, false) : pickOp<Max>(t, false);
  else if (op == "div") h = pickOp<Div>(t, directed);
  else if (op == "copysign") h = pickOp<Copysign>(t, false);
  else if (op == "abs") { n = 2; h = pickSign<false>(t); }
  else if (op == "neg") { n = 2; h = pickSign<true>(t); }
  else if (op == "sqrt") { n = 2; h = pickOp<Sqrt>(t, directed); }
  else if (op == "rcp") { n = 2; h = pickOp<Rcp>(t, directed); }
  else if (op == "rsqrt") { n = 2; h = pickOp<Rsqrt>(t, false); }
  else if (op == "ex2") { n = 2; h = pickOp<Ex2>(t, false); }
  else if (op == "lg2") { n = 2; h = pickOp<Lg2>(t, false); }
  else if (op == "sin") { n = 2; h = pickOp<Sin>(t, false); }
  else if (op == "cos") { n = 2; h = pickOp<Cos>(t, false); }
  else if (op == "tanh") { n = 2; h = pickOp<Tanh>(t, false); }
  else return Decoded::NotMine;
  return d.operands(s, in, h, n, t);
}

} // namespace qfuse::sim::ptx
