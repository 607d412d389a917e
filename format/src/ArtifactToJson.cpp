//===- ArtifactToJson.cpp - the artifact schema as JSON -------------------===//
//
// The writing half of the serializer: each struct of ArtifactSchema.h under
// the keys docs/artifact.md gives it. Optional fields are written only when
// they say something ("source", "state", "op", a kernel's own code), so that
// a file uses only what its version defines.
//
//===----------------------------------------------------------------------===//

#include "qfuse/format/ArtifactJson.h"

namespace qfuse::format::artifact {
namespace {

using nlohmann::json;

json dims(const std::array<int64_t, 3> &d) {
  return json::array({d[0], d[1], d[2]});
}

json argJson(const Arg &arg) {
  switch (arg.kind) {
  case Arg::Kind::Buffer:
    return {{"buffer", arg.name}};
  case Arg::Kind::Weight:
    return {{"weight", arg.name}, {"component", arg.component}};
  case Arg::Kind::Tensor:
    return {{"tensor", arg.name}};
  case Arg::Kind::I32:
    return {{"i32", arg.intValue}};
  case Arg::Kind::I64:
    return {{"i64", arg.intValue}};
  case Arg::Kind::F32:
    return {{"f32", static_cast<double>(arg.floatValue)}};
  }
  return json::object();
}

json gemmJson(const Gemm &gemm) {
  json out = {{"x", gemm.x}, {"y", gemm.y}};
  if (!gemm.weightBuffer.empty())
    out["weight_buffer"] = gemm.weightBuffer;
  else
    out["weight"] = gemm.weight;
  if (!gemm.bias.empty())
    out["bias"] = gemm.bias;
  if (!gemm.residual.empty())
    out["residual"] = gemm.residual;
  return out;
}

/// {"perms_equal": [...]} or {"perms_differ": [...]} (version 7).
json guardJson(const PermGuard &guard) {
  return {{guard.when == PermGuard::When::PermsEqual ? "perms_equal"
                                                     : "perms_differ",
           guard.weights}};
}

json stepBodyJson(const Step &step);

json stepJson(const Step &step) {
  json out = stepBodyJson(step);
  if (step.guard.when != PermGuard::When::Always)
    out["when"] = guardJson(step.guard);
  return out;
}

json stepBodyJson(const Step &step) {
  if (step.kind == Step::Kind::Memset)
    return {{"memset", step.target}};
  if (step.kind == Step::Kind::Gemm)
    return {{"gemm", gemmJson(step.gemm)}};
  json args = json::array();
  for (const Arg &arg : step.args)
    args.push_back(argJson(arg));
  json out = {{"launch", step.target},
              {"grid", dims(step.grid)},
              {"block", dims(step.block)},
              {"shared_bytes", step.sharedBytes},
              {"args", std::move(args)}};
  if (!step.op.empty())
    out["op"] = step.op;
  if (!step.encoding.empty())
    out["encoding"] = step.encoding;
  return out;
}

/// "ptx" and "cubin_base64" where present.
void addCode(json &object, const std::string &ptx,
             const std::vector<uint8_t> &cubin) {
  if (!ptx.empty())
    object["ptx"] = ptx;
  if (!cubin.empty())
    object["cubin_base64"] = encodeBase64(cubin);
}

json kernelJson(const Kernel &kernel) {
  json params = json::array();
  for (const KernelParam &param : kernel.params)
    params.push_back({{"name", param.name},
                      {"type", std::string(paramTypeName(param.type))}});
  json out = {{"name", kernel.name},
              {"params", std::move(params)},
              {"shared_bytes", kernel.sharedBytes},
              {"max_threads", kernel.maxThreads}};
  if (kernel.gridDependency)
    out["grid_dependency"] = true;
  addCode(out, kernel.ptx, kernel.cubin);
  return out;
}

json weightJson(const Weight &weight) {
  json out = {{"name", weight.name},
              {"shape", json::array({weight.n, weight.k})},
              {"encoding", weight.encoding},
              {"layout", weight.layout}};
  if (!weight.source.empty())
    out["source"] = weight.source;
  return out;
}

json bufferJson(const Buffer &buffer) {
  json shape = json::array();
  for (const Dim &dim : buffer.shape)
    shape.push_back(dim.isBatch ? json("M") : json(dim.value));
  json out = {{"name", buffer.name},
              {"shape", std::move(shape)},
              {"dtype", buffer.dtype}};
  if (buffer.state)
    out["state"] = true;
  if (buffer.workspace)
    out["workspace"] = true;
  return out;
}

} // namespace

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

json toJson(const Artifact &artifact) {
  json module = json::object();
  addCode(module, artifact.modulePtx, artifact.moduleCubin);
  json kernels = json::array(), weights = json::array(),
       tensors = json::array(), buffers = json::array(), plans = json::array();
  for (const Kernel &kernel : artifact.kernels)
    kernels.push_back(kernelJson(kernel));
  for (const Weight &weight : artifact.weights)
    weights.push_back(weightJson(weight));
  for (const Tensor &tensor : artifact.tensors)
    tensors.push_back({{"name", tensor.name},
                       {"shape", tensor.shape},
                       {"dtype", tensor.dtype}});
  for (const Buffer &buffer : artifact.buffers)
    buffers.push_back(bufferJson(buffer));
  for (const Plan &plan : artifact.plans) {
    json steps = json::array();
    for (const Step &step : plan.steps)
      steps.push_back(stepJson(step));
    plans.push_back({{"batch", plan.batch}, {"steps", std::move(steps)}});
  }
  json out = {
      {"format", std::string(kFormat)},
      {"version", artifact.version},
      {"producer", artifact.producer},
      {"target",
       {{"chip", artifact.chip}, {"ptx_features", artifact.ptxFeatures}}},
      {"module", std::move(module)},
      {"kernels", std::move(kernels)},
      {"weights", std::move(weights)},
      {"tensors", std::move(tensors)},
      {"buffers", std::move(buffers)},
      {"inputs", artifact.inputs},
      {"outputs", artifact.outputs},
      {"plans", std::move(plans)}};
  if (artifact.model.present)
    out["model"] = json::parse(artifact.model.json);
  if (!artifact.roofline.empty()) {
    json roofline = json::array();
    for (const RooflineEntry &entry : artifact.roofline)
      roofline.push_back(
          {{"op", entry.op}, {"bytes", entry.bytes}, {"flops", entry.flops}});
    out["roofline"] = std::move(roofline);
  }
  return out;
}

} // namespace qfuse::format::artifact
