//===- MmaLayout.h - the tensor-core kernel's fragment order ----*- C++ -*-===//
//
// `#qf.layout<tiled, tile_n = 32, tile_k = 32>` over 2-, 3-, 4- and 8-bit
// codes: the byte
// order the tensor-core kernel (lib/Conversion/QFToGPU/TensorCoreKernel.cpp)
// reads, chosen so that one 16-byte load per lane yields that lane's B
// fragments of mma.m16n8k16 for a 32 (n) x 32 (k) tile without shuffles.
//
// The weight [N, K] is cut into 32 x 32 tiles, stored tile-row by tile-row
// (tile (tn, tk) at index tn * K/32 + tk), 512 bytes each. Inside a tile,
// lane L = 4 g + t (g = L / 4, t = L % 4) owns bytes [16 L, 16 L + 16): four
// 32-bit words w = 2 s + jp, s the 16-wide k slab, jp a pair of 8-row n
// tiles. A word holds the fragments of n tiles j = 2 jp and 2 jp + 1, each
// fragment being the four values mma.m16n8k16 gives lane L of a B (k x n,
// "col") operand:
//
//   element e of the word (0..7):  j = 2 jp + e / 4,  v = e % 4
//   n = 32 tn + 8 j + g
//   k = 32 tk + 16 s + 2 t + (v % 2) + 8 (v / 2)   (b0 = v 0,1; b1 = v 2,3)
//
// and inside the word the 8 elements sit in the nibble order of the tiled
// matvec layout (Layout.h, kNibbleOrder), so that one mask-and-or yields the
// half2 pair (e 2i, e 2i+1) = one fragment register.
//
// 8-bit codes (int8, uint8, fp8 e4m3, 8-bit codebooks) use the same tiles
// at 1024 bytes: lane L owns bytes [32 L, 32 L + 32), eight words
// w = 4 s + j, and word w holds n tile j's fragment of slab s in byte order
// v = 0..3 (byte v is element v above), so that one prmt (or one cvt of an
// e4m3 pair) yields a fragment register. A lane's first 16 bytes are slab 0,
// its second slab 1.
//
// 2-bit codes (2-bit codebooks) use 256-byte tiles: lane L owns bytes
// [8 L, 8 L + 8), two words w = s, and word s holds the fragments of all
// four n tiles of slab s, element 4 j + v at bits [2 (4 j + v), + 2):
//
//   bits   31..30 29..28 ... 17..16  15..14 ... 9..8   7..6   ... 1..0
//          j3 v3  j3 v2  ... j2 v0   j1 v3  ... j1 v0  j0 v3  ... j0 v0
//
// so the table offset of element e is one shift and one mask of the word.
//
// 3-bit codes (3-bit codebooks) use 384-byte tiles split into bit planes:
// bytes [0, 256) hold the low two bits of every code exactly as a 2-bit
// tile, bytes [256, 384) the high bit, lane L's in the word at 256 + 4 L,
// bit 16 s + 4 j + v for element (s, j, v). A lane then reads 8 + 4 aligned
// bytes, and a code's table offset is two shifts, one lop3 (and-or of the
// two planes) and an add: no code straddles a word, which a dense 3-bit
// stream (10 2/3 codes per word) would make three times dearer to decode.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_FORMAT_MMALAYOUT_H
#define QFUSE_FORMAT_MMALAYOUT_H

#include <cstdint>
#include <vector>

namespace qfuse::format {

/// Tile shape of the fragment layout.
inline constexpr int64_t kMmaTileN = 32;
inline constexpr int64_t kMmaTileK = 32;

/// The layout holds whole tiles: an [N, K] weight takes ceil(N / 32) x
/// ceil(K / 32) of them, and the codes of the rows past N and the columns
/// past K are 0 (the kernel zero-fills the activations past K and stores no
/// row past N, so they never reach an output). The codes component is then
/// [mmaPaddedN(N), mmaPaddedK(K) * bits / 8] bytes.
inline int64_t mmaPaddedN(int64_t n) {
  return (n + kMmaTileN - 1) / kMmaTileN * kMmaTileN;
}
inline int64_t mmaPaddedK(int64_t k) {
  return (k + kMmaTileK - 1) / kMmaTileK * kMmaTileK;
}

struct Layout;
/// Whether `layout` is the fragment layout (tiled, tile_n = tile_k = 32).
bool isMmaFragmentLayout(const Layout &layout);

/// Code widths the fragment layout is defined for.
inline bool isMmaCodeBits(unsigned bits) {
  return bits == 2 || bits == 3 || bits == 4 || bits == 8;
}

/// Bits of the field `MmaCodePosition::slot` counts in: the code width, but
/// 2 for 3-bit codes, whose third bit lives in the high plane.
inline unsigned mmaFieldBits(unsigned bits) { return bits == 3 ? 2 : bits; }

/// Where code (n, k) of an [N, K] weight of `bits`-bit codes (2, 3, 4 or 8)
/// lives in the fragment layout: 32-bit word `word` of the codes buffer,
/// slot `slot` (bits f * slot .. f * (slot + 1) - 1 of the word, f =
/// mmaFieldBits(bits)), for n < N and k < K = `kTotal` (any N, K: tiles are
/// padded). 3-bit codes: that field holds bits 0-1, and bit 2 is bit
/// `highBit` of the codes buffer (LSB-first; -1 for other widths).
struct MmaCodePosition {
  int64_t word;
  int slot;
  int64_t highBit = -1;
};
MmaCodePosition mmaCodePosition(int64_t n, int64_t k, int64_t kTotal,
                                unsigned bits = 4);

/// Reorders row-major codes of `bits` bits (Packing.h's LSB-first bit
/// stream per row: 4-bit byte j = elements 2j in the low nibble, 2j+1 in the
/// high one; 8: one byte each) into the fragment layout (padded: mmaPaddedN(n) * mmaPaddedK(k) * bits / 8 bytes),
/// or back (`fragment` must be that size).
void packMmaCodes(const std::vector<uint8_t> &rowMajor, int64_t n, int64_t k,
                  unsigned bits, std::vector<uint8_t> &fragment);
void unpackMmaCodes(const std::vector<uint8_t> &fragment, int64_t n,
                    int64_t k, unsigned bits, std::vector<uint8_t> &rowMajor);

} // namespace qfuse::format

#endif // QFUSE_FORMAT_MMALAYOUT_H
