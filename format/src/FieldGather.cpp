//===- FieldGather.cpp - code packing and layouts as one gather -----------===//
//
// Builds the FieldGather of FieldGather.h from the layout definitions
// (kNibbleOrder, mmaCodePosition) and runs it on the host the way the
// generated kernel does.
//
//===----------------------------------------------------------------------===//

#include "qfuse/format/FieldGather.h"

#include "qfuse/format/MmaLayout.h"
#include "qfuse/format/SparseMmaLayout.h"

#include <limits>

namespace qfuse::format {
namespace {

bool fail(std::string &why, const std::string &message) {
  why = message;
  return false;
}

/// Field widths a destination word holds whole (2:4 metadata, column
/// gathers, the nibble and fragment layouts).
bool wholeWordBits(unsigned bits) {
  return bits == 1 || bits == 2 || bits == 4 || bits == 8;
}

/// Dense code widths the row-major stream takes (fields of any width
/// straddle words there).
bool streamBits(unsigned bits) { return bits >= 1 && bits <= 8; }

/// The kernel indexes fields and rows in 32 bits.
bool fitsKernel(const FieldGather &g, std::string &why) {
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  if (g.fields > kMax || g.n * g.k > kMax)
    return fail(why, "the weight is too large for the gather kernel's "
                     "32-bit indices");
  return true;
}

/// A row-major destination stream: one field per tile.
void rowMajorTiles(FieldGather &g) {
  g.tileN = 1;
  g.tileK = 1;
  g.tilesK = g.k;
  g.table = {0};
  g.fields = g.n * g.k;
}

/// 3-bit codes in the mma fragment layout: two bit planes per tile
/// (MmaLayout.h), so the gather moves single bits. The source is the
/// row-major stream seen as 3 K one-bit columns (code c's bit b is column
/// 3 c + b), the destination every bit of a 384-byte tile: the low plane's
/// two bits of each code and the high plane's one, read off
/// mmaCodePosition for tile 0 (the table is the same in every tile).
/// An act_order perm (over codes) is widened to the bits by the caller.
void threeBitPlanes(FieldGather &g, int64_t n, int64_t k) {
  constexpr int64_t kBits = 3;
  g.dstBits = 1;
  g.srcBits = 1;
  g.k = k * kBits;
  g.maxCode = 1;
  g.tileN = kMmaTileN;
  g.tileK = kMmaTileK * kBits;
  g.tilesK = mmaPaddedK(k) / kMmaTileK;
  const int64_t perTile = kMmaTileN * kMmaTileK * kBits;
  g.table.assign(size_t(perTile), -1);
  for (int64_t nn = 0; nn < kMmaTileN; ++nn)
    for (int64_t kk = 0; kk < kMmaTileK; ++kk) {
      MmaCodePosition pos = mmaCodePosition(nn, kk, kMmaTileK, kBits);
      const int64_t low = (pos.word * 16 + pos.slot) * 2;
      g.table[size_t(low)] = int32_t(nn << 16 | (kk * kBits));
      g.table[size_t(low + 1)] = int32_t(nn << 16 | (kk * kBits + 1));
      g.table[size_t(pos.highBit)] = int32_t(nn << 16 | (kk * kBits + 2));
    }
  g.fields = (mmaPaddedN(n) / kMmaTileN) * g.tilesK * perTile;
  g.dstBytes = mmaPaddedN(n) * mmaPaddedK(k) * kBits / 8;
  if (!g.perm.empty()) {
    std::vector<int32_t> bitPerm(size_t(g.k));
    for (int64_t c = 0; c < k; ++c)
      for (int64_t b = 0; b < kBits; ++b)
        bitPerm[size_t(c * kBits + b)] = int32_t(g.perm[size_t(c)] * kBits + b);
    g.perm = std::move(bitPerm);
  }
}

} // namespace

bool codeBytesGather(const Encoding &enc, int64_t n, int64_t k,
                     FieldGather &gather, std::string &why) {
  if (!validate(enc, n, k, why))
    return false;
  const unsigned bits = codeBits(enc);
  if (enc.isSparse24() || !streamBits(bits))
    return fail(why, "no device packing of '" + printEncoding(enc) +
                         "': dense codes of 1 to 8 bits only");
  FieldGather g;
  g.dstBits = bits;
  g.srcBits = 8;
  g.srcRowBytes = k;
  g.n = n;
  g.k = k;
  rowMajorTiles(g);
  g.dstBytes = n * rowBytes(enc, k);
  g.signedSrc =
      enc.format == ElementFormat::Int4 || enc.format == ElementFormat::Int8;
  codeRange(enc.format, bits, g.minCode, g.maxCode);
  g.addend = enc.format == ElementFormat::Int4 ? 8u : 0u;
  if (!fitsKernel(g, why))
    return false;
  gather = std::move(g);
  return true;
}

bool repackGather(const Encoding &enc, const Layout &layout, int64_t n,
                  int64_t k, const int32_t *gIdx, FieldGather &gather,
                  std::string &why) {
  if (!verifyWeight(enc, layout, n, k, why))
    return false;
  const unsigned bits = codeBits(enc);
  if (!streamBits(bits))
    return fail(why, "no device repack of '" + printEncoding(enc) +
                         "': codes of 1 to 8 bits only");
  // A 2:4 weight's kept codes are a row of K / 2 fields. The matvec's
  // tiled layout permutes them as it permutes dense codes and keeps the
  // metadata row-major, so this one gather is its whole repack; the 2:4
  // fragment layout moves the metadata too (sparseRepackGathers).
  const bool sparse = enc.isSparse24();
  if (sparse && (isSparseMmaLayout(layout) || isMmaFragmentLayout(layout) ||
                 layout.isRowMajor()))
    return fail(why, "no device repack into <" + printLayout(layout) +
                         "> of '" + printEncoding(enc) +
                         "' as one gather of the codes");
  const int64_t stored = sparse ? k / 2 : k;
  FieldGather g;
  g.dstBits = bits;
  g.srcBits = bits;
  g.srcRowBytes = rowBytes(enc, k);
  g.n = n;
  g.k = stored;
  g.minCode = 0;
  g.maxCode = int32_t((1u << bits) - 1);
  if (enc.actOrder) {
    if (!gIdx)
      return fail(why, "an act_order weight needs its g_idx");
    if (!actOrderPermutation(gIdx, k, enc.groupSize, g.perm, why))
      return false;
  }
  if (isMmaFragmentLayout(layout) && bits == 3) {
    threeBitPlanes(g, n, k);
  } else if (isMmaFragmentLayout(layout)) {
    if (!isMmaCodeBits(bits))
      return fail(why, "the mma fragment layout is not defined for " +
                           std::to_string(bits) + "-bit codes");
    g.tileN = kMmaTileN;
    g.tileK = kMmaTileK;
    g.tilesK = mmaPaddedK(k) / kMmaTileK;
    const int64_t perTile = kMmaTileN * kMmaTileK, perWord = 32 / bits;
    g.table.assign(size_t(perTile), -1);
    for (int64_t nn = 0; nn < kMmaTileN; ++nn)
      for (int64_t kk = 0; kk < kMmaTileK; ++kk) {
        MmaCodePosition pos = mmaCodePosition(nn, kk, kMmaTileK, bits);
        g.table[size_t(pos.word * perWord + pos.slot)] =
            int32_t(nn << 16 | kk);
      }
    g.fields = (mmaPaddedN(n) / kMmaTileN) * g.tilesK * perTile;
    g.dstBytes = mmaPaddedN(n) * mmaPaddedK(k) * bits / 8;
  } else if (layout.isRowMajor()) {
    if (!enc.actOrder)
      return fail(why, "row_major without act_order needs no repack");
    rowMajorTiles(g);
    g.dstBytes = n * g.srcRowBytes;
  } else {
    // The matvec's tiled layout: a nibble permutation inside every word,
    // defined for 4-bit codes over whole words (checked as repack does).
    if (bits != 4 || layout.tileN != 1 || layout.interleave != 1 ||
        g.srcRowBytes % 4 != 0 || (layout.tileK * 4) % 32 != 0)
      return fail(why, "no device repack into <" + printLayout(layout) +
                           "> of '" + printEncoding(enc) + "'");
    g.tileN = 1;
    g.tileK = 8;
    g.tilesK = stored / 8;
    g.table.resize(8);
    for (int slot = 0; slot < 8; ++slot)
      g.table[size_t(slot)] = kNibbleOrder[slot];
    g.fields = n * stored;
    g.dstBytes = n * g.srcRowBytes;
  }
  if (!fitsKernel(g, why))
    return false;
  gather = std::move(g);
  return true;
}

namespace {

/// One tile of the 2:4 fragment layout over the kept columns; the table
/// is filled by the caller.
FieldGather sparseTiles(int64_t n, int64_t k, unsigned bits) {
  FieldGather g;
  g.dstBits = bits;
  g.srcBits = bits;
  g.n = n;
  g.k = k / 2; // kept columns
  g.minCode = 0;
  g.maxCode = int32_t((1u << bits) - 1);
  g.tileN = kSparseMmaTileN;
  g.tileK = kSparseMmaTileK;
  g.tilesK = sparseMmaPaddedK(k) / 2 / kSparseMmaTileK;
  g.table.assign(size_t(kSparseMmaTileN * kSparseMmaTileK), -1);
  g.fields = sparseMmaPaddedN(n) / kSparseMmaTileN * g.tilesK *
             int64_t(g.table.size());
  return g;
}

} // namespace

bool sparseRepackGathers(const Encoding &enc, const Layout &layout, int64_t n,
                         int64_t k, FieldGather &codes, FieldGather &meta,
                         std::string &why) {
  if (!verifyWeight(enc, layout, n, k, why))
    return false;
  const unsigned bits = codeBits(enc);
  if (!enc.isSparse24() || !isSparseMmaLayout(layout) ||
      !isSparseMmaCodeBits(bits))
    return fail(why, "no device repack into <" + printLayout(layout) +
                         "> of '" + printEncoding(enc) + "'");
  // 16-bit kept values (f16/bf16 2:4) are whole halves of a word.
  if (!wholeWordBits(bits) && bits != 16)
    return fail(why, "no device repack of '" + printEncoding(enc) +
                         "': 2:4 kept values of 4, 8 or 16 bits only");
  FieldGather c = sparseTiles(n, k, bits), m = sparseTiles(n, k, 2);
  c.srcRowBytes = k / 2 * bits / 8;
  m.srcRowBytes = (k + 7) / 8;
  m.padParity = true;
  // Tile 0's positions: the table is the same for every tile.
  for (int64_t nn = 0; nn < kSparseMmaTileN; ++nn)
    for (int64_t ss = 0; ss < kSparseMmaTileK; ++ss) {
      SparseMmaPosition pos = sparseMmaPosition(nn, ss, k, bits);
      c.table[size_t(pos.code)] = int32_t(nn << 16 | ss);
      m.table[size_t(pos.metaBit / 2)] = int32_t(nn << 16 | ss);
    }
  c.dstBytes = sparseMmaCodeBytes(n, k, bits);
  m.dstBytes = sparseMmaMetaBytes(n, k);
  if (!fitsKernel(c, why) || !fitsKernel(m, why))
    return false;
  codes = std::move(c);
  meta = std::move(m);
  return true;
}

bool columnGather(int64_t rows, int64_t srcCols, unsigned elementBytes,
                  const std::vector<int64_t> &from, unsigned fieldBits,
                  FieldGather &gather, std::string &why) {
  if (!wholeWordBits(fieldBits) || elementBytes == 0)
    return fail(why, "a column gather moves fields of 1, 2, 4 or 8 bits");
  const int64_t perElement = int64_t(elementBytes) * 8 / fieldBits;
  const int64_t cols = int64_t(from.size());
  FieldGather g;
  g.dstBits = g.srcBits = fieldBits;
  g.srcRowBytes = srcCols * int64_t(elementBytes);
  g.n = rows;
  g.k = cols * perElement;
  rowMajorTiles(g);
  g.dstBytes = rows * cols * int64_t(elementBytes);
  g.maxCode = int32_t((1u << fieldBits) - 1);
  if (!fitsKernel(g, why))
    return false;
  g.perm.resize(size_t(g.k));
  for (int64_t j = 0; j < cols; ++j) {
    if (from[size_t(j)] < 0 || from[size_t(j)] >= srcCols)
      return fail(why, "column " + std::to_string(j) + " gathers column " +
                           std::to_string(from[size_t(j)]) + " of " +
                           std::to_string(srcCols));
    for (int64_t f = 0; f < perElement; ++f)
      g.perm[size_t(j * perElement + f)] =
          int32_t(from[size_t(j)] * perElement + f);
  }
  gather = std::move(g);
  return true;
}

bool runFieldGather(const FieldGather &g, const uint8_t *src,
                    std::vector<uint8_t> &dst) {
  const int64_t f = g.dstBits, period = int64_t(g.table.size());
  const uint32_t dstMask = (1u << g.dstBits) - 1,
                 srcMask = g.srcBits >= 32 ? ~0u : (1u << g.srcBits) - 1;
  dst.assign(size_t(g.words() * 4), 0);
  bool ok = true;
  // Field d's stored bits (the range check into `ok`).
  auto fieldBits = [&](int64_t d) -> uint32_t {
    const int64_t t = d / period;
    const int32_t e = g.table[size_t(d % period)];
    if (e < 0)
      return 0;
    const int64_t row = (t / g.tilesK) * g.tileN + (e >> 16);
    const int64_t col = (t % g.tilesK) * g.tileK + (e & 0xFFFF);
    if (row >= g.n || col >= g.k)
      return g.padParity ? uint32_t(col & 1) : 0u;
    const int64_t c = g.perm.empty() ? col : g.perm[size_t(col)];
    const int64_t bit = c * g.srcBits;
    const uint8_t *at = src + row * g.srcRowBytes + (bit >> 3);
    uint32_t bytes = at[0];
    if ((bit & 7) + g.srcBits > 8) // the field leaves its byte
      bytes |= uint32_t(at[1]) << 8;
    const uint32_t code = (bytes >> (bit & 7)) & srcMask;
    const int32_t value = g.signedSrc ? int32_t(int8_t(uint8_t(code)))
                                      : int32_t(code);
    if (value < g.minCode || value > g.maxCode)
      ok = false;
    return (code + g.addend) & dstMask;
  };
  for (int64_t w = 0; w < g.words(); ++w) {
    // Stream bits [32 w, 32 w + 32); a field may begin in the word before
    // or end in the next (odd widths).
    uint32_t word = 0;
    for (int64_t d = 32 * w / f; d * f < 32 * w + 32 && d < g.fields; ++d) {
      const int64_t at = d * f - 32 * w;
      const uint32_t stored = fieldBits(d);
      word |= at >= 0 ? stored << at : stored >> -at;
    }
    for (int b = 0; b < 4; ++b)
      dst[size_t(4 * w + b)] = uint8_t(word >> (8 * b));
  }
  return ok;
}

} // namespace qfuse::format
