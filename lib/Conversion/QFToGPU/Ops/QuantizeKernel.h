//===- QuantizeKernel.h - qf.quantize's GPU kernel --------------*- C++ -*-===//
//
// Round-to-nearest on the device, from the same IR as the CPU reference
// (QuantizeKernel.cpp, qfuse/Conversion/WeightQuantizer.h).
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_LIB_CONVERSION_QFTOGPU_OPS_QUANTIZEKERNEL_H
#define QFUSE_LIB_CONVERSION_QFTOGPU_OPS_QUANTIZEKERNEL_H

#include "Common/MatmulSpec.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "qfuse/Dialect/QF/IR/QFDialect.h"
#include "qfuse/format/Encoding.h"
#include "llvm/ADT/StringMap.h"

namespace mlir {
namespace qf {

/// The kernel `name` (emitted into `module` unless it is there already)
/// that quantizes a row-major [N, k] matrix of `input` (f16, bf16, f32) into
/// `enc`'s row-major components: parameters (w, [amax,] codes, scales
/// [, zeros][, global_scale], status), one block per row, so the grid is N
/// (`rows` in the returned launch). `enc` must pass
/// quantizeUnsupportedReason.
KernelLaunch emitQuantizeKernel(gpu::GPUModuleOp module, StringRef name,
                                const qfuse::format::Encoding &enc, int64_t k,
                                Type input, int64_t rows, Location loc);

/// Records on `op` (qf.launches) the launch of its kernel, emitted into
/// `module` once per (encoding, K, input type) (`kernels` maps that key to
/// the kernel's name): w is operand 0, codes, scales, zeros and
/// global_scale are the result's components, amax (NVFP4) and status
/// scratch words. What the kernel does not
/// take gets a remark and no quantize record: the runtime quantizes it on
/// the host. Every op whose code width a qf_gather_fields kernel takes
/// (FieldGatherKernel.h) also records that kernel's launch, so the
/// artifact carries the device's packing into the kernel layouts.
void lowerQuantize(QuantizeOp op, gpu::GPUModuleOp module,
                   llvm::StringMap<std::string> &kernels);

} // namespace qf
} // namespace mlir

#endif // QFUSE_LIB_CONVERSION_QFTOGPU_OPS_QUANTIZEKERNEL_H
