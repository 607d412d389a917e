//===- SortedOutput.h - a matmul that writes its reader's sorted order -*- C++ -*-===//
//
// An act_order matmul reads its input in its weight's sorted column order,
// which a permute launch writes (MatmulInput.h). When the input is the
// result of a gated matmul that only it reads (down_proj behind gate/up),
// the gated kernel stores that result's column n at column inv_perm[n] of
// the reader's weight instead (MatmulSpec::scatterOutput), and its fallback
// writes it through the reader's perm: the permute launch goes away. The
// same for attention's output read by o_proj (its `out_order` parameter). The IR
// means the same, so the CPU reference is unchanged (docs/act-order.md).
// Only at small batches: each scattered element is a 2-byte store of its
// own, where the tensor-core epilogue writes 16 contiguous bytes, so with
// more rows the stores cost more than the permute launch they replace.
// Attention's limit is an option of its own (qf-to-gpu
// sorted-attention-max-batch): its tiled kernel, from batch 32, stores the
// same way when asked, slower there than the permute launch.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_LIB_CONVERSION_QFTOGPU_SORTEDOUTPUT_H
#define QFUSE_LIB_CONVERSION_QFTOGPU_SORTEDOUTPUT_H

#include "qfuse/Dialect/QF/IR/QFDialect.h"

namespace mlir {
namespace qf {

/// The largest batch whose gate/up output is stored in sorted order
/// (docs/act-order.md has the measurements), and attention's default.
inline constexpr int64_t kSortedOutputMaxBatch = 16;

/// Whether a fused matmul runs its fused kernel (not the dequantize +
/// cuBLAS fallback) at a batch.
using RunsFusedAt = function_ref<bool(FusedMatmulOp, int64_t batch)>;

/// The act_order matmul `writer` writes its result (result 0) for in
/// sorted column order at `batch`, or null: the batch is at most
/// kSortedOutputMaxBatch (`attentionMaxBatch` for an attention writer),
/// `writer` is a qf.attention or a gated matmul
/// (silu_mul epilogue, f16) without a residual or qf.group, and its
/// result's only use is the input of a fused matmul on an act_order weight
/// whose columns sort (not 2:4), without a prologue or qf.group, which runs
/// fused at that batch.
FusedMatmulOp sortedOutputReader(Operation *writer, int64_t batch,
                                 RunsFusedAt runsFused,
                                 int64_t attentionMaxBatch);

/// Whether `reader`'s input comes in its weight's sorted column order at
/// `batch` from the matmul that writes it (sortedOutputReader).
bool readsSortedInput(FusedMatmulOp reader, int64_t batch,
                      RunsFusedAt runsFused, int64_t attentionMaxBatch);

} // namespace qf
} // namespace mlir

#endif // QFUSE_LIB_CONVERSION_QFTOGPU_SORTEDOUTPUT_H
