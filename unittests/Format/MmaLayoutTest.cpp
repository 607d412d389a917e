//===- MmaLayoutTest.cpp - the tensor-core fragment layout ----------------===//
//
// Checks MmaLayout.h's order against the PTX ISA's B-fragment definition of
// mma.m16n8k16 (lane 4 g + t holds B[k = 2t, 2t+1, 2t+8, 2t+9][n = g] of an
// 8-column n tile), and the repack round trip through repack()/unrepack().
//
//===----------------------------------------------------------------------===//

#include "qfuse/format/MmaLayout.h"

#include "qfuse/format/Layout.h"

#include "TestUtil.h"

#include <random>
#include <set>

using namespace qfuse::format;
using qfuse::format::test::enc;

namespace {

TEST(MmaLayoutTest, PositionsAreABijection) {
  const int64_t n = 64, k = 96;
  std::set<int64_t> seen;
  for (int64_t r = 0; r < n; ++r)
    for (int64_t c = 0; c < k; ++c) {
      MmaCodePosition pos = mmaCodePosition(r, c, k);
      ASSERT_GE(pos.slot, 0);
      ASSERT_LT(pos.slot, 8);
      ASSERT_LT(pos.word, n * k / 8);
      EXPECT_TRUE(seen.insert(pos.word * 8 + pos.slot).second)
          << "(" << r << ", " << c << ") collides";
    }
  EXPECT_EQ(seen.size(), size_t(n * k));
}

/// Decodes one lane's word the way the kernel does: pair i of the word is
/// (slot i, slot i + 4); pairs 0, 1 are b0, b1 of n tile 2 jp, pairs 2, 3 of
/// n tile 2 jp + 1. Every value must be B[k][n] of the PTX fragment.
TEST(MmaLayoutTest, WordsHoldTheLanesFragments) {
  const int64_t n = 64, k = 64;
  for (int64_t tn = 0; tn < n / 32; ++tn)
    for (int64_t tk = 0; tk < k / 32; ++tk)
      for (int64_t lane = 0; lane < 32; ++lane)
        for (int64_t w = 0; w < 4; ++w) {
          int64_t g = lane / 4, t = lane % 4, s = w / 2, jp = w % 2;
          int64_t word = ((tn * (k / 32) + tk) * 32 + lane) * 4 + w;
          for (int pair = 0; pair < 4; ++pair)
            for (int half = 0; half < 2; ++half) {
              int64_t j = 2 * jp + pair / 2;
              int64_t reg = pair % 2; // b0 or b1
              int64_t row = tn * 32 + j * 8 + g;
              int64_t col = tk * 32 + s * 16 + 2 * t + half + 8 * reg;
              MmaCodePosition pos = mmaCodePosition(row, col, k);
              EXPECT_EQ(pos.word, word);
              EXPECT_EQ(pos.slot, pair + 4 * half)
                  << "lane " << lane << " word " << w << " pair " << pair;
            }
        }
}

/// 8-bit codes: lane L's word 4 s + j holds n tile j's fragment of slab s,
/// byte v = B[k = 16 s + 2t + v % 2 + 8 (v / 2)][n = 8 j + g].
TEST(MmaLayoutTest, EightBitWordsHoldTheLanesFragments) {
  const int64_t n = 64, k = 64;
  std::set<int64_t> seen;
  for (int64_t tn = 0; tn < n / 32; ++tn)
    for (int64_t tk = 0; tk < k / 32; ++tk)
      for (int64_t lane = 0; lane < 32; ++lane)
        for (int64_t w = 0; w < 8; ++w) {
          int64_t g = lane / 4, t = lane % 4, s = w / 4, j = w % 4;
          int64_t word = ((tn * (k / 32) + tk) * 32 + lane) * 8 + w;
          for (int v = 0; v < 4; ++v) {
            int64_t row = tn * 32 + j * 8 + g;
            int64_t col = tk * 32 + s * 16 + 2 * t + v % 2 + 8 * (v / 2);
            MmaCodePosition pos = mmaCodePosition(row, col, k, 8);
            EXPECT_EQ(pos.word, word);
            EXPECT_EQ(pos.slot, v) << "lane " << lane << " word " << w;
            EXPECT_TRUE(seen.insert(pos.word * 4 + pos.slot).second);
          }
        }
  EXPECT_EQ(seen.size(), size_t(n * k));
}

TEST(MmaLayoutTest, RepackRoundTrip) {
  std::mt19937 rng(7);
  const int64_t n = 96, k = 128;
  for (const char *text :
       {"int4, group = 32, scale = f16", "nf4, group = 64, scale = f32",
        "int8, per_channel, scale = f16",
        "uint8, group = 64, scale = f16, zero = int",
        "fp8e4m3, per_channel, scale = f32"}) {
    Encoding e = enc(text);
    std::normal_distribution<float> normal;
    std::vector<float> w(size_t(n * k));
    for (float &v : w)
      v = normal(rng);
    TensorMap rowMajor;
    std::string quantError;
    ASSERT_TRUE(quantizeRTN(e, w.data(), n, k, rowMajor, quantError))
        << quantError;
    Layout layout;
    std::string error;
    ASSERT_TRUE(parseLayout("tiled, tile_n = 32, tile_k = 32", layout, error));
    EXPECT_TRUE(isMmaFragmentLayout(layout));
    TensorMap packed, back;
    ASSERT_TRUE(repack(e, layout, rowMajor, n, k, packed, error)) << error;
    EXPECT_NE(packed.at(kCodes).data, rowMajor.at(kCodes).data);
    EXPECT_EQ(packed.at(kScales).data, rowMajor.at(kScales).data);
    // Spot check against the position function.
    unsigned bits = codeBits(e);
    for (int64_t r : {0, 31, 33, 95})
      for (int64_t c : {0, 1, 9, 17, 127}) {
        MmaCodePosition pos = mmaCodePosition(r, c, k, bits);
        const std::vector<uint8_t> &rmBytes = rowMajor.at(kCodes).data;
        const std::vector<uint8_t> &pkBytes = packed.at(kCodes).data;
        int64_t idx = pos.word * (32 / bits) + pos.slot;
        if (bits == 8) {
          EXPECT_EQ(rmBytes[r * k + c], pkBytes[idx]) << r << ", " << c;
          continue;
        }
        int rm = (rmBytes[(r * k + c) / 2] >> (4 * (c % 2))) & 0xF;
        int pk = (pkBytes[idx / 2] >> (4 * (idx % 2))) & 0xF;
        EXPECT_EQ(rm, pk) << r << ", " << c;
      }
    ASSERT_TRUE(unrepack(e, layout, packed, n, k, back, error)) << error;
    EXPECT_EQ(back.at(kCodes).data, rowMajor.at(kCodes).data);
  }
}

TEST(MmaLayoutTest, RejectsWhatItDoesNotDefine) {
  Layout layout;
  std::string error;
  ASSERT_TRUE(parseLayout("tiled, tile_n = 32, tile_k = 32", layout, error));
  TensorMap in, out;
  EXPECT_FALSE(repack(enc("int4, group = 32, scale = f16, act_order"), layout,
                      in, 32, 64, out, error));
  EXPECT_NE(error.find("dense 4-bit and 8-bit codes"), std::string::npos)
      << error;
  EXPECT_FALSE(repack(enc("codebook, bits = 3, table = \"t\" : f16, "
                          "group = 32, scale = f16"),
                      layout, in, 32, 64, out, error));
  EXPECT_NE(error.find("dense 4-bit and 8-bit codes"), std::string::npos)
      << error;
}

// Shapes that are not whole tiles are padded to them: the codes of rows
// past N and columns past K are 0, the rest sit where mmaCodePosition says
// (with K padded), and unrepack restores the row-major bytes exactly.
TEST(MmaLayoutTest, PadsShapesThatAreNotWholeTiles) {
  const uint32_t seed = qfuse::format::test::freshSeed();
  SCOPED_TRACE("QFUSE_TEST_SEED=" + std::to_string(seed));
  std::mt19937 rng(seed);
  Layout layout;
  std::string error;
  ASSERT_TRUE(parseLayout("tiled, tile_n = 32, tile_k = 32", layout, error));
  struct Shape {
    int64_t n, k;
    const char *encoding;
  };
  for (Shape shape : {Shape{40, 48, "int4, group = 16, scale = f16"},
                      Shape{33, 1000, "int4, per_channel, scale = f16"},
                      Shape{7, 40, "int8, per_channel, scale = f16"},
                      Shape{65, 520, "fp8e4m3, per_channel, scale = f32"}}) {
    SCOPED_TRACE(std::string(shape.encoding) + " " + std::to_string(shape.n) +
                 "x" + std::to_string(shape.k));
    const int64_t n = shape.n, k = shape.k;
    Encoding e = enc(shape.encoding);
    const unsigned bits = codeBits(e);
    std::normal_distribution<float> normal;
    std::vector<float> w(size_t(n * k));
    for (float &v : w)
      v = normal(rng);
    TensorMap rowMajor, packed, back;
    ASSERT_TRUE(quantizeRTN(e, w.data(), n, k, rowMajor, error)) << error;
    ASSERT_TRUE(repack(e, layout, rowMajor, n, k, packed, error)) << error;
    const Tensor &codes = packed.at(kCodes);
    const std::vector<int64_t> shapeWant = {mmaPaddedN(n),
                                            mmaPaddedK(k) * bits / 8};
    EXPECT_EQ(codes.shape, shapeWant);
    ASSERT_EQ(codes.data.size(), size_t(shapeWant[0] * shapeWant[1]));
    // Every code in place; every other code (the padding) zero.
    const int64_t perWord = 32 / bits;
    std::vector<bool> real(codes.data.size() * 8 / bits, false);
    const std::vector<uint8_t> &rm = rowMajor.at(kCodes).data;
    auto codeAt = [&](const std::vector<uint8_t> &bytes, int64_t index) {
      return bits == 8 ? int(bytes[index])
                       : (bytes[index / 2] >> (4 * (index % 2))) & 0xF;
    };
    for (int64_t r = 0; r < n; ++r)
      for (int64_t c = 0; c < k; ++c) {
        MmaCodePosition pos = mmaCodePosition(r, c, k, bits);
        int64_t index = pos.word * perWord + pos.slot;
        real[index] = true;
        ASSERT_EQ(codeAt(codes.data, index), codeAt(rm, r * k + c))
            << r << ", " << c;
      }
    for (size_t i = 0; i < real.size(); ++i)
      if (!real[i])
        ASSERT_EQ(codeAt(codes.data, int64_t(i)), 0) << "padding code " << i;
    ASSERT_TRUE(unrepack(e, layout, packed, n, k, back, error)) << error;
    EXPECT_EQ(back.at(kCodes).data, rm);
    EXPECT_EQ(back.at(kCodes).shape, rowMajor.at(kCodes).shape);
    // A fragment-layout codes tensor of any other size is refused.
    TensorMap truncated = packed;
    truncated[kCodes].data.resize(truncated[kCodes].data.size() - 16);
    truncated[kCodes].shape = {shapeWant[0] - 1, shapeWant[1]};
    EXPECT_FALSE(unrepack(e, layout, truncated, n, k, back, error));
    EXPECT_NE(error.find("whole 32x32 tiles"), std::string::npos) << error;
  }
}

} // namespace
