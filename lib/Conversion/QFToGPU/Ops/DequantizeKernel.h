//===- DequantizeKernel.h - the fallback's dequantize kernel ----*- C++ -*-===//
//
// A packed weight expanded into a dense row-major [N, K] matrix for a cuBLAS
// gemm step: the fallback of a fused matmul that no fused kernel takes
// (DequantizeKernel.cpp, docs/fallback.md).
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_LIB_CONVERSION_QFTOGPU_OPS_DEQUANTIZEKERNEL_H
#define QFUSE_LIB_CONVERSION_QFTOGPU_OPS_DEQUANTIZEKERNEL_H

#include "Common/MatmulSpec.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

namespace mlir {
namespace qf {

/// The kernel `name` (emitted into `module` unless it is there already)
/// that writes every element of `weight` as `outType` (f16 or bf16) into
/// its last parameter `w`, row-major [N, K]; the parameters before it are
/// the weight's components (weightComponentTypes). One block per row.
KernelLaunch emitDequantizeKernel(gpu::GPUModuleOp module, StringRef name,
                                  WeightType weight, Type outType,
                                  Location loc);

} // namespace qf
} // namespace mlir

#endif // QFUSE_LIB_CONVERSION_QFTOGPU_OPS_DEQUANTIZEKERNEL_H
