//===- DeviceQuantizer.cpp - the qf.quantize kernels of an artifact -------===//
//
// Each qf.quantize launch step names its encoding; K and the input dtype
// are those of the buffer bound to its first parameter ("w"). The launch is
// one block per row, so the grid is the caller's N and the step's own grid
// (the N the compiler saw) is not used.
//
//===----------------------------------------------------------------------===//

#include "qfuse/runtime/device/DeviceQuantizer.h"

#include "qfuse/format/Packing.h"
#include "qfuse/runtime/Error.h"

#include <algorithm>
#include <cstring>

namespace qfuse::runtime {

DeviceQuantizer::DeviceQuantizer(const Artifact &artifact,
                                 const cuda::Context &context)
    : context_(context) {
  std::map<std::string, std::shared_ptr<cuda::Module>> modules;
  for (const Plan &plan : artifact.plans)
    for (const Step &step : plan.steps) {
      // The layout gathers of the same ops are DeviceGather's, their bf16
      // -> f16 roundings DeviceHalfRound's, their f32 widenings
      // DeviceWiden's.
      if (step.kind != Step::Kind::Launch || step.op != kQuantizeOp ||
          step.args.empty() ||
          step.target.rfind("qf_gather_fields_", 0) == 0 ||
          step.target.rfind("qf_round_", 0) == 0 ||
          step.target.rfind("qf_widen_", 0) == 0)
        continue;
      const BufferSpec *w = artifact.findBuffer(step.args.front().name);
      if (!w || w->shape.size() != 2)
        throw Error("artifact '" + artifact.source +
                    "': the qf.quantize "
                    "launch of '" +
                    step.target + "' does not bind an [N, K] buffer to \"w\"");
      Entry entry;
      entry.encoding = step.encoding;
      entry.k = w->shape[1].value;
      entry.input = w->dtype;
      if (find(entry.encoding, entry.k, entry.input))
        continue;
      const Kernel &kernel = artifact.kernels[step.kernelIndex];
      std::shared_ptr<cuda::Module> &module = modules[kernel.name];
      if (!module)
        module = std::make_shared<cuda::Module>(
            cuda::Module::load(kernel, artifact.target, context));
      entry.module = module;
      entry.function = module->function(kernel.name);
      for (const auto &param : kernel.params)
        entry.params.push_back(param.name);
      entry.threads = step.block[0];
      entries_.push_back(std::move(entry));
    }
}

const DeviceQuantizer::Entry *DeviceQuantizer::find(const format::Encoding &enc,
                                                    int64_t k,
                                                    DType input) const {
  for (const Entry &e : entries_)
    if (e.k == k && e.input == input && e.encoding == enc)
      return &e;
  return nullptr;
}

bool DeviceQuantizer::has(const format::Encoding &enc, int64_t k,
                          DType input) const {
  return find(enc, k, input) != nullptr;
}

std::vector<DeviceQuantizer::Key> DeviceQuantizer::keys() const {
  std::vector<Key> out;
  for (const Entry &e : entries_)
    out.push_back({e.encoding, e.k, e.input});
  return out;
}

void DeviceQuantizer::enqueue(const format::Encoding &enc, CUdeviceptr w,
                              int64_t n, int64_t k, DType input,
                              const std::map<std::string, CUdeviceptr> &outputs,
                              CUdeviceptr status, CUstream stream,
                              CUdeviceptr amax) const {
  const Entry *entry = find(enc, k, input);
  if (!entry)
    throw Error("no qf.quantize kernel for \"" + format::printEncoding(enc) +
                "\" over K = " + std::to_string(k) + " " +
                std::string(safetensorsName(input)));
  std::vector<CUdeviceptr> slots;
  for (const std::string &param : entry->params) {
    if (param == "w")
      slots.push_back(w);
    else if (param == "status")
      slots.push_back(status);
    else if (param == "amax" && amax)
      slots.push_back(amax);
    else if (param == "amax")
      throw Error("the qf.quantize kernel of \"" + format::printEncoding(enc) +
                  "\" reads the tensor's largest magnitude: pass its amax");
    else if (auto it = outputs.find(param); it != outputs.end())
      slots.push_back(it->second);
    else
      throw Error("qf.quantize kernel parameter '" + param +
                  "' has no device buffer");
  }
  std::vector<void *> params;
  for (CUdeviceptr &slot : slots)
    params.push_back(&slot);
  if (n > 0)
    QFUSE_CU_CTX(
        cuLaunchKernel(entry->function, unsigned(n), 1, 1, entry->threads, 1, 1,
                       0, stream, params.data(), nullptr),
        "launching qf.quantize into \"" + format::printEncoding(enc) + "\"");
}

bool DeviceQuantizer::quantizeHost(const format::Encoding &enc, const void *w,
                                   int64_t n, int64_t k, DType input,
                                   format::TensorMap &components,
                                   std::string &why) {
  std::lock_guard<std::mutex> lock(mutex_);
  context_.makeCurrent();
  const size_t bytes = size_t(n * k) * (input == DType::F32 ? 4 : 2);
  if (input_.size() < bytes)
    input_ = cuda::DeviceBuffer(bytes, "quantize input");
  input_.upload(w, bytes);
  return quantizeLocked(enc, input_.ptr(), n, k, input, components, why);
}

bool DeviceQuantizer::quantize(const format::Encoding &enc, CUdeviceptr w,
                               int64_t n, int64_t k, DType input,
                               format::TensorMap &components,
                               std::string &why) {
  std::lock_guard<std::mutex> lock(mutex_);
  context_.makeCurrent();
  return quantizeLocked(enc, w, n, k, input, components, why);
}

bool DeviceQuantizer::quantizeLocked(const format::Encoding &enc, CUdeviceptr w,
                                     int64_t n, int64_t k, DType input,
                                     format::TensorMap &components,
                                     std::string &why) {
  std::vector<format::ComponentSpec> specs;
  std::string error;
  if (!format::componentSpecs(enc, n, k, specs, error))
    throw Error("quantizing on the device: " + error);
  if (!stream_)
    stream_ = std::make_unique<cuda::Stream>();
  // The components back to back, each 256-byte aligned.
  std::vector<size_t> offsets;
  size_t total = 0;
  for (const format::ComponentSpec &spec : specs) {
    offsets.push_back(total);
    size_t size = size_t(format::numElements(spec.shape)) *
                  format::dtypeBytes(spec.dtype);
    total += (size + 255) / 256 * 256;
  }
  if (outputs_.size() < total)
    outputs_ = cuda::DeviceBuffer(total, "quantize outputs");
  if (status_.empty())
    status_ = cuda::DeviceBuffer(4, "quantize status");
  std::map<std::string, CUdeviceptr> outputs;
  for (size_t i = 0; i < specs.size(); ++i)
    outputs[specs[i].name] = outputs_.ptr() + offsets[i];
  status_.zero(stream_->get());
  if (enc.globalScale) {
    if (!amax_)
      amax_ = std::make_unique<DeviceAmax>();
    if (amaxWord_.empty())
      amaxWord_ = cuda::DeviceBuffer(4, "quantize amax");
    const float amax =
        amax_->largestMagnitude(w, n * k, input, stream_->get());
    amaxWord_.upload(&amax, 4);
  }
  enqueue(enc, w, n, k, input, outputs, status_.ptr(), stream_->get(),
          enc.globalScale ? amaxWord_.ptr() : 0);
  stream_->synchronize();
  int32_t status = 0;
  status_.download(&status, 4);
  if (status != 0) {
    why = "a weight or a scale is not finite";
    return false;
  }
  components.clear();
  for (size_t i = 0; i < specs.size(); ++i) {
    format::Tensor &t = components[specs[i].name];
    t.dtype = specs[i].dtype;
    t.shape = specs[i].shape;
    t.data.resize(size_t(format::numElements(t.shape)) *
                  format::dtypeBytes(t.dtype));
    outputs_.download(t.data.data(), t.data.size(), offsets[i]);
  }
  return true;
}

} // namespace qfuse::runtime
