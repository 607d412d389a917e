//===- DeviceGather.cpp - the qf_gather_fields kernels of an artifact -----===//
//
// The kernel's parameters (FieldGatherKernel.h): src, table, perm, dst,
// status, then the FieldGather's scalars as i32 (15 in kernels compiled
// before padParity, 16 since). One thread per 32-bit
// destination word, 256 per block.
//
//===----------------------------------------------------------------------===//

#include "qfuse/runtime/device/DeviceGather.h"

#include "qfuse/runtime/Error.h"

#include <algorithm>

namespace qfuse::runtime {
namespace {

constexpr const char *kPrefix = "qf_gather_fields_b";
constexpr unsigned kThreads = 256;

} // namespace

DeviceGather::DeviceGather(const Artifact &artifact,
                           const cuda::Context &context)
    : context_(context) {
  const std::string prefix = kPrefix;
  for (const Kernel &kernel : artifact.kernels) {
    if (kernel.name.compare(0, prefix.size(), prefix) != 0)
      continue;
    const unsigned bits = unsigned(std::stoul(kernel.name.substr(prefix.size())));
    if (functions_.count(bits))
      continue;
    auto module = std::make_shared<cuda::Module>(
        cuda::Module::load(kernel, artifact.target, context));
    functions_[bits] = module->function(kernel.name);
    immCounts_[bits] = kernel.params.size() > 5 ? kernel.params.size() - 5 : 0;
    modules_.push_back(std::move(module));
  }
}

void DeviceGather::enqueue(const format::FieldGather &g, CUdeviceptr src,
                           CUdeviceptr dst, CUdeviceptr status,
                           CUstream stream) {
  enqueue(g, src, dst, status, stream, 0);
}

void DeviceGather::enqueue(const format::FieldGather &g, CUdeviceptr src,
                           CUdeviceptr dst, CUdeviceptr status,
                           CUstream stream, CUdeviceptr devicePerm) {
  auto it = functions_.find(g.dstBits);
  if (it == functions_.end())
    throw Error("no qf_gather_fields kernel for " + std::to_string(g.dstBits) +
                "-bit fields");
  if (g.padParity && !hasPadParity(g.dstBits))
    throw Error("the qf_gather_fields_b" + std::to_string(g.dstBits) +
                " kernel predates padParity (2:4 metadata): recompile the "
                "quantize artifact");
  CUdeviceptr tablePtr = 0;
  {
    std::lock_guard<std::mutex> lock(tablesMutex_);
    auto table = tables_.find(g.table);
    if (table == tables_.end()) {
      cuda::DeviceBuffer buffer(g.table.size() * 4, "gather table");
      buffer.upload(g.table.data(), g.table.size() * 4);
      table = tables_.emplace(g.table, std::move(buffer)).first;
    }
    tablePtr = table->second.ptr();
    if (!devicePerm) {
      const size_t permBytes = std::max<size_t>(4, g.perm.size() * 4);
      if (perm_.size() < permBytes)
        perm_ = cuda::DeviceBuffer(permBytes, "gather perm");
      if (!g.perm.empty())
        perm_.upload(g.perm.data(), g.perm.size() * 4);
    }
  }
  CUdeviceptr pointers[5] = {src, tablePtr, devicePerm ? devicePerm : perm_.ptr(),
                             dst, status};
  int32_t imms[16] = {int32_t(g.words()), int32_t(g.fields),
                      int32_t(g.table.size()), int32_t(g.tilesK),
                      int32_t(g.tileN), int32_t(g.tileK), int32_t(g.n),
                      int32_t(g.k), int32_t(g.srcRowBytes),
                      int32_t(g.srcBits),
                      devicePerm || !g.perm.empty() ? 1 : 0,
                      g.signedSrc ? 1 : 0, g.minCode, g.maxCode,
                      int32_t(g.addend), g.padParity ? 1 : 0};
  std::vector<void *> params;
  for (CUdeviceptr &p : pointers)
    params.push_back(&p);
  const size_t immCount = std::min<size_t>(16, immCounts_.at(g.dstBits));
  for (size_t i = 0; i < immCount; ++i)
    params.push_back(&imms[i]);
  const int64_t blocks = (g.words() + kThreads - 1) / kThreads;
  if (blocks > 0)
    QFUSE_CU_CTX(cuLaunchKernel(it->second, unsigned(blocks), 1, 1, kThreads,
                                1, 1, 0, stream, params.data(), nullptr),
                 "launching qf_gather_fields_b" + std::to_string(g.dstBits));
}

bool DeviceGather::run(const format::FieldGather &g, CUdeviceptr src,
                       std::vector<uint8_t> &out, std::string &why) {
  std::lock_guard<std::mutex> lock(mutex_);
  context_.makeCurrent();
  return runLocked(g, src, out, why);
}

bool DeviceGather::runHost(const format::FieldGather &g, const uint8_t *src,
                           size_t srcBytes, std::vector<uint8_t> &out,
                           std::string &why) {
  std::lock_guard<std::mutex> lock(mutex_);
  context_.makeCurrent();
  if (src_.size() < std::max<size_t>(srcBytes, 1))
    src_ = cuda::DeviceBuffer(std::max<size_t>(srcBytes, 1), "gather source");
  src_.upload(src, srcBytes);
  return runLocked(g, src_.ptr(), out, why);
}

bool DeviceGather::runLocked(const format::FieldGather &g, CUdeviceptr src,
                             std::vector<uint8_t> &out, std::string &why) {
  if (!stream_)
    stream_ = std::make_unique<cuda::Stream>();
  const size_t bytes = std::max<size_t>(4, size_t(g.words()) * 4);
  if (dst_.size() < bytes)
    dst_ = cuda::DeviceBuffer(bytes, "gather destination");
  if (status_.empty())
    status_ = cuda::DeviceBuffer(4, "gather status");
  status_.zero(stream_->get());
  enqueue(g, src, dst_.ptr(), status_.ptr(), stream_->get());
  stream_->synchronize();
  int32_t status = 0;
  status_.download(&status, 4);
  if (status != 0) {
    why = "a code is outside its format's range";
    return false;
  }
  out.resize(size_t(g.dstBytes));
  dst_.download(out.data(), out.size());
  return true;
}

} // namespace qfuse::runtime
