//===- Half.h - f16, bf16 and fp8 conversions, rounded once -----*- C++ -*-===//
//
// Narrow float formats as bit patterns. Every rounding conversion starts from
// a double (every f16, bf16, f32 and fp8 value is exact in one), so that f32
// -> f16 and f64 -> f16 round once, to nearest even, with subnormals, infinities
// and NaNs as the PTX ISA gives them. The one definition for the
// interpreter and the stand-in cuBLAS.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_SIM_HALF_H
#define QFUSE_SIM_HALF_H

#include <cmath>
#include <cstdint>
#include <cstring>

namespace qfuse::sim {

inline uint32_t bitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float floatOf(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline uint64_t bitsOf(double d) {
  uint64_t u;
  std::memcpy(&u, &d, 8);
  return u;
}
inline double doubleOf(uint64_t u) {
  double d;
  std::memcpy(&d, &u, 8);
  return d;
}

/// Rounds `v` to a binary format with `mant` stored mantissa bits and `exp`
/// exponent bits, to nearest even, on the bits (no FP environment). Without
/// `hasInf` (fp8 e4m3) the all-ones pattern is NaN and overflow saturates or
/// gives NaN; `satFinite` clamps overflow to the largest finite value. NaN
/// becomes the canonical all-ones NaN.
inline uint32_t roundToFormat(double v, int mant, int exp, bool satFinite,
                              bool hasInf) {
  const int bias = (1 << (exp - 1)) - 1;
  uint64_t u = bitsOf(v);
  const uint32_t sign = (u >> 63) ? 1u << (mant + exp) : 0u;
  u &= ~(1ull << 63);
  const uint32_t expMask = (1u << exp) - 1;
  const uint32_t mantMask = (1u << mant) - 1;
  const uint32_t nanBits = (expMask << mant) | mantMask;
  const uint32_t infBits = expMask << mant;
  const uint32_t maxFinite = hasInf ? infBits - 1 : nanBits - 1;
  if (u > 0x7FF0000000000000ull)
    return nanBits;
  if (u == 0x7FF0000000000000ull)
    return sign | (hasInf && !satFinite ? infBits : maxFinite);
  int e = int(u >> 52) - 1023;
  if (e < -bias - mant) // below half the smallest subnormal
    return sign;
  uint64_t m = (u & ((1ull << 52) - 1)) | (1ull << 52);
  int minNormal = 1 - bias;
  int shift = 52 - mant + (e < minNormal ? minNormal - e : 0);
  uint64_t q = m >> shift;
  uint64_t rem = m & ((1ull << shift) - 1), half = 1ull << (shift - 1);
  if (rem > half || (rem == half && (q & 1)))
    ++q;
  uint64_t out = e < minNormal ? q
                               : (uint64_t(e + bias) << mant) + (q - (1ull << mant));
  if (out > maxFinite)
    return sign | (hasInf && !satFinite ? infBits
                   : satFinite          ? maxFinite
                                        : nanBits);
  return sign | uint32_t(out);
}

inline uint16_t halfFromDouble(double v) {
  return uint16_t(roundToFormat(v, 10, 5, false, true));
}
inline uint16_t bf16FromDouble(double v) {
  return uint16_t(roundToFormat(v, 7, 8, false, true));
}
inline uint8_t e4m3FromDouble(double v, bool satFinite) {
  return uint8_t(roundToFormat(v, 3, 4, satFinite, false));
}
inline uint8_t e5m2FromDouble(double v, bool satFinite) {
  return uint8_t(roundToFormat(v, 2, 5, satFinite, true));
}

/// Decodes a small IEEE-like format (exponent all-ones = inf/NaN when
/// `hasInf`, else only S.1111.111 is NaN).
inline double formatToDouble(uint32_t bits, int mant, int exp, bool hasInf) {
  const int bias = (1 << (exp - 1)) - 1;
  uint32_t sign = (bits >> (mant + exp)) & 1;
  uint32_t e = (bits >> mant) & ((1u << exp) - 1);
  uint32_t m = bits & ((1u << mant) - 1);
  double v;
  if (e == (1u << exp) - 1 && hasInf)
    v = m ? NAN : INFINITY;
  else if (e == (1u << exp) - 1 && !hasInf && m == (1u << mant) - 1)
    v = NAN;
  else if (e == 0)
    v = std::ldexp(double(m), 1 - bias - mant);
  else
    v = std::ldexp(double(m | (1u << mant)), int(e) - bias - mant);
  return sign ? -v : v;
}

inline float halfToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16;
  uint32_t e = (h >> 10) & 0x1f, m = h & 0x3ff;
  if (e == 0) {
    float f = float(m) * 0x1p-24f; // exact
    return sign ? -f : f;
  }
  if (e == 31)
    return floatOf(sign | 0x7F800000u | (m << 13));
  return floatOf(sign | ((e + 112) << 23) | (m << 13));
}
inline float bf16ToFloat(uint16_t h) { return floatOf(uint32_t(h) << 16); }
inline double halfToDouble(uint16_t h) { return halfToFloat(h); }
inline double bf16ToDouble(uint16_t h) { return bf16ToFloat(h); }
inline double e4m3ToDouble(uint8_t b) { return formatToDouble(b, 3, 4, false); }
inline double e5m2ToDouble(uint8_t b) { return formatToDouble(b, 2, 5, true); }
inline double e2m1ToDouble(uint8_t b) {
  // e2m1 has neither infinity nor NaN.
  static const double values[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
  return (b & 8) ? -values[b & 7] : values[b & 7];
}

/// Exact a + b as s + err (TwoSum): the error that rounding s dropped.
inline void twoSum(double a, double b, double &s, double &err) {
  s = a + b;
  double bb = s - a;
  err = (a - (s - bb)) + (b - bb);
}

/// `s` nudged one double ulp toward `err` when the exact value s + err is not
/// s: a following rounding to a much narrower format then sees that the
/// exact value is off any tie (round-to-odd's sticky bit).
inline double stickyNudge(double s, double err) {
  if (err == 0 || std::isinf(s) || std::isnan(s))
    return s;
  return std::nextafter(s, err > 0 ? INFINITY : -INFINITY);
}

/// a * b + c in double with the error kept sticky: exact when the product is
/// exact in double (it is for f16, bf16 and f32 inputs).
inline double fmaSticky(double a, double b, double c) {
  double s, err;
  twoSum(a * b, c, s, err);
  return stickyNudge(s, err);
}
inline double addSticky(double a, double b) {
  double s, err;
  twoSum(a, b, s, err);
  return stickyNudge(s, err);
}

/// f32 subnormals flushed to sign-preserving zero (.ftz).
inline float flushSubnormal(float f) {
  if (std::fpclassify(f) == FP_SUBNORMAL)
    return std::signbit(f) ? -0.0f : 0.0f;
  return f;
}

} // namespace qfuse::sim

#endif // QFUSE_SIM_HALF_H
