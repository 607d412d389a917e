//===- SparseMmaLayout.h - the mma.sp kernel's fragment order ---*- C++ -*-===//
//
// `#qf.layout<tiled, tile_n = 32, tile_k = 64>` over a 2:4 encoding (f16,
// bf16, int4, uint4, int8, uint8, fp8 e4m3 kept values): the byte order the
// mma.sp kernel (lib/Conversion/QFToGPU/TensorCore/TensorCoreSparse.cpp)
// reads, so that in every K step a lane's kept codes are 16-byte pieces
// and its metadata one piece (8 bytes at block_k = 64), already in
// mma.sp.m16n8k32's register order. tile_k counts kept codes, as for every
// layout over 2:4 codes: a tile is 32 rows x 128 logical columns.
//
// The weight rows are mma.sp's sparse A operand (16 x 32 logical, 16 x 16
// kept values per m16 tile). Per the PTX ISA ("Matrix fragments for sparse
// mma.m16n8k32", .f16), lane L = 4 g + t holds A registers r = 0..3 of a
// 16-row tile, each a pair i = 0, 1 of kept values:
//
//   row  = g + 8 (r % 2)            kept column = 2 t + 8 (r / 2) + i
//
// of the 16 kept values (32 logical columns) of one k slab; the kept column
// c of a row stands for quad c / 2 and its c % 2-th kept position.
//
// Codes: the weight [N, K] (kept [N, K / 2]) is cut into tiles of 32 rows x
// 64 kept values, stored tile-row by tile-row (tile (tn, tk) at index
// tn * Kp / 128 + tk, Kp = K padded to 128), each tile 64 x 32 codes. Lane
// L's run of a tile is its 64 codes, slab s (logical columns 32 s.. of the
// tile), m16 tile wt (rows 16 wt..), register r, element i at
//
//   code 16 s + 8 wt + 2 r + i of the run
//
// in one LSB-first bit stream (Packing.h): int4 pairs are one byte (i = 0
// in the low nibble), int8 two bytes, f16 four. The run is P = 2, 4 or 8
// (4-, 8-, 16-bit codes) pieces of 16 bytes, and the tile stores them
// piece-major: piece p of lane L at bytes [16 (32 p + L), + 16). A K step
// of block_k = 128 reads a whole tile, one of block_k = 64 its first or
// second half (pieces [0, P / 2) or [P / 2, P)): a warp's step is one
// contiguous range, and each 16-byte copy of the warp 512 contiguous bytes.
//
// Metadata: mma.sp.m16n8k32 .f16 reads one 32-bit word from two lanes of
// each quad, chosen by the sparsity selector (0: t = 0, 1; 1: t = 2, 3);
// lane t % 2 = h of the pair gives logical columns 16 h.. 16 h + 15 of the
// slab: the four quads of row g in bits 0-15 and of row g + 8 in bits
// 16-31, quad q's first kept position at bits 4 q, its second at 4 q + 2.
// Both m16 tiles of a 32-row slab share one word per lane: m tile wt is
// read with selector wt from lanes t = 2 wt + h. A tile's metadata is 512
// bytes: lane L = 4 g + 2 wt + h owns bytes [16 L, 16 L + 16), word s
// (32-bit word 4 L + s of the tile) for slab s, and the position of kept
// value (row 16 wt + 8 hi + g, kept column 8 h + 2 q + i of slab s) is the
// 2-bit field at bit 16 hi + 4 q + 2 i of it.
//
// Padding: rows past N and columns past K (whole tiles, any N and K with
// K % 4 == 0) hold code 0 and the positions (0, 1) of every padded quad,
// a valid 2:4 pattern; the kernel reads no column past K (block_k divides
// K) and stores no row past N.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_FORMAT_SPARSEMMALAYOUT_H
#define QFUSE_FORMAT_SPARSEMMALAYOUT_H

#include <cstdint>
#include <vector>

namespace qfuse::format {

/// Tile shape: 32 rows x 64 kept codes (128 logical columns).
inline constexpr int64_t kSparseMmaTileN = 32;
inline constexpr int64_t kSparseMmaTileK = 64;
inline constexpr int64_t kSparseMmaTileColumns = 2 * kSparseMmaTileK;

/// Rows and logical columns padded to whole tiles.
inline int64_t sparseMmaPaddedN(int64_t n) {
  return (n + kSparseMmaTileN - 1) / kSparseMmaTileN * kSparseMmaTileN;
}
inline int64_t sparseMmaPaddedK(int64_t k) {
  return (k + kSparseMmaTileColumns - 1) / kSparseMmaTileColumns *
         kSparseMmaTileColumns;
}

struct Layout;
/// Whether `layout` is the 2:4 fragment layout (tiled, tile_n = 32,
/// tile_k = 64); it is defined only over 2:4 encodings.
bool isSparseMmaLayout(const Layout &layout);

/// Kept-value widths the layout is defined for: 4, 8 and 16 bits.
inline bool isSparseMmaCodeBits(unsigned bits) {
  return bits == 4 || bits == 8 || bits == 16;
}

/// Where kept value `s` (0 <= s < K / 2) of row `n` of an [N, K = kTotal]
/// 2:4 weight of `bits`-bit kept values lives: its code is element `code`
/// of the codes buffer (bits [code * bits, + bits), LSB-first), its
/// position (0..3 in its quad) the 2-bit field at bit `metaBit` of the
/// metadata buffer.
struct SparseMmaPosition {
  int64_t code;
  int64_t metaBit;
};
SparseMmaPosition sparseMmaPosition(int64_t n, int64_t s, int64_t kTotal,
                                    unsigned bits);

/// Bytes of the codes and metadata buffers of an [N, K] weight.
inline int64_t sparseMmaCodeBytes(int64_t n, int64_t k, unsigned bits) {
  return sparseMmaPaddedN(n) * sparseMmaPaddedK(k) / 2 * bits / 8;
}
inline int64_t sparseMmaMetaBytes(int64_t n, int64_t k) {
  return sparseMmaPaddedN(n) * sparseMmaPaddedK(k) / 8;
}

/// Reorders row-major kept codes ([N, K / 2] of `bits`-bit codes, Packing.h)
/// and metadata ([N, ceil(K / 8)] bytes) into the layout above (padded), or
/// back (the inputs must then have the padded sizes).
void packSparseMma(const std::vector<uint8_t> &codes,
                   const std::vector<uint8_t> &meta, int64_t n, int64_t k,
                   unsigned bits, std::vector<uint8_t> &codesOut,
                   std::vector<uint8_t> &metaOut);
void unpackSparseMma(const std::vector<uint8_t> &codes,
                     const std::vector<uint8_t> &meta, int64_t n, int64_t k,
                     unsigned bits, std::vector<uint8_t> &codesOut,
                     std::vector<uint8_t> &metaOut);

} // namespace qfuse::format

#endif // QFUSE_FORMAT_SPARSEMMALAYOUT_H
