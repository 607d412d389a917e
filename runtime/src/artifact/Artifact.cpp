//===- Artifact.cpp - The artifact's small types, loading and lookups -----===//
//
// The artifact's small types (chip target, tensor and buffer sizes) and the
// lookups by name and batch. Reading the JSON is the schema's job
// (qfuse/format/ArtifactJson.h), checking it ArtifactValidator's.
//
//===----------------------------------------------------------------------===//

#include "qfuse/runtime/artifact/Artifact.h"

#include "qfuse/runtime/Error.h"

#include "ArtifactValidator.h"
#include "StrictJson.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace qfuse::runtime {

//===----------------------------------------------------------------------===//
// Small types
//===----------------------------------------------------------------------===//

std::optional<ChipTarget> ChipTarget::parse(std::string_view chip) {
  if (chip.substr(0, 3) != "sm_")
    return std::nullopt;
  std::string_view rest = chip.substr(3);
  ChipTarget target;
  if (!rest.empty() && rest.back() == 'a') {
    target.archSpecific = true;
    rest.remove_suffix(1);
  }
  if (rest.size() < 2 || rest.size() > 3)
    return std::nullopt;
  for (char c : rest)
    if (c < '0' || c > '9')
      return std::nullopt;
  int number = std::stoi(std::string(rest));
  target.major = number / 10;
  target.minor = number % 10;
  if (target.major == 0)
    return std::nullopt;
  return target;
}

std::string ChipTarget::str() const {
  return "sm_" + std::to_string(major * 10 + minor) + (archSpecific ? "a" : "");
}

uint64_t TensorSpec::numBytes() const {
  uint64_t count = 1;
  for (int64_t extent : shape)
    count *= static_cast<uint64_t>(extent);
  return dtypeStorageBytes(dtype, count).value_or(0);
}

int64_t BufferSpec::extent(size_t dim, int64_t batch) const {
  return shape[dim].isBatch ? batch : shape[dim].value;
}

uint64_t BufferSpec::numBytes(int64_t batch) const {
  uint64_t count = 1;
  for (const Dim &dim : shape)
    count *= static_cast<uint64_t>(dim.isBatch ? batch : dim.value);
  return dtypeStorageBytes(dtype, count).value_or(0);
}

//===----------------------------------------------------------------------===//
// Artifact
//===----------------------------------------------------------------------===//

Artifact Artifact::parse(std::string_view text, std::string source) {
  nlohmann::json root =
      detail::parseStrictJson(text, "artifact '" + source + "'");
  format::artifact::Artifact read;
  if (auto error = format::artifact::fromJson(root, read))
    throw detail::readError(source, *error);
  return detail::ArtifactValidator(std::move(source)).run(std::move(read));
}

std::string detail::readArtifactText(const std::string &path) {
  std::ifstream stream(path, std::ios::binary);
  if (!stream)
    throw Error("artifact '" + path +
                "': cannot open: " + qfuse::systemErrorText(errno));
  std::ostringstream contents;
  contents << stream.rdbuf();
  if (stream.bad())
    throw Error("artifact '" + path + "': read failed");
  return contents.str();
}

Artifact Artifact::load(const std::string &path) {
  return parse(detail::readArtifactText(path), path);
}

template <typename T>
static const T *findByName(const std::vector<T> &items, std::string_view name) {
  for (const T &item : items)
    if (item.name == name)
      return &item;
  return nullptr;
}

const format::ComponentSpec *
WeightSpec::findComponent(std::string_view name) const {
  for (const format::ComponentSpec &spec : components)
    if (spec.name == name)
      return &spec;
  for (const format::ComponentSpec &spec : layoutComponents)
    if (spec.name == name)
      return &spec;
  return nullptr;
}

const Kernel *Artifact::findKernel(std::string_view name) const {
  return findByName(kernels, name);
}
const WeightSpec *Artifact::findWeight(std::string_view name) const {
  return findByName(weights, name);
}
std::vector<const WeightSpec *>
Artifact::weightsPackedFrom(std::string_view source) const {
  std::vector<const WeightSpec *> out;
  for (const WeightSpec &weight : weights)
    if (weight.checkpointName() == source)
      out.push_back(&weight);
  return out;
}
const TensorSpec *Artifact::findTensor(std::string_view name) const {
  return findByName(tensors, name);
}
const BufferSpec *Artifact::findBuffer(std::string_view name) const {
  return findByName(buffers, name);
}

std::string dequantizeTarget(const Artifact &artifact, const Step &step) {
  if (step.kind != Step::Kind::Launch || step.op != kDequantizeOp)
    return "";
  const Kernel &kernel = artifact.kernels[step.kernelIndex];
  for (size_t a = 0; a < step.args.size(); ++a)
    if (kernel.params[a].name == kDequantizeOutputParam &&
        step.args[a].kind == Arg::Kind::Buffer)
      return step.args[a].name;
  return "";
}

std::string dequantizeSource(const Step &step) {
  if (step.kind != Step::Kind::Launch || step.op != kDequantizeOp)
    return "";
  for (const Arg &arg : step.args)
    if (arg.kind == Arg::Kind::Weight)
      return arg.name;
  return "";
}

std::string Artifact::describeTarget() const {
  if (setChips.empty())
    return chip;
  std::string chips;
  for (const std::string &name : setChips)
    chips += (chips.empty() ? "" : ", ") + name;
  return chip + " (variant " + std::to_string(variantIndex + 1) +
         " of the set " + chips + ")";
}

const Plan *Artifact::findPlan(int64_t batch) const {
  for (const Plan &plan : plans)
    if (plan.batch == batch)
      return &plan;
  return nullptr;
}

const Plan &Artifact::plan(int64_t batch) const {
  if (const Plan *found = findPlan(batch))
    return *found;
  std::string compiled;
  for (const Plan &plan : plans)
    compiled += (compiled.empty() ? "" : ", ") + std::to_string(plan.batch);
  throw Error("artifact '" + source + "': no plan for batch " +
              std::to_string(batch) + " (compiled batch sizes: " + compiled +
              ")");
}

} // namespace qfuse::runtime
