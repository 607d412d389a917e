//===- HalfRoundKernel.h - bf16 rounded to f16 on the GPU -------*- C++ -*-===//
//
// The kernel that rounds a bf16 checkpoint tensor to the f16 elements the
// host's format::floatToHalf (and the F16C convert) writes, on the device:
// a bf16 checkpoint's GPTQ modules go to the GPU once, as stored, and the
// calibration plan's f16 weight is made there (qfuse-quantize,
// runtime/include/qfuse/runtime/device/DeviceHalfRound.h).
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_LIB_CONVERSION_QFTOGPU_OPS_HALFROUNDKERNEL_H
#define QFUSE_LIB_CONVERSION_QFTOGPU_OPS_HALFROUNDKERNEL_H

#include "Ops/OpKernelCommon.h"

namespace mlir {
namespace qf {

/// The name of the bf16 -> f16 rounding kernel.
std::string halfRoundKernelName();

/// Emits (once into `module`) the kernel qf_round_bf16_to_f16 and returns
/// its launch with count 0 (a launch that writes nothing: the runtime
/// launches it itself, one thread per element, 256 per block). Parameters,
/// in order:
///   src, dst, status   (pointers: count bf16 in, count f16 out, one i32)
///   count              (i32)
/// Element i: dst[i] = f16 of src[i], rounded to nearest even (subnormals
/// kept, NaN quiet with its top payload bits: format::floatToHalf's bits);
/// status[0] = 1 where a finite src[i] rounds to inf (the runtime names
/// the element on the host).
OpLaunch emitHalfRoundLaunch(gpu::GPUModuleOp module, LaunchArgAttr src,
                             LaunchArgAttr dst, LaunchArgAttr status,
                             Location loc);

} // namespace qf
} // namespace mlir

#endif // QFUSE_LIB_CONVERSION_QFTOGPU_OPS_HALFROUNDKERNEL_H
