//===- MatVecKernel.h - fused dequant-matvec kernel generator ---*- C++ -*-===//

#ifndef QFUSE_LIB_CONVERSION_QFTOGPU_MATVEC_MATVECKERNEL_H
#define QFUSE_LIB_CONVERSION_QFTOGPU_MATVEC_MATVECKERNEL_H

#include "Common/MatmulSpec.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"

namespace mlir {
namespace qf {

/// Emits the matvec kernel for `spec` as an llvm.func in `module`, or fails
/// with a diagnostic naming what this generator cannot take.
FailureOr<KernelLaunch>
emitMatVecKernel(gpu::GPUModuleOp module, StringRef name,
                 const MatmulSpec &spec,
                 function_ref<InFlightDiagnostic()> emitError);

} // namespace qf
} // namespace mlir

#endif // QFUSE_LIB_CONVERSION_QFTOGPU_MATVEC_MATVECKERNEL_H
