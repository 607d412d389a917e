//===- SparseMmaLayout.cpp - the mma.sp kernel's fragment order -----------===//
//
// The mapping documented in SparseMmaLayout.h, and the repack through it.
//
//===----------------------------------------------------------------------===//

#include "qfuse/format/SparseMmaLayout.h"

#include "qfuse/format/Layout.h"

namespace qfuse::format {

bool isSparseMmaLayout(const Layout &layout) {
  return layout.kind == LayoutKind::Tiled && layout.tileN == kSparseMmaTileN &&
         layout.tileK == kSparseMmaTileK && layout.interleave == 1;
}

SparseMmaPosition sparseMmaPosition(int64_t n, int64_t s, int64_t kTotal,
                                    unsigned bits) {
  const int64_t tilesPerRow = sparseMmaPaddedK(kTotal) / kSparseMmaTileColumns;
  const int64_t tile = n / kSparseMmaTileN * tilesPerRow + s / kSparseMmaTileK;
  const int64_t nn = n % kSparseMmaTileN, ss = s % kSparseMmaTileK;
  const int64_t wt = nn / 16, hi = (nn % 16) / 8, g = nn % 8;
  const int64_t slab = ss / 16, kk = ss % 16; // kept column in the slab
  const int64_t i = kk % 2;
  // Codes: register r = 2 c + hi of lane 4 g + t, kept column 2 t + 8 c + i,
  // at code j of the lane's run, in piece j / perPiece.
  const int64_t t = (kk % 8) / 2, c = kk / 8;
  const int64_t codeLane = 4 * g + t;
  const int64_t j = 16 * slab + 8 * wt + 2 * (2 * c + hi) + i;
  const int64_t perPiece = 128 / bits;
  const int64_t code = tile * kSparseMmaTileN * kSparseMmaTileK +
                       (32 * (j / perPiece) + codeLane) * perPiece +
                       j % perPiece;
  // Metadata: lane 4 g + 2 wt + h, word `slab`, quad q of the half h.
  const int64_t h = kk / 8, q = (kk % 8) / 2;
  const int64_t metaLane = 4 * g + 2 * wt + h;
  const int64_t word = tile * 128 + 4 * metaLane + slab;
  return {code, 32 * word + 16 * hi + 4 * q + 2 * i};
}

namespace {

/// Moves every kept code and position between the row-major order and the
/// layout; the padding of the layout keeps code 0 and positions (0, 1).
void move(const std::vector<uint8_t> &codes, const std::vector<uint8_t> &meta,
          int64_t n, int64_t k, unsigned bits, bool toLayout,
          std::vector<uint8_t> &codesOut, std::vector<uint8_t> &metaOut) {
  const int64_t kept = k / 2;
  const int64_t metaRowBytes = (k + 7) / 8;
  if (toLayout) {
    codesOut.assign(sparseMmaCodeBytes(n, k, bits), 0);
    metaOut.assign(sparseMmaMetaBytes(n, k), 0);
    // Padded quads keep positions (0, 1); putBits ors into zeros.
    for (int64_t r = 0; r < sparseMmaPaddedN(n); ++r)
      for (int64_t s = r < n ? kept : 0; s < sparseMmaPaddedK(k) / 2; ++s)
        putBits(metaOut.data(), sparseMmaPosition(r, s, k, bits).metaBit / 2, 2,
                uint32_t(s % 2));
  } else {
    codesOut.assign(n * kept * bits / 8, 0);
    metaOut.assign(n * metaRowBytes, 0);
  }
  for (int64_t r = 0; r < n; ++r)
    for (int64_t s = 0; s < kept; ++s) {
      SparseMmaPosition pos = sparseMmaPosition(r, s, k, bits);
      const int64_t rowCode = r * kept + s;
      const int64_t rowMeta = r * metaRowBytes * 4 + s; // 2-bit fields
      const int64_t metaField = pos.metaBit / 2;
      if (toLayout) {
        putBits(codesOut.data(), pos.code, bits,
                getBits(codes.data(), rowCode, bits));
        putBits(metaOut.data(), metaField, 2, getBits(meta.data(), rowMeta, 2));
      } else {
        putBits(codesOut.data(), rowCode, bits,
                getBits(codes.data(), pos.code, bits));
        putBits(metaOut.data(), rowMeta, 2, getBits(meta.data(), metaField, 2));
      }
    }
}

} // namespace

void packSparseMma(const std::vector<uint8_t> &codes,
                   const std::vector<uint8_t> &meta, int64_t n, int64_t k,
                   unsigned bits, std::vector<uint8_t> &codesOut,
                   std::vector<uint8_t> &metaOut) {
  move(codes, meta, n, k, bits, /*toLayout=*/true, codesOut, metaOut);
}

void unpackSparseMma(const std::vector<uint8_t> &codes,
                     const std::vector<uint8_t> &meta, int64_t n, int64_t k,
                     unsigned bits, std::vector<uint8_t> &codesOut,
                     std::vector<uint8_t> &metaOut) {
  move(codes, meta, n, k, bits, /*toLayout=*/false, codesOut, metaOut);
}

} // namespace qfuse::format
