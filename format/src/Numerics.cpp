//===- Numerics.cpp - the scalar number formats of packed weights ---------===//
//
// f16/bf16 by bit manipulation; the 8- and 4-bit minifloats through one
// generic "round to the grid of a (bias, mantissa bits) format" routine, so
// that E4M3 and E2M1 share their (easy to get wrong) rounding.
//
//===----------------------------------------------------------------------===//

#include "qfuse/format/Numerics.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace qfuse::format {
namespace {

uint32_t floatBits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

float bitsToFloat(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

/// A sign-less minifloat: `mantBits` stored mantissa bits, exponent bias
/// `bias`, exponent field 0 subnormal, largest finite code `maxCode`.
struct MiniFloat {
  int mantBits;
  int bias;
  uint32_t maxCode;
};
constexpr MiniFloat kE4M3 = {3, 7, 0x7E};
constexpr MiniFloat kE2M1 = {1, 1, 0x7};
constexpr MiniFloat kHalf = {10, 15, 0x7BFF};

/// The code of the grid value nearest to `magnitude` (>= 0, not NaN); ties go
/// to the even mantissa, which is the even code. Saturates at maxCode.
uint32_t encodeMagnitude(double magnitude, MiniFloat f) {
  if (magnitude == 0.0)
    return 0;
  int e2;
  std::frexp(magnitude, &e2); // magnitude = m * 2^e2, m in [0.5, 1)
  int exponent = e2 - 1;      // magnitude in [2^exponent, 2^(exponent+1))
  const int minExponent = 1 - f.bias;
  if (exponent < minExponent)
    exponent = minExponent; // subnormal range: the grid step stays fixed
  if (exponent > 1000)
    return f.maxCode;
  // Dividing by a power of two is exact; rint rounds half to even.
  double q = std::rint(std::ldexp(magnitude, f.mantBits - exponent));
  const double implicitOne = std::ldexp(1.0, f.mantBits);
  if (q >= 2 * implicitOne) { // rounded up into the next binade
    q /= 2;
    ++exponent;
  }
  uint32_t code;
  if (q < implicitOne) // still subnormal (exponent field 0)
    code = static_cast<uint32_t>(q);
  else
    code = (static_cast<uint32_t>(exponent - minExponent + 1) << f.mantBits) |
           static_cast<uint32_t>(q - implicitOne);
  return code > f.maxCode ? f.maxCode : code;
}

double decodeMagnitude(uint32_t code, MiniFloat f) {
  uint32_t exponentField = code >> f.mantBits;
  uint32_t mantissa = code & ((1u << f.mantBits) - 1);
  if (exponentField == 0)
    return std::ldexp(static_cast<double>(mantissa), 1 - f.bias - f.mantBits);
  return std::ldexp(1.0 + std::ldexp(static_cast<double>(mantissa), -f.mantBits),
                    static_cast<int>(exponentField) - f.bias);
}

} // namespace

//===----------------------------------------------------------------------===//
// f16 / bf16
//===----------------------------------------------------------------------===//

uint16_t floatToHalf(float value) {
  uint32_t x = floatBits(value);
  uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000);
  uint32_t abs = x & 0x7FFFFFFF;
  if (abs > 0x7F800000) // NaN: keep it quiet and keep the top payload bits
    return sign | 0x7E00 | static_cast<uint16_t>((abs >> 13) & 0x1FF);
  if (abs >= 0x477FF000) // >= 65520 rounds past 65504 to inf (inf included)
    return sign | 0x7C00;
  if (abs < 0x38800000) { // below 2^-14: f16 subnormal or zero
    // |value| * 2^24 counts f16 subnormal steps; the scaling is exact.
    float steps = std::fabs(value) * 16777216.0f;
    return sign | static_cast<uint16_t>(std::lrint(steps));
  }
  // Normal: rebias the exponent (127 -> 15), keep 10 mantissa bits, round the
  // 13 dropped bits half to even. A carry correctly bumps the exponent.
  uint32_t h = (abs >> 13) - (112u << 10);
  uint32_t dropped = abs & 0x1FFF;
  if (dropped > 0x1000 || (dropped == 0x1000 && (h & 1)))
    ++h;
  return sign | static_cast<uint16_t>(h);
}

uint16_t doubleToHalf(double value) {
  if (std::isnan(value))
    return floatToHalf(static_cast<float>(value));
  uint16_t sign = std::signbit(value) ? 0x8000 : 0;
  double magnitude = std::fabs(value);
  if (magnitude >= 65520.0) // halfway to the next binade and beyond: inf
    return sign | 0x7C00;
  return sign | static_cast<uint16_t>(encodeMagnitude(magnitude, kHalf));
}

float halfToFloat(uint16_t bits) {
  uint32_t sign = static_cast<uint32_t>(bits & 0x8000) << 16;
  uint32_t exponent = (bits >> 10) & 0x1F;
  uint32_t mantissa = bits & 0x3FF;
  if (exponent == 0) { // zero or subnormal: mantissa * 2^-24, exact in f32
    float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 0x1F) // inf / NaN
    return bitsToFloat(sign | 0x7F800000 | (mantissa << 13));
  return bitsToFloat(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

uint16_t floatToBFloat16(float value) {
  uint32_t x = floatBits(value);
  if ((x & 0x7FFFFFFF) > 0x7F800000) // NaN: force a quiet bit to survive
    return static_cast<uint16_t>((x >> 16) | 0x40);
  x += 0x7FFF + ((x >> 16) & 1); // round half to even on the dropped half
  return static_cast<uint16_t>(x >> 16);
}

float bfloat16ToFloat(uint16_t bits) {
  return bitsToFloat(static_cast<uint32_t>(bits) << 16);
}

//===----------------------------------------------------------------------===//
// E4M3, E8M0, E2M1
//===----------------------------------------------------------------------===//

float decodeE4M3(uint8_t bits) {
  if ((bits & 0x7F) == 0x7F)
    return std::numeric_limits<float>::quiet_NaN();
  float magnitude = static_cast<float>(decodeMagnitude(bits & 0x7F, kE4M3));
  return (bits & 0x80) ? -magnitude : magnitude;
}

uint8_t encodeE4M3(float value) {
  if (std::isnan(value))
    return 0x7F;
  uint8_t sign = std::signbit(value) ? 0x80 : 0x00;
  return sign | static_cast<uint8_t>(encodeMagnitude(std::fabs(value), kE4M3));
}

float decodeE8M0(uint8_t bits) {
  if (bits == 0xFF)
    return std::numeric_limits<float>::quiet_NaN();
  return std::ldexp(1.0f, static_cast<int>(bits) - 127);
}

uint8_t encodeE8M0Ceil(float value) {
  if (!(value > 0.0f)) // also NaN
    return 0;
  int e2;
  double m = std::frexp(static_cast<double>(value), &e2); // value = m * 2^e2
  int exponent = (m == 0.5) ? e2 - 1 : e2; // exact power of two: keep it
  if (exponent < -127)
    exponent = -127;
  if (exponent > 127)
    exponent = 127;
  return static_cast<uint8_t>(exponent + 127);
}

float decodeE2M1(uint8_t nibble) {
  float magnitude = kE2M1Values[nibble & 0x7];
  return (nibble & 0x8) ? -magnitude : magnitude;
}

uint8_t encodeE2M1(float value) {
  if (std::isnan(value))
    return 0;
  uint8_t sign = std::signbit(value) ? 0x8 : 0x0;
  return sign | static_cast<uint8_t>(encodeMagnitude(std::fabs(value), kE2M1));
}

} // namespace qfuse::format
