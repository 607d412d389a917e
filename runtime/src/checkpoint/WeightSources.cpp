//===- WeightSources.cpp - Artifact weights from a checkpoint -------------===//

#include "qfuse/runtime/checkpoint/WeightSources.h"

#include "ToHalves.h"

#include "qfuse/runtime/checkpoint/DenseAsStored.h"
#include "qfuse/runtime/checkpoint/FormatTensors.h"
#include "qfuse/runtime/checkpoint/RowParallelRTN.h"

#include "qfuse/runtime/checkpoint/Importers.h"
#include "qfuse/format/Numerics.h"
#include "qfuse/format/Packing.h"
#include "qfuse/runtime/Error.h"
#include "qfuse/runtime/checkpoint/QuantizedCheckpoint.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <optional>
#include <random>
#include <thread>

namespace qfuse::runtime {
namespace {

constexpr const char *kEmbedTokens = "model.embed_tokens.weight";

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

/// The name of the checkpoint tensor that stands for `name` when the
/// checkpoint lacks it: the tied embedding for lm_head.
std::string tiedSource(const ModelCheckpoint &checkpoint,
                       const std::string &name) {
  if (name != "lm_head.weight" || !checkpoint.contains(kEmbedTokens))
    return "";
  const std::optional<bool> tied = checkpoint.config().tieWordEmbeddings;
  if (tied && !*tied)
    throw Error("checkpoint '" + checkpoint.dir() +
                "': tensor 'lm_head.weight' not found in " +
                checkpoint.searched() +
                ", and config.json sets tie_word_embeddings = false");
  return kEmbedTokens;
}

std::vector<float> toFloats(DType dtype, const uint8_t *data, uint64_t count,
                            const std::string &what) {
  std::vector<float> out(count);
  switch (dtype) {
  case DType::F16:
  case DType::BF16:
    for (uint64_t i = 0; i < count; ++i)
      out[i] = widenedElement(dtype, data, i);
    break;
  case DType::F32:
    std::memcpy(out.data(), data, count * 4);
    break;
  default:
    throw Error(what + ": unsupported dtype " +
                std::string(safetensorsName(dtype)) +
                " (expected F16, BF16 or F32)");
  }
  return out;
}

/// Throws unless the dense weight `view` is [N, K] of `weight`.
void checkDenseShape(const TensorView &view, const WeightSpec &weight,
                     const std::string &what) {
  const std::vector<int64_t> expected = {weight.n, weight.k};
  if (view.info->shape != expected)
    throw Error(what + ": shape " + shapeText(view.info->shape) +
                ", expected " + shapeText(expected) + " for artifact weight '" +
                weight.checkpointName() + "'");
}

/// A dense [N, K] weight quantized into the artifact's encoding.
format::TensorMap quantizeDense(const TensorView &view,
                                const WeightSpec &weight,
                                const std::string &what,
                                const DenseQuantizer *device) {
  checkDenseShape(view, weight, what);
  format::TensorMap components;
  if (packDenseAsStored(weight.encodingAttr, view.info->dtype, view.data,
                        weight.n, weight.k, components) ||
      packDenseConverted(weight.encodingAttr, view.info->dtype, view.data,
                         weight.n, weight.k, components))
    return components;
  // A named table's values are weight data that a dense checkpoint does
  // not hold: nothing to round to.
  if (weight.encodingAttr.hasNamedTable())
    throw Error(what + ": the artifact's encoding \"" + weight.encoding +
                "\" names its codebook table ('" +
                weight.encodingAttr.tableName +
                "'), whose values a dense checkpoint does not hold; give a "
                "packed checkpoint with the weight's table, or compile an "
                "encoding whose table is inline (table = [...])");
  // Unquantized 2:4 too: the kernel keeps select24's two of each quad.
  if (device &&
      (weight.encodingAttr.isQuantized() || weight.encodingAttr.isSparse24()) &&
      (*device)(weight.encodingAttr, view.info->dtype, view.data, weight.n,
                weight.k, components))
    return components;
  // Rows converted and rounded on every core (the same bytes as one call).
  const DType dtype = view.info->dtype;
  const uint64_t elementBytes = dtype == DType::F32 ? 4 : 2;
  const int64_t k = weight.k;
  auto rows = [&](int64_t first, int64_t last, float *out) {
    std::vector<float> w =
        toFloats(dtype, view.data + uint64_t(first * k) * elementBytes,
                 uint64_t((last - first) * k), what);
    std::memcpy(out, w.data(), w.size() * sizeof(float));
  };
  std::string error;
  if (!quantizeRTNByRows(weight.encodingAttr, weight.n, weight.k, rows,
                         components, error))
    throw Error(what + ": quantizing into \"" + weight.encoding +
                "\": " + error);
  return components;
}

/// Checks that a converted checkpoint weight has the artifact's encoding.
format::TensorMap checkConverted(format::PackedWeight packed,
                                 const WeightSpec &weight,
                                 const std::string &what) {
  if (packed.encoding != weight.encodingAttr)
    throw Error(what + " holds \"" + format::printEncoding(packed.encoding) +
                "\" but the artifact's weight '" + weight.checkpointName() + "' is \"" +
                weight.encoding +
                "\"; compile the artifact for the checkpoint's encoding");
  return std::move(packed.components);
}

format::LinearConfig linearConfig(const CheckpointConfig &config,
                                  const WeightSpec &weight) {
  format::LinearConfig linear;
  linear.n = weight.n;
  linear.k = weight.k;
  linear.bits = config.bits;
  linear.groupSize = config.groupSize;
  return linear;
}

format::TensorView requireView(const ModelCheckpoint &checkpoint,
                               const std::string &name) {
  TensorView view = checkpoint.view(name);
  std::optional<format::TensorView> converted = formatView(view);
  if (!converted)
    throw Error("checkpoint '" + checkpoint.dir() + "': tensor '" + name +
                "' has unsupported dtype " +
                std::string(safetensorsName(view.info->dtype)));
  return *converted;
}

std::optional<format::TensorView>
optionalView(const ModelCheckpoint &checkpoint, const std::string &name) {
  if (!checkpoint.contains(name))
    return std::nullopt;
  return requireView(checkpoint, name);
}

format::TensorMap fromGPTQ(const ModelCheckpoint &checkpoint,
                           const WeightSpec &weight) {
  const std::string prefix = weight.checkpointName() + ".";
  const std::string what = "checkpoint '" + checkpoint.dir() + "': AutoGPTQ '" +
                           weight.checkpointName() + ".qweight'";
  if (checkpoint.config().quantization != CheckpointQuantization::GPTQ)
    throw Error(what + ": config.json's quantization_config is " +
                std::string(checkpointQuantizationName(
                    checkpoint.config().quantization)) +
                ", not gptq");
  format::GPTQv1Tensors tensors;
  tensors.qweight = requireView(checkpoint, prefix + "qweight");
  tensors.qzeros = requireView(checkpoint, prefix + "qzeros");
  tensors.scales = requireView(checkpoint, prefix + "scales");
  tensors.gIdx = optionalView(checkpoint, prefix + "g_idx");
  format::PackedWeight packed;
  std::string error;
  if (!format::fromGPTQv1(tensors, linearConfig(checkpoint.config(), weight),
                          packed, error))
    throw Error(what + ": " + error);
  return checkConverted(std::move(packed), weight, what);
}

format::TensorMap fromCompressed(const ModelCheckpoint &checkpoint,
                                 const WeightSpec &weight) {
  const std::string prefix = weight.checkpointName() + ".";
  const std::string what = "checkpoint '" + checkpoint.dir() +
                           "': compressed-tensors '" + weight.checkpointName() +
                           ".weight_packed'";
  if (checkpoint.config().quantization !=
      CheckpointQuantization::CompressedTensors)
    throw Error(what + ": config.json's quantization_config is " +
                std::string(checkpointQuantizationName(
                    checkpoint.config().quantization)) +
                ", not compressed-tensors");
  format::CompressedTensorsPacked tensors;
  tensors.weightPacked = requireView(checkpoint, prefix + "weight_packed");
  tensors.weightScale = requireView(checkpoint, prefix + "weight_scale");
  tensors.weightZeroPoint =
      optionalView(checkpoint, prefix + "weight_zero_point");
  tensors.weightGIdx = optionalView(checkpoint, prefix + "weight_g_idx");
  tensors.weightShape = optionalView(checkpoint, prefix + "weight_shape");
  format::PackedWeight packed;
  std::string error;
  if (!format::fromCompressedTensors(
          tensors, linearConfig(checkpoint.config(), weight), packed, error))
    throw Error(what + ": " + error);
  return checkConverted(std::move(packed), weight, what);
}

} // namespace

namespace {

bool isFloatType(DType type) {
  return type == DType::F16 || type == DType::BF16 || type == DType::F32;
}

/// convertDense of `count` elements into `out`, between two different
/// float types; `first` is the first element's index in its tensor, for
/// errors.
void convertFloats(DType from, const uint8_t *data, uint64_t count, DType to,
                   uint8_t *out, uint64_t first, const std::string &what) {
  if (to == DType::F32) {
    std::vector<float> values = toFloats(from, data, count, what);
    // An empty tensor has no storage: memcpy must not see its null pointer.
    if (count)
      std::memcpy(out, values.data(), count * 4);
    return;
  }
  roundToHalves(from, data, 0, count, to, out);
  // A finite value that rounded to inf overflows the type.
  const uint16_t inf = to == DType::F16 ? 0x7C00 : 0x7F80;
  for (uint64_t i = 0; i < count; ++i) {
    if ((uint16_t(out[2 * i] | (out[2 * i + 1] << 8)) & 0x7FFF) != inf)
      continue;
    const float value = widenedElement(from, data, i);
    if (std::isfinite(value))
      throw Error(what + ": element " + std::to_string(first + i) + " = " +
                  std::to_string(value) + " overflows " +
                  std::string(artifactName(to)));
  }
}

} // namespace

std::vector<uint8_t> convertDense(DType from, const uint8_t *data,
                                  uint64_t count, DType to,
                                  const std::string &what) {
  if (from == to) // exact, whatever the type
    return std::vector<uint8_t>(data, data + *dtypeStorageBytes(to, count));
  if (!isFloatType(to))
    throw Error(what + ": cannot convert " +
                std::string(safetensorsName(from)) + " to " +
                std::string(artifactName(to)));
  std::vector<uint8_t> out(*dtypeStorageBytes(to, count));
  convertFloats(from, data, count, to, out.data(), 0, what);
  return out;
}

namespace {

/// A weight stored qfuse-packed (writePackedCheckpoint): its row-major
/// components as they are, viewed in the mapped files. The encoding
/// recorded beside them must be the artifact's; the executor's bindWeight
/// checks every component's shape.
std::map<std::string, format::TensorView>
packedViews(const ModelCheckpoint &checkpoint, const WeightSpec &weight) {
  const std::string &name = weight.checkpointName();
  const std::string what = "checkpoint '" + checkpoint.dir() +
                           "': qfuse-packed weight '" + name + "'";
  for (const SafetensorsFile &file : checkpoint.files()) {
    auto it = file.metadata().find("qfuse.encoding." + name);
    if (it != file.metadata().end() && it->second != weight.encoding)
      throw Error(what + " was packed as \"" + it->second +
                  "\", but the artifact wants \"" + weight.encoding +
                  "\"; pack the checkpoint again for this artifact");
  }
  std::map<std::string, format::TensorView> out;
  for (const char *component :
       {format::kCodes, format::kScales, format::kZeros, format::kGlobalScale,
        format::kGIdx, format::kMetadata, format::kTable}) {
    const std::string tensor = name + "." + component;
    if (!checkpoint.contains(tensor))
      continue;
    TensorView view = checkpoint.view(tensor);
    std::optional<format::TensorView> converted = formatView(view);
    if (!converted)
      throw Error(what + ": tensor '" + tensor + "' has an unsupported dtype");
    out.emplace(component, *converted);
  }
  return out;
}

/// The dense checkpoint tensor weight `name` is made from (`name.weight`,
/// else the tied embedding); throws naming what was searched.
std::string denseSource(const ModelCheckpoint &checkpoint,
                        const std::string &name) {
  std::string source = name + ".weight";
  if (checkpoint.contains(source))
    return source;
  std::string tied = tiedSource(checkpoint, source);
  if (tied.empty())
    throw Error("checkpoint '" + checkpoint.dir() + "': artifact weight '" +
                name + "': none of '" + name + ".weight', '" + name +
                ".qweight' (AutoGPTQ), '" + name +
                ".weight_packed' (compressed-tensors) found in " +
                checkpoint.searched());
  return tied;
}

std::string tensorText(const ModelCheckpoint &checkpoint,
                       const std::string &source) {
  return "checkpoint '" + checkpoint.dir() + "': tensor '" + source + "'";
}

/// The checkpoint tensor dense `tensor` is read from (its name, else the
/// tied embedding), checked for its shape.
TensorView denseTensorView(const ModelCheckpoint &checkpoint,
                           const TensorSpec &tensor, std::string &what) {
  std::string source = tensor.name;
  if (!checkpoint.contains(source)) {
    std::string tied = tiedSource(checkpoint, source);
    if (!tied.empty())
      source = tied;
  }
  TensorView view = checkpoint.view(source); // throws naming the files
  what = tensorText(checkpoint, source);
  if (view.info->shape != tensor.shape)
    throw Error(what + ": shape " + shapeText(view.info->shape) +
                ", expected " + shapeText(tensor.shape) +
                " for artifact tensor '" + tensor.name + "'");
  return view;
}

} // namespace

format::TensorMap checkpointWeight(const ModelCheckpoint &checkpoint,
                                   const WeightSpec &weight,
                                   const DenseQuantizer *device) {
  const std::string &name = weight.checkpointName();
  if (checkpoint.contains(name + "." + format::kCodes)) {
    format::TensorMap out;
    for (const auto &[component, view] : packedViews(checkpoint, weight)) {
      format::Tensor t;
      t.dtype = view.dtype;
      t.shape = view.shape;
      t.data.assign(view.data, view.data + view.numBytes);
      out.emplace(component, std::move(t));
    }
    return out;
  }
  if (checkpoint.contains(name + ".qweight"))
    return fromGPTQ(checkpoint, weight);
  if (checkpoint.contains(name + ".weight_packed"))
    return fromCompressed(checkpoint, weight);
  const std::string source = denseSource(checkpoint, name);
  return quantizeDense(checkpoint.view(source), weight,
                       tensorText(checkpoint, source), device);
}

std::optional<RowMajorViews> storedWeight(const ModelCheckpoint &checkpoint,
                                          const WeightSpec &weight,
                                          unsigned scanThreads) {
  const std::string &name = weight.checkpointName();
  RowMajorViews views;
  auto add = [&](const std::string &component, const format::TensorView &v) {
    views[component] = {format::dtypeName(v.dtype), v.shape, v.data,
                        v.numBytes};
  };
  if (checkpoint.contains(name + "." + format::kCodes)) {
    for (const auto &[component, view] : packedViews(checkpoint, weight))
      add(component, view);
    return views;
  }
  if (checkpoint.contains(name + ".qweight") ||
      checkpoint.contains(name + ".weight_packed"))
    return std::nullopt; // converted
  const std::string source = denseSource(checkpoint, name);
  const TensorView view = checkpoint.view(source);
  checkDenseShape(view, weight, tensorText(checkpoint, source));
  std::optional<format::TensorView> codes =
      denseCodesAsStored(weight.encodingAttr, view.info->dtype, view.data,
                         weight.n, weight.k, scanThreads);
  if (!codes)
    return std::nullopt;
  add(format::kCodes, *codes);
  return views;
}

std::vector<uint8_t> checkpointTensor(const ModelCheckpoint &checkpoint,
                                      const TensorSpec &tensor) {
  std::string what;
  const TensorView view = denseTensorView(checkpoint, tensor, what);
  return convertDense(view.info->dtype, view.data, view.info->numElements(),
                      tensor.dtype, what);
}

void checkpointTensorPart(const ModelCheckpoint &checkpoint,
                          const TensorSpec &tensor, uint64_t first,
                          uint64_t count, uint8_t *out) {
  std::string what;
  const TensorView view = denseTensorView(checkpoint, tensor, what);
  const DType from = view.info->dtype;
  if (from == tensor.dtype || !isFloatType(from) || !isFloatType(tensor.dtype))
    throw Error(what + ": a part of it converted from " +
                std::string(safetensorsName(from)) + " to " +
                std::string(artifactName(tensor.dtype)) +
                ", expected a conversion between F16, BF16 and F32");
  const uint64_t elements = view.info->numElements();
  if (first > elements || count > elements - first)
    throw Error(what + ": elements [" + std::to_string(first) + ", " +
                std::to_string(first + count) + ") of " +
                std::to_string(elements));
  const uint64_t fromBytes = *dtypeStorageBytes(from, 1);
  const uint64_t toBytes = *dtypeStorageBytes(tensor.dtype, 1);
  convertFloats(from, view.data + first * fromBytes, count, tensor.dtype,
                out + first * toBytes, first, what);
}

bool convertsInParts(const ModelCheckpoint &checkpoint,
                     const TensorSpec &tensor) {
  try {
    std::string what;
    const DType from = denseTensorView(checkpoint, tensor, what).info->dtype;
    return from != tensor.dtype && isFloatType(from) &&
           isFloatType(tensor.dtype);
  } catch (const Error &) {
    return false;
  }
}

std::optional<TensorView> storedTensor(const ModelCheckpoint &checkpoint,
                                       const TensorSpec &tensor) {
  std::string what;
  TensorView view = denseTensorView(checkpoint, tensor, what);
  if (view.info->dtype != tensor.dtype)
    return std::nullopt;
  // convertDense's bytes when the dtypes agree.
  view.size = *dtypeStorageBytes(tensor.dtype, view.info->numElements());
  return view;
}

void checkModelAgainstConfig(const Artifact &artifact,
                             const ModelCheckpoint &checkpoint) {
  const ModelInfo &model = artifact.model;
  const CheckpointConfig &config = checkpoint.config();
  auto agree = [&](const char *artifactField, int64_t artifactValue,
                   const char *configField, int64_t configValue) {
    if (artifactValue > 0 && configValue > 0 && artifactValue != configValue)
      throw Error("artifact '" + artifact.source + "' model." + artifactField +
                  " = " + std::to_string(artifactValue) + " but '" +
                  checkpoint.dir() + "/config.json' has " + configField +
                  " = " + std::to_string(configValue) +
                  "; compile the artifact from this checkpoint's config");
  };
  agree("vocab_size", model.vocabSize, "vocab_size", config.vocabSize);
  agree("hidden_size", model.hiddenSize, "hidden_size", config.hiddenSize);
  agree("num_layers", model.numLayers, "num_hidden_layers", config.numLayers);
  agree("num_heads", model.numHeads, "num_attention_heads", config.numHeads);
  agree("num_kv_heads", model.numKvHeads, "num_key_value_heads",
        config.numKvHeads);
}

void fillNormal(std::vector<float> &out, float scale, uint64_t seed) {
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  const size_t chunk = (out.size() + threads - 1) / threads;
  std::vector<std::thread> workers;
  for (unsigned t = 0; t < threads; ++t)
    workers.emplace_back([&, t] {
      std::mt19937_64 rng(seed * 7919 + t);
      std::normal_distribution<float> dist(0.0f, 1.0f);
      const size_t end = std::min(out.size(), (t + 1) * chunk);
      for (size_t i = t * chunk; i < end; ++i)
        out[i] = dist(rng) * scale;
    });
  for (std::thread &worker : workers)
    worker.join();
}

format::TensorMap randomWeight(const WeightSpec &spec, uint64_t seed,
                               RandomPerms perms) {
  std::vector<float> w(static_cast<size_t>(spec.n * spec.k));
  fillNormal(w, 0.02f, seed);
  std::vector<float> table;
  format::QuantizeOptions options;
  if (spec.encodingAttr.format == format::ElementFormat::Codebook &&
      spec.encodingAttr.table.empty()) {
    // A named table: any sorted set of distinct values will do, rounded to
    // the table's type (f16 tables hold f16 values).
    const int entries = 1 << spec.encodingAttr.indexBits;
    for (int i = 0; i < entries; ++i)
      table.push_back(format::roundToScalarType(
          -1.0f + 2.0f * i / (entries - 1), spec.encodingAttr.tableType));
    options.table = table.data();
  }
  std::vector<int32_t> gIdx;
  if (spec.encodingAttr.actOrder) {
    // GPTQ desc_act: columns visited in a random order, each run of `group`
    // of them one group, so g_idx is a shuffled k / group.
    std::vector<int32_t> order(static_cast<size_t>(spec.k));
    std::iota(order.begin(), order.end(), 0);
    const uint64_t permSeed =
        perms == RandomPerms::PerInput
            ? 0x9E3779B97F4A7C15ull ^ static_cast<uint64_t>(spec.k)
            : seed + 1;
    std::shuffle(order.begin(), order.end(), std::mt19937_64(permSeed));
    gIdx.resize(order.size());
    for (int64_t j = 0; j < spec.k; ++j)
      gIdx[order[j]] = static_cast<int32_t>(j / spec.encodingAttr.groupSize);
    options.gIdx = gIdx.data();
  }
  format::TensorMap components;
  std::string error;
  if (!format::quantizeRTN(spec.encodingAttr, w.data(), spec.n, spec.k,
                           components, error, options))
    throw Error("quantizing random weights for '" + spec.name + "': " + error);
  return components;
}

std::vector<uint8_t> randomTensor(const TensorSpec &tensor, uint64_t seed) {
  uint64_t count = 1;
  for (int64_t extent : tensor.shape)
    count *= static_cast<uint64_t>(extent);
  std::vector<float> values(count);
  fillNormal(values, 0.02f, seed);
  const std::string suffix = "norm.weight";
  const bool isNorm =
      tensor.name.size() >= suffix.size() &&
      tensor.name.compare(tensor.name.size() - suffix.size(), suffix.size(),
                          suffix) == 0;
  if (isNorm)
    for (float &v : values)
      v += 1.0f;
  return convertDense(DType::F32, reinterpret_cast<const uint8_t *>(
                                      values.data()),
                      count, tensor.dtype,
                      "random tensor '" + tensor.name + "'");
}

void writePackedCheckpoint(const Artifact &artifact,
                           const ModelCheckpoint &checkpoint,
                           const std::string &outDir) {
  writeQuantizedCheckpoint(checkpoint, /*weights=*/{},
                           CheckpointFormat::QfusePacked, outDir, &artifact,
                           /*overwrite=*/true);
}

} // namespace qfuse::runtime
