//===- Numerics.h - the scalar number formats of packed weights -*- C++ -*-===//
//
// Bit-exact conversions between float and the small number formats that
// packed weights store: f16, bf16, float8_e4m3fn, E8M0 (MX scales), E2M1
// (FP4 codes), and the NF4 table. Everything the compiler, the runtime and the
// tests decode goes through these, so they agree to the bit.
//
// Rounding is to nearest, ties to even (what torch's casts and the GPU's
// cvt.rn do) unless a name says otherwise.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_FORMAT_NUMERICS_H
#define QFUSE_FORMAT_NUMERICS_H

#include <cstdint>

namespace qfuse::format {

//===----------------------------------------------------------------------===//
// IEEE half and bfloat16
//===----------------------------------------------------------------------===//

/// f32 -> f16 bits. Overflow gives +-inf, NaN stays NaN.
uint16_t floatToHalf(float value);
/// f64 -> f16 bits in one rounding (going through f32 could round twice);
/// what MLIR does with a float literal of an f16 tensor.
uint16_t doubleToHalf(double value);
float halfToFloat(uint16_t bits);

/// f32 -> bf16 bits (the upper 16 bits of the f32, rounded).
uint16_t floatToBFloat16(float value);
float bfloat16ToFloat(uint16_t bits);

//===----------------------------------------------------------------------===//
// float8_e4m3fn: 1 sign, 4 exponent (bias 7), 3 mantissa bits
//===----------------------------------------------------------------------===//
//
//   bit  7    6 5 4 3    2 1 0
//      sign  exponent   mantissa      max 448 (0x7E), NaN 0x7F/0xFF, no inf
//
// Exponent 0 is subnormal (steps of 2^-9).

float decodeE4M3(uint8_t bits);
/// Saturates: |value| > 448 gives +-448 (0x7E); NaN gives 0x7F.
uint8_t encodeE4M3(float value);
constexpr float kE4M3Max = 448.0f;

//===----------------------------------------------------------------------===//
// E8M0 (float8_e8m0fnu): an unsigned power of two, the MX block scale
//===----------------------------------------------------------------------===//
//
// byte b = 127 + e stands for 2^e (b = 0 is 2^-127); 0xFF is NaN.

float decodeE8M0(uint8_t bits);
/// The smallest power of two >= value, clamped to [2^-127, 2^127].
/// Non-positive values give 2^-127 (byte 0).
uint8_t encodeE8M0Ceil(float value);

//===----------------------------------------------------------------------===//
// E2M1 (FP4): 1 sign, 2 exponent (bias 1), 1 mantissa bit
//===----------------------------------------------------------------------===//
//
//   nibble = sign << 3 | idx,  idx -> {0, 0.5, 1, 1.5, 2, 3, 4, 6}
//
// The index order is the magnitude order, so idx is also the E2M1 bit code.

inline constexpr float kE2M1Values[8] = {0.0f, 0.5f, 1.0f, 1.5f,
                                         2.0f, 3.0f, 4.0f, 6.0f};
constexpr float kE2M1Max = 6.0f;

float decodeE2M1(uint8_t nibble);
/// Nearest value, ties to the even code; saturates to +-6. -0 keeps its sign
/// bit; NaN encodes as +0 (FP4 has no NaN).
uint8_t encodeE2M1(float value);

//===----------------------------------------------------------------------===//
// NF4 (bitsandbytes NormalFloat4)
//===----------------------------------------------------------------------===//

/// The 16 code values, as the f32 constants bitsandbytes uses.
inline constexpr float kNF4Table[16] = {
    -1.0f,
    -0.6961928009986877f,
    -0.5250730514526367f,
    -0.39491748809814453f,
    -0.28444138169288635f,
    -0.18477343022823334f,
    -0.09105003625154495f,
    0.0f,
    0.07958029955625534f,
    0.16093020141124725f,
    0.24611230194568634f,
    0.33791524171829224f,
    0.44070982933044434f,
    0.5626170039176941f,
    0.7229568362236023f,
    1.0f};

} // namespace qfuse::format

#endif // QFUSE_FORMAT_NUMERICS_H
