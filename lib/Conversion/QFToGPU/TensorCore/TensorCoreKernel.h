//===- TensorCoreKernel.h - fused dequant-GEMM on mma.sync ------*- C++ -*-===//

#ifndef QFUSE_LIB_CONVERSION_QFTOGPU_TENSORCORE_TENSORCOREKERNEL_H
#define QFUSE_LIB_CONVERSION_QFTOGPU_TENSORCORE_TENSORCOREKERNEL_H

#include "MatVec/MatVecKernel.h"

namespace mlir {
namespace qf {

/// Emits the tensor-core kernel for `spec` (tiling kind mma, any batch M)
/// as an llvm.func in `module`, or fails with a diagnostic naming what this
/// generator cannot take.
FailureOr<KernelLaunch>
emitTensorCoreKernel(gpu::GPUModuleOp module, StringRef name,
                     const MatmulSpec &spec,
                     function_ref<InFlightDiagnostic()> emitError);

} // namespace qf
} // namespace mlir

#endif // QFUSE_LIB_CONVERSION_QFTOGPU_TENSORCORE_TENSORCOREKERNEL_H
