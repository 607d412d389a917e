//===- DeviceHalfRound.cpp - the qf_round_bf16_to_f16 kernel --------------===//
//
// The kernel's parameters (HalfRoundKernel.h): src, dst, status, then the
// element count as i32. One thread per element, 256 per block; tensors of
// 2^31 elements or more go in several launches.
//
//===----------------------------------------------------------------------===//

#include "qfuse/runtime/device/DeviceHalfRound.h"

#include "qfuse/runtime/Error.h"
#include "qfuse/runtime/checkpoint/WeightSources.h"

#include <algorithm>

namespace qfuse::runtime {
namespace {

constexpr const char *kKernel = "qf_round_bf16_to_f16";
constexpr unsigned kThreads = 256;
constexpr uint64_t kLaunchElements = uint64_t(1) << 30;

} // namespace

DeviceHalfRound::DeviceHalfRound(const Artifact &artifact,
                                 const cuda::Context &context) {
  for (const Kernel &kernel : artifact.kernels) {
    if (kernel.name != kKernel)
      continue;
    module_ = std::make_shared<cuda::Module>(
        cuda::Module::load(kernel, artifact.target, context));
    function_ = module_->function(kernel.name);
    return;
  }
}

void DeviceHalfRound::enqueue(CUdeviceptr src, CUdeviceptr dst,
                              uint64_t count, CUdeviceptr status,
                              CUstream stream) const {
  if (!function_)
    throw Error(std::string("no ") + kKernel + " kernel loaded");
  for (uint64_t first = 0; first < count; first += kLaunchElements) {
    CUdeviceptr from = src + 2 * first, to = dst + 2 * first;
    int32_t n = int32_t(std::min(kLaunchElements, count - first));
    void *params[] = {&from, &to, &status, &n};
    const unsigned blocks = unsigned((uint64_t(n) + kThreads - 1) / kThreads);
    QFUSE_CU_CTX(cuLaunchKernel(function_, blocks, 1, 1, kThreads, 1, 1, 0,
                                stream, params, nullptr),
                 std::string("launching ") + kKernel);
  }
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
