//===- OddWidthGatherTest.cpp - gathers of fields that straddle words -----===//
//
// runFieldGather (the kernel's arithmetic on the host) of the plans that
// codeBytesGather / repackGather make for codes of 2 to 8 bits, 3, 5, 6
// and 7 among them, against format::pack, format::repack and a stream
// built bit by bit, at the shapes and random codes of OddWidthCases.h:
// rows that end inside a word, a last word that is partly padding, fields
// that begin in one word and end in the next; 3-bit codes into the mma
// fragment layout's two bit planes as 1-bit fields. Then a 3-bit word worked
// out by hand, and code bytes out of an odd width's range.
//
//===----------------------------------------------------------------------===//

#include "OddWidthCases.h"
#include "TestUtil.h"

#include "qfuse/format/FieldGather.h"
#include "qfuse/format/Layout.h"

using namespace qfuse::format;
using namespace qfuse::format::test;

namespace {

class OddWidthGatherTest : public ::testing::Test {
protected:
  void TearDown() override {
    if (HasFailure())
      std::cerr << "[ seed     ] QFUSE_TEST_SEED=" << seed << "\n";
  }

  uint32_t seed = seedOr(19);
  std::mt19937 rng{seed};
};

std::vector<uint8_t> head(const std::vector<uint8_t> &bytes, int64_t size) {
  return std::vector<uint8_t>(bytes.begin(), bytes.begin() + size);
}

TEST_F(OddWidthGatherTest, CodeBytesGiveThePackedStream) {
  int odd = 0, unalignedRows = 0;
  for (const std::string &text : oddWidthEncodings())
    for (auto [n, k] : oddWidthShapes()) {
      SCOPED_TRACE(text + " [" + std::to_string(n) + ", " +
                   std::to_string(k) + "]");
      Encoding e = enc(text);
      Unpacked u = randomCodebook(e, n, k, rng);
      TensorMap host;
      std::string error;
      ASSERT_TRUE(pack(e, u, n, k, host, error)) << error;
      const std::vector<uint8_t> &codes = host.at(kCodes).data;
      FieldGather g;
      ASSERT_TRUE(codeBytesGather(e, n, k, g, error)) << error;
      ASSERT_EQ(g.dstBits, e.indexBits);
      ASSERT_EQ(g.dstBytes, int64_t(codes.size()));
      ASSERT_EQ(g.words(), (n * k * e.indexBits + 31) / 32);
      std::vector<uint8_t> bytes = lowBytes(u.codes), out;
      ASSERT_TRUE(runFieldGather(g, bytes.data(), out));
      ASSERT_EQ(int64_t(out.size()), g.words() * 4);
      EXPECT_EQ(head(out, g.dstBytes), codes);
      EXPECT_EQ(head(out, g.dstBytes),
                streamOf(u.codes, e.indexBits, codes.size()));
      // The last word's bits past the stream are padding: zero.
      for (size_t i = codes.size(); i < out.size(); ++i)
        EXPECT_EQ(out[i], 0) << "padding byte " << i;
      odd += 32 % g.dstBits != 0;
      unalignedRows += (k * e.indexBits) % 32 != 0;
    }
  EXPECT_EQ(odd, 8 * int(oddWidthShapes().size()));
  EXPECT_GE(unalignedRows, 30);
}

TEST_F(OddWidthGatherTest, ActOrderRepackToRowMajor) {
  Layout rowMajor;
  std::string error;
  ASSERT_TRUE(parseLayout("row_major", rowMajor, error)) << error;
  int gathered = 0;
  for (const std::string &text : oddWidthEncodings())
    for (auto [n, k] : oddWidthShapes()) {
      Encoding e = enc(text);
      if (!e.actOrder)
        continue;
      SCOPED_TRACE(text + " [" + std::to_string(n) + ", " +
                   std::to_string(k) + "]");
      Unpacked u = randomCodebook(e, n, k, rng);
      TensorMap components, host;
      ASSERT_TRUE(pack(e, u, n, k, components, error)) << error;
      ASSERT_TRUE(repack(e, rowMajor, components, n, k, host, error))
          << error;
      FieldGather g;
      ASSERT_TRUE(repackGather(e, rowMajor, n, k, u.gIdx.data(), g, error))
          << error;
      ASSERT_EQ(g.srcBits, e.indexBits); // a packed stream, read across bytes
      std::vector<uint8_t> out;
      ASSERT_TRUE(runFieldGather(g, components.at(kCodes).data.data(), out));
      ASSERT_EQ(g.dstBytes, int64_t(host.at(kCodes).data.size()));
      EXPECT_EQ(head(out, g.dstBytes), host.at(kCodes).data);
      EXPECT_EQ(int32Tensor(g.perm).data, host.at(kPerm).data);
      EXPECT_EQ(int32Tensor(invertPermutation(g.perm)).data,
                host.at(kInvPerm).data);
      // The sorted stream, bit by bit: column j holds column perm[j].
      std::vector<int32_t> sorted(u.codes.size());
      for (int64_t r = 0; r < n; ++r)
        for (int64_t j = 0; j < k; ++j)
          sorted[size_t(r * k + j)] = u.codes[size_t(r * k + g.perm[j])];
      EXPECT_EQ(head(out, g.dstBytes),
                streamOf(sorted, e.indexBits, size_t(g.dstBytes)));
      ++gathered;
    }
  EXPECT_EQ(gathered, 4 * int(oddWidthShapes().size()));
}

// 3-bit codes in the mma fragment layout are two bit planes per tile
// (MmaLayout.h): one gather of 1-bit fields over the codes' bit columns,
// padded tiles included, act_order's perm per bit column; the perm
// component stays per code column (DeviceRepacker makes it).
TEST_F(OddWidthGatherTest, ThreeBitMmaPlanesAreOneBitFields) {
  Layout mma;
  std::string error;
  ASSERT_TRUE(parseLayout("tiled, tile_n = 32, tile_k = 32", mma, error));
  int gathered = 0;
  for (const std::string &text : oddWidthEncodings())
    for (auto [n, k] : oddWidthShapes()) {
      Encoding e = enc(text);
      if (e.indexBits != 3)
        continue;
      SCOPED_TRACE(text + " [" + std::to_string(n) + ", " +
                   std::to_string(k) + "]");
      Unpacked u = randomCodebook(e, n, k, rng);
      TensorMap components, host;
      ASSERT_TRUE(pack(e, u, n, k, components, error)) << error;
      ASSERT_TRUE(repack(e, mma, components, n, k, host, error)) << error;
      FieldGather g;
      ASSERT_TRUE(repackGather(e, mma, n, k,
                               e.actOrder ? u.gIdx.data() : nullptr, g, error))
          << error;
      ASSERT_EQ(g.dstBits, 1u);
      ASSERT_EQ(g.table.size(), 3072u); // 384 bytes a tile
      EXPECT_TRUE(std::all_of(g.table.begin(), g.table.end(),
                              [](int32_t e) { return e >= 0; }));
      std::vector<uint8_t> out;
      ASSERT_TRUE(runFieldGather(g, components.at(kCodes).data.data(), out));
      ASSERT_EQ(g.dstBytes, int64_t(host.at(kCodes).data.size()));
      EXPECT_EQ(head(out, g.dstBytes), host.at(kCodes).data);
      ++gathered;
    }
  EXPECT_EQ(gathered, 2 * int(oddWidthShapes().size()));
}

// Eleven 3-bit codes, 33 bits: field 10 (code 7 = 0b111) has bits 30-31
// in word 0 and bit 32, its top bit, alone in word 1.
TEST_F(OddWidthGatherTest, AThreeBitFieldAcrossTheWordEdge) {
  FieldGather g;
  g.dstBits = 3;
  g.srcBits = 8;
  g.srcRowBytes = 11;
  g.n = 1;
  g.k = 11;
  g.tilesK = 11;
  g.table = {0};
  g.fields = 11;
  g.dstBytes = 5;
  g.maxCode = 7;
  const std::vector<uint8_t> codes = {1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 7};
  std::vector<uint8_t> out;
  ASSERT_TRUE(runFieldGather(g, codes.data(), out));
  // Word 0: 0b11'010'001'000'111'110'101'100'011'010'001 (fields 10..0).
  const std::vector<uint8_t> want = {0xD1, 0x58, 0x1F, 0xD1, 0x01, 0, 0, 0};
  EXPECT_EQ(out, want);
}

TEST_F(OddWidthGatherTest, CodeBytesPastTheWidthAreRefused) {
  for (unsigned bits : {3u, 5u, 6u, 7u}) {
    Encoding e = enc("codebook, bits = " + std::to_string(bits) +
                     ", table = \"t\" : f16, per_channel, scale = f16");
    FieldGather g;
    std::string why;
    ASSERT_TRUE(codeBytesGather(e, 2, 24, g, why)) << why;
    std::vector<uint8_t> bytes(48, uint8_t((1u << bits) - 1)), out;
    EXPECT_TRUE(runFieldGather(g, bytes.data(), out)) << bits;
    bytes[29] = uint8_t(1u << bits); // one past the largest index
    EXPECT_FALSE(runFieldGather(g, bytes.data(), out)) << bits;
  }
}

} // namespace
