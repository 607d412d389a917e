//===- HalfFloat.h - f16 / bf16 <-> float conversions on the host ---------===//
//
// The stand-in cuBLAS reads and writes __half and __nv_bfloat16 as raw
// 16-bit patterns: the CUDA headers' own conversions are device or
// intrinsic code, so these are written out here. Round to nearest even,
// subnormals kept, inf and NaN preserved (NaNs come back quiet).
//
//===----------------------------------------------------------------------===//
#ifndef QFUSE_SIM_BLAS_HALFFLOAT_H
#define QFUSE_SIM_BLAS_HALFFLOAT_H

#include <cmath>
#include <cstdint>
#include <cstring>

namespace qfuse::sim {

inline uint32_t floatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

inline float bitsFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

inline float halfToFloat(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu, mantissa = h & 0x3ffu;
  if (exponent == 0x1f) // inf, or NaN with its payload
    return bitsFloat(sign | 0x7f800000u | (mantissa << 13));
  if (exponent != 0) // rebias 15 -> 127
    return bitsFloat(sign | ((exponent + 112) << 23) | (mantissa << 13));
  // Zero or subnormal: mantissa * 2^-24, exact in float.
  const float magnitude = float(mantissa) * 0x1p-24f;
  return sign ? -magnitude : magnitude;
}

inline uint16_t floatToHalf(float f) {
  const uint32_t x = floatBits(f);
  const uint16_t sign = uint16_t((x >> 16) & 0x8000u);
  const uint32_t ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) // NaN: quiet, with the payload's top bits
    return uint16_t(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));
  if (ax >= 0x477ff000u) // 65520 and up (a tie above 65504) round to inf
    return uint16_t(sign | 0x7c00u);
  if (ax >= 0x38800000u) { // a normal half: drop 13 bits, ties to even
    const uint32_t rounded = ax + 0xfffu + ((ax >> 13) & 1u);
    return uint16_t(sign | ((rounded - 0x38000000u) >> 13));
  }
  if (ax <= 0x33000000u) // at most 2^-25: zero (the tie goes to even 0)
    return sign;
  // Subnormal half: the value in units of 2^-24, rounded to nearest even.
  const uint32_t mantissa = (ax & 0x7fffffu) | 0x800000u;
  const int shift = 126 - int(ax >> 23);
  uint32_t q = mantissa >> shift;
  const uint32_t rest = mantissa & ((1u << shift) - 1u);
  const uint32_t halfway = 1u << (shift - 1);
  if (rest > halfway || (rest == halfway && (q & 1u)))
    ++q; // may carry into the smallest normal, which is right
  return uint16_t(sign | q);
}

inline float bf16ToFloat(uint16_t b) { return bitsFloat(uint32_t(b) << 16); }

inline uint16_t floatToBf16(float f) {
  const uint32_t x = floatBits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) // NaN: quiet, keep sign and payload
    return uint16_t((x >> 16) | 0x0040u);
  // Ties to even on the low 16 bits; overflow carries into inf.
  return uint16_t((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

/// `x` rounded to float with round-to-odd: a later round to nearest even
/// into a format with at least two fewer mantissa bits (half, bf16) is
/// then the correctly rounded value of `x` itself (no double rounding).
inline float roundToOddFloat(double x) {
  const float nearest = float(x);
  if (double(nearest) == x || !std::isfinite(nearest))
    return nearest;
  if (floatBits(nearest) & 1u)
    return nearest;
  // The even neighbour was picked: the other float bracketing x is odd.
  return std::nextafter(nearest, x > double(nearest) ? HUGE_VALF : -HUGE_VALF);
}

inline uint16_t doubleToHalf(double x) {
  return floatToHalf(roundToOddFloat(x));
}

inline uint16_t doubleToBf16(double x) {
  return floatToBf16(roundToOddFloat(x));
}

} // namespace qfuse::sim

#endif // QFUSE_SIM_BLAS_HALFFLOAT_H
