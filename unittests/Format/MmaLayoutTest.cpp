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

/// A named codebook table of `enc` (2^bits evenly spread values), or none.
std::vector<float> namedTable(const Encoding &enc) {
  if (!enc.hasNamedTable())
    return {};
  const int64_t entries = int64_t(1) << enc.indexBits;
  std::vector<float> table(static_cast<size_t>(entries));
  for (int64_t i = 0; i < entries; ++i)
    table[i] = roundToScalarType(float(2 * i - entries + 1) / float(entries),
                                 enc.tableType);
  return table;
}

/// Code `index` of a row-major LSB-first stream of `bits`-bit codes.
uint32_t codeAt(const std::vector<uint8_t> &bytes, int64_t index,
                unsigned bits) {
  return getBits(bytes.data(), index, bits);
}

/// The code at `pos` of fragment-layout bytes (MmaLayout.h).
uint32_t fragmentCodeAt(const std::vector<uint8_t> &bytes,
                        MmaCodePosition pos, unsigned bits) {
  unsigned field = mmaFieldBits(bits);
  uint32_t code = getBits(bytes.data(), pos.word * (32 / field) + pos.slot,
                          field);
  if (pos.highBit >= 0)
    code |= getBits(bytes.data(), pos.highBit, 1) << field;
  return code;
}

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

/// 2- and 3-bit codes: lane L's word s holds slab s of all four n tiles,
/// element 4 j + v in field 4 j + v (bits 2 (4 j + v)..); 3-bit codes keep
/// their third bit in the high plane, bit 16 s + 4 j + v of the lane's word
/// at byte 256 of the tile. Every value must be B[k][n] of the PTX fragment.
TEST(MmaLayoutTest, TwoAndThreeBitWordsHoldTheLanesFragments) {
  const int64_t n = 64, k = 64;
  for (unsigned bits : {2u, 3u}) {
    SCOPED_TRACE(std::to_string(bits) + "-bit codes");
    const int64_t tileWords = 32 * 32 * bits / 32;
    std::set<int64_t> seen;
    for (int64_t tn = 0; tn < n / 32; ++tn)
      for (int64_t tk = 0; tk < k / 32; ++tk)
        for (int64_t lane = 0; lane < 32; ++lane)
          for (int64_t s = 0; s < 2; ++s)
            for (int64_t j = 0; j < 4; ++j)
              for (int v = 0; v < 4; ++v) {
                int64_t g = lane / 4, t = lane % 4;
                int64_t tile = tn * (k / 32) + tk;
                int64_t row = tn * 32 + j * 8 + g;
                int64_t col = tk * 32 + s * 16 + 2 * t + v % 2 + 8 * (v / 2);
                MmaCodePosition pos = mmaCodePosition(row, col, k, bits);
                EXPECT_EQ(pos.word, tile * tileWords + lane * 2 + s);
                EXPECT_EQ(pos.slot, 4 * j + v) << "lane " << lane;
                int64_t high =
                    (tile * tileWords + 64 + lane) * 32 + 16 * s + 4 * j + v;
                EXPECT_EQ(pos.highBit, bits == 3 ? high : -1);
                EXPECT_TRUE(seen.insert(pos.word * 16 + pos.slot).second);
                if (bits == 3) // the high plane holds the bits once each too
                  EXPECT_TRUE(seen.insert(-1 - pos.highBit).second);
              }
    EXPECT_EQ(seen.size(), size_t(n * k * (bits == 3 ? 2 : 1)));
  }
}

TEST(MmaLayoutTest, RepackRoundTrip) {
  std::mt19937 rng(7);
  const int64_t n = 96, k = 128;
  for (const char *text :
       {"int4, group = 32, scale = f16", "nf4, group = 64, scale = f32",
        "int8, per_channel, scale = f16",
        "uint8, group = 64, scale = f16, zero = int",
        "fp8e4m3, per_channel, scale = f32",
        "codebook, bits = 2, table = dense<[-1.0, -0.25, 0.25, 1.0]> : "
        "tensor<4xf16>, group = 64, scale = f16",
        "codebook, bits = 3, table = \"t3\" : f16, group = 32, scale = f16",
        "codebook, bits = 8, table = \"t8\" : f32, per_channel, scale = f16",
        "uint4, group = 32, scale = f16, zero = float"}) {
    Encoding e = enc(text);
    std::normal_distribution<float> normal;
    std::vector<float> w(size_t(n * k));
    for (float &v : w)
      v = normal(rng);
    TensorMap rowMajor;
    std::string quantError;
    std::vector<float> table = namedTable(e);
    QuantizeOptions options;
    options.table = table.empty() ? nullptr : table.data();
    ASSERT_TRUE(quantizeRTN(e, w.data(), n, k, rowMajor, quantError, options))
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
        EXPECT_EQ(codeAt(rowMajor.at(kCodes).data, r * k + c, bits),
                  fragmentCodeAt(packed.at(kCodes).data, pos, bits))
            << r << ", " << c;
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
  EXPECT_FALSE(repack(enc("int4, group = 32, scale = f16, sparse = 2:4"),
                      layout, in, 32, 64, out, error));
  EXPECT_NE(error.find("dense 2-, 3-, 4- and 8-bit codes"), std::string::npos)
      << error;
  EXPECT_FALSE(repack(enc("codebook, bits = 5, table = \"t\" : f16, "
                          "group = 32, scale = f16"),
                      layout, in, 32, 64, out, error));
  EXPECT_NE(error.find("dense 2-, 3-, 4- and 8-bit codes"), std::string::npos)
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
  for (Shape shape :
       {Shape{40, 48, "int4, group = 16, scale = f16"},
        Shape{33, 1000, "int4, per_channel, scale = f16"},
        Shape{7, 40, "int8, per_channel, scale = f16"},
        Shape{65, 520, "fp8e4m3, per_channel, scale = f32"},
        Shape{45, 1008, "codebook, bits = 2, table = \"t2\" : f16, "
                        "group = 16, scale = f16"},
        Shape{33, 520, "codebook, bits = 3, table = \"t3\" : f32, "
                       "per_channel, scale = f16"},
        Shape{100, 40, "codebook, bits = 8, table = \"t8\" : f16, "
                       "per_channel, scale = f32"}}) {
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
    std::vector<float> table = namedTable(e);
    QuantizeOptions options;
    options.table = table.empty() ? nullptr : table.data();
    ASSERT_TRUE(quantizeRTN(e, w.data(), n, k, rowMajor, error, options))
        << error;
    ASSERT_TRUE(repack(e, layout, rowMajor, n, k, packed, error)) << error;
    const Tensor &codes = packed.at(kCodes);
    const std::vector<int64_t> shapeWant = {mmaPaddedN(n),
                                            mmaPaddedK(k) * bits / 8};
    EXPECT_EQ(codes.shape, shapeWant);
    ASSERT_EQ(codes.data.size(), size_t(shapeWant[0] * shapeWant[1]));
    // Every code in place; every other bit (the padding) zero.
    const unsigned field = mmaFieldBits(bits);
    const int64_t perWord = 32 / field;
    std::vector<bool> real(codes.data.size() * 8, false);
    const std::vector<uint8_t> &rm = rowMajor.at(kCodes).data;
    for (int64_t r = 0; r < n; ++r)
      for (int64_t c = 0; c < k; ++c) {
        MmaCodePosition pos = mmaCodePosition(r, c, k, bits);
        int64_t firstBit = (pos.word * perWord + pos.slot) * field;
        for (unsigned i = 0; i < field; ++i)
          real[firstBit + i] = true;
        if (pos.highBit >= 0)
          real[pos.highBit] = true;
        ASSERT_EQ(fragmentCodeAt(codes.data, pos, bits),
                  codeAt(rm, r * k + c, bits))
            << r << ", " << c;
      }
    for (size_t i = 0; i < real.size(); ++i)
      if (!real[i])
        ASSERT_EQ(getBits(codes.data.data(), int64_t(i), 1), 0u)
            << "padding bit " << i;
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
