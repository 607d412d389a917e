//===- DeviceHalfRound.cpp - the qf_round_bf16_to_f16 kernel --------------===//
//
// The kernel's parameters (HalfRoundKernel.h): src, dst, status, then the
// element count as i32 (ElementwiseKernel).
//
//===----------------------------------------------------------------------===//

#include "qfuse/runtime/device/DeviceHalfRound.h"

#include "qfuse/runtime/Error.h"
#include "qfuse/runtime/checkpoint/WeightSources.h"

namespace qfuse::runtime {

DeviceHalfRound::DeviceHalfRound(const Artifact &artifact,
                                 const cuda::Context &context)
    : kernel_(artifact, "qf_round_bf16_to_f16", context) {}

void DeviceHalfRound::enqueue(CUdeviceptr src, CUdeviceptr dst, uint64_t count,
                              CUdeviceptr status, CUstream stream) const {
  kernel_.enqueue(src, 2, dst, 2, count, {status}, stream);
}

void throwHalfOverflow(const uint8_t *data, uint64_t count,
                       const std::string &what) {
  // convertDense throws naming the first element that overflows.
  convertDense(DType::BF16, data, count, DType::F16, what);
  throw Error(what + ": the device reported a bf16 value that overflows "
                     "f16, but the host's rounding finds none (internal "
                     "error)");
}

} // namespace qfuse::runtime
