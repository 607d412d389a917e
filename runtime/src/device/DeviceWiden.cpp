//===- DeviceWiden.cpp - the qf_widen_*_to_f32 kernels --------------------===//
//
// The kernels' parameters (WidenKernel.h): src, dst, then the element count
// as i32. One thread per element, 256 per block; tensors of 2^30 elements
// or more go in several launches.
//
//===----------------------------------------------------------------------===//

#include "qfuse/runtime/device/DeviceWiden.h"

#include "qfuse/runtime/Error.h"

#include <algorithm>

namespace qfuse::runtime {
namespace {

constexpr const char *kF16 = "qf_widen_f16_to_f32";
constexpr const char *kBF16 = "qf_widen_bf16_to_f32";
constexpr unsigned kThreads = 256;
constexpr uint64_t kLaunchElements = uint64_t(1) << 30;

const char *kernelName(DType source) {
  return source == DType::BF16 ? kBF16 : kF16;
}

} // namespace

DeviceWiden::DeviceWiden(const Artifact &artifact,
                         const cuda::Context &context) {
  for (const Kernel &kernel : artifact.kernels) {
    if (kernel.name != kF16 && kernel.name != kBF16)
      continue;
    modules_.push_back(std::make_shared<cuda::Module>(
        cuda::Module::load(kernel, artifact.target, context)));
    (kernel.name == kF16 ? f16_ : bf16_) =
        modules_.back()->function(kernel.name);
  }
}

bool DeviceWiden::has(DType source) const {
  return (source == DType::F16 && f16_) || (source == DType::BF16 && bf16_);
}

void DeviceWiden::enqueue(DType source, CUdeviceptr src, CUdeviceptr dst,
                          uint64_t count, CUstream stream) const {
  if (!has(source))
    throw Error(std::string("no ") + kernelName(source) + " kernel loaded");
  CUfunction function = source == DType::F16 ? f16_ : bf16_;
  for (uint64_t first = 0; first < count; first += kLaunchElements) {
    CUdeviceptr from = src + 2 * first, to = dst + 4 * first;
    int32_t n = int32_t(std::min(kLaunchElements, count - first));
    void *params[] = {&from, &to, &n};
    const unsigned blocks = unsigned((uint64_t(n) + kThreads - 1) / kThreads);
    QFUSE_CU_CTX(cuLaunchKernel(function, blocks, 1, 1, kThreads, 1, 1, 0,
                                stream, params, nullptr),
                 std::string("launching ") + kernelName(source));
  }
}

} // namespace qfuse::runtime
