//===- ArtifactValidator.cpp - An artifact's sections checked together ----===//
//
// The top level and the sections a plan refers to, as the schema's reader
// gave them: the target, kernels and their PTX, weights and their encodings
// and layouts, tensors, buffers, inputs and outputs. Each check names the
// JSON path of the field it rejects.
//
//===----------------------------------------------------------------------===//

#include "ArtifactValidator.h"

#include <algorithm>
#include <cctype>

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

/// A buffer's shape as the file spells it: ["M",4096].
std::string shapeJson(const std::vector<Dim> &shape) {
  nlohmann::json out = nlohmann::json::array();
  for (const Dim &dim : shape)
    out.push_back(dim.isBatch ? nlohmann::json("M")
                              : nlohmann::json(dim.value));
  return out.dump();
}

} // namespace

Error readError(const std::string &source, const schema::ReadError &error) {
  return Error("artifact '" + source + "': " + error.where + ": " + error.what);
}

std::string ArtifactValidator::located(const std::string &where) const {
  return schema::locatedUnder(prefix_, where);
}

void ArtifactValidator::uniqueName(const std::string &name,
                                   const std::string &where,
                                   std::set<std::string> &seen,
                                   const char *what) const {
  if (name.empty())
    fail(where + ".name", "empty name");
  if (!seen.insert(name).second)
    fail(where + ".name", std::string("duplicate ") + what + " '" + name + "'");
}

DType ArtifactValidator::dtype(const std::string &name,
                               const std::string &where) const {
  std::optional<DType> parsed = parseArtifactDType(name);
  if (!parsed)
    fail(where + ".dtype", "unknown dtype \"" + name + "\"");
  return *parsed;
}

void ArtifactValidator::requireVersion(int64_t introduced,
                                       const std::string &where,
                                       const std::string &feature) const {
  if (artifact_.version < introduced)
    fail(where, feature + " needs version " + std::to_string(introduced) +
                    ", the file says " + std::to_string(artifact_.version));
}

Artifact ArtifactValidator::run(schema::Artifact read) {
  artifact_.version = read.version;
  artifact_.producer = std::move(read.producer);
  checkTarget(read);
  checkKernels(read);
  checkWeights(read.weights);
  checkTensors(read.tensors);
  checkBuffers(read.buffers);
  checkIo(read.inputs, "inputs", artifact_.inputs);
  checkIo(read.outputs, "outputs", artifact_.outputs);
  checkPlans(read.plans);
  artifact_.roofline = std::move(read.roofline);
  artifact_.model = std::move(read.model);
  return std::move(artifact_);
}

void ArtifactValidator::checkTarget(const schema::Artifact &read) {
  artifact_.chip = read.chip;
  std::optional<ChipTarget> chip = ChipTarget::parse(artifact_.chip);
  if (!chip)
    fail("target.chip", "\"" + artifact_.chip +
                            "\" is not a chip name like \"sm_90\" or "
                            "\"sm_90a\"");
  artifact_.target = *chip;
  artifact_.ptxFeatures = read.ptxFeatures;
  checkPtxFeatures(artifact_.ptxFeatures);
}

/// "+ptx80" or "+ptx80,+ptx83": a comma-separated list of PTX ISA versions
/// `+ptxNN` (two digits, 32 to 99, as NVPTX spells them); "" lists none.
void ArtifactValidator::checkPtxFeatures(const std::string &features) const {
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

void ArtifactValidator::checkKernels(schema::Artifact &read) {
  // May be empty: an artifact of gemm and memset steps launches no kernel.
  std::set<std::string> names;
  for (size_t i = 0; i < read.kernels.size(); ++i) {
    const std::string where = "kernels[" + std::to_string(i) + "]";
    Kernel kernel = std::move(read.kernels[i]);
    uniqueName(kernel.name, where, names, "kernel");
    // Kernels compiled together share the top-level module's code.
    if (kernel.ptx.empty() && kernel.cubin.empty()) {
      kernel.ptx = read.modulePtx;
      kernel.cubin = read.moduleCubin;
    }
    if (kernel.ptx.empty() && kernel.cubin.empty())
      fail(where, "kernel '" + kernel.name + "' has neither ptx nor a cubin");
    if (!kernel.ptx.empty() && !ptxDefinesEntry(kernel.ptx, kernel.name))
      fail(where + ".ptx",
           "the PTX does not define '.entry " + kernel.name + "'");
    std::set<std::string> paramNames;
    for (size_t p = 0; p < kernel.params.size(); ++p)
      uniqueName(kernel.params[p].name,
                 where + ".params[" + std::to_string(p) + "]", paramNames,
                 "parameter");
    artifact_.kernels.push_back(std::move(kernel));
  }
}

void ArtifactValidator::parseEncoding(WeightSpec &weight,
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

void ArtifactValidator::parseLayout(WeightSpec &weight,
                                    const std::string &where) {
  std::string error;
  if (!format::parseLayout(weight.layout, weight.layoutAttr, error))
    fail(where, "\"" + weight.layout + "\": " + error);
  weight.layoutComponents = format::layoutComponentSpecs(
      weight.encodingAttr, weight.layoutAttr, weight.n, weight.k);
}

void ArtifactValidator::checkWeights(std::vector<schema::Weight> &weights) {
  std::set<std::string> names;
  for (size_t i = 0; i < weights.size(); ++i) {
    const std::string where = "weights[" + std::to_string(i) + "]";
    WeightSpec weight;
    static_cast<schema::Weight &>(weight) = std::move(weights[i]);
    uniqueName(weight.name, where, names, "weight");
    parseEncoding(weight, where + ".encoding");
    parseLayout(weight, where + ".layout");
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

void ArtifactValidator::checkTensors(std::vector<schema::Tensor> &tensors) {
  std::set<std::string> names;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const std::string where = "tensors[" + std::to_string(i) + "]";
    TensorSpec tensor;
    tensor.name = std::move(tensors[i].name);
    uniqueName(tensor.name, where, names, "tensor");
    tensor.shape = std::move(tensors[i].shape);
    tensor.dtype = dtype(tensors[i].dtype, where);
    artifact_.tensors.push_back(std::move(tensor));
  }
}

void ArtifactValidator::checkBuffers(std::vector<schema::Buffer> &buffers) {
  std::set<std::string> names;
  for (size_t i = 0; i < buffers.size(); ++i) {
    const std::string where = "buffers[" + std::to_string(i) + "]";
    schema::Buffer &read = buffers[i];
    BufferSpec buffer;
    buffer.name = std::move(read.name);
    uniqueName(buffer.name, where, names, "buffer");
    buffer.shape = std::move(read.shape);
    const DType parsed = dtype(read.dtype, where);
    // Every "M" is the plan's batch: a shape has one dynamic extent at most.
    if (std::count_if(buffer.shape.begin(), buffer.shape.end(),
                      [](const Dim &dim) { return dim.isBatch; }) > 1)
      fail(where + ".shape", "buffer '" + buffer.name + "' has " +
                                 shapeJson(buffer.shape) +
                                 ", more than one \"M\" (expected at most "
                                 "one dynamic extent, the batch)");
    buffer.dtype = parsed;
    if (!dtypeStorageBytes(buffer.dtype, 2)) // sub-byte types need even sizes
      fail(where + ".dtype", "unsupported buffer dtype \"" + read.dtype + "\"");
    buffer.state = read.state;
    buffer.workspace = read.workspace;
    checkBufferRole(where, buffer);
    artifact_.buffers.push_back(std::move(buffer));
  }
}

/// "state" (version 2) or "workspace" (version 5), at most one: buffers
/// that one allocation serves for every plan, so their size cannot depend on
/// the batch.
void ArtifactValidator::checkBufferRole(const std::string &where,
                                        BufferSpec &buffer) const {
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
      fail(where + ".shape", std::string(buffer.state ? "state" : "workspace") +
                                 " buffer '" + buffer.name +
                                 "' must have a static shape, found \"M\" in " +
                                 shapeJson(buffer.shape));
}

void ArtifactValidator::checkIo(const std::vector<std::string> &names,
                                const char *key,
                                std::vector<std::string> &out) {
  if (names.empty() && std::string_view(key) == "outputs")
    fail(key, "no outputs (expected the buffers the plans compute)");
  std::set<std::string> seen;
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string where = std::string(key) + "[" + std::to_string(i) + "]";
    const std::string &name = names[i];
    if (!artifact_.findBuffer(name))
      fail(where, "buffer '" + name + "' is not declared in 'buffers'");
    if (!seen.insert(name).second)
      fail(where, "buffer '" + name + "' is listed twice in '" + key +
                      "' (expected each buffer once)");
    out.push_back(name);
  }
}

} // namespace qfuse::runtime::detail
