//===- NumericsTest.cpp - f16, bf16, E4M3, E8M0, E2M1, NF4 ----------------===//
//
// Exhaustive where the format is small (every f16, E4M3, E2M1 code), and
// against a brute-force nearest-value search on random floats elsewhere.
//
//===----------------------------------------------------------------------===//

#include "qfuse/format/Numerics.h"

#include "TestUtil.h"

#include <cmath>
#include <cstring>
#include <limits>

using namespace qfuse::format;
using qfuse::format::test::SeededTest;

namespace {

uint32_t bitsOf(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

/// The finite values of a small format, by code, for brute-force rounding.
template <typename Decode>
void expectNearestTiesEven(float x, uint32_t code, int codes, Decode decode,
                           const char *what) {
  double best = std::fabs(double(decode(code)) - x);
  for (int c = 0; c < codes; ++c) {
    float v = decode(uint32_t(c));
    if (std::isnan(v) || std::signbit(v) != std::signbit(decode(code)))
      continue;
    double d = std::fabs(double(v) - x);
    ASSERT_LE(best, d) << what << "(" << x << ") = code " << code
                       << " but code " << c << " is nearer";
    if (d == best && v != decode(code))
      EXPECT_EQ(code % 2, 0u) << what << "(" << x << "): tie not to even";
  }
}

} // namespace

TEST(NumericsTest, HalfRoundTripsEveryCode) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    float f = halfToFloat(uint16_t(h));
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(halfToFloat(floatToHalf(f))));
      continue;
    }
    EXPECT_EQ(floatToHalf(f), h) << std::hex << h;
    EXPECT_EQ(doubleToHalf(double(f)), h) << std::hex << h;
  }
}

TEST(NumericsTest, HalfKnownValues) {
  EXPECT_EQ(floatToHalf(1.0f), 0x3C00);
  EXPECT_EQ(floatToHalf(-2.0f), 0xC000);
  EXPECT_EQ(floatToHalf(65504.0f), 0x7BFF);
  EXPECT_EQ(floatToHalf(65519.0f), 0x7BFF); // below the halfway point
  EXPECT_EQ(floatToHalf(65520.0f), 0x7C00); // halfway: ties to even = inf
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -24)), 0x0001);
  EXPECT_EQ(floatToHalf(std::ldexp(1.0f, -25)), 0x0000); // tie to even 0
  EXPECT_EQ(floatToHalf(std::ldexp(3.0f, -25)), 0x0002); // tie to even 2
  EXPECT_EQ(floatToHalf(1.0f + std::ldexp(1.0f, -11)), 0x3C00); // tie -> even
  EXPECT_EQ(floatToHalf(1.0f + std::ldexp(3.0f, -11)), 0x3C02);
  EXPECT_EQ(halfToFloat(0x3555), 0.333251953125f);
}

class NumericsRandomTest : public SeededTest {};

TEST_F(NumericsRandomTest, HalfAndBFloat16AreNearestTiesEven) {
  std::uniform_real_distribution<float> mantissa(-2.0f, 2.0f);
  std::uniform_int_distribution<int> exponent(-26, 16);
  for (int i = 0; i < 20000; ++i) {
    float x = std::ldexp(mantissa(rng), exponent(rng));
    uint16_t h = floatToHalf(x);
    if (std::fabs(x) < 65504.0f) {
      double err = std::fabs(double(halfToFloat(h)) - x);
      for (int d : {-1, 1}) {
        uint16_t other = uint16_t(h + d);
        if ((other & 0x7C00) == 0x7C00 || ((h ^ other) & 0x8000))
          continue;
        double otherErr = std::fabs(double(halfToFloat(other)) - x);
        ASSERT_LE(err, otherErr) << x;
        if (err == otherErr)
          EXPECT_EQ(h & 1, 0) << x << ": tie not to even";
      }
    }
    uint16_t b = floatToBFloat16(x);
    double err = std::fabs(double(bfloat16ToFloat(b)) - x);
    for (int d : {-1, 1}) {
      uint16_t other = uint16_t(b + d);
      if ((other & 0x7F80) == 0x7F80 || ((b ^ other) & 0x8000))
        continue;
      double otherErr = std::fabs(double(bfloat16ToFloat(other)) - x);
      ASSERT_LE(err, otherErr) << x;
      if (err == otherErr)
        EXPECT_EQ(b & 1, 0) << x << ": tie not to even";
    }
  }
}

TEST(NumericsTest, DoubleToHalfRoundsOnce) {
  // 1 + 2^-11 + 2^-40: above the f16 halfway point, so it rounds up; via f32
  // the 2^-40 is lost first and the tie then rounds down to even.
  double x = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40);
  EXPECT_EQ(floatToHalf(float(x)), 0x3C00);
  EXPECT_EQ(doubleToHalf(x), 0x3C01);
  EXPECT_EQ(doubleToHalf(1.0e5), 0x7C00);
  EXPECT_EQ(doubleToHalf(-0.0), 0x8000);
}

TEST(NumericsTest, BFloat16KnownValues) {
  EXPECT_EQ(floatToBFloat16(1.0f), 0x3F80);
  EXPECT_EQ(floatToBFloat16(-3.0f), 0xC040);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to even (1).
  EXPECT_EQ(floatToBFloat16(1.0f + std::ldexp(1.0f, -8)), 0x3F80);
  EXPECT_EQ(floatToBFloat16(1.0f + std::ldexp(3.0f, -8)), 0x3F82);
  EXPECT_TRUE(std::isnan(bfloat16ToFloat(
      floatToBFloat16(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_EQ(bfloat16ToFloat(0x4049), 3.140625f);
}

TEST(NumericsTest, E4M3EveryCode) {
  int finite = 0;
  for (uint32_t c = 0; c < 256; ++c) {
    float v = decodeE4M3(uint8_t(c));
    if ((c & 0x7F) == 0x7F) {
      EXPECT_TRUE(std::isnan(v));
      continue;
    }
    ++finite;
    EXPECT_EQ(encodeE4M3(v), c) << c;
  }
  EXPECT_EQ(finite, 254);
  EXPECT_EQ(decodeE4M3(0x7E), 448.0f);
  EXPECT_EQ(decodeE4M3(0x01), std::ldexp(1.0f, -9)); // smallest subnormal
  EXPECT_EQ(decodeE4M3(0x08), std::ldexp(1.0f, -6)); // smallest normal
  EXPECT_EQ(decodeE4M3(0x38), 1.0f);
  EXPECT_EQ(decodeE4M3(0xB8), -1.0f);
  EXPECT_EQ(encodeE4M3(1000.0f), 0x7E); // saturates
  EXPECT_EQ(encodeE4M3(-1000.0f), 0xFE);
  EXPECT_EQ(encodeE4M3(std::numeric_limits<float>::quiet_NaN()), 0x7F);
}

TEST_F(NumericsRandomTest, E4M3AndE2M1AreNearestTiesEven) {
  auto e4m3 = [](uint32_t c) { return decodeE4M3(uint8_t(c)); };
  auto e2m1 = [](uint32_t c) { return decodeE2M1(uint8_t(c)); };
  std::uniform_real_distribution<float> dist(-460.0f, 460.0f);
  std::uniform_real_distribution<float> small(-0.05f, 0.05f);
  std::uniform_real_distribution<float> fp4(-6.5f, 6.5f);
  for (int i = 0; i < 3000; ++i) {
    float x = i % 2 ? dist(rng) : small(rng);
    expectNearestTiesEven(x, encodeE4M3(x), 256, e4m3, "e4m3");
    float y = fp4(rng);
    expectNearestTiesEven(y, encodeE2M1(y), 16, e2m1, "e2m1");
  }
  // Midpoints between E4M3 neighbours go to the even code.
  for (uint32_t c = 0; c < 0x7D; ++c) {
    float mid = (decodeE4M3(uint8_t(c)) + decodeE4M3(uint8_t(c + 1))) / 2;
    EXPECT_EQ(encodeE4M3(mid), (c % 2 == 0) ? c : c + 1) << mid;
  }
}

TEST(NumericsTest, E2M1Values) {
  const float expected[16] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6,
                              -0.0f, -0.5f, -1, -1.5f, -2, -3, -4, -6};
  for (uint32_t c = 0; c < 16; ++c) {
    EXPECT_EQ(decodeE2M1(uint8_t(c)), expected[c]);
    EXPECT_EQ(encodeE2M1(expected[c]), c);
  }
  // Ties go to the even code: 0.25 -> 0, 0.75 -> 1 (code 2), 1.25 -> 1,
  // 1.75 -> 2, 2.5 -> 2, 3.5 -> 4, 5 -> 4; beyond 6 saturates.
  const float ties[] = {0.25f, 0.75f, 1.25f, 1.75f, 2.5f, 3.5f, 5.0f, 7.0f, 100.0f};
  const uint8_t codes[] = {0, 2, 2, 4, 4, 6, 6, 7, 7};
  for (size_t i = 0; i < std::size(ties); ++i) {
    EXPECT_EQ(encodeE2M1(ties[i]), codes[i]) << ties[i];
    EXPECT_EQ(encodeE2M1(-ties[i]), codes[i] | 8) << -ties[i];
  }
}

TEST(NumericsTest, E8M0) {
  EXPECT_EQ(decodeE8M0(127), 1.0f);
  EXPECT_EQ(decodeE8M0(0), std::ldexp(1.0f, -127));
  EXPECT_EQ(decodeE8M0(254), std::ldexp(1.0f, 127));
  EXPECT_TRUE(std::isnan(decodeE8M0(255)));
  EXPECT_EQ(encodeE8M0Ceil(1.0f), 127);
  EXPECT_EQ(encodeE8M0Ceil(1.5f), 128);   // up to 2
  EXPECT_EQ(encodeE8M0Ceil(0.75f), 127);  // up to 1
  EXPECT_EQ(encodeE8M0Ceil(0.5f), 126);   // exact powers stay
  EXPECT_EQ(encodeE8M0Ceil(0.0f), 0);
  EXPECT_EQ(encodeE8M0Ceil(1e38f), 254);
  for (int e = -127; e <= 127; ++e)
    EXPECT_EQ(encodeE8M0Ceil(std::ldexp(1.0f, e)), e + 127);
}

TEST(NumericsTest, NF4TableMatchesBitsAndBytes) {
  // formats.md, bitsandbytes NF4.
  const double expected[16] = {
      -1.0, -0.6961928009986877, -0.5250730514526367, -0.39491748809814453,
      -0.28444138169288635, -0.18477343022823334, -0.09105003625154495, 0.0,
      0.07958029955625534, 0.16093020141124725, 0.24611230194568634,
      0.33791524171829224, 0.44070982933044434, 0.5626170039176941,
      0.7229568362236023, 1.0};
  for (int i = 0; i < 16; ++i)
    EXPECT_EQ(bitsOf(kNF4Table[i]), bitsOf(float(expected[i]))) << i;
}
