//===- DeviceAmax.h - the largest magnitude of a device tensor --*- C++ -*-===//
//
// NVFP4's global scale is a function of the whole weight's largest |w|,
// which the qf.quantize kernel cannot find (a block sees one row), so the
// runtime finds it first, with cuBLAS (the runtime has no CUDA C): f16 and
// bf16 are widened to f32 exactly (cublasGemmEx by 1.0 with f32
// accumulation, as GptqDeviceWeights does), a slice at a time into a
// fixed f32 buffer, and cublasIsamax picks each slice's largest.
//
//   DeviceAmax amax;                                // on the current context
//   float m = amax.largestMagnitude(w, n * k, DType::F16, stream);
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_RUNTIME_DEVICE_DEVICEAMAX_H
#define QFUSE_RUNTIME_DEVICE_DEVICEAMAX_H

#include "qfuse/runtime/checkpoint/DType.h"
#include "qfuse/runtime/device/Cuda.h"

#include <cstdint>

namespace qfuse::runtime {

class DeviceAmax {
public:
  /// Elements per slice: the f32 buffer is 16 MiB.
  static constexpr int64_t kSliceElements = int64_t(1) << 22;

  /// A cuBLAS handle and the slice buffer on the current context.
  DeviceAmax();

  /// max |w[i]| over the `count` elements (F16, BF16 or F32) at `w`, after
  /// the work already on `stream`; 0 for no elements. Exact: the value of
  /// one element. Returns when it is known.
  float largestMagnitude(CUdeviceptr w, int64_t count, DType input,
                         CUstream stream);

private:
  cuda::Cublas blas_;
  /// 1.0 as f16 at byte 0 and as bf16 at byte 2; the widened slice.
  cuda::DeviceBuffer ones_, slice_;
};

} // namespace qfuse::runtime

#endif // QFUSE_RUNTIME_DEVICE_DEVICEAMAX_H
