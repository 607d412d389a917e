//===- LayoutTest.cpp - #qf.layout text and the tiled 4-bit repack --------===//

#include "qfuse/format/Layout.h"

#include "TestUtil.h"

using namespace qfuse::format;
using qfuse::format::test::enc;
using qfuse::format::test::SeededTest;

namespace {

TEST(LayoutTest, ParsePrint) {
  const char *canonical[] = {"row_major", "tiled, tile_n = 1, tile_k = 64",
                             "tiled, tile_n = 4, tile_k = 256, interleave = 2"};
  for (const char *text : canonical) {
    Layout layout;
    std::string error;
    ASSERT_TRUE(parseLayout(text, layout, error)) << error;
    EXPECT_EQ(printLayout(layout), text);
  }
  Layout layout;
  std::string error;
  ASSERT_TRUE(parseLayout("#qf.layout<tiled, tile_k = 32, tile_n = 1, "
                          "interleave = 1>",
                          layout, error))
      << error;
  EXPECT_EQ(printLayout(layout), "tiled, tile_n = 1, tile_k = 32");
  EXPECT_EQ(layout.interleave, 1);
}

TEST(LayoutTest, Errors) {
  const std::pair<const char *, const char *> cases[] = {
      {"blocked", "unknown layout 'blocked'; expected 'row_major' or 'tiled'"},
      {"row_major, tile_n = 2",
       "row_major layout takes no tile_n, tile_k or interleave"},
      {"tiled, tile_n = 1", "tiled layout needs positive tile_n and tile_k, "
                            "got 1 and 0"},
      {"tiled, tile_n = 4, tile_k = 64, interleave = 3",
       "interleave must be positive and divide tile_n = 4, got 3"},
      {"tiled, tile_n = 1, tile_k = 64, tile_m = 2",
       "unknown layout entry 'tile_m'; expected tile_n, tile_k or interleave"},
      {"tiled, tile_n = 1, tile_n = 2, tile_k = 64", "duplicate entry 'tile_n'"},
      {"tiled, tile_n = x, tile_k = 64",
       "expected an integer value for 'tile_n'"},
  };
  for (const auto &[text, message] : cases) {
    Layout layout;
    std::string error;
    EXPECT_FALSE(parseLayout(text, layout, error)) << text;
    EXPECT_EQ(error, message);
  }
}

TEST(LayoutTest, TiledWordsFollowTheNibbleOrder) {
  // One row of 16 int4 codes e0..e15 with distinct stored nibbles.
  Encoding e = enc("uint4, per_channel, scale = f16, zero = int");
  Unpacked u;
  for (int i = 0; i < 16; ++i)
    u.codes.push_back(15 - i);
  u.scales = {1.0f};
  u.zeros = {8.0f};
  TensorMap rowMajor, tiled;
  std::string error;
  ASSERT_TRUE(pack(e, u, 1, 16, rowMajor, error)) << error;
  Layout layout;
  ASSERT_TRUE(parseLayout("tiled, tile_n = 1, tile_k = 16", layout, error));
  ASSERT_TRUE(repack(e, layout, rowMajor, 1, 16, tiled, error)) << error;
  // LayoutUtils.h: tiled bits 31..0 = e7 e5 e3 e1 e6 e4 e2 e0 per word.
  for (int word = 0; word < 2; ++word) {
    uint32_t expected = 0;
    const int order[8] = {0, 2, 4, 6, 1, 3, 5, 7};
    for (int slot = 0; slot < 8; ++slot)
      expected |= uint32_t(u.codes[8 * word + order[slot]]) << (4 * slot);
    const uint8_t *b = tiled[kCodes].data.data() + 4 * word;
    EXPECT_EQ(uint32_t(b[0] | b[1] << 8 | b[2] << 16 | uint32_t(b[3]) << 24),
              expected)
        << "word " << word;
  }
  // Everything but the codes is untouched.
  EXPECT_EQ(tiled[kScales].data, rowMajor[kScales].data);
  EXPECT_EQ(tiled[kZeros].data, rowMajor[kZeros].data);
}

class LayoutRandomTest : public SeededTest {};

TEST_F(LayoutRandomTest, RepackRoundTrips) {
  for (const char *text :
       {"int4, group = 32, scale = f16", "nf4, group = 64, scale = f32",
        "fp4e2m1, group = 16, scale = f8E4M3FN, global_scale",
        "int4, group = 32, scale = f16, sparse = 2:4",
        "codebook, bits = 4, table = \"t\" : f16, per_channel, scale = f16"}) {
    Encoding e = enc(text);
    const int64_t n = uniformInt(1, 8), k = 64 * uniformInt(1, 3);
    std::vector<float> w = normal(size_t(n * k));
    std::vector<float> table(16);
    for (int i = 0; i < 16; ++i)
      table[i] = float(i - 8) / 8;
    QuantizeOptions options;
    options.table = table.data();
    TensorMap rowMajor, tiled, back;
    std::string error;
    ASSERT_TRUE(quantizeRTN(e, w.data(), n, k, rowMajor, error, options))
        << error;
    Layout layout;
    ASSERT_TRUE(parseLayout("tiled, tile_n = 1, tile_k = 32", layout, error));
    ASSERT_TRUE(repack(e, layout, rowMajor, n, k, tiled, error)) << error;
    ASSERT_TRUE(unrepack(e, layout, tiled, n, k, back, error)) << error;
    for (const auto &[name, tensor] : rowMajor)
      EXPECT_EQ(back[name].data, tensor.data) << text << ": " << name;
    if (k >= 8)
      EXPECT_NE(tiled[kCodes].data, rowMajor[kCodes].data) << text;
  }
}

TEST(LayoutTest, RepackRejectsUndefinedLayouts) {
  Layout tiled1, tiled4, rowMajor;
  std::string error;
  ASSERT_TRUE(parseLayout("tiled, tile_n = 1, tile_k = 32", tiled1, error));
  ASSERT_TRUE(parseLayout("tiled, tile_n = 4, tile_k = 32", tiled4, error));
  TensorMap c, out;
  std::vector<float> w(4 * 64, 0.5f);
  Encoding int8 = enc("int8, per_channel, scale = f16");
  ASSERT_TRUE(quantizeRTN(int8, w.data(), 4, 64, c, error)) << error;
  EXPECT_FALSE(repack(int8, tiled1, c, 4, 64, out, error));
  EXPECT_EQ(error, "the byte order of <tiled, tile_n = 1, tile_k = 32> is not "
                   "defined for <int8, per_channel, scale = f16>: tiled "
                   "layouts are defined for 4-bit codes with tile_n = 1 and "
                   "interleave = 1");
  EXPECT_TRUE(repack(int8, rowMajor, c, 4, 64, out, error)) << error;
  EXPECT_EQ(out[kCodes].data, c[kCodes].data);

  Encoding int4 = enc("int4, per_channel, scale = f16");
  ASSERT_TRUE(quantizeRTN(int4, w.data(), 4, 64, c, error)) << error;
  EXPECT_FALSE(repack(int4, tiled4, c, 4, 64, out, error));
  std::vector<float> w48(4 * 48, 0.5f);
  ASSERT_TRUE(quantizeRTN(int4, w48.data(), 4, 48, c, error)) << error;
  EXPECT_FALSE(repack(int4, tiled1, c, 4, 48, out, error));
  EXPECT_EQ(error, "tiled layout needs tile_k to divide K; got tile_k = 32, "
                   "K = 48");
}

} // namespace
