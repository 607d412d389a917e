//===- ArtifactFromJson.cpp - the artifact schema read from JSON ----------===//
//
// The reading half of the serializer: every field of docs/artifact.md into
// ArtifactSchema.h, checking what the JSON alone says (types, ranges, unknown
// fields, fields newer than the file's version). Each error names the JSON
// path; the first one ends the read. The plans and their steps are read in
// PlansFromJson.cpp.
//
//===----------------------------------------------------------------------===//

#include "ArtifactReader.h"

namespace qfuse::format::artifact {
namespace detail {

void Reader::rejectUnknownKeys(
    const json &object, const std::string &where,
    std::initializer_list<std::string_view> known) const {
  for (const auto &item : object.items())
    if (std::find(known.begin(), known.end(), item.key()) == known.end()) {
      std::string list;
      for (std::string_view key : known)
        list += (list.empty() ? "" : ", ") + std::string(key);
      fail(where, "unknown field '" + item.key() + "' (expected " + list + ")");
    }
}

void Reader::read(const json &root) {
  requireObject(root, "top level");
  const std::string format = string(root, "top level", "format");
  if (format == kArtifactSetFormat && prefix_.empty())
    fail("format", "this file is an artifact set (one artifact per chip, "
                   "docs/artifact.md): load it with ArtifactSet::load and "
                   "run the variant for the device (ArtifactSet::variantFor, "
                   "loadArtifactForDevice)");
  if (format != kFormat)
    fail("format",
         "expected \"" + std::string(kFormat) + "\", found \"" + format + "\"");
  readVersion(root);
  if (const json *producer = optional(root, "producer")) {
    if (!producer->is_string())
      fail("producer", "expected a string");
    out_.producer = producer->get<std::string>();
  }
  readTarget(root);
  if (const json *module = optional(root, "module")) {
    requireObject(*module, "module");
    readCode(*module, "module", out_.modulePtx, out_.moduleCubin);
  }
  readKernels(root);
  readWeights(root);
  readTensors(root);
  readBuffers(root);
  readNames(root, "inputs", out_.inputs);
  readNames(root, "outputs", out_.outputs);
  readPlans(root);
  readRoofline(root);
  readModel(root);
}

void Reader::readVersion(const json &root) {
  const json &version = member(root, "top level", "version");
  if (!version.is_number_integer() ||
      version.get<int64_t>() < kArtifactMinVersion ||
      version.get<int64_t>() > kArtifactVersion)
    fail("version",
         "found " + version.dump() + ", this runtime supports " +
             std::to_string(kArtifactMinVersion) + " to " +
             std::to_string(kArtifactVersion) +
             " (version 2 added state buffers, gemm steps and \"model\", "
             "version 3 weights in several layouts (\"source\"), version 4 "
             "launches that name their op (\"op\", \"encoding\"), version "
             "5 the dequantize + cuBLAS fallback (\"workspace\" buffers, "
             "\"weight_buffer\", bf16 gemm steps, \"qf.dequantize\"), version "
             "6 round-to-nearest on the device (\"qf.quantize\"), version 7 "
             "steps guarded by equal perms (\"when\", act_order groups); "
             "recompile the model with this qfuse-compile)");
  out_.version = version.get<int64_t>();
}

void Reader::readTarget(const json &root) {
  const json &target = member(root, "top level", "target");
  requireObject(target, "target");
  out_.chip = string(target, "target", "chip");
  if (const json *features = optional(target, "ptx_features")) {
    if (!features->is_string())
      fail("target.ptx_features", "expected a string");
    out_.ptxFeatures = features->get<std::string>();
  }
}

/// The optional "ptx" and "cubin_base64" members of `object`.
void Reader::readCode(const json &object, const std::string &where,
                      std::string &ptx, std::vector<uint8_t> &cubin) const {
  if (const json *text = optional(object, "ptx")) {
    if (!text->is_string())
      fail(where + ".ptx", "expected a string");
    ptx = text->get<std::string>();
  }
  if (const json *encoded = optional(object, "cubin_base64")) {
    if (!encoded->is_string())
      fail(where + ".cubin_base64", "expected a string");
    std::optional<std::vector<uint8_t>> bytes =
        decodeBase64(encoded->get<std::string>());
    if (!bytes)
      fail(where + ".cubin_base64", "not valid base64");
    cubin = std::move(*bytes);
  }
}

void Reader::readKernels(const json &root) {
  const json &kernels = array(root, "top level", "kernels");
  for (size_t i = 0; i < kernels.size(); ++i) {
    const std::string where = "kernels[" + std::to_string(i) + "]";
    const json &entry = kernels[i];
    requireObject(entry, where);
    Kernel kernel;
    kernel.name = string(entry, where, "name");
    readCode(entry, where, kernel.ptx, kernel.cubin);
    const json &params = array(entry, where, "params");
    for (size_t p = 0; p < params.size(); ++p) {
      const std::string pwhere = where + ".params[" + std::to_string(p) + "]";
      requireObject(params[p], pwhere);
      KernelParam param;
      param.name = string(params[p], pwhere, "name");
      const std::string type = string(params[p], pwhere, "type");
      if (type == "ptr")
        param.type = ParamType::Ptr;
      else if (type == "i32")
        param.type = ParamType::I32;
      else if (type == "i64")
        param.type = ParamType::I64;
      else if (type == "f32")
        param.type = ParamType::F32;
      else
        fail(pwhere + ".type",
             "unknown type \"" + type + "\" (expected ptr, i32, i64, f32)");
      kernel.params.push_back(std::move(param));
    }
    if (const json *shared = optional(entry, "shared_bytes"))
      kernel.sharedBytes =
          integer(*shared, where + ".shared_bytes", 0, kMaxSharedBytesPerBlock);
    if (const json *threads = optional(entry, "max_threads"))
      kernel.maxThreads = integer(*threads, where + ".max_threads", 1, 1024);
    kernel.gridDependency = flag(entry, where, "grid_dependency");
    out_.kernels.push_back(std::move(kernel));
  }
}

void Reader::readWeights(const json &root) {
  const json *weights = optionalArray(root, "weights");
  for (size_t i = 0; weights && i < weights->size(); ++i) {
    const std::string where = "weights[" + std::to_string(i) + "]";
    const json &entry = (*weights)[i];
    requireObject(entry, where);
    Weight weight;
    weight.name = string(entry, where, "name");
    const json &shape = array(entry, where, "shape");
    if (shape.size() != 2)
      fail(where + ".shape", "expected [N, K], found " + shape.dump());
    weight.n = integer(shape[0], where + ".shape[0]", 1, kMaxExtent);
    weight.k = integer(shape[1], where + ".shape[1]", 1, kMaxExtent);
    weight.encoding = string(entry, where, "encoding");
    weight.layout = string(entry, where, "layout");
    if (entry.contains("source")) {
      requireVersion(kArtifactLayoutsVersion, where + ".source",
                     "\"source\" (a weight in several layouts)");
      weight.source = string(entry, where, "source");
      if (weight.source.empty())
        fail(where + ".source", "expected a checkpoint tensor name");
    }
    out_.weights.push_back(std::move(weight));
  }
}

void Reader::readTensors(const json &root) {
  const json *tensors = optionalArray(root, "tensors");
  for (size_t i = 0; tensors && i < tensors->size(); ++i) {
    const std::string where = "tensors[" + std::to_string(i) + "]";
    const json &entry = (*tensors)[i];
    requireObject(entry, where);
    Tensor tensor;
    tensor.name = string(entry, where, "name");
    const json &shape = array(entry, where, "shape");
    for (size_t d = 0; d < shape.size(); ++d)
      tensor.shape.push_back(
          integer(shape[d], where + ".shape[" + std::to_string(d) + "]", 0,
                  kMaxExtent));
    tensor.dtype = string(entry, where, "dtype");
    out_.tensors.push_back(std::move(tensor));
  }
}

void Reader::readBuffers(const json &root) {
  const json &buffers = array(root, "top level", "buffers");
  for (size_t i = 0; i < buffers.size(); ++i) {
    const std::string where = "buffers[" + std::to_string(i) + "]";
    const json &entry = buffers[i];
    requireObject(entry, where);
    Buffer buffer;
    buffer.name = string(entry, where, "name");
    const json &shape = array(entry, where, "shape");
    for (size_t d = 0; d < shape.size(); ++d) {
      const std::string dwhere = where + ".shape[" + std::to_string(d) + "]";
      Dim dim;
      if (shape[d].is_string()) {
        if (shape[d].get<std::string>() != "M")
          fail(dwhere, "expected a positive integer or \"M\" (the batch), "
                       "found " +
                           shape[d].dump());
        dim.isBatch = true;
      } else {
        dim.value = integer(shape[d], dwhere, 1, kMaxExtent);
      }
      buffer.shape.push_back(dim);
    }
    buffer.dtype = string(entry, where, "dtype");
    buffer.state = flag(entry, where, "state");
    buffer.workspace = flag(entry, where, "workspace");
    if (entry.contains("workspace"))
      requireVersion(kArtifactWorkspaceVersion, where + ".workspace",
                     "\"workspace\" (a buffer shared by every plan)");
    out_.buffers.push_back(std::move(buffer));
  }
}

void Reader::readNames(const json &root, const char *key,
                       std::vector<std::string> &names) const {
  const json &list = array(root, "top level", key);
  for (size_t i = 0; i < list.size(); ++i) {
    if (!list[i].is_string())
      fail(std::string(key) + "[" + std::to_string(i) + "]",
           "expected a buffer name");
    names.push_back(list[i].get<std::string>());
  }
}

void Reader::readRoofline(const json &root) {
  const json *roofline = optionalArray(root, "roofline");
  for (size_t i = 0; roofline && i < roofline->size(); ++i) {
    const std::string where = "roofline[" + std::to_string(i) + "]";
    const json &entry = (*roofline)[i];
    requireObject(entry, where);
    RooflineEntry item;
    item.op = string(entry, where, "op");
    const int64_t max = std::numeric_limits<int64_t>::max();
    item.bytes = static_cast<uint64_t>(
        integer(member(entry, where, "bytes"), where + ".bytes", 0, max));
    item.flops = static_cast<uint64_t>(
        integer(member(entry, where, "flops"), where + ".flops", 0, max));
    out_.roofline.push_back(std::move(item));
  }
}

void Reader::readModel(const json &root) {
  const json *model = optional(root, "model");
  if (!model)
    return;
  requireObject(*model, "model");
  Model &info = out_.model;
  info.present = true;
  info.json = model->dump();
  if (const json *arch = optional(*model, "architecture")) {
    if (!arch->is_string())
      fail("model.architecture", "expected a string, found " + arch->dump());
    info.architecture = arch->get<std::string>();
  }
  auto read = [&](const char *key, int64_t &out) {
    if (const json *value = optional(*model, key))
      out = integer(*value, std::string("model.") + key, 1, kMaxExtent);
  };
  read("vocab_size", info.vocabSize);
  read("hidden_size", info.hiddenSize);
  read("num_layers", info.numLayers);
  read("num_heads", info.numHeads);
  read("num_kv_heads", info.numKvHeads);
  read("head_dim", info.headDim);
  read("max_seq", info.maxSeq);
}

} // namespace detail

using detail::Reader;
using nlohmann::json;

std::string locatedUnder(const std::string &prefix, const std::string &where) {
  if (prefix.empty())
    return where;
  constexpr std::string_view kTop = "top level";
  if (where.compare(0, kTop.size(), kTop) == 0)
    return prefix + where.substr(kTop.size());
  return prefix + "." + where;
}

std::optional<ReadError> fromJson(const json &root, Artifact &out,
                                  const std::string &prefix) {
  out = Artifact();
  try {
    Reader(out, prefix).read(root);
  } catch (const ReadError &error) {
    return error;
  }
  return std::nullopt;
}

} // namespace qfuse::format::artifact
