//===- ArtifactParser.cpp - An artifact's JSON read and checked -----------===//
//
// The JSON primitives every reader uses (each error names the JSON path), the
// top level, and the sections a plan refers to: kernels and their PTX,
// weights and their encodings and layouts, tensors, buffers, inputs and
// outputs, the roofline and the model description.
//
//===----------------------------------------------------------------------===//

#include "ArtifactParser.h"

#include <algorithm>
#include <cctype>
#include <limits>

namespace qfuse::runtime::detail {
namespace {

/// True when `ptx` has an `.entry <name>(` directive.
bool ptxDefinesEntry(const std::string &ptx, const std::string &name) {
  for (size_t pos = ptx.find(".entry"); pos != std::string::npos;
       pos = ptx.find(".entry", pos + 1)) {
    size_t at = pos + 6;
    if (at >= ptx.size() || !std::isspace(static_cast<unsigned char>(ptx[at])))
      continue;
    while (at < ptx.size() && std::isspace(static_cast<unsigned char>(ptx[at])))
      ++at;
    if (ptx.compare(at, name.size(), name) != 0)
      continue;
    at += name.size();
    if (at == ptx.size() || ptx[at] == '(' ||
        std::isspace(static_cast<unsigned char>(ptx[at])))
      return true;
  }
  return false;
}

} // namespace

std::string ArtifactParser::located(const std::string &where) const {
  if (prefix_.empty())
    return where;
  constexpr std::string_view kTop = "top level";
  if (where.compare(0, kTop.size(), kTop) == 0)
    return prefix_ + where.substr(kTop.size());
  return prefix_ + "." + where;
}

const json &ArtifactParser::member(const json &object, const std::string &where,
                                   const char *key) const {
  auto it = object.find(key);
  if (it == object.end())
    fail(where, std::string("missing field '") + key + "'");
  return *it;
}

const json *ArtifactParser::optionalMember(const json &object,
                                           const char *key) const {
  auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

std::string ArtifactParser::string(const json &object, const std::string &where,
                                   const char *key) const {
  const json &value = member(object, where, key);
  if (!value.is_string())
    fail(where + "." + key,
         "expected a string, found " + std::string(value.type_name()));
  return value.get<std::string>();
}

int64_t ArtifactParser::integer(const json &value, const std::string &where,
                                int64_t lo, int64_t hi) const {
  if (!value.is_number_integer())
    fail(where, "expected an integer, found " + value.dump());
  if (value.is_number_unsigned() &&
      value.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max()))
    fail(where, value.dump() + " is out of range [" + std::to_string(lo) +
                    ", " + std::to_string(hi) + "]");
  int64_t result = value.get<int64_t>();
  if (result < lo || result > hi)
    fail(where, value.dump() + " is out of range [" + std::to_string(lo) +
                    ", " + std::to_string(hi) + "]");
  return result;
}

const json &ArtifactParser::array(const json &object, const std::string &where,
                                  const char *key) const {
  const json &value = member(object, where, key);
  if (!value.is_array())
    fail(where + "." + key,
         "expected an array, found " + std::string(value.type_name()));
  return value;
}

void ArtifactParser::requireObject(const json &value,
                                   const std::string &where) const {
  if (!value.is_object())
    fail(where, "expected an object, found " + std::string(value.type_name()));
}

void ArtifactParser::rejectUnknownKeys(
    const json &object, const std::string &where,
    std::initializer_list<std::string_view> known) const {
  for (const auto &item : object.items())
    if (std::find(known.begin(), known.end(), item.key()) == known.end())
      fail(where, "unknown field '" + item.key() + "' (expected " +
                      joined(known) + ")");
}

void ArtifactParser::requireVersion(int64_t introduced,
                                    const std::string &where,
                                    const std::string &feature) const {
  if (artifact_.version < introduced)
    fail(where, feature + " needs version " + std::to_string(introduced) +
                    ", the file says " + std::to_string(artifact_.version));
}

/// An optional boolean member; false when absent.
bool ArtifactParser::optionalFlag(const json &object, const std::string &where,
                                  const char *key) const {
  const json *value = optionalMember(object, key);
  if (!value)
    return false;
  if (!value->is_boolean())
    fail(where + "." + key, "expected true or false, found " + value->dump());
  return value->get<bool>();
}

std::string ArtifactParser::uniqueName(const json &object,
                                       const std::string &where,
                                       std::set<std::string> &seen,
                                       const char *what) const {
  std::string name = string(object, where, "name");
  if (name.empty())
    fail(where + ".name", "empty name");
  if (!seen.insert(name).second)
    fail(where + ".name", std::string("duplicate ") + what + " '" + name + "'");
  return name;
}

Artifact ArtifactParser::run(const json &root) {
  requireObject(root, "top level");
  const std::string format = string(root, "top level", "format");
  if (format == format::kArtifactSetFormat && prefix_.empty())
    fail("format", "this file is an artifact set (one artifact per chip, "
                   "docs/artifact.md): load it with ArtifactSet::load and "
                   "run the variant for the device (ArtifactSet::variantFor, "
                   "loadArtifactForDevice)");
  if (format != kArtifactFormat)
    fail("format", "expected \"" + std::string(kArtifactFormat) +
                       "\", found \"" + format + "\"");
  const json &version = member(root, "top level", "version");
  if (!version.is_number_integer() ||
      version.get<int64_t>() < format::kArtifactMinVersion ||
      version.get<int64_t>() > kArtifactVersion)
    fail("version",
         "found " + version.dump() + ", this runtime supports " +
             std::to_string(format::kArtifactMinVersion) + " to " +
             std::to_string(kArtifactVersion) +
             " (version 2 added state buffers, gemm steps and \"model\", "
             "version 3 weights in several layouts (\"source\"), version 4 "
             "launches that name their op (\"op\", \"encoding\"), version "
             "5 the dequantize + cuBLAS fallback (\"workspace\" buffers, "
             "\"weight_buffer\", bf16 gemm steps, \"qf.dequantize\"); "
             "recompile the model with this qfuse-compile)");
  artifact_.version = version.get<int64_t>();
  if (const json *producer = optionalMember(root, "producer")) {
    if (!producer->is_string())
      fail("producer", "expected a string");
    artifact_.producer = producer->get<std::string>();
  }

  parseTarget(root);
  parseKernels(root);
  parseWeights(root);
  parseTensors(root);
  parseBuffers(root);
  parseIo(root, "inputs", artifact_.inputs);
  parseIo(root, "outputs", artifact_.outputs);
  parsePlans(root);
  parseRoofline(root);
  parseModel(root);
  return std::move(artifact_);
}

void ArtifactParser::parseTarget(const json &root) {
  const json &target = member(root, "top level", "target");
  requireObject(target, "target");
  artifact_.chip = string(target, "target", "chip");
  std::optional<ChipTarget> chip = ChipTarget::parse(artifact_.chip);
  if (!chip)
    fail("target.chip", "\"" + artifact_.chip +
                            "\" is not a chip name like \"sm_90\" or "
                            "\"sm_90a\"");
  artifact_.target = *chip;
  if (const json *features = optionalMember(target, "ptx_features")) {
    if (!features->is_string())
      fail("target.ptx_features", "expected a string");
    artifact_.ptxFeatures = features->get<std::string>();
    checkPtxFeatures(artifact_.ptxFeatures);
  }
}

/// "+ptx80" or "+ptx80,+ptx83": a comma-separated list of PTX ISA versions
/// `+ptxNN` (two digits, 32 to 99, as NVPTX spells them); "" lists none.
void ArtifactParser::checkPtxFeatures(const std::string &features) const {
  if (features.empty())
    return;
  size_t begin = 0;
  while (true) {
    const size_t end = std::min(features.find(',', begin), features.size());
    const std::string feature = features.substr(begin, end - begin);
    const bool known = feature.size() == 6 &&
                       feature.compare(0, 4, "+ptx") == 0 &&
                       std::isdigit(static_cast<unsigned char>(feature[4])) &&
                       std::isdigit(static_cast<unsigned char>(feature[5])) &&
                       std::stoi(feature.substr(4)) >= 32;
    if (!known)
      fail("target.ptx_features",
           "\"" + feature + "\" in \"" + features +
               "\" is not a PTX feature (expected a comma-separated list "
               "of PTX ISA versions such as \"+ptx80\")");
    if (end == features.size())
      return;
    begin = end + 1;
  }
}

/// Reads the optional "ptx" and "cubin_base64" members of `object`.
void ArtifactParser::readCode(const json &object, const std::string &where,
                              std::string &ptx, std::vector<uint8_t> &cubin) {
  if (const json *text = optionalMember(object, "ptx")) {
    if (!text->is_string())
      fail(where + ".ptx", "expected a string");
    ptx = text->get<std::string>();
  }
  if (const json *encoded = optionalMember(object, "cubin_base64")) {
    if (!encoded->is_string())
      fail(where + ".cubin_base64", "expected a string");
    std::optional<std::vector<uint8_t>> bytes =
        decodeBase64(encoded->get<std::string>());
    if (!bytes)
      fail(where + ".cubin_base64", "not valid base64");
    cubin = std::move(*bytes);
  }
}

void ArtifactParser::parseKernels(const json &root) {
  std::string modulePtx;
  std::vector<uint8_t> moduleCubin;
  if (const json *module = optionalMember(root, "module")) {
    requireObject(*module, "module");
    readCode(*module, "module", modulePtx, moduleCubin);
  }
  // May be empty: an artifact of gemm and memset steps launches no kernel.
  const json &kernels = array(root, "top level", "kernels");
  std::set<std::string> names;
  for (size_t i = 0; i < kernels.size(); ++i) {
    const std::string where = "kernels[" + std::to_string(i) + "]";
    const json &entry = kernels[i];
    requireObject(entry, where);
    Kernel kernel;
    kernel.name = uniqueName(entry, where, names, "kernel");
    readCode(entry, where, kernel.ptx, kernel.cubin);
    // Kernels compiled together share the top-level module's code.
    if (kernel.ptx.empty() && kernel.cubin.empty()) {
      kernel.ptx = modulePtx;
      kernel.cubin = moduleCubin;
    }
    if (kernel.ptx.empty() && kernel.cubin.empty())
      fail(where, "kernel '" + kernel.name + "' has neither ptx nor a cubin");
    if (!kernel.ptx.empty() && !ptxDefinesEntry(kernel.ptx, kernel.name))
      fail(where + ".ptx",
           "the PTX does not define '.entry " + kernel.name + "'");

    const json &params = array(entry, where, "params");
    std::set<std::string> paramNames;
    for (size_t p = 0; p < params.size(); ++p) {
      const std::string pwhere = where + ".params[" + std::to_string(p) + "]";
      requireObject(params[p], pwhere);
      KernelParam param;
      param.name = uniqueName(params[p], pwhere, paramNames, "parameter");
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
    if (const json *shared = optionalMember(entry, "shared_bytes"))
      kernel.sharedBytes =
          integer(*shared, where + ".shared_bytes", 0, kMaxSharedBytesPerBlock);
    if (const json *threads = optionalMember(entry, "max_threads"))
      kernel.maxThreads = integer(*threads, where + ".max_threads", 1, 1024);
    artifact_.kernels.push_back(std::move(kernel));
  }
}

void ArtifactParser::parseEncoding(WeightSpec &weight,
                                   const std::string &where) {
  // One definition of #qf.enc: qfuse_format parses and verifies it exactly as
  // the dialect does, including the shape rules for an [N, K] weight.
  std::string error;
  if (!format::parseEncoding(weight.encoding, weight.encodingAttr, error))
    fail(where, "\"" + weight.encoding + "\": " + error);
  if (!format::componentSpecs(weight.encodingAttr, weight.n, weight.k,
                              weight.components, error))
    fail(where, "\"" + weight.encoding + "\" for shape [" +
                    std::to_string(weight.n) + ", " + std::to_string(weight.k) +
                    "]: " + error);
}

void ArtifactParser::parseLayout(WeightSpec &weight, const std::string &where) {
  std::string error;
  if (!format::parseLayout(weight.layout, weight.layoutAttr, error))
    fail(where, "\"" + weight.layout + "\": " + error);
  weight.layoutComponents = format::layoutComponentSpecs(
      weight.encodingAttr, weight.layoutAttr, weight.n, weight.k);
}

void ArtifactParser::parseWeights(const json &root) {
  const json *weights = optionalMember(root, "weights");
  if (!weights)
    return;
  if (!weights->is_array())
    fail("weights", "expected an array");
  std::set<std::string> names;
  for (size_t i = 0; i < weights->size(); ++i) {
    const std::string where = "weights[" + std::to_string(i) + "]";
    const json &entry = (*weights)[i];
    requireObject(entry, where);
    WeightSpec weight;
    weight.name = uniqueName(entry, where, names, "weight");
    const json &shape = array(entry, where, "shape");
    if (shape.size() != 2)
      fail(where + ".shape", "expected [N, K], found " + shape.dump());
    const int64_t maxExtent = int64_t(1) << 40;
    weight.n = integer(shape[0], where + ".shape[0]", 1, maxExtent);
    weight.k = integer(shape[1], where + ".shape[1]", 1, maxExtent);
    weight.encoding = string(entry, where, "encoding");
    weight.layout = string(entry, where, "layout");
    parseEncoding(weight, where + ".encoding");
    parseLayout(weight, where + ".layout");
    if (entry.contains("source")) {
      requireVersion(format::kArtifactLayoutsVersion, where + ".source",
                     "\"source\" (a weight in several layouts)");
      weight.source = string(entry, where, "source");
      if (weight.source.empty())
        fail(where + ".source", "expected a checkpoint tensor name");
    }
    artifact_.weights.push_back(std::move(weight));
  }
  // Entries packed from one checkpoint tensor are that tensor in several
  // layouts: same shape and encoding, one entry per layout.
  for (size_t i = 0; i < artifact_.weights.size(); ++i)
    for (size_t j = 0; j < i; ++j) {
      const WeightSpec &a = artifact_.weights[j], &b = artifact_.weights[i];
      if (a.checkpointName() != b.checkpointName())
        continue;
      const std::string where = "weights[" + std::to_string(i) + "]";
      if (a.n != b.n || a.k != b.k || a.encoding != b.encoding)
        fail(where, "weight '" + b.name + "' is packed from '" +
                        b.checkpointName() + "' like weight '" + a.name +
                        "', but differs in shape or encoding (" + b.encoding +
                        " [" + std::to_string(b.n) + ", " +
                        std::to_string(b.k) + "] against " + a.encoding + " [" +
                        std::to_string(a.n) + ", " + std::to_string(a.k) +
                        "])");
      if (format::printLayout(a.layoutAttr) ==
          format::printLayout(b.layoutAttr))
        fail(where, "weight '" + b.name + "' repeats weight '" + a.name +
                        "': both are '" + b.checkpointName() +
                        "' in layout \"" + b.layout + "\"");
    }
}

void ArtifactParser::parseTensors(const json &root) {
  const json *tensors = optionalMember(root, "tensors");
  if (!tensors)
    return;
  if (!tensors->is_array())
    fail("tensors", "expected an array");
  std::set<std::string> names;
  for (size_t i = 0; i < tensors->size(); ++i) {
    const std::string where = "tensors[" + std::to_string(i) + "]";
    const json &entry = (*tensors)[i];
    requireObject(entry, where);
    TensorSpec tensor;
    tensor.name = uniqueName(entry, where, names, "tensor");
    const json &shape = array(entry, where, "shape");
    for (size_t d = 0; d < shape.size(); ++d)
      tensor.shape.push_back(
          integer(shape[d], where + ".shape[" + std::to_string(d) + "]", 0,
                  int64_t(1) << 40));
    const std::string dtype = string(entry, where, "dtype");
    std::optional<DType> parsed = parseArtifactDType(dtype);
    if (!parsed)
      fail(where + ".dtype", "unknown dtype \"" + dtype + "\"");
    tensor.dtype = *parsed;
    artifact_.tensors.push_back(std::move(tensor));
  }
}

void ArtifactParser::parseBuffers(const json &root) {
  const json &buffers = array(root, "top level", "buffers");
  std::set<std::string> names;
  for (size_t i = 0; i < buffers.size(); ++i) {
    const std::string where = "buffers[" + std::to_string(i) + "]";
    const json &entry = buffers[i];
    requireObject(entry, where);
    BufferSpec buffer;
    buffer.name = uniqueName(entry, where, names, "buffer");
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
        dim.value = integer(shape[d], dwhere, 1, int64_t(1) << 40);
      }
      buffer.shape.push_back(dim);
    }
    const std::string dtype = string(entry, where, "dtype");
    std::optional<DType> parsed = parseArtifactDType(dtype);
    if (!parsed)
      fail(where + ".dtype", "unknown dtype \"" + dtype + "\"");
    // Every "M" is the plan's batch: a shape has one dynamic extent at most.
    if (std::count_if(buffer.shape.begin(), buffer.shape.end(),
                      [](const Dim &dim) { return dim.isBatch; }) > 1)
      fail(where + ".shape", "buffer '" + buffer.name + "' has " +
                                 shape.dump() +
                                 ", more than one \"M\" (expected at most "
                                 "one dynamic extent, the batch)");
    buffer.dtype = *parsed;
    if (!dtypeStorageBytes(buffer.dtype, 2)) // sub-byte types need even sizes
      fail(where + ".dtype", "unsupported buffer dtype \"" + dtype + "\"");
    parseBufferRole(entry, where, buffer);
    artifact_.buffers.push_back(std::move(buffer));
  }
}

/// "state" (version 2) or "workspace" (version 5), at most one: buffers
/// that one allocation serves for every plan, so their size cannot depend on
/// the batch.
void ArtifactParser::parseBufferRole(const json &entry,
                                     const std::string &where,
                                     BufferSpec &buffer) const {
  buffer.state = optionalFlag(entry, where, "state");
  buffer.workspace = optionalFlag(entry, where, "workspace");
  if (entry.contains("workspace"))
    requireVersion(format::kArtifactWorkspaceVersion, where + ".workspace",
                   "\"workspace\" (a buffer shared by every plan)");
  if (buffer.state && buffer.workspace)
    fail(where + ".workspace",
         "buffer '" + buffer.name +
             "' is both \"state\" and \"workspace\" (a state buffer keeps "
             "its contents across runs, a workspace does not; expected at "
             "most one)");
  if (!buffer.sharedByPlans())
    return;
  for (const Dim &dim : buffer.shape)
    if (dim.isBatch)
      fail(where + ".shape",
           std::string(buffer.state ? "state" : "workspace") + " buffer '" +
               buffer.name + "' must have a static shape, found \"M\" in " +
               member(entry, where, "shape").dump());
}

void ArtifactParser::parseIo(const json &root, const char *key,
                             std::vector<std::string> &out) {
  const json &names = array(root, "top level", key);
  if (names.empty() && std::string_view(key) == "outputs")
    fail(key, "no outputs (expected the buffers the plans compute)");
  std::set<std::string> seen;
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string where = std::string(key) + "[" + std::to_string(i) + "]";
    if (!names[i].is_string())
      fail(where, "expected a buffer name");
    std::string name = names[i].get<std::string>();
    if (!artifact_.findBuffer(name))
      fail(where, "buffer '" + name + "' is not declared in 'buffers'");
    if (!seen.insert(name).second)
      fail(where, "buffer '" + name + "' is listed twice in '" + key +
                      "' (expected each buffer once)");
    out.push_back(std::move(name));
  }
}

void ArtifactParser::parseRoofline(const json &root) {
  const json *roofline = optionalMember(root, "roofline");
  if (!roofline)
    return;
  if (!roofline->is_array())
    fail("roofline", "expected an array");
  for (size_t i = 0; i < roofline->size(); ++i) {
    const std::string where = "roofline[" + std::to_string(i) + "]";
    const json &entry = (*roofline)[i];
    requireObject(entry, where);
    RooflineEntry item;
    item.op = string(entry, where, "op");
    item.bytes = static_cast<uint64_t>(
        integer(member(entry, where, "bytes"), where + ".bytes", 0,
                std::numeric_limits<int64_t>::max()));
    item.flops = static_cast<uint64_t>(
        integer(member(entry, where, "flops"), where + ".flops", 0,
                std::numeric_limits<int64_t>::max()));
    artifact_.roofline.push_back(std::move(item));
  }
}

void ArtifactParser::parseModel(const json &root) {
  const json *model = optionalMember(root, "model");
  if (!model)
    return;
  requireObject(*model, "model");
  ModelInfo &info = artifact_.model;
  info.present = true;
  info.json = model->dump();
  if (const json *arch = optionalMember(*model, "architecture")) {
    if (!arch->is_string())
      fail("model.architecture", "expected a string, found " + arch->dump());
    info.architecture = arch->get<std::string>();
  }
  auto read = [&](const char *key, int64_t &out) {
    if (const json *value = optionalMember(*model, key))
      out = integer(*value, std::string("model.") + key, 1, int64_t(1) << 40);
  };
  read("vocab_size", info.vocabSize);
  read("hidden_size", info.hiddenSize);
  read("num_layers", info.numLayers);
  read("num_heads", info.numHeads);
  read("num_kv_heads", info.numKvHeads);
  read("head_dim", info.headDim);
  read("max_seq", info.maxSeq);
}

} // namespace qfuse::runtime::detail
