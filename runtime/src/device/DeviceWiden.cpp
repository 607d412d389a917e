//===- DeviceWiden.cpp - the qf_widen_*_to_f32 kernels --------------------===//
//
// The kernels' parameters (WidenKernel.h): src, dst, then the element count
// as i32 (ElementwiseKernel).
//
//===----------------------------------------------------------------------===//

#include "qfuse/runtime/device/DeviceWiden.h"

namespace qfuse::runtime {

DeviceWiden::DeviceWiden(const Artifact &artifact, const cuda::Context &context)
    : f16_(artifact, "qf_widen_f16_to_f32", context),
      bf16_(artifact, "qf_widen_bf16_to_f32", context) {}

bool DeviceWiden::has(DType source) const {
  return (source == DType::F16 && f16_.loaded()) ||
         (source == DType::BF16 && bf16_.loaded());
}

void DeviceWiden::enqueue(DType source, CUdeviceptr src, CUdeviceptr dst,
                          uint64_t count, CUstream stream) const {
  (source == DType::BF16 ? bf16_ : f16_)
      .enqueue(src, 2, dst, 4, count, {}, stream);
}

} // namespace qfuse::runtime
