//===- SparseFieldGatherTest.cpp - 2:4 layouts as two gathers -------------===//
//
// runFieldGather (the generated kernel's arithmetic on the host) of the
// two gathers format::sparseRepackGathers makes (kept codes, and 2-bit
// positions with padded quads at (0, 1)) must give exactly format::repack's
// codes and meta in the 2:4 fragment layout, for every 2:4 encoding and
// shape of GatherCases.h (f16 kept values as 16-bit fields), on
// quantizeRTN's components and on random bits;
// and repackGather's one gather of the kept codes must give repack's whole
// matvec layout of a 2:4 weight (its metadata stays row-major).
//
//===----------------------------------------------------------------------===//

#include "GatherCases.h"
#include "TestUtil.h"

#include "qfuse/format/FieldGather.h"
#include "qfuse/format/SparseMmaLayout.h"

using namespace qfuse::format;
using namespace qfuse::format::test;

namespace {

class SparseFieldGatherTest : public ::testing::Test, protected Seeded {
protected:
  void TearDown() override { reportSeedOnFailure(); }

  /// Gathers `components` and compares with repack; false where no plan.
  bool gathersLikeRepack(const Encoding &enc, const Layout &layout, int64_t n,
                         int64_t k, const TensorMap &components) {
    TensorMap host;
    std::string error, why;
    EXPECT_TRUE(repack(enc, layout, components, n, k, host, error)) << error;
    FieldGather codes, meta;
    if (!sparseRepackGathers(enc, layout, n, k, codes, meta, why))
      return false;
    EXPECT_TRUE(meta.padParity);
    EXPECT_FALSE(codes.padParity);
    for (auto [g, name] : {std::pair{&codes, kCodes}, std::pair{&meta, kMetadata}}) {
      std::vector<uint8_t> out;
      EXPECT_TRUE(runFieldGather(*g, components.at(name).data.data(), out));
      EXPECT_EQ(g->dstBytes, int64_t(host.at(name).data.size())) << name;
      out.resize(size_t(g->dstBytes));
      EXPECT_EQ(out, host.at(name).data) << name;
    }
    return true;
  }
};

Encoding encodingOf(const std::string &text) {
  Encoding enc;
  std::string error;
  EXPECT_TRUE(parseEncoding(text, enc, error)) << text << ": " << error;
  return enc;
}

TEST_F(SparseFieldGatherTest, RepackEveryEncodingAndShape) {
  Layout layout;
  std::string error;
  ASSERT_TRUE(parseLayout(sparseGatherLayout(), layout, error)) << error;
  int gathered = 0, host = 0;
  for (const std::string &text : sparseGatherEncodings())
    for (auto [n, k] : sparseGatherShapes()) {
      SCOPED_TRACE(text + " [" + std::to_string(n) + ", " +
                   std::to_string(k) + "]");
      Encoding enc = encodingOf(text);
      TensorMap components;
      Unpacked u;
      ASSERT_TRUE(randomComponents(enc, n, k, rng, components, u));
      if (!gathersLikeRepack(enc, layout, n, k, components)) {
        ADD_FAILURE() << "no plan for a 2:4 weight";
        ++host;
        continue;
      }
      randomizeSparseBits(components, rng);
      EXPECT_TRUE(gathersLikeRepack(enc, layout, n, k, components));
      ++gathered;
    }
  EXPECT_EQ(gathered, 30); // f16 kept values as 16-bit fields too
  EXPECT_EQ(host, 0);
}

// The matvec's tiled layout of a 2:4 weight: repackGather's one gather of
// the kept codes, with every other component (meta included) kept, must be
// repack's whole layout; where repack refuses (8- and 16-bit kept values,
// K that tile_k does not divide) there is no plan.
TEST_F(SparseFieldGatherTest, MatvecLayoutIsOneGatherOfTheKeptCodes) {
  Layout layout;
  std::string error;
  ASSERT_TRUE(parseLayout(sparseMatvecLayout(), layout, error)) << error;
  int gathered = 0, refused = 0, invalid = 0;
  for (const std::string &text : sparseGatherEncodings())
    for (auto [n, k] : sparseMatvecShapes())
      for (bool randomBits : {false, true}) {
        SCOPED_TRACE(text + " [" + std::to_string(n) + ", " +
                     std::to_string(k) + "]" + (randomBits ? " random" : ""));
        Encoding enc = encodingOf(text);
        TensorMap components, host;
        Unpacked u;
        if (!randomComponents(enc, n, k, rng, components, u)) {
          ++invalid; // a group that does not divide K under 2:4
          continue;
        }
        if (randomBits)
          randomizeSparseBits(components, rng);
        FieldGather g;
        std::string why;
        const bool planned = repackGather(enc, layout, n, k, nullptr, g, why);
        if (!repack(enc, layout, components, n, k, host, error)) {
          EXPECT_FALSE(planned) << "a plan for what repack refuses: " << error;
          ++refused;
          continue;
        }
        ASSERT_TRUE(planned) << why;
        EXPECT_EQ(g.k, k / 2); // kept columns
        std::vector<uint8_t> out;
        ASSERT_TRUE(runFieldGather(g, components.at(kCodes).data.data(), out));
        ASSERT_EQ(g.dstBytes, int64_t(host.at(kCodes).data.size()));
        out.resize(size_t(g.dstBytes));
        TensorMap laid = components;
        laid[kCodes].data = out;
        ASSERT_EQ(laid.size(), host.size());
        for (const auto &[name, tensor] : host) {
          EXPECT_EQ(laid.at(name).data, tensor.data) << name;
          EXPECT_EQ(laid.at(name).shape, tensor.shape) << name;
        }
        ++gathered;
      }
  EXPECT_EQ(gathered, 2 * 5 * 2); // int4 and uint4, K a multiple of 32
  EXPECT_EQ(invalid, 2 * 2 * 2);   // group 32 at K = 48 and 208
  EXPECT_EQ(refused, 6 * 7 * 2 - gathered - invalid);
}

TEST_F(SparseFieldGatherTest, TablesAreOneTileOfEveryPosition) {
  Layout layout;
  std::string error, why;
  ASSERT_TRUE(parseLayout(sparseGatherLayout(), layout, error)) << error;
  for (const char *text : {"int4, per_channel, scale = f16, sparse = 2:4",
                           "int8, per_channel, scale = f16, sparse = 2:4",
                           "f16, sparse = 2:4"}) {
    FieldGather codes, meta;
    ASSERT_TRUE(sparseRepackGathers(encodingOf(text), layout, 45, 200, codes,
                                    meta, why))
        << why;
    for (const FieldGather *g : {&codes, &meta}) {
      std::vector<int32_t> sorted = g->table;
      std::sort(sorted.begin(), sorted.end());
      ASSERT_EQ(sorted.size(), size_t(kSparseMmaTileN * kSparseMmaTileK));
      EXPECT_EQ(std::adjacent_find(sorted.begin(), sorted.end()), sorted.end());
      EXPECT_GE(sorted.front(), 0); // no hole: every field is a position
      EXPECT_EQ(g->n, 45);
      EXPECT_EQ(g->k, 100); // kept columns
      EXPECT_EQ(g->tilesK, 2);
    }
    EXPECT_EQ(meta.dstBits, 2u);
  }
}

TEST_F(SparseFieldGatherTest, OtherLayoutsAndWidthsHaveNoPlan) {
  Layout mma, rowMajor;
  std::string error, why;
  ASSERT_TRUE(parseLayout("tiled, tile_n = 32, tile_k = 32", mma, error));
  ASSERT_TRUE(parseLayout("row_major", rowMajor, error));
  FieldGather codes, meta;
  Encoding int4 = encodingOf("int4, per_channel, scale = f16, sparse = 2:4");
  EXPECT_FALSE(sparseRepackGathers(int4, mma, 32, 128, codes, meta, why));
  EXPECT_FALSE(sparseRepackGathers(int4, rowMajor, 32, 128, codes, meta, why));
  Layout sparse;
  ASSERT_TRUE(parseLayout(sparseGatherLayout(), sparse, error));
  // 16-bit kept values are 16-bit fields; dense 16-bit weights have none.
  ASSERT_TRUE(sparseRepackGathers(encodingOf("bf16, sparse = 2:4"), sparse, 32,
                                  128, codes, meta, why))
      << why;
  EXPECT_EQ(codes.dstBits, 16u);
  EXPECT_EQ(meta.dstBits, 2u);
  FieldGather dense;
  EXPECT_FALSE(repackGather(encodingOf("f16"), sparse, 32, 128, nullptr, dense,
                            why));
  // The one-gather plan leaves the metadata alone, so it must refuse every
  // layout that moves it or needs no repack.
  FieldGather g;
  for (const Layout *l : {&sparse, &mma, &rowMajor}) {
    EXPECT_FALSE(repackGather(int4, *l, 32, 128, nullptr, g, why))
        << printLayout(*l);
    EXPECT_NE(why.find("no device repack into"), std::string::npos) << why;
  }
}

} // namespace
