//===- FieldGather.h - code packing and layouts as one gather --*- C++ -*-===//
//
// Every move of codes that format::packCodeBytes and format::repack make
// for dense codes of 1 to 8 bits is a gather of bit fields: field i
// of the destination (bits [i*f, (i+1)*f) of an LSB-first stream, f the
// code width) holds the code of one (row n, column k) of the weight, or 0
// (padding). A FieldGather says which, in closed form plus one small
// tile-local table, so that a GPU kernel (the generated qf_gather_fields,
// lib/Conversion/QFToGPU/Ops/FieldGatherKernel.cpp) computes every 32-bit
// destination word independently:
//
//   field d (bits [d * f, d * f + f) of the stream: word d / (32 / f),
//   slot d % (32 / f) where f divides 32; widths that do not (3, 5, 6, 7)
//   straddle words, so word w takes the fields overlapping its 32 bits)
//   t = d / P, r = d % P                 P = table.size(): fields per tile
//   e = table[r]                         nn << 16 | kk, or -1 (padding)
//   n = (t / tilesK) * tileN + nn,  k = (t % tilesK) * tileK + kk
//   c = perm.empty() ? k : perm[k]       act_order's sorted column order
//   code = the srcBits-wide field (n * srcRowBytes * 8 + c * srcBits) of src
//          (one or two bytes: a field may leave its byte)
//   stored = (code + addend) & (2^f - 1), code range-checked (below)
//   padding inside a tile (row >= n or col >= k) stores padParity ? col & 1 : 0
//
// Destinations, and where the table comes from (the one definition of each
// layout stays in Packing.h / Layout.h / MmaLayout.h; the table is read off
// those functions for one tile):
//   row-major stream   tile 1 x 1, P = 1            (packCodeBytes; act_order
//                                                    repack to row_major)
//   tiled n1 kT, 4-bit tile 1 x 8, slot i <- kNibbleOrder[i]; a 2:4
//                      weight's kept codes the same over K / 2 columns
//                      (repack keeps its metadata row-major)
//   mma fragment       tile 32 x 32, P = 1024: mmaCodePosition inverted
//                      (3-bit codes: 1-bit fields, P = 3072, both planes)
//   2:4 fragment       tile 32 x 64 kept columns, P = 2048, two gathers:
//                      the kept codes or 16-bit kept values
//                      (sparseMmaPosition's code inverted)
//                      and the 2-bit positions (its metaBit / 2 inverted;
//                      a padded quad keeps positions (0, 1): padParity)
// The table does not depend on N or K: a FieldGather is per (encoding
// width, layout), its scalars per shape and perm per act_order weight.
//
// Code bytes (GPTQ's kernel stores each logical code's low byte) are
// checked as packCodeBytes checks them: int4/int8 sign-extended into
// [minCode, maxCode], the other formats zero-extended; `addend` makes
// int4's offset-binary code (q + 8).
//
// Any other array whose moves are whole columns (GPTQ's act-order
// permutations of f32, f16 and byte matrices) is a row-major gather too,
// of fields of any width that divides its elements (columnGather).
//
// Codes of 3, 5, 6 and 7 bits are covered in the row-major stream (GPTQ's
// packing, act_order's repack). The mma fragment layout keeps 3-bit codes
// as two bit planes (MmaLayout.h): a gather of single bits, the source
// seen as 3 K one-bit columns and the table every bit of a 384-byte tile.
// 16-bit fields are gathered only as 2:4's
// f16/bf16 kept values into the 2:4 fragment layout (dense 16-bit weights
// have no layout to move into). Callers fall back to the host functions
// for what is not covered.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_FORMAT_FIELDGATHER_H
#define QFUSE_FORMAT_FIELDGATHER_H

#include "qfuse/format/Layout.h"

#include <cstdint>
#include <string>
#include <vector>

namespace qfuse::format {

struct FieldGather {
  unsigned dstBits = 4;          // f: 1 to 8, or 16 (2:4 kept values)
  unsigned srcBits = 8;          // 8 (code bytes) or f (a packed stream)
  int64_t srcRowBytes = 0;       // bytes per source row
  int64_t n = 0, k = 0;          // the weight
  int64_t tileN = 1, tileK = 1;  // destination tile
  int64_t tilesK = 0;            // tiles per row of tiles
  std::vector<int32_t> table;    // P entries: nn << 16 | kk, or -1
  std::vector<int32_t> perm;     // [K] source column of sorted column, or {}
  int64_t fields = 0;            // destination fields (tiles * P)
  int64_t dstBytes = 0;          // the destination component's bytes
  // Code-byte checks (packCodeBytes); repacks take every value.
  bool signedSrc = false;
  int32_t minCode = 0, maxCode = 255;
  uint32_t addend = 0;
  // Padding fields inside a tile store col & 1 instead of 0 (2:4 metadata).
  bool padParity = false;

  /// 32-bit destination words: a buffer of words() * 4 >= dstBytes bytes.
  int64_t words() const {
    return (fields * int64_t(dstBits) + 31) / 32;
  }
};

/// The gather that packCodeBytes performs for the codes of `enc` at
/// [n, k] (source: [n, k] code bytes). False, with `why`, for encodings it
/// does not cover (then packCodeBytes on the host).
bool codeBytesGather(const Encoding &enc, int64_t n, int64_t k,
                     FieldGather &gather, std::string &why);

/// The gather that repack performs on the codes of `enc` at [n, k] into
/// `layout` (source: the row-major codes component). `gIdx` ([K]) is the
/// weight's g_idx under act_order (null otherwise). A 2:4 weight in the
/// matvec's tiled layout is covered (its kept codes; repack leaves the
/// metadata row-major); into the 2:4 fragment layout it is not
/// (sparseRepackGathers). False, with `why`, where it does not cover the
/// pair or repack would fail (then repack on the host, which says why).
bool repackGather(const Encoding &enc, const Layout &layout, int64_t n,
                  int64_t k, const int32_t *gIdx, FieldGather &gather,
                  std::string &why);

/// The two gathers that repack performs on a 2:4 weight of `enc` at
/// [n, k] into the 2:4 fragment layout (SparseMmaLayout.h): `codes` from
/// the row-major codes component ([n, k/2] kept codes), `meta` from the
/// row-major metadata ([n, k/2] 2-bit positions). 16-bit kept values
/// (f16/bf16 2:4) are 16-bit fields. False, with `why`, where it does not
/// cover the pair or repack would fail.
bool sparseRepackGathers(const Encoding &enc, const Layout &layout, int64_t n,
                         int64_t k, FieldGather &codes, FieldGather &meta,
                         std::string &why);

/// Columns of any row-major [rows, srcCols] array of `elementBytes`-byte
/// elements gathered into a [rows, from.size()] one, as a gather of
/// `fieldBits`-wide fields (1, 2, 4 or 8: whichever kernel an artifact
/// has): destination column j <- source column from[j] (in [0, srcCols);
/// repeats allowed). Every bit pattern moves unchanged. False, with `why`,
/// for a column out of range or where the kernel's 32-bit indices cannot
/// hold it.
bool columnGather(int64_t rows, int64_t srcCols, unsigned elementBytes,
                  const std::vector<int64_t> &from, unsigned fieldBits,
                  FieldGather &gather, std::string &why);

/// Runs `gather` on the host exactly as the kernel does (the reference of
/// the kernel's arithmetic): `dst` gets words() * 4 bytes. False when a
/// code is out of range (the kernel's status 1).
bool runFieldGather(const FieldGather &gather, const uint8_t *src,
                    std::vector<uint8_t> &dst);

} // namespace qfuse::format

#endif // QFUSE_FORMAT_FIELDGATHER_H
