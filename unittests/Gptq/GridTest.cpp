//===- GridTest.cpp - the GPTQ grids are quantizeRTN's grids, bit for bit -===//
//
// For every dense quantized encoding: fit on each (row, group) gives
// quantizeRTN's scale and zero, code gives its codes, value gives
// format::dequantize's f32 values, on fresh random weights plus a row of
// half-integers (rounding ties) and a row of zeros.
//
//===----------------------------------------------------------------------===//

#include "qfuse/gptq/Grid.h"

#include "qfuse/format/Packing.h"

#include "TestUtil.h"

#include <cstring>

using namespace qfuse;
using namespace qfuse::gptq;
using format::test::enc;
using format::test::SeededParamTest;
using format::test::SeededTest;
using format::test::testName;

namespace {

bool sameBits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

class GptqGridTest : public SeededParamTest<const char *> {};

TEST_P(GptqGridTest, FitCodeValueAreRTN) {
  const format::Encoding e = enc(GetParam());
  const int64_t n = 8, k = 256;
  std::vector<float> w = normal(size_t(n * k), 0.05f);
  for (int64_t c = 0; c < k; ++c) {
    w[size_t(1 * k + c)] = float(uniformInt(-14, 14)) * 0.5f; // ties
    w[size_t(2 * k + c)] = 0.0f;                              // zero groups
  }
  w[size_t(1 * k + 5)] = 7.0f;

  std::vector<float> table;
  format::QuantizeOptions rtnOptions;
  GridOptions gridOptions;
  if (e.hasNamedTable()) {
    for (int i = 0; i < (1 << format::codeBits(e)); ++i)
      table.push_back(std::uniform_real_distribution<float>(-1.0f, 1.0f)(rng));
    rtnOptions.table = gridOptions.table = table.data();
  }
  if (e.globalScale)
    gridOptions.globalScale = nvfp4GlobalScale(w.data(), n * k);

  format::Unpacked u;
  std::string error;
  ASSERT_TRUE(format::quantizeRTN(e, w.data(), n, k, u, error, rtnOptions))
      << error;
  std::vector<float> values;
  ASSERT_TRUE(format::dequantize(e, u, n, k, values, error)) << error;
  std::unique_ptr<Grid> grid = makeGrid(e, gridOptions, error);
  ASSERT_TRUE(grid) << error;
  if (e.globalScale) {
    EXPECT_TRUE(sameBits(grid->globalScale(), u.globalScale));
  }

  const int64_t groups = format::numGroups(e, k);
  const int64_t size = e.isPerChannel() ? k : e.groupSize;
  for (int64_t r = 0; r < n; ++r)
    for (int64_t g = 0; g < groups; ++g) {
      GroupParams p;
      ASSERT_TRUE(grid->fit(w.data() + r * k + g * size, size, p, error))
          << error;
      const size_t at = size_t(r * groups + g);
      ASSERT_TRUE(sameBits(p.scale, u.scales[at]))
          << "row " << r << " group " << g << ": " << p.scale << " vs "
          << u.scales[at];
      if (e.isUnsigned()) {
        ASSERT_TRUE(sameBits(p.zero, u.zeros[at]))
            << "row " << r << " group " << g;
      }
      for (int64_t c = g * size; c < (g + 1) * size; ++c) {
        const size_t i = size_t(r * k + c);
        int32_t code = grid->code(w[i], p);
        ASSERT_EQ(code, u.codes[i])
            << "row " << r << " column " << c << " w = " << w[i];
        ASSERT_TRUE(sameBits(grid->value(code, p), values[i]))
            << "row " << r << " column " << c;
      }
    }
}

INSTANTIATE_TEST_SUITE_P(
    Encodings, GptqGridTest, ::testing::ValuesIn(format::test::kDenseQuantizedEncodings),
    [](const ::testing::TestParamInfo<const char *> &info) {
      return testName(info.param);
    });

using GptqGridErrorTest = SeededTest;

TEST_F(GptqGridErrorTest, RejectsWhatGPTQCannotQuantize) {
  std::string error;
  EXPECT_FALSE(makeGrid(enc("f16"), {}, error));
  EXPECT_NE(error.find("dense quantized"), std::string::npos) << error;
  EXPECT_FALSE(
      makeGrid(enc("int4, group = 128, scale = f16, sparse = 2:4"), {}, error));
  EXPECT_FALSE(makeGrid(
      enc("codebook, bits = 4, table = \"lut\" : f32, group = 64, scale = f32"),
      {}, error));
  EXPECT_NE(error.find("'lut' is named"), std::string::npos) << error;
  GridOptions badGlobal;
  badGlobal.globalScale = std::numeric_limits<float>::infinity();
  EXPECT_FALSE(makeGrid(enc("fp4e2m1, group = 16, scale = f8E4M3FN, "
                            "global_scale"),
                        badGlobal, error));
}

TEST_F(GptqGridErrorTest, ScaleOutOfRangeFails) {
  std::unique_ptr<Grid> grid;
  std::string error;
  grid = makeGrid(enc("int4, group = 32, scale = f16"), {}, error);
  ASSERT_TRUE(grid) << error;
  std::vector<float> w(32, 1e6f); // 1e6 / 7 > 65504
  GroupParams p;
  EXPECT_FALSE(grid->fit(w.data(), 32, p, error));
  EXPECT_NE(error.find("does not fit f16"), std::string::npos) << error;
}

} // namespace
