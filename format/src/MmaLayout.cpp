//===- MmaLayout.cpp - the tensor-core kernel's fragment order ------------===//
//
// The mapping documented in MmaLayout.h, and the repack through it.
//
//===----------------------------------------------------------------------===//

#include "qfuse/format/MmaLayout.h"

#include "qfuse/format/Layout.h"

namespace qfuse::format {
namespace {

/// Nibble slot holding element `e` of a word (the inverse of kNibbleOrder).
int slotOf(int e) {
  for (int slot = 0; slot < 8; ++slot)
    if (kNibbleOrder[slot] == e)
      return slot;
  return -1;
}

int nibbleAt(const std::vector<uint8_t> &bytes, int64_t index) {
  return (bytes[index / 2] >> (4 * (index % 2))) & 0xF;
}

void setNibble(std::vector<uint8_t> &bytes, int64_t index, int value) {
  uint8_t &byte = bytes[index / 2];
  int shift = 4 * (index % 2);
  byte = uint8_t((byte & ~(0xF << shift)) | (value << shift));
}

} // namespace

bool isMmaFragmentLayout(const Layout &layout) {
  return layout.kind == LayoutKind::Tiled && layout.tileN == kMmaTileN &&
         layout.tileK == kMmaTileK && layout.interleave == 1;
}

MmaCodePosition mmaCodePosition(int64_t n, int64_t k, int64_t kTotal,
                                unsigned bits) {
  int64_t tn = n / kMmaTileN, nn = n % kMmaTileN;
  int64_t tk = k / kMmaTileK, kk = k % kMmaTileK;
  int64_t j = nn / 8, g = nn % 8;
  int64_t s = kk / 16, kr = kk % 16;
  int64_t t = (kr % 8) / 2;
  int v = int((kr % 2) | ((kr / 8) << 1));
  int64_t lane = 4 * g + t;
  int64_t tile = tn * (mmaPaddedK(kTotal) / kMmaTileK) + tk;
  if (bits == 8) // eight words per lane, w = 4 s + j, byte v
    return {(tile * 32 + lane) * 8 + 4 * s + j, v};
  int e = int((j % 2) * 4 + v);
  int64_t wordInLane = 2 * s + j / 2;
  return {(tile * 32 + lane) * 4 + wordInLane, slotOf(e)};
}

namespace {
/// Copies every code between row-major order and the fragment layout.
void moveCodes(const std::vector<uint8_t> &from, int64_t n, int64_t k,
               unsigned bits, bool toFragment, std::vector<uint8_t> &to) {
  // The padding (rows past N, columns past K) stays 0.
  to.assign(toFragment ? mmaPaddedN(n) * mmaPaddedK(k) * bits / 8
                       : n * k * bits / 8,
            0);
  int64_t perWord = 32 / bits;
  for (int64_t r = 0; r < n; ++r)
    for (int64_t c = 0; c < k; ++c) {
      MmaCodePosition pos = mmaCodePosition(r, c, k, bits);
      int64_t fragmentIndex = pos.word * perWord + pos.slot;
      int64_t rowMajorIndex = r * k + c;
      if (bits == 8) {
        if (toFragment)
          to[fragmentIndex] = from[rowMajorIndex];
        else
          to[rowMajorIndex] = from[fragmentIndex];
      } else if (toFragment) {
        setNibble(to, fragmentIndex, nibbleAt(from, rowMajorIndex));
      } else {
        setNibble(to, rowMajorIndex, nibbleAt(from, fragmentIndex));
      }
    }
}
} // namespace

void packMmaCodes(const std::vector<uint8_t> &rowMajor, int64_t n, int64_t k,
                  unsigned bits, std::vector<uint8_t> &fragment) {
  moveCodes(rowMajor, n, k, bits, /*toFragment=*/true, fragment);
}

void unpackMmaCodes(const std::vector<uint8_t> &fragment, int64_t n,
                    int64_t k, unsigned bits, std::vector<uint8_t> &rowMajor) {
  moveCodes(fragment, n, k, bits, /*toFragment=*/false, rowMajor);
}

} // namespace qfuse::format
