//===- MmaLayout.h - the tensor-core kernel's fragment order ----*- C++ -*-===//
//
// `#qf.layout<tiled, tile_n = 32, tile_k = 32>` over 4-bit codes: the byte
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
// 8-bit codes (int8, uint8, fp8 e4m3) use the same tiles at 1024 bytes:
// lane L owns bytes [32 L, 32 L + 32), eight words w = 4 s + j, and word w
// holds n tile j's fragment of slab s in byte order v = 0..3 (byte v is
// element v above), so that one prmt (or one cvt of an e4m3 pair) yields a
// fragment register. A lane's first 16 bytes are slab 0, its second slab 1.
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
inline bool isMmaCodeBits(unsigned bits) { return bits == 4 || bits == 8; }

/// Where code (n, k) of an [N, K] weight of `bits`-bit codes (4 or 8) lives
/// in the fragment layout: 32-bit word `word` of the codes buffer, slot
/// `slot` (bits `bits` * slot .. `bits` * (slot + 1) - 1 of the word), for
/// n < N and k < K = `kTotal` (any N, K: tiles are padded).
struct MmaCodePosition {
  int64_t word;
  int slot;
};
MmaCodePosition mmaCodePosition(int64_t n, int64_t k, int64_t kTotal,
                                unsigned bits = 4);

/// Reorders row-major codes of `bits` bits (4: byte j of a row = elements
/// 2j in the low nibble, 2j+1 in the high one; 8: one byte each) into the
/// fragment layout (padded: mmaPaddedN(n) * mmaPaddedK(k) * bits / 8 bytes),
/// or back (`fragment` must be that size).
void packMmaCodes(const std::vector<uint8_t> &rowMajor, int64_t n, int64_t k,
                  unsigned bits, std::vector<uint8_t> &fragment);
void unpackMmaCodes(const std::vector<uint8_t> &fragment, int64_t n,
                    int64_t k, unsigned bits, std::vector<uint8_t> &rowMajor);

} // namespace qfuse::format

#endif // QFUSE_FORMAT_MMALAYOUT_H
