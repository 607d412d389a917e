//===- ElementwiseKernel.cpp - one generated element-wise kernel ----------===//

#include "qfuse/runtime/device/ElementwiseKernel.h"

#include "qfuse/runtime/Error.h"

#include <algorithm>
#include <vector>

namespace qfuse::runtime {
namespace {

constexpr unsigned kThreads = 256;
/// Elements per launch: the count parameter is an i32.
constexpr uint64_t kLaunchElements = uint64_t(1) << 30;

} // namespace

ElementwiseKernel::ElementwiseKernel(const Artifact &artifact, std::string name,
                                     const cuda::Context &context)
    : name_(std::move(name)) {
  for (const Kernel &kernel : artifact.kernels) {
    if (kernel.name != name_)
      continue;
    module_ = std::make_shared<cuda::Module>(
        cuda::Module::load(kernel, artifact.target, context));
    function_ = module_->function(kernel.name);
    return;
  }
}

void ElementwiseKernel::enqueue(CUdeviceptr src, unsigned srcBytes,
                                CUdeviceptr dst, unsigned dstBytes,
                                uint64_t count,
                                std::initializer_list<CUdeviceptr> extra,
                                CUstream stream) const {
  if (!function_)
    throw Error("no " + name_ + " kernel loaded");
  std::vector<CUdeviceptr> pointers(extra);
  for (uint64_t first = 0; first < count; first += kLaunchElements) {
    CUdeviceptr from = src + srcBytes * first, to = dst + dstBytes * first;
    int32_t n = int32_t(std::min(kLaunchElements, count - first));
    std::vector<void *> params = {&from, &to};
    for (CUdeviceptr &p : pointers)
      params.push_back(&p);
    params.push_back(&n);
    const unsigned blocks = unsigned((uint64_t(n) + kThreads - 1) / kThreads);
    QFUSE_CU_CTX(cuLaunchKernel(function_, blocks, 1, 1, kThreads, 1, 1, 0,
                                stream, params.data(), nullptr),
                 "launching " + name_);
  }
}

} // namespace qfuse::runtime
