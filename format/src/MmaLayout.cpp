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

/// Bytes of one 32 x 32 tile of `bits`-bit codes.
int64_t tileBytes(unsigned bits) { return kMmaTileN * kMmaTileK * bits / 8; }

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
  int64_t tileWord = tile * tileBytes(bits) / 4;
  if (bits == 8) // eight words per lane, w = 4 s + j, byte v
    return {tileWord + lane * 8 + 4 * s + j, v};
  if (bits == 2 || bits == 3) { // two words per lane, w = s, field 4 j + v
    MmaCodePosition pos{tileWord + lane * 2 + s, int(4 * j + v)};
    if (bits == 3) // the high plane: word 64 + lane, bit 16 s + 4 j + v
      pos.highBit = (tileWord + 64 + lane) * 32 + 16 * s + 4 * j + v;
    return pos;
  }
  int e = int((j % 2) * 4 + v);
  int64_t wordInLane = 2 * s + j / 2;
  return {tileWord + lane * 4 + wordInLane, slotOf(e)};
}

namespace {
/// Copies every code between row-major order (one LSB-first bit stream per
/// row, Packing.h) and the fragment layout.
void moveCodes(const std::vector<uint8_t> &from, int64_t n, int64_t k,
               unsigned bits, bool toFragment, std::vector<uint8_t> &to) {
  // The padding (rows past N, columns past K) stays 0.
  to.assign(toFragment ? mmaPaddedN(n) * mmaPaddedK(k) * bits / 8
                       : n * k * bits / 8,
            0);
  const unsigned fieldBits = mmaFieldBits(bits);
  const int64_t perWord = 32 / fieldBits;
  const uint32_t fieldMask = (1u << fieldBits) - 1;
  for (int64_t r = 0; r < n; ++r)
    for (int64_t c = 0; c < k; ++c) {
      MmaCodePosition pos = mmaCodePosition(r, c, k, bits);
      int64_t fieldIndex = pos.word * perWord + pos.slot;
      int64_t rowMajorIndex = r * k + c; // rows are whole bytes (validate)
      if (toFragment) {
        uint32_t code = getBits(from.data(), rowMajorIndex, bits);
        putBits(to.data(), fieldIndex, fieldBits, code & fieldMask);
        if (pos.highBit >= 0)
          putBits(to.data(), pos.highBit, 1, code >> fieldBits);
      } else {
        uint32_t code = getBits(from.data(), fieldIndex, fieldBits);
        if (pos.highBit >= 0)
          code |= getBits(from.data(), pos.highBit, 1) << fieldBits;
        putBits(to.data(), rowMajorIndex, bits, code);
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
