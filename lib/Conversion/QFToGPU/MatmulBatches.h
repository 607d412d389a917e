//===- MatmulBatches.h - what a fused matmul asks of each batch -*- C++ -*-===//
//
// The parts of a qf.fused_matmul that qf-to-gpu reads before it emits
// anything: its qf.group, the tiling and layout of each batch
// (qf.batch_tilings), and the encoding an act_order weight is read with on
// permuted activations.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_LIB_CONVERSION_QFTOGPU_MATMULBATCHES_H
#define QFUSE_LIB_CONVERSION_QFTOGPU_MATMULBATCHES_H

#include "Common/MatmulSpec.h"

#include "qfuse/Dialect/QF/IR/QFDialect.h"

#include "llvm/ADT/DenseMap.h"

namespace mlir {
namespace qf {

/// The members of `op`'s qf.group (qf-fuse-shared-input) in block order,
/// `op` among them; none when it has no group.
SmallVector<FusedMatmulOp> groupMembers(FusedMatmulOp op);

/// Checks that the members of a qf.group can share the first member's
/// kernel: all but N the same (input, weight encoding, layout and K,
/// prologue and epilogue).
LogicalResult verifyGroup(ArrayRef<FusedMatmulOp> members);

/// The act_order weight's encoding as the kernel reads it after the
/// permute launch: the same codes, scales and groups, columns in order.
EncodingAttr withoutActOrder(EncodingAttr enc);

/// What one `qf.batch_tilings` entry asks for.
struct BatchKernel {
  TilingAttr tiling;
  LayoutAttr layout; // null before qf-choose-layout: the operand's
};

/// The entries of `op`'s `qf.batch_tilings` by batch (verified by the
/// dialect: #qf.batch_tiling entries, each batch once).
llvm::DenseMap<int64_t, BatchKernel> getBatchKernels(FusedMatmulOp op);

/// The tiling and layout of batch `batch` of `op`: its own entry in
/// `perBatch` (its `qf.batch_tilings`), else the op's tiling on its
/// weight's layout.
FailureOr<MatmulSpec>
batchSpec(FusedMatmulOp op,
          const llvm::DenseMap<int64_t, BatchKernel> &perBatch, int64_t batch);

} // namespace qf
} // namespace mlir

#endif // QFUSE_LIB_CONVERSION_QFTOGPU_MATMULBATCHES_H
