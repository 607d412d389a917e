//===- QuantizedCheckpoint.cpp - Writing quantized checkpoints ------------===//
//
// qfuse-packed is planned whole and streamed (PackedCheckpoint.h): each
// module is packed (or made from the source) and written at once, on every
// core. compressed-tensors and AutoGPTQ build their whole output (a
// SafetensorsWriter and the JSON files) in memory, so every error comes
// before the first byte is written; `commit` then writes the directory.
//
//===----------------------------------------------------------------------===//

#include "qfuse/runtime/checkpoint/QuantizedCheckpoint.h"

#include "CheckpointFiles.h"
#include "ParallelJobs.h"

#include "qfuse/runtime/checkpoint/FormatTensors.h"
#include "qfuse/runtime/checkpoint/Importers.h"
#include "qfuse/runtime/checkpoint/PackedCheckpoint.h"
#include "qfuse/runtime/AtomicFile.h"
#include "qfuse/runtime/Error.h"
#include "qfuse/runtime/checkpoint/Safetensors.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

namespace qfuse::runtime {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

using detail::kModelFile;
constexpr const char *kIndexFile = "model.safetensors.index.json";

/// What compressed-tensors or AutoGPTQ writes, complete before anything
/// touches the disk.
struct Output {
  SafetensorsWriter tensors;
  std::string config;                        // config.json
  std::optional<std::string> quantizeConfig; // quantize_config.json
};

std::string encodingText(const format::Encoding &encoding) {
  return "\"" + format::printEncoding(encoding) + "\"";
}

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

format::Encoding namedEncoding(const char *name) {
  format::Encoding encoding;
  std::string error;
  if (!format::encodingFromName(name, encoding, error))
    throw Error("encoding '" + std::string(name) + "': " + error);
  return encoding;
}

bool isNvfp4(const format::Encoding &encoding) {
  return encoding == namedEncoding("nvfp4");
}

/// int4/int8 without zero points or uint4/uint8 with integer ones, dense,
/// float scales: what both pack-quantized and GPTQ v1 store.
bool isIntegerCheckpointEncoding(const format::Encoding &encoding) {
  using format::ElementFormat;
  using format::ScalarType;
  using format::ZeroPointKind;
  const bool signedInt = encoding.format == ElementFormat::Int4 ||
                         encoding.format == ElementFormat::Int8;
  const bool zeroOk =
      signedInt ? encoding.zeroPoint == ZeroPointKind::None
                : encoding.isUnsigned() &&
                      encoding.zeroPoint == ZeroPointKind::Int;
  const bool floatScale = encoding.scaleType == ScalarType::F16 ||
                          encoding.scaleType == ScalarType::BF16 ||
                          encoding.scaleType == ScalarType::F32;
  return zeroOk && floatScale && !encoding.isSparse24() &&
         !encoding.globalScale;
}

/// `weights` by name; a name given twice is an error.
std::map<std::string, const QuantizedWeight *>
byName(const std::vector<QuantizedWeight> &weights) {
  std::map<std::string, const QuantizedWeight *> out;
  for (const QuantizedWeight &weight : weights)
    if (!out.emplace(weight.name, &weight).second)
      throw Error("quantized weight '" + weight.name + "' is given twice");
  return out;
}

/// The row-major components of `weight` (format::pack, which checks every
/// size, code range and scale against the encoding).
format::PackedWeight packWeight(const QuantizedWeight &weight) {
  format::PackedWeight packed;
  packed.encoding = weight.encoding;
  packed.n = weight.n;
  packed.k = weight.k;
  if (weight.packed) {
    packed.components = *weight.packed;
    return packed;
  }
  std::string error;
  if (!format::validate(weight.encoding, weight.n, weight.k, error) ||
      !format::pack(weight.encoding, weight.weight, weight.n, weight.k,
                    packed.components, error))
    throw Error("quantized weight '" + weight.name + "' (" +
                encodingText(weight.encoding) + ", [" +
                std::to_string(weight.n) + ", " + std::to_string(weight.k) +
                "]): " + error);
  return packed;
}

//===----------------------------------------------------------------------===//
// qfuse-packed
//===----------------------------------------------------------------------===//

using Clock = std::chrono::steady_clock;

/// `given` checked against the artifact before any file is touched, then
/// the directory streamed: the modules given packed as parallel jobs (those
/// packed already written as they are), the rest made from the source.
/// `built` gets the time all tensors are written, before the commit.
void writePacked(const ModelCheckpoint &source,
                 const std::map<std::string, const QuantizedWeight *> &given,
                 const Artifact &artifact, const std::string &outDir,
                 bool overwrite, Clock::time_point &built) {
  std::vector<const QuantizedWeight *> weights;
  std::set<std::string> names;
  for (const auto &[name, weight] : given) {
    checkPackedWeight(artifact, *weight);
    weights.push_back(weight);
    names.insert(name);
  }
  PackedCheckpointWriter out(source, artifact, outDir, overwrite);
  detail::parallelJobs(weights.size(), [&](size_t i) {
    const QuantizedWeight &weight = *weights[i];
    if (weight.packed) {
      out.writeWeight(weight.name, *weight.packed);
      return;
    }
    const format::TensorMap components = onOutOfHostMemory(
        "packing '" + weight.name + "' (" + shapeText({weight.n, weight.k}) +
            ")",
        [&] { return packWeight(weight).components; });
    out.writeWeight(weight.name, components);
  });
  out.writeFromSource(/*except=*/names);
  built = Clock::now();
  out.commit();
}

//===----------------------------------------------------------------------===//
// compressed-tensors and AutoGPTQ
//===----------------------------------------------------------------------===//

/// The module of a tensor name ("a.b.weight" -> "a.b"), or "" when the name
/// does not end in ".weight".
std::string moduleOfWeight(const std::string &tensor) {
  const std::string suffix = ".weight";
  if (tensor.size() <= suffix.size() ||
      tensor.compare(tensor.size() - suffix.size(), suffix.size(), suffix))
    return "";
  return tensor.substr(0, tensor.size() - suffix.size());
}

/// compressed-tensors' `ignore`: the modules its "Linear" target would
/// match that stay dense. Every 2-D `<module>.weight` but embeddings (not
/// nn.Linear) stands for a linear module; lm_head is one even when tied to
/// the embedding and absent from the file.
std::vector<std::string>
ignoredModules(const ModelCheckpoint &source,
               const std::map<std::string, const QuantizedWeight *> &given) {
  std::set<std::string> ignored;
  for (const SafetensorsFile &file : source.files())
    for (const TensorInfo &info : file.tensors()) {
      const std::string module = moduleOfWeight(info.name);
      if (module.empty() || info.shape.size() != 2 || given.count(module))
        continue;
      const std::string leaf = module.substr(module.rfind('.') + 1);
      if (leaf.find("embed") != std::string::npos || leaf == "wte")
        continue;
      ignored.insert(module);
    }
  if (!given.count("lm_head"))
    ignored.insert("lm_head");
  return {ignored.begin(), ignored.end()};
}

/// quantization_config for compressed-tensors (LLM Compressor's keys, in
/// its order), what parseCompressedTensors in ModelCheckpoint.cpp reads.
Json compressedTensorsConfig(const format::Encoding &encoding,
                             const std::vector<std::string> &ignore) {
  Json weights = Json::object();
  if (isNvfp4(encoding)) {
    weights["num_bits"] = 4;
    weights["type"] = "float";
    weights["symmetric"] = true;
    weights["group_size"] = encoding.groupSize;
    weights["strategy"] = "tensor_group";
    weights["block_structure"] = nullptr;
    weights["dynamic"] = false;
    weights["actorder"] = nullptr;
    weights["observer"] = "minmax";
    weights["observer_kwargs"] = Json::object();
  } else {
    weights["num_bits"] = format::codeBits(encoding);
    weights["type"] = "int";
    weights["symmetric"] = !encoding.isUnsigned();
    weights["group_size"] = encoding.isPerChannel()
                                ? Json(nullptr)
                                : Json(encoding.groupSize);
    weights["strategy"] = encoding.isPerChannel() ? "channel" : "group";
    weights["block_structure"] = nullptr;
    weights["dynamic"] = false;
    weights["actorder"] = encoding.actOrder ? Json("group") : Json(nullptr);
    weights["observer"] = "minmax";
    weights["observer_kwargs"] = Json::object();
  }
  Json group = Json::object();
  group["targets"] = Json::array({"Linear"});
  group["weights"] = weights;
  group["input_activations"] = nullptr;
  group["output_activations"] = nullptr;
  Json q = Json::object();
  q["quant_method"] = "compressed-tensors";
  q["format"] = isNvfp4(encoding) ? "nvfp4-pack-quantized" : "pack-quantized";
  q["quantization_status"] = "compressed";
  Json groups = Json::object();
  groups["group_0"] = group;
  q["config_groups"] = groups;
  q["ignore"] = ignore;
  q["kv_cache_scheme"] = nullptr;
  q["global_compression_ratio"] = nullptr;
  return q;
}

/// quantization_config for AutoGPTQ (also quantize_config.json), what
/// parseGPTQ in ModelCheckpoint.cpp reads; checkpoint_format "gptq" is v1
/// (zero points stored minus one).
Json gptqConfig(const format::Encoding &encoding, bool lmHeadQuantized) {
  Json q = Json::object();
  q["quant_method"] = "gptq";
  q["checkpoint_format"] = "gptq";
  q["bits"] = format::codeBits(encoding);
  q["group_size"] = encoding.isPerChannel() ? int64_t(-1) : encoding.groupSize;
  q["desc_act"] = encoding.actOrder;
  q["sym"] = !encoding.isUnsigned();
  q["static_groups"] = false;
  q["true_sequential"] = true;
  q["lm_head"] = lmHeadQuantized;
  q["model_file_base_name"] = "model";
  return q;
}

Output convertedOutput(const ModelCheckpoint &source,
                       const std::map<std::string, const QuantizedWeight *> &given,
                       CheckpointFormat format) {
  const std::string formatName(checkpointFormatName(format));
  if (source.config().quantization != CheckpointQuantization::None)
    throw Error("checkpoint '" + source.dir() + "' is already quantized (" +
                std::string(checkpointQuantizationName(
                    source.config().quantization)) +
                "); write " + formatName +
                " from the fp16/bf16/f32 checkpoint it came from");
  if (given.empty())
    throw Error("writing " + formatName + ": no quantized weights given");
  for (const auto &[name, weight] : given)
    checkEncodingForFormat(format, weight->encoding);
  // One scheme for every module: the config has one.
  const QuantizedWeight &first = *given.begin()->second;
  for (const auto &[name, weight] : given)
    if (weight->encoding != first.encoding)
      throw Error("writing " + formatName + ": quantized weight '" + name +
                  "' is " + encodingText(weight->encoding) + " but '" +
                  first.name + "' is " + encodingText(first.encoding) +
                  "; the config holds one scheme for every quantized module");

  Output out;
  out.tensors.setMetadata("format", "pt");
  // The quantized modules, converted on every core, added in order.
  std::vector<const QuantizedWeight *> weights;
  for (const auto &[name, weight] : given)
    weights.push_back(weight);
  std::vector<format::TensorMap> converted(weights.size());
  auto convertOne = [&](size_t i) {
    const std::string &name = weights[i]->name;
    const QuantizedWeight *weight = weights[i];
    const std::string tensor = name + ".weight";
    const TensorInfo *info = source.find(tensor);
    if (!info)
      throw Error("quantized weight '" + name + "': checkpoint '" +
                  source.dir() + "' has no tensor '" + tensor + "' in " +
                  source.searched() + " to replace");
    if (info->shape != std::vector<int64_t>{weight->n, weight->k})
      throw Error("quantized weight '" + name + "' is " +
                  shapeText({weight->n, weight->k}) + " but '" + tensor +
                  "' in checkpoint '" + source.dir() + "' is " +
                  shapeText(info->shape));
    format::PackedWeight packed = packWeight(*weight);
    format::TensorMap tensors;
    std::string error;
    bool ok;
    if (format == CheckpointFormat::AutoGptq)
      ok = format::toGPTQv1(packed, tensors, error);
    else if (isNvfp4(packed.encoding))
      ok = format::toNVFP4(packed, tensors, error);
    else
      ok = format::toCompressedTensors(packed, tensors, error);
    if (!ok)
      throw Error("writing " + formatName + ": quantized weight '" + name +
                  "' (" + encodingText(packed.encoding) + "): " + error);
    converted[i] = std::move(tensors);
  };
  detail::parallelJobs(weights.size(), [&](size_t i) {
    onOutOfHostMemory("converting '" + weights[i]->name + "' (" +
                          shapeText({weights[i]->n, weights[i]->k}) + ")",
                      [&] { convertOne(i); });
  });
  for (size_t i = 0; i < weights.size(); ++i) {
    addFormatTensors(out.tensors, weights[i]->name + ".", converted[i]);
    format::TensorMap().swap(converted[i]);
  }
  // Every other tensor as it is.
  for (const SafetensorsFile &file : source.files())
    for (const TensorInfo &info : file.tensors()) {
      if (given.count(moduleOfWeight(info.name)))
        continue;
      TensorView view = file.view(info);
      out.tensors.add(info.name, info.dtype, info.shape, view.data, view.size);
    }

  Json config = Json::parse(source.config().text);
  Json q = format == CheckpointFormat::AutoGptq
               ? gptqConfig(first.encoding, given.count("lm_head") != 0)
               : compressedTensorsConfig(first.encoding,
                                         ignoredModules(source, given));
  config["quantization_config"] = q;
  out.config = config.dump(2) + "\n";
  if (format == CheckpointFormat::AutoGptq)
    out.quantizeConfig = q.dump(2) + "\n";
  return out;
}

//===----------------------------------------------------------------------===//
// The directory
//===----------------------------------------------------------------------===//

void commit(const Output &out, const std::string &outDir) {
  detail::createCheckpointDir(outDir);
  AtomicFile tensors(outDir + "/" + kModelFile);
  out.tensors.write(tensors);
  std::vector<std::pair<std::string, std::string>> configs = {
      {"config.json", out.config}};
  if (out.quantizeConfig)
    configs.push_back({"quantize_config.json", *out.quantizeConfig});
  detail::commitCheckpointFiles(outDir, configs, [&] { tensors.commit(); });
}

} // namespace

CheckpointFormat parseCheckpointFormat(std::string_view name) {
  for (CheckpointFormat format :
       {CheckpointFormat::QfusePacked, CheckpointFormat::CompressedTensors,
        CheckpointFormat::AutoGptq})
    if (name == checkpointFormatName(format))
      return format;
  std::string valid;
  for (const std::string &known : checkpointFormatNames())
    valid += (valid.empty() ? "" : ", ") + known;
  throw Error("unknown checkpoint format '" + std::string(name) +
              "' (expected one of: " + valid + ")");
}

std::string_view checkpointFormatName(CheckpointFormat format) {
  switch (format) {
  case CheckpointFormat::QfusePacked:
    return "qfuse";
  case CheckpointFormat::CompressedTensors:
    return "compressed-tensors";
  case CheckpointFormat::AutoGptq:
    return "auto-gptq";
  }
  return "?";
}

std::vector<std::string> checkpointFormatNames() {
  return {"qfuse", "compressed-tensors", "auto-gptq"};
}

void checkEncodingForFormat(CheckpointFormat format,
                            const format::Encoding &encoding) {
  switch (format) {
  case CheckpointFormat::QfusePacked: {
    std::string error;
    if (!format::verifyEncoding(encoding, error))
      throw Error("qfuse-packed: invalid encoding: " + error);
    return;
  }
  case CheckpointFormat::CompressedTensors:
    if (isIntegerCheckpointEncoding(encoding) || isNvfp4(encoding))
      return;
    throw Error("compressed-tensors cannot store encoding " +
                encodingText(encoding) +
                ": its \"pack-quantized\" format holds int4/int8 "
                "(symmetric) or uint4/uint8 with zero = int, dense, with "
                "f16/bf16/f32 scales, and \"nvfp4-pack-quantized\" holds "
                "exactly \"" +
                format::printEncoding(namedEncoding("nvfp4")) + "\"");
  case CheckpointFormat::AutoGptq:
    if (isIntegerCheckpointEncoding(encoding))
      return;
    throw Error("auto-gptq (GPTQ v1) cannot store encoding " +
                encodingText(encoding) +
                ": it holds int4/int8 (symmetric) or uint4/uint8 with "
                "zero = int, dense, with f16/bf16/f32 scales");
  }
}

void checkOutputDir(const ModelCheckpoint &source, const std::string &outDir,
                    bool overwrite) {
  std::error_code ec;
  if (fs::exists(outDir, ec) && fs::equivalent(outDir, source.dir(), ec))
    throw Error("cannot write into '" + outDir +
                "': it is the source checkpoint's directory");
  const std::string model = outDir + "/" + kModelFile;
  if (!overwrite && fs::exists(model, ec))
    throw Error("'" + model + "' exists; refusing to overwrite it (choose "
                "another directory, or pass overwrite)");
  const std::string index = outDir + "/" + kIndexFile;
  if (fs::exists(index, ec))
    throw Error("'" + index + "' exists and loaders would read its shards "
                "instead of the model.safetensors written here; remove it "
                "or choose another directory");
}

void writeQuantizedCheckpoint(const ModelCheckpoint &source,
                              const std::vector<QuantizedWeight> &weights,
                              CheckpointFormat format,
                              const std::string &outDir,
                              const Artifact *artifact, bool overwrite,
                              CheckpointWriteSeconds *seconds) {
  const auto start = Clock::now();
  checkOutputDir(source, outDir, overwrite);
  const std::map<std::string, const QuantizedWeight *> given = byName(weights);
  Clock::time_point built;
  if (format == CheckpointFormat::QfusePacked) {
    if (!artifact)
      throw Error("writing qfuse-packed '" + outDir +
                  "' needs the artifact whose weights it holds");
    writePacked(source, given, *artifact, outDir, overwrite, built);
  } else {
    const Output out = onOutOfHostMemory(
        "building the checkpoint for '" + outDir + "'",
        [&] { return convertedOutput(source, given, format); });
    built = Clock::now();
    commit(out, outDir);
  }
  if (seconds) {
    seconds->build = std::chrono::duration<double>(built - start).count();
    seconds->files =
        std::chrono::duration<double>(Clock::now() - built).count();
  }
}

} // namespace qfuse::runtime
