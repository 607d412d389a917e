//===- SortedOutput.h - a matmul that writes its reader's sorted order -*- C++ -*-===//
//
// An act_order matmul reads its input in its weight's sorted column order,
// which a permute launch writes (MatmulInput.h). When the input is the
// result of a gated matmul that only it reads (down_proj behind gate/up),
// the gated kernel stores that result's column n at column inv_perm[n] of
// the reader's weight instead (MatmulSpec::scatterOutput), and its fallback
// writes it through the reader's perm: the permute launch goes away. The IR
// means the same, so the CPU reference is unchanged (docs/act-order.md).
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_LIB_CONVERSION_QFTOGPU_SORTEDOUTPUT_H
#define QFUSE_LIB_CONVERSION_QFTOGPU_SORTEDOUTPUT_H

#include "qfuse/Dialect/QF/IR/QFDialect.h"

namespace mlir {
namespace qf {

/// Whether a fused matmul runs its fused kernel (not the dequantize +
/// cuBLAS fallback) at every batch it is compiled for.
using RunsFusedEverywhere = function_ref<bool(FusedMatmulOp)>;

/// The act_order matmul `writer` writes its result for in sorted column
/// order, or null: `writer` is gated (silu_mul epilogue, f16), without a
/// residual or qf.group, and its result's only use is the input of a
/// fused matmul on an act_order weight whose columns sort (not 2:4),
/// without a prologue or qf.group, which runs fused at every batch.
FusedMatmulOp sortedOutputReader(FusedMatmulOp writer,
                                 RunsFusedEverywhere runsFused);

/// Whether `reader`'s input comes in its weight's sorted column order from
/// the matmul that writes it (sortedOutputReader of that matmul).
bool readsSortedInput(FusedMatmulOp reader, RunsFusedEverywhere runsFused);

} // namespace qf
} // namespace mlir

#endif // QFUSE_LIB_CONVERSION_QFTOGPU_SORTEDOUTPUT_H
