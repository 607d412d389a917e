//===- SparseMmaLayoutTest.cpp - the mma.sp fragment layout ---------------===//
//
// Checks SparseMmaLayout.h against the PTX ISA's definition of
// mma.sp.m16n8k32 (.f16): rebuilds each 16 x 32 A tile the way the
// hardware reads it from the lanes' registers (A: lane 4 g + t, register j
// holds a_{2j}, a_{2j+1}; a_i at row g + 8 ((i / 2) % 2), kept column
// 2 t + (i % 2) + 8 (i / 4); metadata of selector sel from lanes t = 2 sel,
// 2 sel + 1, lane t % 2 = h giving columns 16 h.., row g in bits 0-15 and
// g + 8 in bits 16-31, two 2-bit indices per quad) and compares it with the
// dense matrix the row-major codes and positions stand for. Then the
// repack round trip of every 2:4 encoding through repack()/unrepack().
//
//===----------------------------------------------------------------------===//

#include "qfuse/format/SparseMmaLayout.h"

#include "qfuse/format/Layout.h"

#include "TestUtil.h"

using namespace qfuse::format;
using qfuse::format::test::enc;

namespace {

class SparseMmaLayoutTest : public test::SeededTest {
protected:
  /// Random row-major kept codes ([N, K / 2] of `bits`) and positions.
  void randomRowMajor(int64_t n, int64_t k, unsigned bits,
                      std::vector<uint8_t> &codes, std::vector<uint8_t> &meta) {
    codes.assign(size_t(n * k / 2 * bits / 8), 0);
    for (uint8_t &b : codes)
      b = uint8_t(uniformInt(0, 255));
    const int64_t metaRow = (k + 7) / 8;
    meta.assign(size_t(n * metaRow), 0);
    for (int64_t r = 0; r < n; ++r)
      for (int64_t q = 0; q < k / 4; ++q) {
        int64_t a = uniformInt(0, 2), b = uniformInt(a + 1, 3);
        putBits(meta.data(), r * metaRow * 4 + 2 * q, 2, uint32_t(a));
        putBits(meta.data(), r * metaRow * 4 + 2 * q + 1, 2, uint32_t(b));
      }
  }
};

/// The dense [Np, Kp] matrix of code + 1 (0 where pruned or padded) that
/// row-major kept codes and positions stand for.
std::vector<int64_t> denseOfRowMajor(const std::vector<uint8_t> &codes,
                                     const std::vector<uint8_t> &meta,
                                     int64_t n, int64_t k, unsigned bits) {
  const int64_t np = sparseMmaPaddedN(n), kp = sparseMmaPaddedK(k);
  std::vector<int64_t> dense(size_t(np * kp), 0);
  for (int64_t r = 0; r < n; ++r)
    for (int64_t s = 0; s < k / 2; ++s) {
      uint32_t pos = getBits(meta.data(), r * ((k + 7) / 8) * 4 + s, 2);
      dense[r * kp + 4 * (s / 2) + pos] =
          int64_t(getBits(codes.data(), r * (k / 2) + s, bits)) + 1;
    }
  return dense;
}

/// What mma.sp reads as the dense A matrices from the layout's bytes: per
/// tile, slab and m16 tile, lane L's A registers and metadata word (PTX
/// ISA). Metadata of padded rows and columns must be a valid pattern too.
std::vector<int64_t> denseAsMmaSpReads(const std::vector<uint8_t> &codes,
                                       const std::vector<uint8_t> &meta,
                                       int64_t n, int64_t k, unsigned bits) {
  const int64_t np = sparseMmaPaddedN(n), kp = sparseMmaPaddedK(k);
  std::vector<int64_t> dense(size_t(np * kp), 0);
  const int64_t tilesK = kp / 128;
  for (int64_t tile = 0; tile < np / 32 * tilesK; ++tile)
    for (int64_t slab = 0; slab < 4; ++slab)
      for (int64_t wt = 0; wt < 2; ++wt) {
        // The 16 x 16 kept values, from each lane's four A registers.
        int64_t kept[16][16];
        for (int64_t lane = 0; lane < 32; ++lane) {
          int64_t g = lane / 4, t = lane % 4;
          for (int64_t a = 0; a < 8; ++a) {
            int64_t row = g + 8 * ((a / 2) % 2);
            int64_t col = 2 * t + (a % 2) + 8 * (a / 4);
            // Lane L's run of 64 codes, piece-major in the tile; slab s,
            // m16 tile wt: 8 values (a_i).
            int64_t inRun = 16 * slab + 8 * wt + a, perPiece = 128 / bits;
            int64_t index = tile * 2048 +
                            (32 * (inRun / perPiece) + lane) * perPiece +
                            inRun % perPiece;
            kept[row][col] = getBits(codes.data(), index, bits);
          }
        }
        // The metadata of selector wt: lanes t = 2 wt + h.
        for (int64_t g = 0; g < 8; ++g)
          for (int64_t h = 0; h < 2; ++h) {
            int64_t lane = 4 * g + 2 * wt + h;
            const uint8_t *bytes =
                meta.data() + 4 * (tile * 128 + 4 * lane + slab);
            uint32_t word = uint32_t(bytes[0]) | uint32_t(bytes[1]) << 8 |
                            uint32_t(bytes[2]) << 16 | uint32_t(bytes[3]) << 24;
            for (int64_t hi = 0; hi < 2; ++hi)
              for (int64_t q = 0; q < 4; ++q) {
                uint32_t i0 = (word >> (16 * hi + 4 * q)) & 3;
                uint32_t i1 = (word >> (16 * hi + 4 * q + 2)) & 3;
                EXPECT_LT(i0, i1) << "tile " << tile << " slab " << slab;
                int64_t row = 32 * (tile / tilesK) + 16 * wt + 8 * hi + g;
                int64_t col0 =
                    128 * (tile % tilesK) + 32 * slab + 16 * h + 4 * q;
                dense[row * kp + col0 + i0] =
                    kept[8 * hi + g][8 * h + 2 * q] + 1;
                dense[row * kp + col0 + i1] =
                    kept[8 * hi + g][8 * h + 2 * q + 1] + 1;
              }
          }
      }
  return dense;
}

TEST_F(SparseMmaLayoutTest, LanesHoldTheirMmaSpRegisters) {
  for (unsigned bits : {4u, 8u, 16u})
    for (auto [n, k] :
         {std::pair<int64_t, int64_t>{64, 256}, {40, 200}, {32, 132}}) {
      SCOPED_TRACE(std::to_string(bits) + " bits, " + std::to_string(n) +
                   " x " + std::to_string(k));
      std::vector<uint8_t> codes, meta, tiledCodes, tiledMeta;
      randomRowMajor(n, k, bits, codes, meta);
      packSparseMma(codes, meta, n, k, bits, tiledCodes, tiledMeta);
      ASSERT_EQ(int64_t(tiledCodes.size()), sparseMmaCodeBytes(n, k, bits));
      ASSERT_EQ(int64_t(tiledMeta.size()), sparseMmaMetaBytes(n, k));
      std::vector<int64_t> read =
          denseAsMmaSpReads(tiledCodes, tiledMeta, n, k, bits);
      // The padding reads as code 0 at valid positions: drop it.
      const int64_t kp = sparseMmaPaddedK(k);
      for (int64_t r = 0; r < sparseMmaPaddedN(n); ++r)
        for (int64_t c = 0; c < kp; ++c)
          if (r >= n || c >= k / 4 * 4)
            read[r * kp + c] = 0;
      EXPECT_EQ(read, denseOfRowMajor(codes, meta, n, k, bits));
      std::vector<uint8_t> backCodes, backMeta;
      unpackSparseMma(tiledCodes, tiledMeta, n, k, bits, backCodes, backMeta);
      EXPECT_EQ(backCodes, codes);
      EXPECT_EQ(backMeta, meta);
    }
}

TEST_F(SparseMmaLayoutTest, RepackRoundTripEveryEncoding) {
  Layout layout;
  std::string error;
  ASSERT_TRUE(parseLayout("tiled, tile_n = 32, tile_k = 64", layout, error));
  EXPECT_TRUE(isSparseMmaLayout(layout));
  for (const char *text :
       {"f16, sparse = 2:4", "int4, group = 128, scale = f16, sparse = 2:4",
        "uint4, group = 128, scale = f16, zero = int, sparse = 2:4",
        "int8, per_channel, scale = f16, sparse = 2:4",
        "uint8, group = 64, scale = f16, zero = int, sparse = 2:4",
        "fp8e4m3, per_channel, scale = f32, sparse = 2:4"})
    for (auto [n, k] : {std::pair<int64_t, int64_t>{64, 256}, {72, 384}}) {
      SCOPED_TRACE(std::string(text) + " " + std::to_string(n) + "x" +
                   std::to_string(k));
      Encoding e = enc(text);
      std::vector<float> w = normal(size_t(n * k));
      TensorMap rowMajor, packed, back;
      ASSERT_TRUE(quantizeRTN(e, w.data(), n, k, rowMajor, error)) << error;
      ASSERT_TRUE(repack(e, layout, rowMajor, n, k, packed, error)) << error;
      EXPECT_EQ(packed.at(kCodes).shape,
                (std::vector<int64_t>{sparseMmaPaddedN(n),
                                      sparseMmaPaddedK(k) / 2 *
                                          int64_t(codeBits(e)) / 8}));
      EXPECT_EQ(
          packed.at(kMetadata).shape,
          (std::vector<int64_t>{sparseMmaPaddedN(n), sparseMmaPaddedK(k) / 8}));
      for (const auto &[name, t] : rowMajor)
        if (name != kCodes && name != kMetadata)
          EXPECT_EQ(packed.at(name).data, t.data) << name;
      for (const char *name : {kCodes, kMetadata})
        EXPECT_EQ(layoutComponentShape(e, layout, {name, DType::U8, {}}, n, k),
                  packed.at(name).shape);
      ASSERT_TRUE(unrepack(e, layout, packed, n, k, back, error)) << error;
      EXPECT_EQ(back.at(kCodes).data, rowMajor.at(kCodes).data);
      EXPECT_EQ(back.at(kMetadata).data, rowMajor.at(kMetadata).data);
      EXPECT_EQ(back.at(kMetadata).shape, rowMajor.at(kMetadata).shape);
    }
}

TEST(SparseMmaLayoutRejects, DenseWeightsAndTruncatedTiles) {
  Layout layout;
  std::string error;
  ASSERT_TRUE(parseLayout("tiled, tile_n = 32, tile_k = 64", layout, error));
  TensorMap in, out;
  EXPECT_FALSE(repack(enc("int4, group = 32, scale = f16"), layout, in, 32, 128,
                      out, error));
  Encoding e = enc("int4, group = 128, scale = f16, sparse = 2:4");
  TensorMap packed;
  packed[kCodes] = Tensor(DType::U8, {32, 32});
  packed[kMetadata] = Tensor(DType::U8, {32, 8});
  packed[kScales] = Tensor(DType::F16, {32, 1});
  EXPECT_FALSE(unrepack(e, layout, packed, 32, 128, out, error));
  EXPECT_NE(error.find("whole 32x128 tiles"), std::string::npos) << error;
}

} // namespace
