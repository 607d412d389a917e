//===- BlockTest.cpp - the block column loop against its written spec -----===//
//
// quantizeBlock and lazyUpdate against a literal transcription of the
// operation order documented in Block.h (what the GPU kernel will match bit
// for bit), with every f32 operation in its own statement; and the whole
// algorithm's invariance under the block size up to rounding, which is how
// whole layers will be compared with the GPU (GEMM order differs).
//
//===----------------------------------------------------------------------===//

#include "qfuse/gptq/Block.h"
#include "qfuse/gptq/Gptq.h"
#include "qfuse/gptq/Prepare.h"

#include "GptqTestUtil.h"

#include <cstring>
#include <iostream>

using namespace qfuse;
using namespace qfuse::gptq;
using format::test::enc;
using format::test::SeededTest;

namespace {

class GptqBlockTest : public SeededTest {
protected:
  /// A real U (upper factor of a damped, correlated H^-1) in f32, [k, k].
  std::vector<float> upperFactor(int64_t k) {
    test::Mixing mixing(k, rng);
    std::vector<double> h = test::hessianOf(mixing.sample(3 * k, rng), k);
    Preparation prep = prepareHessian(h.data(), k);
    EXPECT_TRUE(prep.ok) << prep.message;
    std::vector<float> u(prep.hinvChol.size());
    for (size_t i = 0; i < u.size(); ++i)
      u[i] = float(prep.hinvChol[i]);
    return u;
  }

  /// Block.h's loop, statement by statement (dynamic groups of g when
  /// groupOfColumn is null).
  void specLoop(const Grid &grid, int64_t rows, int64_t cols, float *w,
                int64_t ldw, const float *u, int64_t ldu, GroupParams *params,
                int64_t ldp, const int32_t *groupOfColumn, int64_t g,
                int64_t offset, int32_t *codes, float *err, double *loss) {
    std::string error;
    for (int64_t r = 0; r < rows; ++r) {
      float *row = w + r * ldw;
      for (int64_t j = 0; j < cols; ++j) {
        GroupParams &p = params[r * ldp + (groupOfColumn ? groupOfColumn[j]
                                                         : (offset + j) / g)];
        if (!groupOfColumn && (offset + j) % g == 0) {
          ASSERT_TRUE(grid.fit(row + j, g, p, error)) << error;
        }
        int32_t c = grid.code(row[j], p);
        float q = grid.value(c, p);
        float d = u[j * ldu + j];
        float t = row[j] - q;
        float e = t / d;
        for (int64_t c2 = j + 1; c2 < cols; ++c2) {
          float m = e * u[j * ldu + c2];
          row[c2] = row[c2] - m;
        }
        codes[r * cols + j] = c;
        err[r * cols + j] = e;
        loss[r] += 0.5 * double(e) * double(e);
      }
    }
  }

  void checkBlock(const char *encodingText, bool staticGroups) {
    SCOPED_TRACE(encodingText);
    const format::Encoding e = enc(encodingText);
    const int64_t rows = 12, cols = 64, ld = 80, offset = 64;
    std::string error;
    std::unique_ptr<Grid> grid = makeGrid(e, {}, error);
    ASSERT_TRUE(grid) << error;
    std::vector<float> u = upperFactor(cols);
    std::vector<float> w = normal(size_t(rows * ld), 0.02f);
    std::vector<float> wSpec = w;
    const std::vector<float> before = w;

    const int64_t g = e.isPerChannel() ? cols : e.groupSize;
    const int64_t groups = (offset + cols) / g;
    std::vector<GroupParams> params(size_t(rows * groups));
    std::vector<int32_t> groupOf;
    if (staticGroups) { // fitted up front, columns mapped to shuffled groups
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t gi = 0; gi < groups; ++gi) {
          std::vector<float> sample = normal(size_t(g), 0.02f);
          ASSERT_TRUE(grid->fit(sample.data(), g,
                                params[size_t(r * groups + gi)], error));
        }
      for (int64_t j = 0; j < cols; ++j)
        groupOf.push_back(int32_t(uniformInt(0, groups - 1)));
    }
    std::vector<GroupParams> paramsSpec = params;

    std::vector<int32_t> codes(size_t(rows * cols)), codesSpec(codes.size());
    std::vector<float> err(size_t(rows * cols)), errSpec(err.size());
    std::vector<double> loss(size_t(rows), 0.0), lossSpec(loss.size(), 0.0);
    BlockTile tile;
    tile.rows = rows;
    tile.cols = cols;
    tile.w = w.data() + 3; // a tile inside a wider matrix
    tile.ldw = ld;
    tile.u = u.data();
    tile.ldu = cols;
    tile.codes = codes.data();
    tile.ldc = cols;
    tile.err = err.data();
    tile.lde = cols;
    tile.rowLoss = loss.data();
    BlockGroups blockGroups;
    blockGroups.params = params.data();
    blockGroups.ld = groups;
    blockGroups.groupOfColumn = staticGroups ? groupOf.data() : nullptr;
    blockGroups.groupSize = g;
    blockGroups.columnOffset = offset;
    ASSERT_TRUE(quantizeBlock(*grid, tile, blockGroups, error)) << error;
    specLoop(*grid, rows, cols, wSpec.data() + 3, ld, u.data(), cols,
             paramsSpec.data(), groups, staticGroups ? groupOf.data() : nullptr,
             g, offset, codesSpec.data(), errSpec.data(), lossSpec.data());

    EXPECT_EQ(codes, codesSpec);
    EXPECT_EQ(0, std::memcmp(err.data(), errSpec.data(), err.size() * 4));
    EXPECT_EQ(0, std::memcmp(w.data(), wSpec.data(), w.size() * 4));
    EXPECT_EQ(loss, lossSpec);
    for (size_t i = 0; i < params.size(); ++i) {
      EXPECT_EQ(params[i].scale, paramsSpec[i].scale);
      EXPECT_EQ(params[i].zero, paramsSpec[i].zero);
    }
    // The loop does feed errors back: the tile changed beyond column 0.
    int changed = 0;
    for (int64_t r = 0; r < rows; ++r)
      changed += w[size_t(r * ld + 3 + cols - 1)] !=
                 before[size_t(r * ld + 3 + cols - 1)];
    EXPECT_GT(changed, 0);
  }
};

TEST_F(GptqBlockTest, DynamicGroupsFollowTheSpec) {
  checkBlock("int4, group = 32, scale = f16", false);
  checkBlock("uint4, group = 16, scale = f16, zero = int", false);
  checkBlock("fp4e2m1, group = 32, scale = f8E8M0FNU", false);
  checkBlock("nf4, group = 64, scale = f32", false);
}

TEST_F(GptqBlockTest, StaticGroupsFollowTheSpec) {
  checkBlock("int4, group = 32, scale = f16", true);
  checkBlock("uint8, group = 16, scale = bf16, zero = float", true);
  checkBlock("fp8e4m3, group = 32, scale = f32", true);
}

TEST_F(GptqBlockTest, DynamicGroupsMustTileTheBlock) {
  std::string error;
  std::unique_ptr<Grid> grid =
      makeGrid(enc("int4, group = 32, scale = f16"), {}, error);
  ASSERT_TRUE(grid);
  std::vector<float> w(48, 0.0f), u(48 * 48, 1.0f), err(48);
  std::vector<int32_t> codes(48);
  std::vector<GroupParams> params(2);
  BlockTile tile{1,  48,         w.data(), 48,     u.data(), 48, codes.data(),
                 48, err.data(), 48,       nullptr};
  BlockGroups groups;
  groups.params = params.data();
  groups.ld = 2;
  groups.groupSize = 32;
  EXPECT_FALSE(quantizeBlock(*grid, tile, groups, error));
  EXPECT_NE(error.find("whole groups: 48 columns at offset 0 with group 32"),
            std::string::npos)
      << error;
}

TEST_F(GptqBlockTest, LazyUpdateFollowsTheSpec) {
  const int64_t rows = 7, b = 32, rest = 45, k = b + rest;
  std::vector<float> u = normal(size_t(b * k)); // rows i1..i2 of some U
  std::vector<float> e = normal(size_t(rows * b));
  std::vector<float> w = normal(size_t(rows * k)), wSpec = w;
  lazyUpdate(rows, b, rest, e.data(), b, u.data() + b, k, w.data() + b, k);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < rest; ++c) {
      float a = 0.0f;
      double exact = 0;
      for (int64_t j = 0; j < b; ++j) {
        float m = e[size_t(r * b + j)] * u[size_t(j * k + b + c)];
        a = a + m;
        exact += double(e[size_t(r * b + j)]) * u[size_t(j * k + b + c)];
      }
      float &spec = wSpec[size_t(r * k + b + c)];
      double before = spec;
      spec = spec - a;
      EXPECT_NEAR(spec, before - exact, 1e-5 * (1 + std::fabs(exact)));
    }
  EXPECT_EQ(0, std::memcmp(w.data(), wSpec.data(), w.size() * 4));
}

/// The block size changes only the order of f32 additions: at least 99.5%
/// of the codes agree and the loss to 2e-3 relative. Rows are independent
/// and one flipped code cascades through the rest of its row (up to K codes,
/// 0.4% of this layer), so the bounds allow a few cascades: over 550 seeds
/// the worst case was 99.83% and 8.8e-4 (99.9% and 1e-3, the earlier bounds,
/// failed about one seed in 40). A wrong block update differs by far more.
TEST_F(GptqBlockTest, BlockSizeChangesOnlyRounding) {
  const int64_t n = 256, k = 384;
  test::Mixing mixing(k, rng);
  std::vector<double> h = test::hessianOf(mixing.sample(1024, rng), k);
  std::vector<float> w = normal(size_t(n * k), 0.02f);
  const format::Encoding e = enc("int4, group = 32, scale = f16");
  std::string error;
  GptqResult reference;
  GptqOptions options;
  options.blockSize = k;
  ASSERT_TRUE(
      quantizeGPTQ(w.data(), n, k, h.data(), e, options, reference, error))
      << error;
  for (int64_t block : {32, 128}) {
    options.blockSize = block;
    GptqResult result;
    ASSERT_TRUE(
        quantizeGPTQ(w.data(), n, k, h.data(), e, options, result, error))
        << error;
    int64_t same = 0;
    for (size_t i = 0; i < result.weight.codes.size(); ++i)
      same += result.weight.codes[i] == reference.weight.codes[i];
    double agree = double(same) / double(n * k);
    EXPECT_GE(agree, 0.995) << "block " << block;
    std::cout << "[ blocks   ] block " << block << " vs " << k << ": "
              << 100 * agree << "% of codes equal, loss " << result.loss
              << " vs " << reference.loss << "\n";
    EXPECT_NEAR(result.loss, reference.loss, 2e-3 * reference.loss)
        << "block " << block;
  }
}

} // namespace
