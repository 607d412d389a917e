//===- ArtifactFromJson.cpp - the artifact schema read from JSON ----------===//
//
// The reading half of the serializer: every field of docs/artifact.md into
// ArtifactSchema.h, checking what the JSON alone says (types, ranges, unknown
// fields, fields newer than the file's version). Each error names the JSON
// path; the first one ends the read.
//
//===----------------------------------------------------------------------===//

#include "qfuse/format/ArtifactJson.h"
#include "qfuse/format/ArtifactVersion.h"

#include <algorithm>
#include <initializer_list>
#include <limits>

namespace qfuse::format::artifact {
namespace {

using nlohmann::json;

constexpr int64_t kMaxExtent = int64_t(1) << 40;

class Reader {
public:
  Reader(Artifact &out, std::string prefix)
      : out_(out), prefix_(std::move(prefix)) {}

  void read(const json &root);

private:
  [[noreturn]] void fail(const std::string &where,
                         const std::string &what) const {
    throw ReadError{located(where), what};
  }
  std::string located(const std::string &where) const {
    return locatedUnder(prefix_, where);
  }

  const json &member(const json &object, const std::string &where,
                     const char *key) const {
    auto it = object.find(key);
    if (it == object.end())
      fail(where, std::string("missing field '") + key + "'");
    return *it;
  }
  static const json *optional(const json &object, const char *key) {
    auto it = object.find(key);
    return it == object.end() ? nullptr : &*it;
  }
  std::string string(const json &object, const std::string &where,
                     const char *key) const {
    const json &value = member(object, where, key);
    if (!value.is_string())
      fail(where + "." + key,
           "expected a string, found " + std::string(value.type_name()));
    return value.get<std::string>();
  }
  int64_t integer(const json &value, const std::string &where, int64_t lo,
                  int64_t hi) const {
    if (!value.is_number_integer())
      fail(where, "expected an integer, found " + value.dump());
    if ((value.is_number_unsigned() &&
         value.get<uint64_t>() >
             uint64_t(std::numeric_limits<int64_t>::max())) ||
        value.get<int64_t>() < lo || value.get<int64_t>() > hi)
      fail(where, value.dump() + " is out of range [" + std::to_string(lo) +
                      ", " + std::to_string(hi) + "]");
    return value.get<int64_t>();
  }
  const json &array(const json &object, const std::string &where,
                    const char *key) const {
    const json &value = member(object, where, key);
    if (!value.is_array())
      fail(where + "." + key,
           "expected an array, found " + std::string(value.type_name()));
    return value;
  }
  /// An optional array: absent reads as empty.
  const json *optionalArray(const json &object, const char *key) const {
    const json *value = optional(object, key);
    if (value && !value->is_array())
      fail(key, "expected an array");
    return value;
  }
  void requireObject(const json &value, const std::string &where) const {
    if (!value.is_object())
      fail(where,
           "expected an object, found " + std::string(value.type_name()));
  }
  void rejectUnknownKeys(const json &object, const std::string &where,
                         std::initializer_list<std::string_view> known) const;
  /// Fails at `where` unless the file's version is at least `introduced`.
  void requireVersion(int64_t introduced, const std::string &where,
                      const std::string &feature) const {
    if (out_.version < introduced)
      fail(where, feature + " needs version " + std::to_string(introduced) +
                      ", the file says " + std::to_string(out_.version));
  }
  bool flag(const json &object, const std::string &where,
            const char *key) const {
    const json *value = optional(object, key);
    if (!value)
      return false;
    if (!value->is_boolean())
      fail(where + "." + key, "expected true or false, found " + value->dump());
    return value->get<bool>();
  }

  void readVersion(const json &root);
  void readTarget(const json &root);
  void readCode(const json &object, const std::string &where, std::string &ptx,
                std::vector<uint8_t> &cubin) const;
  void readKernels(const json &root);
  void readWeights(const json &root);
  void readTensors(const json &root);
  void readBuffers(const json &root);
  void readNames(const json &root, const char *key,
                 std::vector<std::string> &names) const;
  void readPlans(const json &root);
  Step readStep(const json &value, const std::string &where) const;
  PermGuard readGuard(const json &value, const std::string &where) const;
  void readLaunch(const json &value, const std::string &where,
                  Step &step) const;
  Gemm readGemm(const json &value, const std::string &where) const;
  Arg readArg(const json &value, const std::string &where) const;
  std::array<int64_t, 3> readDims(const json &step, const std::string &where,
                                  const char *key,
                                  const std::array<int64_t, 3> &limits) const;
  void readRoofline(const json &root);
  void readModel(const json &root);

  Artifact &out_;
  std::string prefix_;
};

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

void Reader::readPlans(const json &root) {
  const json &plans = array(root, "top level", "plans");
  for (size_t i = 0; i < plans.size(); ++i) {
    const std::string where = "plans[" + std::to_string(i) + "]";
    requireObject(plans[i], where);
    Plan plan;
    plan.batch = integer(member(plans[i], where, "batch"), where + ".batch", 1,
                         int64_t(1) << 24);
    const json &steps = array(plans[i], where, "steps");
    for (size_t s = 0; s < steps.size(); ++s)
      plan.steps.push_back(
          readStep(steps[s], where + ".steps[" + std::to_string(s) + "]"));
    out_.plans.push_back(std::move(plan));
  }
}

Step Reader::readStep(const json &value, const std::string &where) const {
  requireObject(value, where);
  Step step;
  const bool isLaunch = value.contains("launch");
  const bool isMemset = value.contains("memset");
  const bool isGemm = value.contains("gemm");
  if (int(isLaunch) + int(isMemset) + int(isGemm) != 1)
    fail(where, "a step is exactly one of {\"launch\": kernel}, "
                "{\"memset\": buffer} or {\"gemm\": {...}}");
  if (const json *when = optional(value, "when")) {
    requireVersion(kArtifactPermGuardVersion, where + ".when",
                   "\"when\" (a step guarded by equal perms)");
    step.guard = readGuard(*when, where + ".when");
  }
  if (isGemm) {
    rejectUnknownKeys(value, where, {"gemm", "when"});
    step.kind = Step::Kind::Gemm;
    step.gemm = readGemm(value["gemm"], where + ".gemm");
    return step;
  }
  if (isMemset) {
    rejectUnknownKeys(value, where, {"memset", "when"});
    step.kind = Step::Kind::Memset;
    step.target = string(value, where, "memset");
    return step;
  }
  readLaunch(value, where, step);
  return step;
}

PermGuard Reader::readGuard(const json &value,
                            const std::string &where) const {
  requireObject(value, where);
  rejectUnknownKeys(value, where, {"perms_equal", "perms_differ"});
  const bool equal = value.contains("perms_equal");
  if (int(equal) + int(value.contains("perms_differ")) != 1)
    fail(where, "expected exactly one of {\"perms_equal\": [weights]} or "
                "{\"perms_differ\": [weights]}");
  PermGuard guard;
  guard.when = equal ? PermGuard::When::PermsEqual
                     : PermGuard::When::PermsDiffer;
  const char *key = equal ? "perms_equal" : "perms_differ";
  const json &names = array(value, where, key);
  if (names.size() < 2)
    fail(where + "." + key, "expected two or more weight names, found " +
                                names.dump());
  for (size_t i = 0; i < names.size(); ++i) {
    if (!names[i].is_string() || names[i].get<std::string>().empty())
      fail(where + "." + key + "[" + std::to_string(i) + "]",
           "expected a weight name");
    guard.weights.push_back(names[i].get<std::string>());
  }
  return guard;
}

void Reader::readLaunch(const json &value, const std::string &where,
                        Step &step) const {
  rejectUnknownKeys(
      value, where,
      {"launch", "grid", "block", "shared_bytes", "args", "op", "encoding",
       "when"});
  step.kind = Step::Kind::Launch;
  step.target = string(value, where, "launch");
  step.grid = readDims(value, where, "grid", {0x7fffffff, 65535, 65535});
  step.block = readDims(value, where, "block", {1024, 1024, 64});
  if (const json *shared = optional(value, "shared_bytes"))
    step.sharedBytes =
        integer(*shared, where + ".shared_bytes", 0, kMaxSharedBytesPerBlock);
  const json &args = array(value, where, "args");
  for (size_t a = 0; a < args.size(); ++a)
    step.args.push_back(
        readArg(args[a], where + ".args[" + std::to_string(a) + "]"));
  // Version 4: the op a launch runs, and a GPTQ block update's grid.
  const json *op = optional(value, "op");
  const json *encoding = optional(value, "encoding");
  if (op || encoding)
    requireVersion(kArtifactLaunchOpVersion, where,
                   "\"op\" and \"encoding\" on a launch");
  if (op) {
    if (!op->is_string() || op->get<std::string>().empty())
      fail(where + ".op", "expected the op's name, such as "
                          "\"qf.gptq_block_update\"");
    step.op = op->get<std::string>();
  }
  if (encoding) {
    if (!encoding->is_string())
      fail(where + ".encoding", "expected the body of a #qf.enc<...>");
    step.encoding = encoding->get<std::string>();
  }
}

std::array<int64_t, 3>
Reader::readDims(const json &step, const std::string &where, const char *key,
                 const std::array<int64_t, 3> &limits) const {
  const json &dims = array(step, where, key);
  if (dims.size() != 3)
    fail(where + "." + key, "expected [x, y, z], found " + dims.dump());
  std::array<int64_t, 3> result;
  for (size_t d = 0; d < 3; ++d)
    result[d] =
        integer(dims[d], where + "." + key + "[" + std::to_string(d) + "]", 1,
                limits[d]);
  return result;
}

Arg Reader::readArg(const json &value, const std::string &where) const {
  requireObject(value, where);
  Arg arg;
  if (value.contains("buffer")) {
    rejectUnknownKeys(value, where, {"buffer"});
    arg.kind = Arg::Kind::Buffer;
    arg.name = string(value, where, "buffer");
  } else if (value.contains("weight")) {
    rejectUnknownKeys(value, where, {"weight", "component"});
    arg.kind = Arg::Kind::Weight;
    arg.name = string(value, where, "weight");
    arg.component = string(value, where, "component");
  } else if (value.contains("tensor")) {
    rejectUnknownKeys(value, where, {"tensor"});
    arg.kind = Arg::Kind::Tensor;
    arg.name = string(value, where, "tensor");
  } else if (value.contains("i32")) {
    rejectUnknownKeys(value, where, {"i32"});
    arg.kind = Arg::Kind::I32;
    arg.intValue = integer(value["i32"], where + ".i32",
                           std::numeric_limits<int32_t>::min(),
                           std::numeric_limits<int32_t>::max());
  } else if (value.contains("i64")) {
    rejectUnknownKeys(value, where, {"i64"});
    arg.kind = Arg::Kind::I64;
    arg.intValue = integer(value["i64"], where + ".i64",
                           std::numeric_limits<int64_t>::min(),
                           std::numeric_limits<int64_t>::max());
  } else if (value.contains("f32")) {
    rejectUnknownKeys(value, where, {"f32"});
    arg.kind = Arg::Kind::F32;
    if (!value["f32"].is_number())
      fail(where + ".f32", "expected a number, found " + value["f32"].dump());
    arg.floatValue = value["f32"].get<float>();
  } else {
    fail(where, "expected one of buffer, weight, tensor, i32, i64, f32; "
                "found " +
                    value.dump());
  }
  return arg;
}

Gemm Reader::readGemm(const json &value, const std::string &where) const {
  requireObject(value, where);
  rejectUnknownKeys(value, where,
                    {"x", "weight", "weight_buffer", "y", "bias", "residual"});
  Gemm gemm;
  gemm.x = string(value, where, "x");
  gemm.y = string(value, where, "y");
  if (optional(value, "bias"))
    gemm.bias = string(value, where, "bias");
  if (optional(value, "residual"))
    gemm.residual = string(value, where, "residual");
  const bool named = value.contains("weight");
  const bool inBuffer = value.contains("weight_buffer");
  if (named == inBuffer)
    fail(where + (named ? ".weight_buffer" : ".weight"),
         std::string(named ? "found both \"weight\" and \"weight_buffer\""
                           : "missing field 'weight'") +
             " (a gemm step names exactly one of \"weight\", a dense f16 "
             "weight, or \"weight_buffer\", a buffer holding the [N, K] "
             "weight)");
  if (named) {
    gemm.weight = string(value, where, "weight");
  } else {
    requireVersion(kArtifactWorkspaceVersion, where + ".weight_buffer",
                   "\"weight_buffer\" (a gemm on a weight in a buffer)");
    gemm.weightBuffer = string(value, where, "weight_buffer");
  }
  return gemm;
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

} // namespace

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
