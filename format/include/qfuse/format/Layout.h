//===- Layout.h - kernel layouts of packed codes ----------------*- C++ -*-===//
//
// The plain C++ twin of `#qf.layout<...>` and the repack from the row-major
// checkpoint order (Packing.h) into the layout a kernel reads. Only "codes"
// change (and "meta" in the 2:4 fragment layout); every other component
// keeps its row-major bytes.
//
// Defined today, as qf-choose-layout and the matvec kernel use it
// (include/qfuse/Dialect/QF/Transforms/LayoutUtils.h):
//
//   #qf.layout<tiled, tile_n = 1, tile_k = T> over 4-bit codes (int4, uint4,
//   fp4e2m1, nf4, 4-bit codebooks): [1 x T] tiles follow each other in
//   row-major order, so a row's bytes stay where they were; inside every
//   32-bit word (4 bytes, little-endian) of a row the 8 codes are reordered
//   so that nibble slot i holds element kNibbleOrder[i]:
//
//     bits:      31..28 27..24 23..20 19..16 15..12 11..8  7..4   3..0
//     row_major:   e7     e6     e5     e4     e3     e2     e1     e0
//     tiled:       e7     e5     e3     e1     e6     e4     e2     e0
//
//   so that (word >> 4i) & 0x000F000F holds (e2i, e2i+1) in its two 16-bit
//   halves. Under 2:4 the kept codes are reordered the same way.
//
//   #qf.layout<tiled, tile_n = 32, tile_k = 32> over dense 2-, 3-, 4- and
//   8-bit codes: the tensor-core kernel's B-fragment order, defined in
//   MmaLayout.h.
//
//   #qf.layout<tiled, tile_n = 32, tile_k = 64> over 2:4 encodings of 4-,
//   8- and 16-bit kept values: the mma.sp kernel's A-fragment and metadata
//   order (codes and "meta" both move), defined in SparseMmaLayout.h.
//
// Other tiled parameters (tile_n > 1, interleave > 1, 8-bit codes) parse and
// verify but repack() rejects them until a kernel defines their byte order.
//
// act_order (GPTQ desc_act): the checkpoint's columns are quantized in a
// permuted order, column k belonging to group g_idx[k]. Every kernel layout
// (row_major included) stores the columns SORTED BY GROUP, so that groups
// are contiguous again and the kernels index scales by j / group exactly as
// without act_order:
//
//   perm      = the stable sort of 0..K-1 by g_idx (ties keep column order)
//   sorted column j  holds checkpoint column perm[j];  g_idx[perm[j]] = j / group
//
// Each group must hold exactly `group` columns (true of GPTQ act-order
// checkpoints, where g_idx is a permutation of k / group); repack() fails
// otherwise. The sort applies to the codes of every row (before the nibble
// interleave of a tiled layout); scales and zero points are indexed by group
// and do not move. repack() adds the component "perm" (I32 [K]) that the
// kernel reads activations through: x_sorted[m, j] = x[m, perm[j]], and its
// inverse "inv_perm" (inv_perm[perm[j]] = j), through which a producer (the
// gated gate/up kernel's `y_order`) stores its output column n at inv_perm[n]
// so that this weight's kernel reads it already sorted. The checkpoint's
// "g_idx" is kept as it was; unrepack() restores the checkpoint order from
// "perm" (and rebuilds g_idx from it). act_order with 2:4 is not sorted (the
// sort would break the quads): see sortsColumns.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_FORMAT_LAYOUT_H
#define QFUSE_FORMAT_LAYOUT_H

#include "qfuse/format/Packing.h"

#include <string>
#include <string_view>

namespace qfuse::format {

enum class LayoutKind { RowMajor, Tiled };

/// The parameters of #qf.layout<...>; row_major has all three 0.
struct Layout {
  LayoutKind kind = LayoutKind::RowMajor;
  int64_t tileN = 0;
  int64_t tileK = 0;
  int64_t interleave = 0;

  bool isRowMajor() const { return kind == LayoutKind::RowMajor; }
  bool operator==(const Layout &o) const {
    return kind == o.kind && tileN == o.tileN && tileK == o.tileK &&
           interleave == o.interleave;
  }
};

/// Nibble slot i of a tiled word holds element kNibbleOrder[i] of its 8.
inline constexpr int kNibbleOrder[8] = {0, 2, 4, 6, 1, 3, 5, 7};

/// The component a kernel layout adds for act_order weights (see above).
inline constexpr const char *kPerm = "perm";
/// The inverse of "perm", for a producer that stores its output in this
/// weight's sorted column order (its column n at inv_perm[n]).
inline constexpr const char *kInvPerm = "inv_perm";

/// The sorted column order of an act_order weight: perm[j] is the checkpoint
/// column stored at sorted position j. Fails, naming the group, when some
/// group of [0, K / groupSize) does not hold exactly groupSize columns or a
/// g_idx entry is out of range.
bool actOrderPermutation(const int32_t *gIdx, int64_t k, int64_t groupSize,
                         std::vector<int32_t> &perm, std::string &error);

/// inv[perm[j]] = j. `perm` must be a permutation of 0..size-1 (entries
/// outside that range are skipped, leaving -1).
std::vector<int32_t> invertPermutation(const std::vector<int32_t> &perm);

/// Stores the sorted column order `perm` in `components` as "perm" and
/// "inv_perm": every maker of a kernel layout (repack, the GPU repacker)
/// writes both through this one function.
void putSortedOrder(TensorMap &components, const std::vector<int32_t> &perm);

/// Whether an act_order weight is stored with its columns sorted by group
/// (above). 2:4 weights are not (a sort would break the quads): they keep
/// the checkpoint's column order, in row_major only, and every reader takes
/// a column's group from g_idx.
inline bool sortsColumns(const Encoding &enc) {
  return enc.actOrder && !enc.isSparse24();
}

/// Components that a kernel reading `layout` binds beyond the row-major
/// ones of componentSpecs: {"perm", I32, [K]} and {"inv_perm", I32, [K]}
/// when sortsColumns, else none.
std::vector<ComponentSpec> layoutComponentSpecs(const Encoding &enc,
                                                const Layout &layout,
                                                int64_t n, int64_t k);

/// The shape of component `spec` (one of componentSpecs) once repacked into
/// `layout`: its row-major shape, but for the codes of the mma fragment
/// layout, which are whole 32 x 32 tiles (MmaLayout.h).
std::vector<int64_t> layoutComponentShape(const Encoding &enc,
                                          const Layout &layout,
                                          const ComponentSpec &spec, int64_t n,
                                          int64_t k);

/// Parses the body of #qf.layout<...> ("row_major", "tiled, tile_n = 1,
/// tile_k = 256") and verifies it as LayoutAttr::verify does.
bool parseLayout(std::string_view text, Layout &layout, std::string &error);
/// The dialect printer's text: interleave only when it is not 1.
std::string printLayout(const Layout &layout);
bool verifyLayout(const Layout &layout, std::string &error);

/// The rules of a packed weight type (the dialect's WeightType::verify, the
/// runtime's artifact reader): validate(enc, n, k), verifyLayout(layout),
/// and a tiled layout other than the mma fragment layout reorders whole rows
/// of tiles, so its tile_k divides K.
bool verifyWeight(const Encoding &enc, const Layout &layout, int64_t n,
                  int64_t k, std::string &error);

/// Reorders the row-major `components` of an [N, K] weight into `layout`
/// (a copy for row_major without act_order). Fails, saying why, for layouts
/// not defined above, when tile_k does not divide K or a row is not whole
/// 32-bit words, and for act_order groups that are not exactly `group`
/// columns. Under act_order the result also holds "perm" and "inv_perm".
bool repack(const Encoding &enc, const Layout &layout,
            const TensorMap &rowMajor, int64_t n, int64_t k, TensorMap &out,
            std::string &error);

/// The inverse of repack: back to the row-major checkpoint order. Under
/// act_order "inv_perm" may be absent; when present it must be the inverse
/// of "perm".
bool unrepack(const Encoding &enc, const Layout &layout,
              const TensorMap &packed, int64_t n, int64_t k,
              TensorMap &rowMajor, std::string &error);

} // namespace qfuse::format

#endif // QFUSE_FORMAT_LAYOUT_H
