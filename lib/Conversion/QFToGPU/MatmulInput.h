//===- MatmulInput.h - launches that prepare a fused matmul's input -*- C++ -*-===//
//
// The launches qf-to-gpu records before a fused matmul's kernel (or its
// dequantize + cuBLAS fallback) when the kernel does not read the op's
// input as given: the act_order permute, and the prologues (RMSNorm,
// silu_mul) that run as launches of their own (docs/act-order.md).
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_LIB_CONVERSION_QFTOGPU_MATMULINPUT_H
#define QFUSE_LIB_CONVERSION_QFTOGPU_MATMULINPUT_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "qfuse/Dialect/QF/IR/QFDialect.h"

namespace mlir {
namespace qf {

/// Records the launch that writes the act_order op's input in its weight's
/// sorted column order (the weight read in `layout`, whose "perm" it binds)
/// into scratch `permuted`, which the kernel reads: the op's RMSNorm or
/// silu_mul prologue gathering through perm (step "rms_norm" or
/// "silu_mul_prologue"), else a permute (step "permute"). The permute
/// kernel stages rows of at most `stagedMaxK` elements in shared memory.
LogicalResult recordPermutedInput(FusedMatmulOp op, LayoutAttr layout,
                                  gpu::GPUModuleOp gpuModule, int64_t batch,
                                  int64_t stagedMaxK,
                                  SmallVectorImpl<Attribute> &launches);

/// Records the op's prologue, if it has one, as the fallback's launch in
/// checkpoint order: the RMSNorm into scratch `normed`, the silu_mul
/// product into scratch `activated`, which the fallback's gemms read.
LogicalResult recordFallbackInput(FusedMatmulOp op, LayoutAttr layout,
                                  gpu::GPUModuleOp gpuModule, int64_t batch,
                                  SmallVectorImpl<Attribute> &launches);

} // namespace qf
} // namespace mlir

#endif // QFUSE_LIB_CONVERSION_QFTOGPU_MATMULINPUT_H
