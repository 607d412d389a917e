//===- LayoutUtils.h - the packed layout each kernel reads ------*- C++ -*-===//
//
// Which #qf.layout a fused matmul's kernel wants for its weight. The byte
// order itself is defined once, in the runtime's format library; this is
// the compiler's side of that contract (see qf-choose-layout).
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_DIALECT_QF_TRANSFORMS_LAYOUTUTILS_H
#define QFUSE_DIALECT_QF_TRANSFORMS_LAYOUTUTILS_H

#include "qfuse/Dialect/QF/IR/QFDialect.h"

namespace mlir {
namespace qf {

/// Order of the 8 codes inside each 32-bit word of the tiled layout for
/// 4-bit codes: nibble slot i (bits 4i..4i+3) holds element kNibbleOrder[i]
/// of the word's 8 consecutive codes, so that `(word >> 4i) & 0x000F000F`
/// holds elements (2i, 2i+1) in its two 16-bit halves.
///
///   bits:     31..28 27..24 23..20 19..16 15..12 11..8  7..4   3..0
///   row_major:  e7     e6     e5     e4     e3     e2     e1     e0
///   tiled:      e7     e5     e3     e1     e6     e4     e2     e0
inline constexpr int kNibbleOrder[8] = {0, 2, 4, 6, 1, 3, 5, 7};

/// True for encodings whose codes are 4 bits wide (int4, uint4, fp4e2m1,
/// nf4, 4-bit codebooks): the ones the tiled matvec layout applies to.
bool hasNibbleCodes(EncodingAttr encoding);

/// True for encodings the tensor-core fragment layout is defined for: the
/// 4-bit ones above, the 8-bit int8, uint8 and fp8 (e4m3) codes, and 2-, 3-
/// and 8-bit codebooks.
bool hasMmaFragmentCodes(EncodingAttr encoding);

/// True for the 2:4 encodings the mma.sp kernel decodes (f16, int4, uint4,
/// int8, uint8, fp8 e4m3 kept values): the ones the 2:4 fragment layout
/// (qfuse/format/SparseMmaLayout.h) is chosen for.
bool hasSparseMmaCodes(EncodingAttr encoding);

/// The layout the kernel chosen by `tiling` reads `type` in:
/// `#qf.layout<tiled, tile_n = 1, tile_k = vec_bytes * 8 / bits>` for a
/// matvec over 4-bit codes (one tile per lane load; tile_k counts stored
/// codes, the kept half under 2:4); `#qf.layout<tiled, tile_n = 32,
/// tile_k = 32>` (the mma B-fragment order, qfuse/format/MmaLayout.h) for
/// the tensor-core kernel over those codes; `#qf.layout<tiled, tile_n = 32,
/// tile_k = 64>` (the mma.sp order, qfuse/format/SparseMmaLayout.h) for
/// the mma kernel over 2:4 weights it decodes; row_major for everything
/// else.
LayoutAttr getKernelLayout(WeightType type, TilingAttr tiling);

} // namespace qf
} // namespace mlir

#endif // QFUSE_DIALECT_QF_TRANSFORMS_LAYOUTUTILS_H
