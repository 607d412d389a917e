//===- SparseFieldGatherTest.cpp - 2:4 layouts as two gathers -------------===//
//
// runFieldGather (the generated kernel's arithmetic on the host) of the
// two gathers format::sparseRepackGathers makes (kept codes, and 2-bit
// positions with padded quads at (0, 1)) must give exactly format::repack's
// codes and meta in the 2:4 fragment layout, for every 2:4 encoding and
// shape of GatherCases.h, on quantizeRTN's components and on random bits.
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
        EXPECT_EQ(codeBits(enc), 16u) << "no plan for a gatherable width";
        ++host;
        continue;
      }
      randomizeSparseBits(components, rng);
      EXPECT_TRUE(gathersLikeRepack(enc, layout, n, k, components));
      ++gathered;
    }
  EXPECT_EQ(gathered, 25);
  EXPECT_EQ(host, 5);
}

TEST_F(SparseFieldGatherTest, TablesAreOneTileOfEveryPosition) {
  Layout layout;
  std::string error, why;
  ASSERT_TRUE(parseLayout(sparseGatherLayout(), layout, error)) << error;
  for (const char *text : {"int4, per_channel, scale = f16, sparse = 2:4",
                           "int8, per_channel, scale = f16, sparse = 2:4"}) {
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
  EXPECT_FALSE(sparseRepackGathers(encodingOf("f16, sparse = 2:4"), sparse, 32,
                                   128, codes, meta, why));
  EXPECT_NE(why.find("4 or 8 bits"), std::string::npos) << why;
}

} // namespace
