//===- PermuteKernel.h - activations into act_order's order -----*- C++ -*-===//
//
// xp[m, j] = x[m, perm[j]]: the launch that lets the tensor-core kernel run
// act_order weights as plain ones (PermuteKernel.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_LIB_CONVERSION_QFTOGPU_OPS_PERMUTEKERNEL_H
#define QFUSE_LIB_CONVERSION_QFTOGPU_OPS_PERMUTEKERNEL_H

#include "Ops/OpKernels.h"

namespace mlir {
namespace qf {

/// The launch permuting `rows` x `k` 16-bit activations by an act_order
/// weight's `perm`, with `args` binding (x, perm, xp); diagnostics go to
/// `op`. Rows of at most `stagedMaxK` elements (and at most what static
/// shared memory holds) are staged in shared memory by every block; longer
/// ones gather straight from global memory.
FailureOr<OpLaunch> emitPermuteLaunch(Operation *op, gpu::GPUModuleOp module,
                                      int64_t rows, int64_t k,
                                      ArrayRef<LaunchArgAttr> args,
                                      int64_t stagedMaxK);

/// The same launch for an act_order matmul's silu_mul prologue, with `args`
/// binding (gate, up, perm, xp): xp[m, j] = silu(gate[m, perm[j]]) *
/// up[m, perm[j]], each product what the elementwise silu_mul kernel
/// writes, computed once: a block per row stages the row's products in
/// shared memory where they fit, else each is gathered from global memory.
FailureOr<OpLaunch> emitPermuteSiluMulLaunch(Operation *op,
                                             gpu::GPUModuleOp module,
                                             int64_t rows, int64_t k,
                                             ArrayRef<LaunchArgAttr> args);

} // namespace qf
} // namespace mlir

#endif // QFUSE_LIB_CONVERSION_QFTOGPU_OPS_PERMUTEKERNEL_H
