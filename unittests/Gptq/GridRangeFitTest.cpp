//===- GridRangeFitTest.cpp - a row's fit from its {min, max} -------------===//
//
// Per-channel GPTQ on the GPU fits each row from two values, the row's min
// and max as the device's qf.row_min_max selects them (GptqSolveFits.cpp):
// Grid::fit over {min, max} must give Grid::fit over the whole row bit for
// bit, for every per-channel grid, on rows that are mixed, negative-only,
// positive-only, zeros of either sign and extremes that are zeros of
// either sign in either order.
//
//===----------------------------------------------------------------------===//

#include "qfuse/gptq/Grid.h"

#include "TestUtil.h"

#include <algorithm>
#include <cstring>
#include <limits>

using namespace qfuse;
using namespace qfuse::gptq;
using format::test::enc;
using format::test::SeededParamTest;
using format::test::testName;

namespace {

bool sameBits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

/// The two values qf.row_min_max stores: std::min / std::max from the first
/// column on (of values comparing equal, the first stays).
std::pair<float, float> rowRange(const std::vector<float> &row) {
  float lo = std::numeric_limits<float>::infinity(), hi = -lo;
  for (float v : row) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  return {lo, hi};
}

/// Every per-channel encoding of the sweep, plus integer zero points and
/// 4-bit integers per channel.
std::vector<const char *> perChannelEncodings() {
  std::vector<const char *> out = {"uint8, per_channel, scale = f16, zero = int",
                                   "int4, per_channel, scale = bf16"};
  for (const char *e : format::test::kDenseQuantizedEncodings)
    if (enc(e).isPerChannel())
      out.push_back(e);
  return out;
}

class GptqGridRangeFitTest : public SeededParamTest<const char *> {
protected:
  /// Rows of `k` columns covering the cases the selection must get right.
  std::vector<std::vector<float>> rows(int64_t k) {
    std::vector<std::vector<float>> out;
    auto add = [&](auto value) {
      std::vector<float> row(static_cast<size_t>(k));
      for (int64_t c = 0; c < k; ++c)
        row[size_t(c)] = value(c);
      out.push_back(std::move(row));
    };
    const std::vector<float> w = normal(size_t(k), 0.05f);
    add([&](int64_t c) { return w[size_t(c)]; });
    add([&](int64_t c) { return -std::fabs(w[size_t(c)]) - 1e-4f; });
    add([&](int64_t c) { return std::fabs(w[size_t(c)]) + 1e-4f; });
    add([](int64_t) { return 0.0f; });
    add([](int64_t) { return -0.0f; });
    // Zeros of both signs as the min (positive rows) or the max (negative
    // rows), -0 first or +0 first, at random columns.
    for (float sign : {1.0f, -1.0f})
      for (float first : {0.0f, -0.0f}) {
        const float second = first == 0.0f && !std::signbit(first) ? -0.0f
                                                                    : 0.0f;
        const int64_t a = uniformInt(0, k / 2 - 1), b = uniformInt(k / 2, k - 1);
        add([&](int64_t c) {
          if (c == a)
            return first;
          if (c == b)
            return second;
          return sign * (std::fabs(w[size_t(c)]) + 1e-4f);
        });
      }
    // Only zeros, signs at random.
    add([&](int64_t) { return uniformInt(0, 1) ? 0.0f : -0.0f; });
    return out;
  }
};

TEST_P(GptqGridRangeFitTest, FitOfMinMaxIsFitOfRow) {
  const format::Encoding e = enc(GetParam());
  ASSERT_TRUE(e.isPerChannel());
  std::string error;
  std::unique_ptr<Grid> grid = makeGrid(e, {}, error);
  ASSERT_TRUE(grid) << error;
  const int64_t k = 384;
  const std::vector<std::vector<float>> all = rows(k);
  for (size_t r = 0; r < all.size(); ++r) {
    SCOPED_TRACE("row " + std::to_string(r));
    const auto [lo, hi] = rowRange(all[r]);
    const float range[2] = {lo, hi};
    GroupParams whole, fromRange;
    ASSERT_TRUE(grid->fit(all[r].data(), k, whole, error)) << error;
    ASSERT_TRUE(grid->fit(range, 2, fromRange, error)) << error;
    EXPECT_TRUE(sameBits(whole.scale, fromRange.scale))
        << whole.scale << " vs " << fromRange.scale;
    EXPECT_TRUE(sameBits(whole.zero, fromRange.zero))
        << whole.zero << " vs " << fromRange.zero;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Encodings, GptqGridRangeFitTest, ::testing::ValuesIn(perChannelEncodings()),
    [](const ::testing::TestParamInfo<const char *> &info) {
      return testName(info.param);
    });

/// The sign of a zero extreme reaches the parameters (a float zero point
/// of -lo / scale): a reduction that picked the other zero would fail the
/// test above, so it checks the selection, not only the values.
TEST(GptqGridRangeFit, SignOfZeroMinReachesTheZeroPoint) {
  std::string error;
  std::unique_ptr<Grid> grid =
      makeGrid(enc("uint8, per_channel, scale = f16, zero = float"), {}, error);
  ASSERT_TRUE(grid) << error;
  const float plus[2] = {0.0f, 1.0f}, minus[2] = {-0.0f, 1.0f};
  GroupParams p, m;
  ASSERT_TRUE(grid->fit(plus, 2, p, error)) << error;
  ASSERT_TRUE(grid->fit(minus, 2, m, error)) << error;
  EXPECT_TRUE(sameBits(p.scale, m.scale));
  EXPECT_FALSE(sameBits(p.zero, m.zero)) << p.zero << " vs " << m.zero;
}

} // namespace
