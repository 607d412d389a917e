//===- QuantizeTest.cpp - quantizeRTN's error bounds, per format ----------===//
//
// dequantize(quantizeRTN(W)) against W on fresh random weights, element by
// element, with the bounds documented at quantizeRTN (Packing.h):
//
//   integers (sym, zero = int)  |w - w'| <= s / 2
//   zero = float                |w - w'| <= s / 2 + s |z| u_scale
//   fp8e4m3                     |w - w'| <= |w| / 16 + s / 1024
//   fp4e2m1 (float, MX scales)  |w - w'| <= s
//   NVFP4                       |w - w'| <= s / global (normal E4M3 scales)
//   nf4 / codebook              |w - w'| <= s h (h from the table)
//   f16 / bf16                  |w - w'| <= |w| 2^-11 / 2^-8
//
// plus a float-arithmetic slack of 2^-20 (|w| + s).
//
//===----------------------------------------------------------------------===//

#include "qfuse/format/Packing.h"

#include "TestUtil.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

using namespace qfuse::format;
using qfuse::format::test::enc;
using qfuse::format::test::kDenseQuantizedEncodings;
using qfuse::format::test::SeededParamTest;
using qfuse::format::test::SeededTest;
using qfuse::format::test::testName;

namespace {

/// Unit roundoff of a scale type (for float zero points).
double unitRoundoff(ScalarType type) {
  switch (type) {
  case ScalarType::F16:
    return std::ldexp(1.0, -11);
  case ScalarType::BF16:
    return std::ldexp(1.0, -8);
  default:
    return std::ldexp(1.0, -24);
  }
}

/// h for a codebook: the farthest any point of [-m, m] (m = max |entry|) can
/// be from its nearest entry.
double codebookReach(std::vector<float> table) {
  std::sort(table.begin(), table.end());
  double m = 0;
  for (float v : table)
    m = std::max(m, double(std::fabs(v)));
  double h = std::max(m - table.back(), double(table.front()) + m);
  for (size_t i = 1; i < table.size(); ++i)
    h = std::max(h, (double(table[i]) - table[i - 1]) / 2);
  return h;
}

/// The dense quantized encodings, then dense and 2:4 sparse ones.
std::vector<const char *> allEncodings() {
  std::vector<const char *> all = kDenseQuantizedEncodings;
  for (const char *text :
       {"f16", "bf16", "f16, sparse = 2:4",
        "int4, group = 128, scale = f16, sparse = 2:4",
        "uint4, group = 64, scale = f16, zero = int, act_order, sparse = 2:4",
        "uint8, group = 32, scale = bf16, zero = float, sparse = 2:4",
        "fp8e4m3, per_channel, scale = f32, sparse = 2:4"})
    all.push_back(text);
  return all;
}

class QuantizeTest : public SeededParamTest<const char *> {
protected:
  void SetUp() override {
    e = enc(GetParam());
    int64_t unit = e.isQuantized() && !e.isPerChannel() ? e.groupSize : 16;
    while (unit % 16)
      unit *= 2;
    n = uniformInt(1, 12);
    k = unit * uniformInt(1, 4);
    if (e.hasNamedTable()) // a random table for the named codebook
      for (int i = 0; i < (1 << codeBits(e)); ++i)
        table.push_back(roundToScalarType(
            std::uniform_real_distribution<float>(-1.0f, 1.0f)(rng),
            e.tableType));
    options.table = table.empty() ? nullptr : table.data();
    if (e.actOrder) { // a random assignment of columns to groups
      for (int64_t col = 0; col < k; ++col)
        gIdx.push_back(int32_t(col / e.groupSize));
      std::shuffle(gIdx.begin(), gIdx.end(), rng);
      options.gIdx = gIdx.data();
    }
  }

  /// The documented bound for element (row, col), w its original value.
  double bound(const Unpacked &u, int64_t row, int64_t col, double w) const {
    const double slack = std::ldexp(1.0, -20);
    if (!e.isQuantized())
      return std::fabs(w) *
                 (e.format == ElementFormat::F16 ? std::ldexp(1.0, -11)
                                                 : std::ldexp(1.0, -8)) +
             std::ldexp(1.0, -24);
    const int64_t groups = numGroups(e, k);
    int64_t g = e.actOrder ? u.gIdx[col]
                           : (e.isPerChannel() ? 0 : col / e.groupSize);
    double s = u.scales[row * groups + g];
    double b = 0;
    switch (e.format) {
    case ElementFormat::Int4:
    case ElementFormat::Int8:
      b = s / 2;
      break;
    case ElementFormat::UInt4:
    case ElementFormat::UInt8:
      b = s / 2;
      if (e.zeroPoint == ZeroPointKind::Float)
        b += s * std::fabs(u.zeros[row * groups + g]) *
             unitRoundoff(e.scaleType);
      break;
    case ElementFormat::FP8E4M3:
      b = std::fabs(w) / 16 + s / 1024;
      break;
    case ElementFormat::FP4E2M1:
      if (e.globalScale) {
        s /= u.globalScale;
        EXPECT_GE(u.scales[row * groups + g], std::ldexp(1.0f, -6))
            << "block scale below E4M3's normal range: the bound is looser";
      }
      b = s;
      break;
    case ElementFormat::NF4:
      b = s * codebookReach(std::vector<float>(std::begin(kNF4Table),
                                               std::end(kNF4Table)));
      break;
    case ElementFormat::Codebook:
      b = s * codebookReach(e.hasNamedTable() ? table : e.table);
      break;
    default:
      break;
    }
    return b + slack * (std::fabs(w) + s);
  }

  Encoding e;
  int64_t n = 0, k = 0;
  std::vector<float> table;
  std::vector<int32_t> gIdx;
  QuantizeOptions options;
};

TEST_P(QuantizeTest, DequantizedErrorWithinBound) {
  const float sigma = std::uniform_real_distribution<float>(0.01f, 2.0f)(rng);
  std::vector<float> w = normal(size_t(n * k), sigma);

  Unpacked u;
  TensorMap c;
  std::string error;
  ASSERT_TRUE(quantizeRTN(e, w.data(), n, k, u, error, options)) << error;
  ASSERT_TRUE(quantizeRTN(e, w.data(), n, k, c, error, options)) << error;
  std::vector<float> fromUnpacked, fromComponents;
  ASSERT_TRUE(dequantize(e, u, n, k, fromUnpacked, error)) << error;
  ASSERT_TRUE(dequantize(e, c, n, k, fromComponents, error)) << error;
  ASSERT_EQ(fromUnpacked, fromComponents);
  if (e.actOrder)
    EXPECT_EQ(u.gIdx, gIdx);

  const int64_t stored = storedPerRow(e, k);
  std::vector<bool> kept(size_t(n * k), !e.isSparse24());
  if (e.isSparse24())
    for (int64_t row = 0; row < n; ++row)
      for (int64_t j = 0; j < stored; ++j)
        kept[row * k + (j / 2) * 4 + u.positions[row * stored + j]] = true;

  double worstRatio = 0;
  for (int64_t row = 0; row < n; ++row)
    for (int64_t col = 0; col < k; ++col) {
      const size_t i = size_t(row * k + col);
      if (!kept[i]) {
        ASSERT_EQ(fromUnpacked[i], 0.0f) << "pruned (" << row << ", " << col
                                         << ")";
        continue;
      }
      double err = std::fabs(double(fromUnpacked[i]) - w[i]);
      double b = bound(u, row, col, w[i]);
      worstRatio = std::max(worstRatio, err / b);
      ASSERT_LE(err, b) << "element (" << row << ", " << col << "): w = "
                        << w[i] << ", dequantized " << fromUnpacked[i];
    }
  // The bounds are tight enough to mean something: the worst element of a
  // quantized weight uses a good part of its allowance.
  if (e.isQuantized() && n * k >= 256)
    EXPECT_GT(worstRatio, 0.25) << "bound far looser than the error";

  // 2:4 keeps the two largest magnitudes of every quad.
  if (e.isSparse24())
    for (int64_t quad = 0; quad < n * k / 4; ++quad) {
      float minKept = INFINITY, maxPruned = 0;
      for (int c4 = 0; c4 < 4; ++c4) {
        size_t i = size_t(quad * 4 + c4);
        if (kept[i])
          minKept = std::min(minKept, std::fabs(w[i]));
        else
          maxPruned = std::max(maxPruned, std::fabs(w[i]));
      }
      ASSERT_GE(minKept, maxPruned) << "quad " << quad;
    }
}

TEST_P(QuantizeTest, ZerosStayZero) {
  std::vector<float> w(size_t(n * k), 0.0f);
  std::vector<float> out;
  TensorMap c;
  std::string error;
  ASSERT_TRUE(quantizeRTN(e, w.data(), n, k, c, error, options)) << error;
  ASSERT_TRUE(dequantize(e, c, n, k, out, error)) << error;
  for (size_t i = 0; i < out.size(); ++i)
    if (e.format != ElementFormat::Codebook ||
        std::count(e.table.begin(), e.table.end(), 0.0f) ||
        std::count(table.begin(), table.end(), 0.0f))
      ASSERT_EQ(out[i], 0.0f) << i;
}

INSTANTIATE_TEST_SUITE_P(Encodings, QuantizeTest,
                         ::testing::ValuesIn(allEncodings()),
                         [](const auto &info) {
                           return std::to_string(info.index) + "_" +
                                  testName(info.param).substr(0, 48);
                         });

//===----------------------------------------------------------------------===//
// Specific rules
//===----------------------------------------------------------------------===//

class QuantizeRulesTest : public SeededTest {};

TEST_F(QuantizeRulesTest, RoundsHalfToEven) {
  // amax 7 -> s = 1 exactly, so w / s hits the .5 ties.
  std::vector<float> w = {7.0f, 2.5f, 3.5f, -2.5f, -0.5f, 0.5f, 1.5f, -7.0f};
  Unpacked u;
  std::string error;
  ASSERT_TRUE(quantizeRTN(enc("int4, per_channel, scale = f32"), w.data(), 1, 8,
                          u, error))
      << error;
  EXPECT_EQ(u.scales[0], 1.0f);
  EXPECT_EQ(u.codes, (std::vector<int32_t>{7, 2, 4, -2, 0, 0, 2, -7}));
}

TEST_F(QuantizeRulesTest, IntegerZeroPointsCoverZero) {
  std::vector<float> w = normal(4 * 64);
  for (int i = 0; i < 64; ++i)
    w[i] = 1.0f + std::fabs(w[i]); // row 0 all positive: 0 still in range
  Unpacked u;
  std::string error;
  ASSERT_TRUE(quantizeRTN(enc("uint4, group = 32, scale = f16, zero = int"),
                          w.data(), 4, 64, u, error))
      << error;
  for (float z : u.zeros) {
    EXPECT_GE(z, 0.0f);
    EXPECT_LE(z, 15.0f);
    EXPECT_EQ(z, std::floor(z));
  }
  EXPECT_EQ(u.zeros[0], 0.0f);
}

TEST_F(QuantizeRulesTest, NVFP4GlobalScaleAndMXPowersOfTwo) {
  const int64_t n = 8, k = 64;
  std::vector<float> w = normal(size_t(n * k), 0.3f);
  float amax = 0;
  for (float v : w)
    amax = std::max(amax, std::fabs(v));
  Unpacked u;
  std::string error;
  ASSERT_TRUE(quantizeRTN(enc("fp4e2m1, group = 16, scale = f8E4M3FN, "
                              "global_scale"),
                          w.data(), n, k, u, error))
      << error;
  EXPECT_EQ(u.globalScale, float(448.0 * 6.0 / amax));
  // The block holding amax gets the largest E4M3 scale, 448.
  EXPECT_EQ(*std::max_element(u.scales.begin(), u.scales.end()), 448.0f);

  ASSERT_TRUE(quantizeRTN(enc("fp4e2m1, group = 32, scale = f8E8M0FNU"),
                          w.data(), n, k, u, error))
      << error;
  for (int64_t row = 0; row < n; ++row)
    for (int64_t g = 0; g < k / 32; ++g) {
      float s = u.scales[row * 2 + g];
      int exponent;
      EXPECT_EQ(std::frexp(s, &exponent), 0.5f) << "not a power of two: " << s;
      float blockMax = 0;
      for (int64_t col = 32 * g; col < 32 * (g + 1); ++col)
        blockMax = std::max(blockMax, std::fabs(w[row * k + col]));
      // The smallest power of two that does not clip the block.
      EXPECT_LE(blockMax / s, 6.0f);
      EXPECT_GT(blockMax / s, 3.0f);
    }
}

TEST_F(QuantizeRulesTest, Errors) {
  std::vector<float> w(16, 1e6f);
  Unpacked u;
  std::string error;
  EXPECT_FALSE(quantizeRTN(enc("int4, per_channel, scale = f16"), w.data(), 1,
                           16, u, error));
  EXPECT_EQ(error, "scale of row 0, group 0 (142857.142857) does not fit f16");
  EXPECT_FALSE(quantizeRTN(enc("codebook, bits = 2, table = \"lut\" : f16, "
                               "per_channel, scale = f16"),
                           w.data(), 1, 16, u, error));
  EXPECT_EQ(error, "codebook table 'lut' is named, not inline: pass its values "
                   "in QuantizeOptions::table");
  EXPECT_FALSE(quantizeRTN(enc("int4, group = 128, scale = f16"), w.data(), 1,
                           16, u, error));
  EXPECT_EQ(error, "group size 128 does not divide K = 16");
  std::vector<int32_t> badGIdx(16, 1);
  QuantizeOptions options;
  options.gIdx = badGIdx.data();
  EXPECT_FALSE(quantizeRTN(enc("int4, group = 16, scale = f16, act_order"),
                           w.data(), 1, 16, u, error, options));
  EXPECT_EQ(error, "g_idx[0] = 1 is outside [0, 1)");
}

// Found by fuzz/checkpoint (fuzz/checkpoint/crashes/nan-weight): a NaN weight
// passed the statistics (max ignores NaN) and became a code through an
// out-of-range float-to-int conversion.
TEST_F(QuantizeRulesTest, NonFiniteWeightsNameTheElement) {
  std::vector<float> w = normal(2 * 32);
  Unpacked u;
  std::string error;
  w[32 + 5] = std::numeric_limits<float>::quiet_NaN();
  for (const char *encoding :
       {"int4, group = 32, scale = f16", "uint4, group = 32, scale = f16, zero = int",
        "nf4, group = 32, scale = f32", "fp8e4m3, per_channel, scale = f32",
        "fp4e2m1, group = 16, scale = f8E4M3FN, global_scale"}) {
    EXPECT_FALSE(quantizeRTN(enc(encoding), w.data(), 2, 32, u, error))
        << encoding;
    EXPECT_EQ(error, "weight [1, 5] is NaN; round-to-nearest needs finite "
                     "weights")
        << encoding;
  }
  w[32 + 5] = -std::numeric_limits<float>::infinity();
  EXPECT_FALSE(quantizeRTN(enc("int8, per_channel, scale = f16"), w.data(), 2,
                           32, u, error));
  EXPECT_EQ(error, "weight [1, 5] is infinite; round-to-nearest needs finite "
                   "weights");
}

} // namespace
