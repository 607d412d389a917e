//===- CheckSteps.cpp - plan steps as checkPlan reads them ----------------===//

#include "CheckSteps.h"

#include "qfuse/runtime/Error.h"

#include <algorithm>

namespace qfuse::runtime::check {

namespace {

/// The weight a gemm step multiplies by: its named weight, or the one the
/// latest earlier qf.dequantize launch wrote into its weight buffer (empty
/// when none did: nothing says what the buffer holds).
std::string gemmWeight(const Artifact &artifact, const Plan &plan, size_t s) {
  const GemmStep &gemm = plan.steps[s].gemm;
  if (!gemm.weight.empty())
    return gemm.weight;
  const Step *fill = lastDequantizeInto(artifact, plan, s, gemm.weightBuffer);
  return fill ? dequantizeSource(*fill) : "";
}

/// A gemm on a weight buffer multiplies by [N, K] = [y's, x's last extent];
/// the weight dequantized into the buffer must have that shape, or the
/// reference would multiply by something else than the GPU.
void requireGemmFitsWeight(const Artifact &artifact, const Plan &plan,
                           size_t s, const std::string &weight) {
  const GemmStep &gemm = plan.steps[s].gemm;
  const WeightSpec &spec = *artifact.findWeight(weight);
  const int64_t n = artifact.findBuffer(gemm.y)->extent(1, plan.batch);
  const int64_t k = artifact.findBuffer(gemm.x)->extent(1, plan.batch);
  if (spec.n != n || spec.k != k)
    throw Error("check: plan for batch " + std::to_string(plan.batch) +
                ", step " + std::to_string(s) + ": the gemm multiplies '" +
                gemm.weightBuffer + "' as [" + std::to_string(n) + ", " +
                std::to_string(k) + "], but the qf.dequantize launch before it "
                "wrote weight '" + weight + "' [" + std::to_string(spec.n) +
                ", " + std::to_string(spec.k) + "] into it");
}

/// Whether `step` prepares an act_order matmul's input (docs/act-order.md).
bool isInputStep(const Step &step) {
  return step.kind == Step::Kind::Launch &&
         (step.op == kPermuteColumnsOp || step.op == kRMSNormOp ||
          step.op == kSiluMulOp);
}

/// Step `s`, a gemm, as a matmul.
bool gemmAsMatmul(const Artifact &artifact, const Plan &plan, size_t s,
                  MatmulLaunch &out) {
  const GemmStep &gemm = plan.steps[s].gemm;
  const std::string weight = gemmWeight(artifact, plan, s);
  out.x = gemm.x;
  MatmulLaunch::Output o;
  o.weight = weight;
  o.y = gemm.y;
  o.bias = gemm.bias;
  o.biasIsTensor = true;
  o.residual = gemm.residual;
  out.outputs = {o};
  if (weight.empty())
    out.skip = "no qf.dequantize launch before it fills its weight buffer '" +
               gemm.weightBuffer + "'";
  else
    requireGemmFitsWeight(artifact, plan, s, weight);
  return true;
}

/// Kernel parameter `param` without the grouped member suffix ".<i>",
/// which goes to `member` (0 without one).
std::string memberParam(std::string param, size_t &member) {
  member = 0;
  size_t dot = param.rfind('.');
  if (dot != std::string::npos && dot + 1 < param.size() &&
      std::all_of(param.begin() + dot + 1, param.end(),
                  [](char c) { return c >= '0' && c <= '9'; })) {
    member = std::stoul(param.substr(dot + 1));
    param.resize(dot);
  }
  return param;
}

} // namespace

const Step *lastDequantizeInto(const Artifact &artifact, const Plan &plan,
                               size_t before, const std::string &buffer) {
  for (size_t s = before; s-- > 0;)
    if (dequantizeTarget(artifact, plan.steps[s]) == buffer)
      return &plan.steps[s];
  return nullptr;
}

bool asMatmul(const Artifact &artifact, const Plan &plan, size_t s,
              MatmulLaunch &out) {
  const Step &step = plan.steps[s];
  if (step.kind == Step::Kind::Gemm)
    return gemmAsMatmul(artifact, plan, s, out);
  // An act_order prologue binds the weight's perm and writes a `y` too, but
  // it is no matmul: the matmul after it is checked from its input.
  if (step.kind != Step::Kind::Launch || isInputStep(step))
    return false;
  const Kernel &kernel = artifact.kernels[step.kernelIndex];
  for (size_t i = 0; i < step.args.size(); ++i) {
    size_t member = 0;
    const std::string param = memberParam(kernel.params[i].name, member);
    const Arg &arg = step.args[i];
    if (out.outputs.size() <= member)
      out.outputs.resize(member + 1);
    MatmulLaunch::Output &o = out.outputs[member];
    if (param == "x")
      out.x = arg.name;
    else if (param == "y")
      o.y = arg.name;
    else if (param == "norm")
      out.norm = arg.name;
    else if (param == kYOrderParam) // the reader's weight, not this matmul's
      o.yOrderWeight = arg.name;
    else if (arg.kind == Arg::Kind::Weight && param.rfind("up_", 0) == 0)
      o.upWeight = arg.name;
    else if (arg.kind == Arg::Kind::Weight)
      o.weight = arg.name;
    else if (param == "bias") {
      o.bias = arg.name;
      o.biasIsTensor = arg.kind == Arg::Kind::Tensor;
    } else if (param == "residual")
      o.residual = arg.name;
  }
  return !out.x.empty() && !out.outputs.empty() &&
         std::all_of(out.outputs.begin(), out.outputs.end(),
                     [](const MatmulLaunch::Output &o) {
                       return !o.y.empty() && !o.weight.empty();
                     });
}

InputSource inputSource(const Artifact &artifact, const Plan &plan,
                        size_t matmul, const std::string &buffer) {
  for (size_t s = matmul; s-- > 0;) {
    const Step &step = plan.steps[s];
    if (!isInputStep(step))
      continue;
    const Kernel &kernel = artifact.kernels[step.kernelIndex];
    InputSource source;
    source.reader = s;
    std::string out;
    for (size_t a = 0; a < step.args.size(); ++a) {
      const std::string &param = kernel.params[a].name;
      if (param == "x" || param == "gate")
        source.x = step.args[a].name;
      else if (param == "up")
        source.up = step.args[a].name;
      else if (param == "xp" || param == "y")
        out = step.args[a].name;
      else if (param == "gamma") {
        source.gamma = step.args[a].name;
        source.gammaIsTensor = step.args[a].kind == Arg::Kind::Tensor;
      }
    }
    if (out == buffer)
      return source;
  }
  InputSource source;
  source.x = buffer;
  source.reader = matmul;
  return source;
}

std::set<std::string> writtenBuffers(const Artifact &artifact,
                                     const Plan &plan) {
  std::set<std::string> written;
  for (const Step &step : plan.steps) {
    if (step.kind == Step::Kind::Gemm)
      written.insert(step.gemm.y);
    else if (step.kind == Step::Kind::Memset)
      written.insert(step.target);
    if (step.kind != Step::Kind::Launch)
      continue;
    const std::string filled = dequantizeTarget(artifact, step);
    if (!filled.empty())
      written.insert(filled);
    const Kernel &kernel = artifact.kernels[step.kernelIndex];
    for (size_t i = 0; i < step.args.size(); ++i) {
      const std::string &param = kernel.params[i].name;
      std::string base = param.substr(0, param.find('.'));
      if (step.args[i].kind == Arg::Kind::Buffer &&
          (base == "y" || base == "out" || base == "xp"))
        written.insert(step.args[i].name);
    }
  }
  return written;
}

std::optional<size_t> firstWriterFrom(const Artifact &artifact,
                                      const Plan &plan, size_t from,
                                      const std::string &buffer) {
  static const std::set<std::string> kRead = {"x", "gate", "up", "gamma",
                                              "residual"};
  for (size_t s = from; s < plan.steps.size(); ++s) {
    const Step &step = plan.steps[s];
    bool writes = false;
    if (step.kind == Step::Kind::Gemm)
      writes = step.gemm.y == buffer;
    else if (step.kind == Step::Kind::Memset)
      writes = step.target == buffer;
    else
      for (size_t i = 0; i < step.args.size(); ++i) {
        size_t member = 0;
        const std::string param = memberParam(
            artifact.kernels[step.kernelIndex].params[i].name, member);
        writes |= step.args[i].kind == Arg::Kind::Buffer &&
                  step.args[i].name == buffer && !kRead.count(param);
      }
    if (writes)
      return s;
  }
  return std::nullopt;
}

std::string outputRewritten(const Artifact &artifact, const Plan &plan,
                            size_t matmul, const MatmulLaunch &mm) {
  for (const MatmulLaunch::Output &o : mm.outputs)
    if (std::optional<size_t> writer =
            firstWriterFrom(artifact, plan, matmul + 1, o.y))
      return "its output '" + o.y + "' is written again by step " +
             std::to_string(*writer) + " before the run ends";
  return "";
}

} // namespace qfuse::runtime::check
