//===- PackedCheckpoint.cpp - the qfuse-packed directory, streamed --------===//

#include "qfuse/runtime/checkpoint/PackedCheckpoint.h"

#include "CheckpointFiles.h"
#include "ParallelJobs.h"

#include "qfuse/format/Packing.h"
#include "qfuse/runtime/AtomicFile.h"
#include "qfuse/runtime/Error.h"
#include "qfuse/runtime/checkpoint/FormatTensors.h"
#include "qfuse/runtime/checkpoint/WeightSources.h"

#include <algorithm>

namespace qfuse::runtime {
namespace {

std::string shapeText(int64_t n, int64_t k) {
  return "[" + std::to_string(n) + ", " + std::to_string(k) + "]";
}

/// The components of `spec` in the order a format::TensorMap holds them.
std::vector<format::ComponentSpec> componentsInMapOrder(const WeightSpec &spec) {
  std::vector<format::ComponentSpec> components = spec.components;
  std::sort(components.begin(), components.end(),
            [](const format::ComponentSpec &a, const format::ComponentSpec &b) {
              return format::TensorMap::key_compare()(a.name, b.name);
            });
  return components;
}

Error notAWeightOf(const Artifact &artifact, const std::string &name) {
  return Error("quantized weight '" + name + "' is not a weight of artifact '" +
               artifact.source +
               "'; a qfuse-packed checkpoint holds the artifact's weights");
}

/// The plan's entry of checkpoint weight `name`, or nullptr.
const WeightSpec *plannedWeight(const PackedCheckpointPlan &plan,
                                const std::string &name) {
  for (const WeightSpec *spec : plan.weights)
    if (spec->checkpointName() == name)
      return spec;
  return nullptr;
}

/// The path of model.safetensors in `outDir`, once `outDir` may be written
/// (checkOutputDir), exists, and holds no temporary of a killed writer.
std::string preparedModelPath(const ModelCheckpoint &source,
                              const std::string &outDir, bool overwrite) {
  checkOutputDir(source, outDir, overwrite);
  detail::createCheckpointDir(outDir);
  const std::string path = outDir + "/" + detail::kModelFile;
  AtomicFile::removeAbandoned(path);
  return path;
}

} // namespace

PackedCheckpointPlan planPackedCheckpoint(const ModelCheckpoint &source,
                                          const Artifact &artifact) {
  PackedCheckpointPlan plan;
  plan.metadata["format"] = "pt";
  plan.metadata["qfuse.packed"] = "row_major components of " + artifact.source;
  // Row-major, so once per checkpoint tensor however many layouts the
  // artifact packs it in (the runtime repacks each at load).
  std::set<std::string> seen;
  for (const WeightSpec &spec : artifact.weights) {
    const std::string &name = spec.checkpointName();
    if (!seen.insert(name).second)
      continue;
    plan.weights.push_back(&spec);
    plan.metadata["qfuse.encoding." + name] = spec.encoding;
    for (const format::ComponentSpec &component : componentsInMapOrder(spec)) {
      const std::string tensor = name + "." + component.name;
      plan.tensors.push_back(
          {tensor, safetensorsDType(component.dtype, tensor), component.shape});
    }
  }
  for (const TensorSpec &tensor : artifact.tensors)
    plan.tensors.push_back({tensor.name, tensor.dtype, tensor.shape});
  plan.config = source.config().text;
  return plan;
}

void checkPackedWeight(const Artifact &artifact,
                       const QuantizedWeight &weight) {
  std::vector<const WeightSpec *> entries =
      artifact.weightsPackedFrom(weight.name);
  if (entries.empty())
    throw notAWeightOf(artifact, weight.name);
  const WeightSpec &spec = *entries.front();
  if (weight.encoding != spec.encodingAttr)
    throw Error("quantized weight '" + weight.name + "' is \"" +
                format::printEncoding(weight.encoding) + "\" but artifact '" +
                artifact.source + "' wants \"" + spec.encoding +
                "\"; quantize for the artifact's encoding");
  if (weight.n != spec.n || weight.k != spec.k)
    throw Error("quantized weight '" + weight.name + "' is " +
                shapeText(weight.n, weight.k) + " but artifact '" +
                artifact.source + "' wants " + shapeText(spec.n, spec.k));
}

PackedCheckpointWriter::PackedCheckpointWriter(const ModelCheckpoint &source,
                                               const Artifact &artifact,
                                               std::string outDir,
                                               bool overwrite)
    : source_(source), artifact_(artifact), outDir_(std::move(outDir)),
      overwrite_(overwrite), plan_(planPackedCheckpoint(source, artifact)),
      model_(preparedModelPath(source, outDir_, overwrite), plan_.tensors,
             plan_.metadata) {}

void PackedCheckpointWriter::writeWeight(const std::string &name,
                                         const format::TensorMap &components) {
  const WeightSpec *spec = plannedWeight(plan_, name);
  if (!spec)
    throw notAWeightOf(artifact_, name);
  std::string error;
  if (!format::checkComponents(spec->encodingAttr, components, spec->n,
                               spec->k, error))
    throw Error("quantized weight '" + name + "' (\"" + spec->encoding +
                "\", " + shapeText(spec->n, spec->k) + "): " + error);
  for (const auto &[component, tensor] : components)
    model_.write(name + "." + component, tensor.data.data(),
                 tensor.data.size());
}

void PackedCheckpointWriter::writeFromSource(
    const std::set<std::string> &except, const DenseQuantizer *device) {
  std::vector<const WeightSpec *> weights;
  for (const WeightSpec *spec : plan_.weights)
    if (!except.count(spec->checkpointName()))
      weights.push_back(spec);
  const std::vector<TensorSpec> &tensors = artifact_.tensors;
  detail::parallelJobs(weights.size() + tensors.size(), [&](size_t i) {
    if (i >= weights.size()) {
      const TensorSpec &tensor = tensors[i - weights.size()];
      const std::vector<uint8_t> bytes = onOutOfHostMemory(
          "converting tensor '" + tensor.name + "' (" +
              std::to_string(tensor.numBytes()) + " bytes)",
          [&] { return checkpointTensor(source_, tensor); });
      model_.write(tensor.name, bytes.data(), bytes.size());
      return;
    }
    const WeightSpec &spec = *weights[i];
    const format::TensorMap components = onOutOfHostMemory(
        "packing '" + spec.checkpointName() + "' (" +
            shapeText(spec.n, spec.k) + ")",
        [&] { return checkpointWeight(source_, spec, device); });
    writeWeight(spec.checkpointName(), components);
  });
}

void PackedCheckpointWriter::commit() {
  model_.checkComplete();
  // Again: the directory may have changed during a long run.
  checkOutputDir(source_, outDir_, overwrite_);
  detail::commitCheckpointFiles(outDir_, {{"config.json", plan_.config}},
                                [&] { model_.commit(); });
}

} // namespace qfuse::runtime
