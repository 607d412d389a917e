//===- WidenKernel.h - f16/bf16 widened to f32 on the GPU -------*- C++ -*-===//
//
// The kernels that widen a checkpoint tensor's f16 or bf16 elements to the
// f32 bits the host's format::halfToFloat / bfloat16ToFloat give, on the
// device: GPTQ's solver reads the stacked weights as f32, and widening
// them there keeps every bit, -0 and NaN payloads included, where a cuBLAS
// product x * 1 summed from +0 turns -0 into +0 (GptqDeviceWeights.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_LIB_CONVERSION_QFTOGPU_OPS_WIDENKERNEL_H
#define QFUSE_LIB_CONVERSION_QFTOGPU_OPS_WIDENKERNEL_H

#include "Ops/OpKernelCommon.h"

namespace mlir {
namespace qf {

/// The name of the widening kernel of `source` (f16 or bf16):
/// qf_widen_f16_to_f32 or qf_widen_bf16_to_f32.
std::string widenKernelName(Type source);

/// Emits (once per source type into `module`) the widening kernel of
/// `source` (f16 or bf16) and returns its launch with count 0 (a launch
/// that writes nothing: the runtime launches it itself, one thread per
/// element, 256 per block). Parameters, in order:
///   src, dst   (pointers: count 16-bit elements in, count f32 out)
///   count      (i32)
/// Element i: dst[i] = the f32 bits of src[i]: bf16 << 16; for f16 the
/// exact conversion, a NaN as sign | 0x7F800000 | payload << 13.
OpLaunch emitWidenLaunch(gpu::GPUModuleOp module, Type source,
                         LaunchArgAttr src, LaunchArgAttr dst, Location loc);

} // namespace qf
} // namespace mlir

#endif // QFUSE_LIB_CONVERSION_QFTOGPU_OPS_WIDENKERNEL_H
