//===- PlansFromJson.cpp - the artifact's plans read from JSON ------------===//
//
// The plans of docs/artifact.md into ArtifactSchema.h: steps (launches,
// memsets, gemms), their arguments and perm guards, with the checks the
// JSON alone allows (ArtifactFromJson.cpp reads the rest).
//
//===----------------------------------------------------------------------===//

#include "ArtifactReader.h"

namespace qfuse::format::artifact::detail {

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

PermGuard Reader::readGuard(const json &value, const std::string &where) const {
  requireObject(value, where);
  rejectUnknownKeys(value, where, {"perms_equal", "perms_differ"});
  const bool equal = value.contains("perms_equal");
  if (int(equal) + int(value.contains("perms_differ")) != 1)
    fail(where, "expected exactly one of {\"perms_equal\": [weights]} or "
                "{\"perms_differ\": [weights]}");
  PermGuard guard;
  guard.when =
      equal ? PermGuard::When::PermsEqual : PermGuard::When::PermsDiffer;
  const char *key = equal ? "perms_equal" : "perms_differ";
  const json &names = array(value, where, key);
  if (names.size() < 2)
    fail(where + "." + key,
         "expected two or more weight names, found " + names.dump());
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
  rejectUnknownKeys(value, where,
                    {"launch", "grid", "block", "shared_bytes", "args", "op",
                     "encoding", "when"});
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

} // namespace qfuse::format::artifact::detail
