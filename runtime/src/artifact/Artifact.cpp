//===- Artifact.cpp - The qfuse artifact, parsed and validated ------------===//

#include "qfuse/runtime/artifact/Artifact.h"

#include "qfuse/runtime/Error.h"

#include "StrictJson.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

namespace qfuse::runtime {
namespace {

using nlohmann::json;

template <typename Range> std::string joined(const Range &range) {
  std::string out;
  for (const auto &item : range) {
    if (!out.empty())
      out += ", ";
    out += std::string(item);
  }
  return out;
}

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

/// Validates one artifact; every error names the source and the JSON path.
class Parser {
public:
  Parser(std::string source) { artifact_.source = std::move(source); }

  Artifact run(const json &root);

private:
  [[noreturn]] void fail(const std::string &where,
                         const std::string &what) const {
    throw Error("artifact '" + artifact_.source + "': " + where + ": " + what);
  }

  const json &member(const json &object, const std::string &where,
                     const char *key) const;
  const json *optionalMember(const json &object, const char *key) const;
  std::string string(const json &object, const std::string &where,
                     const char *key) const;
  int64_t integer(const json &value, const std::string &where, int64_t lo,
                  int64_t hi) const;
  const json &array(const json &object, const std::string &where,
                    const char *key) const;
  void requireObject(const json &value, const std::string &where) const;
  void rejectUnknownKeys(const json &object, const std::string &where,
                         std::initializer_list<std::string_view> known) const;
  std::string uniqueName(const json &object, const std::string &where,
                         std::set<std::string> &seen, const char *what) const;

  void parseTarget(const json &root);
  void parseKernels(const json &root);
  void readCode(const json &object, const std::string &where,
                std::string &ptx, std::vector<uint8_t> &cubin);
  void parseWeights(const json &root);
  void parseTensors(const json &root);
  void parseBuffers(const json &root);
  void parseIo(const json &root, const char *key,
               std::vector<std::string> &out);
  void parsePlans(const json &root);
  Step parseStep(const json &value, const std::string &where);
  Step parseGemm(const json &value, const std::string &where);
  void parseModel(const json &root);
  Arg parseArg(const json &value, const KernelParam &param,
               const std::string &where);
  void parseRoofline(const json &root);
  void parseEncoding(WeightSpec &weight, const std::string &where);
  void parseLayout(WeightSpec &weight, const std::string &where);
  std::array<uint32_t, 3> parseDims(const json &step, const std::string &where,
                                    const char *key,
                                    const std::array<int64_t, 3> &limits);

  Artifact artifact_;
};

const json &Parser::member(const json &object, const std::string &where,
                           const char *key) const {
  auto it = object.find(key);
  if (it == object.end())
    fail(where, std::string("missing field '") + key + "'");
  return *it;
}

const json *Parser::optionalMember(const json &object, const char *key) const {
  auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

std::string Parser::string(const json &object, const std::string &where,
                           const char *key) const {
  const json &value = member(object, where, key);
  if (!value.is_string())
    fail(where + "." + key,
         "expected a string, found " + std::string(value.type_name()));
  return value.get<std::string>();
}

int64_t Parser::integer(const json &value, const std::string &where, int64_t lo,
                        int64_t hi) const {
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

const json &Parser::array(const json &object, const std::string &where,
                          const char *key) const {
  const json &value = member(object, where, key);
  if (!value.is_array())
    fail(where + "." + key,
         "expected an array, found " + std::string(value.type_name()));
  return value;
}

void Parser::requireObject(const json &value, const std::string &where) const {
  if (!value.is_object())
    fail(where, "expected an object, found " + std::string(value.type_name()));
}

void Parser::rejectUnknownKeys(
    const json &object, const std::string &where,
    std::initializer_list<std::string_view> known) const {
  for (const auto &item : object.items())
    if (std::find(known.begin(), known.end(), item.key()) == known.end())
      fail(where, "unknown field '" + item.key() + "' (expected " +
                      joined(known) + ")");
}

std::string Parser::uniqueName(const json &object, const std::string &where,
                               std::set<std::string> &seen,
                               const char *what) const {
  std::string name = string(object, where, "name");
  if (name.empty())
    fail(where + ".name", "empty name");
  if (!seen.insert(name).second)
    fail(where + ".name", std::string("duplicate ") + what + " '" + name + "'");
  return name;
}

Artifact Parser::run(const json &root) {
  requireObject(root, "top level");
  const std::string format = string(root, "top level", "format");
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
             "version 3 weights in several layouts (\"source\"); "
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

void Parser::parseTarget(const json &root) {
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
  }
}

/// Reads the optional "ptx" and "cubin_base64" members of `object`.
void Parser::readCode(const json &object, const std::string &where,
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

void Parser::parseKernels(const json &root) {
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

void Parser::parseEncoding(WeightSpec &weight, const std::string &where) {
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

void Parser::parseLayout(WeightSpec &weight, const std::string &where) {
  std::string error;
  if (!format::parseLayout(weight.layout, weight.layoutAttr, error))
    fail(where, "\"" + weight.layout + "\": " + error);
  weight.layoutComponents = format::layoutComponentSpecs(
      weight.encodingAttr, weight.layoutAttr, weight.n, weight.k);
}

void Parser::parseWeights(const json &root) {
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
      if (artifact_.version < 3)
        fail(where + ".source", "\"source\" (a weight in several layouts) "
                                "needs version 3, the file says " +
                                    std::to_string(artifact_.version));
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
        fail(where, "weight '" + b.name + "' is packed from '" + b.checkpointName() +
                        "' like weight '" + a.name +
                        "', but differs in shape or encoding (" + b.encoding +
                        " [" + std::to_string(b.n) + ", " +
                        std::to_string(b.k) + "] against " + a.encoding +
                        " [" + std::to_string(a.n) + ", " +
                        std::to_string(a.k) + "])");
      if (format::printLayout(a.layoutAttr) ==
          format::printLayout(b.layoutAttr))
        fail(where, "weight '" + b.name + "' repeats weight '" + a.name +
                        "': both are '" + b.checkpointName() + "' in layout \"" +
                        b.layout + "\"");
    }
}

void Parser::parseTensors(const json &root) {
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

void Parser::parseBuffers(const json &root) {
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
    buffer.dtype = *parsed;
    if (!dtypeStorageBytes(buffer.dtype, 2)) // sub-byte types need even sizes
      fail(where + ".dtype", "unsupported buffer dtype \"" + dtype + "\"");
    if (const json *state = optionalMember(entry, "state")) {
      if (!state->is_boolean())
        fail(where + ".state", "expected true or false, found " + state->dump());
      buffer.state = state->get<bool>();
    }
    // One allocation serves every plan, so its size cannot depend on M.
    if (buffer.state)
      for (const Dim &dim : buffer.shape)
        if (dim.isBatch)
          fail(where + ".shape", "state buffer '" + buffer.name +
                                     "' must have a static shape, found \"M\" "
                                     "in " +
                                     shape.dump());
    artifact_.buffers.push_back(std::move(buffer));
  }
}

void Parser::parseIo(const json &root, const char *key,
                     std::vector<std::string> &out) {
  const json &names = array(root, "top level", key);
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string where = std::string(key) + "[" + std::to_string(i) + "]";
    if (!names[i].is_string())
      fail(where, "expected a buffer name");
    std::string name = names[i].get<std::string>();
    if (!artifact_.findBuffer(name))
      fail(where, "buffer '" + name + "' is not declared in 'buffers'");
    out.push_back(std::move(name));
  }
}

std::array<uint32_t, 3>
Parser::parseDims(const json &step, const std::string &where, const char *key,
                  const std::array<int64_t, 3> &limits) {
  const json &dims = array(step, where, key);
  if (dims.size() != 3)
    fail(where + "." + key, "expected [x, y, z], found " + dims.dump());
  std::array<uint32_t, 3> result;
  for (size_t d = 0; d < 3; ++d)
    result[d] = static_cast<uint32_t>(
        integer(dims[d], where + "." + key + "[" + std::to_string(d) + "]", 1,
                limits[d]));
  return result;
}

Arg Parser::parseArg(const json &value, const KernelParam &param,
                     const std::string &where) {
  requireObject(value, where);
  Arg arg;
  const bool isPtr = param.type == ParamType::Ptr;
  auto expectPtr = [&](const char *kind) {
    if (!isPtr)
      fail(where, std::string("a ") + kind + " is a pointer but parameter '" +
                      param.name + "' is " +
                      std::string(paramTypeName(param.type)));
  };
  auto expectScalar = [&](ParamType type) {
    if (param.type != type)
      fail(where, "an " + std::string(paramTypeName(type)) +
                      " immediate does not match parameter '" + param.name +
                      "' of type " + std::string(paramTypeName(param.type)));
  };
  if (value.contains("buffer")) {
    rejectUnknownKeys(value, where, {"buffer"});
    expectPtr("buffer");
    arg.kind = Arg::Kind::Buffer;
    arg.name = string(value, where, "buffer");
    if (!artifact_.findBuffer(arg.name))
      fail(where, "buffer '" + arg.name + "' is not declared in 'buffers'");
  } else if (value.contains("weight")) {
    rejectUnknownKeys(value, where, {"weight", "component"});
    expectPtr("weight component");
    arg.kind = Arg::Kind::Weight;
    arg.name = string(value, where, "weight");
    arg.component = string(value, where, "component");
    if (!artifact_.findWeight(arg.name))
      fail(where, "weight '" + arg.name + "' is not declared in 'weights'");
    const WeightSpec &weight = *artifact_.findWeight(arg.name);
    if (!weight.findComponent(arg.component)) {
      std::vector<std::string> names;
      for (const format::ComponentSpec &spec : weight.components)
        names.push_back(spec.name);
      for (const format::ComponentSpec &spec : weight.layoutComponents)
        names.push_back(spec.name);
      fail(where, "weight '" + arg.name + "' (" + weight.encoding +
                      ") has no component '" + arg.component + "' (it has " +
                      joined(names) + ")");
    }
  } else if (value.contains("tensor")) {
    rejectUnknownKeys(value, where, {"tensor"});
    expectPtr("tensor");
    arg.kind = Arg::Kind::Tensor;
    arg.name = string(value, where, "tensor");
    if (!artifact_.findTensor(arg.name))
      fail(where, "tensor '" + arg.name + "' is not declared in 'tensors'");
  } else if (value.contains("i32")) {
    rejectUnknownKeys(value, where, {"i32"});
    expectScalar(ParamType::I32);
    arg.kind = Arg::Kind::I32;
    arg.intValue = integer(value["i32"], where + ".i32",
                           std::numeric_limits<int32_t>::min(),
                           std::numeric_limits<int32_t>::max());
  } else if (value.contains("i64")) {
    rejectUnknownKeys(value, where, {"i64"});
    expectScalar(ParamType::I64);
    arg.kind = Arg::Kind::I64;
    arg.intValue = integer(value["i64"], where + ".i64",
                           std::numeric_limits<int64_t>::min(),
                           std::numeric_limits<int64_t>::max());
  } else if (value.contains("f32")) {
    rejectUnknownKeys(value, where, {"f32"});
    expectScalar(ParamType::F32);
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

Step Parser::parseStep(const json &value, const std::string &where) {
  requireObject(value, where);
  Step step;
  const bool isLaunch = value.contains("launch");
  const bool isMemset = value.contains("memset");
  const bool isGemm = value.contains("gemm");
  if (int(isLaunch) + int(isMemset) + int(isGemm) != 1)
    fail(where, "a step is exactly one of {\"launch\": kernel}, "
                "{\"memset\": buffer} or {\"gemm\": {...}}");
  if (isGemm) {
    rejectUnknownKeys(value, where, {"gemm"});
    return parseGemm(value["gemm"], where + ".gemm");
  }
  if (isMemset) {
    rejectUnknownKeys(value, where, {"memset"});
    step.kind = Step::Kind::Memset;
    step.target = string(value, where, "memset");
    if (!artifact_.findBuffer(step.target))
      fail(where + ".memset",
           "buffer '" + step.target + "' is not declared in 'buffers'");
    return step;
  }
  rejectUnknownKeys(value, where,
                    {"launch", "grid", "block", "shared_bytes", "args"});
  step.kind = Step::Kind::Launch;
  step.target = string(value, where, "launch");
  const Kernel *kernel = artifact_.findKernel(step.target);
  if (!kernel)
    fail(where + ".launch",
         "kernel '" + step.target + "' is not defined in 'kernels'");
  step.kernelIndex = static_cast<size_t>(kernel - artifact_.kernels.data());
  step.grid = parseDims(value, where, "grid", {0x7fffffff, 65535, 65535});
  step.block = parseDims(value, where, "block", {1024, 1024, 64});
  const int64_t threads =
      int64_t(step.block[0]) * step.block[1] * step.block[2];
  if (threads > kernel->maxThreads)
    fail(where + ".block", std::to_string(threads) +
                               " threads per block exceed kernel '" +
                               kernel->name + "' max_threads " +
                               std::to_string(kernel->maxThreads));
  if (const json *shared = optionalMember(value, "shared_bytes"))
    step.sharedBytes = static_cast<uint32_t>(
        integer(*shared, where + ".shared_bytes", 0, kMaxSharedBytesPerBlock));
  if (kernel->sharedBytes + step.sharedBytes > kMaxSharedBytesPerBlock)
    fail(where + ".shared_bytes",
         "static " + std::to_string(kernel->sharedBytes) + " + dynamic " +
             std::to_string(step.sharedBytes) + " bytes exceed " +
             std::to_string(kMaxSharedBytesPerBlock));
  const json &args = array(value, where, "args");
  if (args.size() != kernel->params.size())
    fail(where + ".args", std::to_string(args.size()) +
                              " arguments for kernel '" + kernel->name +
                              "', which takes " +
                              std::to_string(kernel->params.size()));
  for (size_t a = 0; a < args.size(); ++a)
    step.args.push_back(parseArg(args[a], kernel->params[a],
                                 where + ".args[" + std::to_string(a) + "]"));
  return step;
}

/// {"x": buf, "weight": w, "y": buf, "bias": tensor?, "residual": buf?}:
/// every operand exists, has the dtype and shape the weight implies, and
/// the weight is dense f16 in row_major (what cuBLAS reads as stored).
Step Parser::parseGemm(const json &value, const std::string &where) {
  requireObject(value, where);
  rejectUnknownKeys(value, where, {"x", "weight", "y", "bias", "residual"});
  Step step;
  step.kind = Step::Kind::Gemm;
  GemmStep &gemm = step.gemm;
  gemm.x = string(value, where, "x");
  gemm.weight = string(value, where, "weight");
  gemm.y = string(value, where, "y");
  if (optionalMember(value, "bias"))
    gemm.bias = string(value, where, "bias");
  if (optionalMember(value, "residual"))
    gemm.residual = string(value, where, "residual");
  step.target = gemm.weight;

  const WeightSpec *weight = artifact_.findWeight(gemm.weight);
  if (!weight)
    fail(where + ".weight",
         "weight '" + gemm.weight + "' is not declared in 'weights'");
  const format::Encoding &enc = weight->encodingAttr;
  if (enc.format != format::ElementFormat::F16 || enc.isSparse24() ||
      enc.isQuantized())
    fail(where + ".weight", "weight '" + gemm.weight + "' has encoding \"" +
                                weight->encoding +
                                "\"; a gemm step needs the dense \"f16\"");
  if (!weight->layoutAttr.isRowMajor())
    fail(where + ".weight", "weight '" + gemm.weight + "' has layout \"" +
                                weight->layout +
                                "\"; a gemm step needs \"row_major\"");
  const int64_t intMax = std::numeric_limits<int>::max();
  if (weight->n > intMax || weight->k > intMax)
    fail(where + ".weight", "weight '" + gemm.weight +
                                "' is too large for cuBLAS's int extents");

  // An f16 buffer [rows, cols]; returns its rows (a Dim).
  auto matrix = [&](const char *key, const std::string &name,
                    int64_t cols) -> Dim {
    const BufferSpec *buffer = artifact_.findBuffer(name);
    if (!buffer)
      fail(where + "." + key, "buffer '" + name + "' is not declared in "
                                                  "'buffers'");
    if (buffer->dtype != DType::F16)
      fail(where + "." + key,
           "buffer '" + name + "' is " +
               std::string(artifactName(buffer->dtype)) +
               "; a gemm step reads and writes f16");
    if (buffer->shape.size() != 2 || buffer->shape[1].isBatch ||
        buffer->shape[1].value != cols)
      fail(where + "." + key, "buffer '" + name + "' must be [M, " +
                                  std::to_string(cols) + "] for weight '" +
                                  gemm.weight + "' [" +
                                  std::to_string(weight->n) + ", " +
                                  std::to_string(weight->k) + "]");
    return buffer->shape[0];
  };
  auto sameRows = [](const Dim &a, const Dim &b) {
    return a.isBatch == b.isBatch && (a.isBatch || a.value == b.value);
  };
  const Dim rows = matrix("x", gemm.x, weight->k);
  if (!sameRows(rows, matrix("y", gemm.y, weight->n)))
    fail(where + ".y", "buffer '" + gemm.y + "' has other rows than x '" +
                           gemm.x + "'");
  if (gemm.x == gemm.y)
    fail(where + ".y", "y '" + gemm.y + "' is also x (cuBLAS does not "
                                        "multiply in place)");
  if (!gemm.residual.empty()) {
    if (!sameRows(rows, matrix("residual", gemm.residual, weight->n)))
      fail(where + ".residual", "buffer '" + gemm.residual +
                                    "' has other rows than x '" + gemm.x +
                                    "'");
    // The residual is copied into y before the product accumulates on it.
    if (gemm.residual == gemm.y)
      fail(where + ".residual", "residual '" + gemm.residual +
                                    "' is also y; the runtime copies the "
                                    "residual into y, so they must differ");
  }
  if (!gemm.bias.empty()) {
    const TensorSpec *bias = artifact_.findTensor(gemm.bias);
    if (!bias)
      fail(where + ".bias",
           "tensor '" + gemm.bias + "' is not declared in 'tensors'");
    if (bias->dtype != DType::F16 ||
        bias->shape != std::vector<int64_t>{weight->n})
      fail(where + ".bias", "tensor '" + gemm.bias + "' must be f16 [" +
                                std::to_string(weight->n) + "]");
  }
  return step;
}

void Parser::parsePlans(const json &root) {
  const json &plans = array(root, "top level", "plans");
  if (plans.empty())
    fail("plans", "no plans (expected one per compiled batch size)");
  std::set<int64_t> batches;
  for (size_t i = 0; i < plans.size(); ++i) {
    const std::string where = "plans[" + std::to_string(i) + "]";
    requireObject(plans[i], where);
    Plan plan;
    plan.batch = integer(member(plans[i], where, "batch"), where + ".batch", 1,
                         int64_t(1) << 24);
    if (!batches.insert(plan.batch).second)
      fail(where + ".batch",
           "duplicate plan for batch " + std::to_string(plan.batch));
    const json &steps = array(plans[i], where, "steps");
    if (steps.empty())
      fail(where + ".steps", "no steps");
    for (size_t s = 0; s < steps.size(); ++s)
      plan.steps.push_back(
          parseStep(steps[s], where + ".steps[" + std::to_string(s) + "]"));
    artifact_.plans.push_back(std::move(plan));
  }
}

void Parser::parseRoofline(const json &root) {
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

void Parser::parseModel(const json &root) {
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

} // namespace

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

std::string_view paramTypeName(ParamType type) {
  switch (type) {
  case ParamType::Ptr:
    return "ptr";
  case ParamType::I32:
    return "i32";
  case ParamType::I64:
    return "i64";
  case ParamType::F32:
    return "f32";
  }
  return "?";
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

std::optional<std::vector<uint8_t>> decodeBase64(std::string_view text) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z')
      return c - 'A';
    if (c >= 'a' && c <= 'z')
      return c - 'a' + 26;
    if (c >= '0' && c <= '9')
      return c - '0' + 52;
    if (c == '+')
      return 62;
    if (c == '/')
      return 63;
    return -1;
  };
  std::vector<uint8_t> out;
  out.reserve(text.size() / 4 * 3);
  uint32_t accumulator = 0;
  int bits = 0;
  size_t symbols = 0, padding = 0;
  for (char c : text) {
    if (std::isspace(static_cast<unsigned char>(c)))
      continue;
    if (c == '=') {
      ++padding;
      ++symbols;
      continue;
    }
    if (padding > 0) // data after padding
      return std::nullopt;
    int v = value(c);
    if (v < 0)
      return std::nullopt;
    ++symbols;
    accumulator = (accumulator << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<uint8_t>(accumulator >> bits));
      accumulator &= (1u << bits) - 1;
    }
  }
  if (symbols % 4 != 0 || padding > 2)
    return std::nullopt;
  return out;
}

//===----------------------------------------------------------------------===//
// Artifact
//===----------------------------------------------------------------------===//

Artifact Artifact::parse(std::string_view text, std::string source) {
  nlohmann::json root =
      detail::parseStrictJson(text, "artifact '" + source + "'");
  return Parser(std::move(source)).run(root);
}

Artifact Artifact::load(const std::string &path) {
  std::ifstream stream(path, std::ios::binary);
  if (!stream)
    throw Error("artifact '" + path +
                "': cannot open: " + std::strerror(errno));
  std::ostringstream contents;
  contents << stream.rdbuf();
  if (stream.bad())
    throw Error("artifact '" + path + "': read failed");
  return parse(contents.str(), path);
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
