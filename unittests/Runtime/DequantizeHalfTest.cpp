//===- DequantizeHalfTest.cpp - the pipeline's f16 rebind, bit for bit -----===//
//
// dequantizeToHalf (rows on threads) against format::dequantize followed by
// format::floatToHalf, element for element, on fresh random weights
// quantized to nearest in every named dense encoding, act-order (a shuffled
// g_idx) included.
//
//===----------------------------------------------------------------------===//

#include "qfuse/runtime/gptq/DequantizeHalf.h"

#include "qfuse/format/Numerics.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

using namespace qfuse;

namespace {

void check(const std::string &text, bool actOrder, uint64_t seed) {
  SCOPED_TRACE(text + (actOrder ? " act-order" : "") + ", seed " +
               std::to_string(seed));
  format::Encoding enc;
  std::string error;
  ASSERT_TRUE(format::encodingFromName(text, enc, error) ||
              format::parseEncoding(text, enc, error))
      << error;
  const int64_t n = 37, k = 512;
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> w(size_t(n * k));
  for (float &x : w)
    x = normal(rng) * (std::uniform_real_distribution<float>(0.01f, 4.0f)(rng));
  for (int64_t c = 0; c < k; c += 97) // a zero column: zero groups
    for (int64_t r = 0; r < n; ++r)
      w[size_t(r * k + c)] = 0.0f;
  format::QuantizeOptions options;
  std::vector<int32_t> gIdx;
  if (actOrder) {
    std::vector<int32_t> perm(static_cast<size_t>(k));
    for (int64_t c = 0; c < k; ++c)
      perm[size_t(c)] = int32_t(c);
    std::shuffle(perm.begin(), perm.end(), rng);
    gIdx.resize(size_t(k));
    for (int64_t c = 0; c < k; ++c)
      gIdx[size_t(perm[size_t(c)])] = int32_t(c / enc.groupSize);
    options.gIdx = gIdx.data();
  }
  format::Unpacked u;
  ASSERT_TRUE(format::quantizeRTN(enc, w.data(), n, k, u, error, options))
      << error;
  std::vector<float> expected;
  ASSERT_TRUE(format::dequantize(enc, u, n, k, expected, error)) << error;
  std::vector<uint16_t> got(size_t(n * k), 0xFFFF);
  runtime::dequantizeToHalf(enc, u, n, k, got.data());
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_EQ(got[i], format::floatToHalf(expected[i])) << "element " << i;
}

TEST(DequantizeHalf, MatchesFormatDequantizeBitForBit) {
  const uint64_t seed = std::random_device{}();
  for (const char *name :
       {"int4-g128", "uint4-g128-asym", "nf4", "nvfp4", "mxfp4", "fp8", "int8",
        "uint4, group = 64, scale = bf16, zero = float"})
    check(name, false, seed);
  check("int4, group = 128, scale = f16, act_order", true, seed);
}

TEST(DequantizeHalf, RejectsMismatchedSizes) {
  format::Encoding enc;
  std::string error;
  ASSERT_TRUE(format::encodingFromName("int4-g128", enc, error)) << error;
  format::Unpacked u;
  u.codes.resize(10);
  std::vector<uint16_t> out(256);
  EXPECT_THROW(runtime::dequantizeToHalf(enc, u, 2, 128, out.data()),
               std::exception);
}

} // namespace
