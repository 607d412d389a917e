//===- ExecutorWeights.cpp - Weights and tensors bound to an Executor -----===//
//
// The Executor's device memory for what the artifact reads but never writes:
// weight components and tensors, bound from host data, device buffers or a
// safetensors file, and the check that every argument a plan reads is bound.
// Buffers and plan execution are in Executor.cpp.
//
//===----------------------------------------------------------------------===//

#include "qfuse/runtime/device/Executor.h"
#include "BoundInputs.h"

#include "qfuse/runtime/Error.h"
#include "qfuse/runtime/device/PinnedUploader.h"

#include <cstring>

namespace qfuse::runtime {
namespace {

std::string componentText(const std::pair<std::string, std::string> &key) {
  return "weight '" + key.first + "' component '" + key.second + "'";
}

void upload(cuda::DeviceBuffer &buffer, const void *data, size_t size,
            PinnedUploader *uploader) {
  if (uploader)
    uploader->upload(buffer, data, size);
  else
    buffer.upload(data, size);
}

} // namespace

void Executor::bindWeightComponent(const std::string &weight,
                                   const std::string &component,
                                   const void *data, size_t size,
                                   PinnedUploader *uploader) {
  auto key = std::make_pair(weight, component);
  if (!artifact_.findWeight(weight))
    fail("cannot bind weight '" + weight + "': not declared in 'weights'");
  if (!usedComponents_.count(key))
    fail("cannot bind " + componentText(key) + ": no plan step reads it");
  if (size == 0)
    fail("cannot bind " + componentText(key) + ": no data");
  cuda::DeviceBuffer buffer =
      componentBuffer(weight + "." + component, data, size, uploader);
  recordPerm(weight, component, data, 0);
  bindOwned(key, std::move(buffer));
}

cuda::DeviceBuffer Executor::componentBuffer(const std::string &label,
                                             const void *data, size_t size,
                                             PinnedUploader *uploader) {
  // Whole 16-byte units, zero past the data: the tensor-core kernel copies
  // scales and zero points as the aligned 32-bit words that hold them, and
  // with 1-byte entries the last word may reach past the component.
  const size_t padded = (size + 15) / 16 * 16;
  cuda::DeviceBuffer buffer(padded, label);
  if (padded != size) {
    std::vector<uint8_t> bytes(padded, 0);
    std::memcpy(bytes.data(), data, size);
    upload(buffer, bytes.data(), padded, uploader);
  } else {
    upload(buffer, data, size, uploader);
  }
  return buffer;
}

void Executor::bindWeightComponent(const std::string &weight,
                                   const std::string &component,
                                   cuda::DeviceBuffer buffer) {
  auto key = std::make_pair(weight, component);
  if (!usedComponents_.count(key))
    fail("cannot bind " + componentText(key) + ": no plan step reads it");
  if (buffer.empty())
    fail("cannot bind " + componentText(key) + " to an empty buffer");
  recordPerm(weight, component, nullptr, buffer.ptr());
  bindOwned(key, std::move(buffer));
}

void Executor::bindOwned(const std::pair<std::string, std::string> &key,
                         cuda::DeviceBuffer buffer) {
  components_[key] = buffer.ptr();
  ownedComponents_[key] = std::move(buffer);
  dropGraphs();
}

void Executor::recordPerm(const std::string &weight,
                          const std::string &component, const void *host,
                          CUdeviceptr device) {
  if (component != format::kPerm || !guardWeights_.count(weight))
    return;
  // Which side of a guard runs may change: its workspaces too.
  workspacesAllocated_ = false;
  // The perm is I32 [K] (Layout.h); a bound buffer may be padded past it.
  const size_t bytes =
      static_cast<size_t>(artifact_.findWeight(weight)->k) * sizeof(int32_t);
  if (host) {
    perms_.set(weight, host, bytes);
    return;
  }
  // Whatever stream wrote the device copy (a benchmark's rotated weights
  // are copied asynchronously) has finished before it is read back.
  QFUSE_CU_CTX(cuCtxSynchronize(),
               "waiting for " + componentText({weight, component}));
  std::vector<uint8_t> copy(bytes);
  QFUSE_CU_CTX(cuMemcpyDtoH(copy.data(), device, bytes),
               "reading back " + componentText({weight, component}) +
                   " to compare it with the perms of its group");
  perms_.set(weight, copy.data(), bytes);
}

void Executor::bindWeightComponent(const std::string &weight,
                                   const std::string &component,
                                   CUdeviceptr ptr) {
  auto key = std::make_pair(weight, component);
  if (!usedComponents_.count(key))
    fail("cannot bind " + componentText(key) + ": no plan step reads it");
  if (ptr == 0)
    fail("cannot bind " + componentText(key) + " to a null pointer");
  recordPerm(weight, component, nullptr, ptr);
  components_[key] = ptr;
  dropGraphs();
}

void Executor::bindTensor(const std::string &name, const void *data,
                          size_t size, PinnedUploader *uploader) {
  const TensorSpec *spec = artifact_.findTensor(name);
  if (!spec)
    fail("cannot bind tensor '" + name + "': not declared in 'tensors'");
  if (size != spec->numBytes())
    fail("tensor '" + name + "' is given " + std::to_string(size) +
         " bytes; its shape and dtype need " +
         std::to_string(spec->numBytes()));
  cuda::DeviceBuffer buffer(size, name);
  upload(buffer, data, size, uploader);
  tensors_[name] = std::move(buffer);
  dropGraphs();
}

void Executor::bindTensor(const std::string &name, cuda::DeviceBuffer buffer) {
  const TensorSpec *spec = artifact_.findTensor(name);
  if (!spec)
    fail("cannot bind tensor '" + name + "': not declared in 'tensors'");
  if (buffer.size() != spec->numBytes())
    fail("tensor '" + name + "' is given a buffer of " +
         std::to_string(buffer.size()) + " bytes; its shape and dtype need " +
         std::to_string(spec->numBytes()));
  tensors_[name] = std::move(buffer);
  dropGraphs();
}

void Executor::layOut(const WeightSpec &weight, const RowMajorViews &raw,
                      const std::string &origin, LaidOutWeight &out,
                      const LayoutRepacker *repacker) const {
  checkRowMajorComponents(weight, raw, origin);
  auto read = [&](const std::string &component) {
    return usedComponents_.count({weight.name, component}) != 0;
  };
  bool used = false;
  for (const auto &key : usedComponents_)
    used |= key.first == weight.name;
  if (!used)
    return;
  // row_major without act_order is the checkpoint's order: no repack.
  if (needsNoRepack(weight)) {
    for (const format::ComponentSpec &spec : weight.components)
      if (read(spec.name))
        out.uploads.push_back({weight.name, spec.name,
                               raw.at(spec.name).data,
                               raw.at(spec.name).size});
    return;
  }
  // The kernel's layout: qfuse_format repacks (a copy) from row_major.
  out.packed.push_back(packForLayout(weight, raw, origin, repacker));
  for (const auto &[name, tensor] : out.packed.back())
    if (read(name))
      out.uploads.push_back(
          {weight.name, name, tensor.data.data(), tensor.data.size()});
}

void Executor::layOutEntries(const std::string &name, const RowMajorViews &raw,
                             LaidOutWeight &out,
                             const LayoutRepacker *repacker) const {
  const std::string origin = "artifact '" + artifact_.source + "'";
  std::vector<const WeightSpec *> entries =
      weightEntriesFor(artifact_, name, origin);
  for (const auto &[component, view] : raw)
    if (!entries.front()->findComponent(component))
      fail("weight '" + name + "' (" + entries.front()->encoding +
           ") has no component '" + component + "'");
  // The uploads point into `packed`'s maps: no reallocation moves them.
  out.packed.reserve(entries.size());
  for (const WeightSpec *weight : entries)
    layOut(*weight, raw, origin, out, repacker);
}

Executor::LaidOutWeight
Executor::layOutWeight(const std::string &name, format::TensorMap components,
                       const LayoutRepacker *repacker) const {
  LaidOutWeight out;
  out.source = std::move(components);
  layOutEntries(name, viewsOf(out.source), out, repacker);
  return out;
}

Executor::LaidOutWeight
Executor::layOutViews(const std::string &name,
                      const RowMajorViews &components,
                      const LayoutRepacker *repacker) const {
  LaidOutWeight out;
  layOutEntries(name, components, out, repacker);
  return out;
}

void Executor::bindLaidOut(const LaidOutWeight &weight,
                           PinnedUploader *uploader) {
  for (const LaidOutWeight::Upload &u : weight.uploads)
    bindWeightComponent(u.weight, u.component, u.data, u.size, uploader);
}

void Executor::bindWeight(const std::string &name,
                          const format::TensorMap &components) {
  bindLaidOut(layOutWeight(name, components));
}

std::set<std::string> Executor::usedWeightSources() const {
  std::set<std::string> sources;
  for (const auto &key : usedComponents_)
    sources.insert(artifact_.findWeight(key.first)->checkpointName());
  return sources;
}

void Executor::loadWeights(const SafetensorsFile &file) {
  const std::string origin = "safetensors '" + file.path() + "'";
  // Straight from the mapped file through pinned staging, all on the device
  // on return (or before an error leaves; the uploader's destructor waits).
  PinnedUploader uploader;
  for (const std::string &name : usedTensors_) {
    const TensorSpec &spec = *artifact_.findTensor(name);
    const TensorInfo &info = file.info(name);
    if (info.dtype != spec.dtype || info.shape != spec.shape)
      throw Error(origin + ": tensor '" + name + "' is " +
                  std::string(safetensorsName(info.dtype)) +
                  " of another shape than the artifact's " +
                  std::string(artifactName(spec.dtype)) + " tensor");
    TensorView view = file.view(info);
    bindTensor(name, view.data, view.size, &uploader);
  }
  // One read of each checkpoint tensor fills every layout it is packed in.
  for (const std::string &source : usedWeightSources()) {
    std::vector<const WeightSpec *> entries =
        artifact_.weightsPackedFrom(source);
    RowMajorViews raw;
    for (const format::ComponentSpec &spec : entries.front()->components) {
      TensorView view = file.view(source + "." + spec.name);
      raw[spec.name] = {std::string(safetensorsName(view.info->dtype)),
                        view.info->shape, view.data, view.size};
    }
    LaidOutWeight laidOut;
    laidOut.packed.reserve(entries.size());
    for (const WeightSpec *weight : entries)
      layOut(*weight, raw, origin, laidOut);
    bindLaidOut(laidOut, &uploader);
  }
  uploader.finish();
}

CUdeviceptr Executor::componentPointer(const std::string &weight,
                                       const std::string &component) const {
  auto it = components_.find({weight, component});
  return it == components_.end() ? 0 : it->second;
}

size_t Executor::componentBytes(const std::string &weight,
                                const std::string &component) const {
  auto it = ownedComponents_.find({weight, component});
  return it == ownedComponents_.end() ? 0 : it->second.size();
}

std::vector<std::string> Executor::unboundArguments() const {
  std::vector<std::string> missing;
  for (const auto &key : usedComponents_)
    if (!components_.count(key))
      missing.push_back(componentText(key));
  for (const std::string &name : usedTensors_)
    if (!tensors_.count(name))
      missing.push_back("tensor '" + name + "'");
  return missing;
}

std::set<std::pair<std::string, std::string>>
Executor::runningWeightComponents(int64_t batch) const {
  std::set<std::pair<std::string, std::string>> used;
  for (const Step &step : runningPlan(batch).steps)
    forEachBoundInput(
        step,
        [&](const std::string &weight, const std::string &component) {
          used.emplace(weight, component);
        },
        [](const std::string &) {});
  return used;
}

} // namespace qfuse::runtime
