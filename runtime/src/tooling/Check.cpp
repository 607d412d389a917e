//===- Check.cpp - compiled plans against the C++ reference ----------------===//

#include "qfuse/runtime/tooling/Check.h"

#include "qfuse/format/Layout.h"
#include "qfuse/format/Numerics.h"
#include "qfuse/format/Packing.h"
#include "qfuse/format/Reference.h"
#include "qfuse/runtime/Error.h"
#include "qfuse/runtime/checkpoint/WeightSources.h"
#include "qfuse/runtime/tooling/ParallelReference.h"

#include <algorithm>
#include <cmath>
#include <future>
#include <numeric>
#include <random>
#include <set>
#include <thread>

namespace qfuse::runtime::check {

namespace {

/// The launch's operands when it is a matmul: x, the fused RMSNorm
/// prologue's gamma tensor (`norm`) when present, and per output the
/// weight, y and the silu_mul epilogue's up projection (`up_*`
/// components). A grouped launch (qf-fuse-shared-input) has one output per
/// member; member i > 0 binds `<name>.<i>`. A gated kernel feeding an
/// act_order matmul binds that matmul's weight as `y_order` (its inv_perm):
/// it stores output column n at inv_perm[n] (docs/artifact.md).
struct MatmulLaunch {
  struct Output {
    std::string weight, y, upWeight, yOrderWeight;
  };
  std::string x, norm;
  std::vector<Output> outputs;
};

/// The RMSNorm epsilon the check assumes. The compiler bakes eps into the
/// kernel and the artifact does not record it; with activations uniform in
/// [-1, 1] (mean square ~1/3) any eps <= 1e-4 moves the row scale by less
/// than 3e-4 relative, far below kRelativeTolerance.
constexpr double kAssumedNormEps = 1e-5;

/// The qf.dequantize launch that last wrote `buffer` before step `before`
/// of `plan`, or nullptr.
const Step *lastDequantizeInto(const Artifact &artifact, const Plan &plan,
                               size_t before, const std::string &buffer) {
  for (size_t s = before; s-- > 0;)
    if (dequantizeTarget(artifact, plan.steps[s]) == buffer)
      return &plan.steps[s];
  return nullptr;
}

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

/// The activations behind a matmul's input: `x`, normalized with `gamma`
/// (a tensor, or a buffer) when that is set, or silu(x) * `up` when that is.
struct InputSource {
  std::string x, gamma, up;
  bool gammaIsTensor = false;
};

/// Whether `step` prepares an act_order matmul's input (docs/act-order.md).
bool isInputStep(const Step &step) {
  return step.kind == Step::Kind::Launch &&
         (step.op == kPermuteColumnsOp || step.op == kRMSNormOp ||
          step.op == kSiluMulOp);
}

/// The activations behind `buffer` at step `before`: the input of the
/// qf.permute_columns, qf.rms_norm or qf.silu_mul launch (an act_order
/// matmul's prologue, docs/act-order.md) that wrote `buffer`, or `buffer`
/// itself. A matmul on permuted activations and an act_order weight in
/// sorted column order computes x W^T with the activations as given (the
/// permutations cancel), so the reference reads them unpermuted.
InputSource inputSource(const Artifact &artifact, const Plan &plan,
                        size_t before, const std::string &buffer) {
  for (size_t s = before; s-- > 0;) {
    const Step &step = plan.steps[s];
    if (!isInputStep(step))
      continue;
    const Kernel &kernel = artifact.kernels[step.kernelIndex];
    InputSource source;
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
  return source;
}

/// Step `s` of `plan` as a matmul, when it is one the check understands.
bool asMatmul(const Artifact &artifact, const Plan &plan, size_t s,
              MatmulLaunch &out) {
  const Step &step = plan.steps[s];
  if (step.kind == Step::Kind::Gemm) {
    // Epilogues (bias, residual) are checked by their own tests.
    if (!step.gemm.bias.empty() || !step.gemm.residual.empty())
      return false;
    const std::string weight = gemmWeight(artifact, plan, s);
    if (weight.empty())
      return false;
    requireGemmFitsWeight(artifact, plan, s, weight);
    out.x = step.gemm.x;
    out.outputs = {{weight, step.gemm.y, "", ""}};
    return true;
  }
  // An act_order prologue binds the weight's perm and writes a `y` too, but
  // it is no matmul: the matmul after it is checked from its input.
  if (step.kind != Step::Kind::Launch || isInputStep(step))
    return false;
  const Kernel &kernel = artifact.kernels[step.kernelIndex];
  for (size_t i = 0; i < step.args.size(); ++i) {
    std::string param = kernel.params[i].name;
    const Arg &arg = step.args[i];
    size_t member = 0;
    size_t dot = param.rfind('.');
    if (dot != std::string::npos && dot + 1 < param.size() &&
        std::all_of(param.begin() + dot + 1, param.end(),
                    [](char c) { return c >= '0' && c <= '9'; })) {
      member = std::stoul(param.substr(dot + 1));
      param.resize(dot);
    }
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
    else if (param == "bias" || param == "residual")
      return false; // epilogues are checked by their own tests
  }
  return !out.x.empty() && !out.outputs.empty() &&
         std::all_of(out.outputs.begin(), out.outputs.end(),
                     [](const MatmulLaunch::Output &o) {
                       return !o.y.empty() && !o.weight.empty();
                     });
}

/// The 16-bit activation types the matmul kernels read and write.
bool isActivationType(DType dtype) {
  return dtype == DType::F16 || dtype == DType::BF16;
}

uint16_t toActivation(DType dtype, float value) {
  return dtype == DType::BF16 ? format::floatToBFloat16(value)
                              : format::floatToHalf(value);
}

float fromActivation(DType dtype, uint16_t bits) {
  return dtype == DType::BF16 ? format::bfloat16ToFloat(bits)
                              : format::halfToFloat(bits);
}

} // namespace

std::map<std::string, format::TensorMap>
bindRandomWeights(Executor &executor, uint64_t seed, RandomPerms perms) {
  // One random tensor per checkpoint tensor: the entries packed from it in
  // several layouts (docs/artifact.md) must hold the same weight. Drawn and
  // quantized concurrently (seeds by position, so the weights do not depend
  // on the scheduling); bound here, on the executor's thread.
  const std::set<std::string> used = executor.usedWeightSources();
  const std::vector<std::string> sources(used.begin(), used.end());
  std::vector<std::future<format::TensorMap>> drawn;
  uint64_t index = 0;
  for (const std::string &source : sources) {
    const WeightSpec *spec =
        executor.artifact().weightsPackedFrom(source).front();
    drawn.push_back(std::async(std::launch::async, randomWeight,
                               std::cref(*spec), seed + 1000 * ++index, perms));
  }
  std::map<std::string, format::TensorMap> result;
  for (size_t i = 0; i < sources.size(); ++i) {
    format::TensorMap components = drawn[i].get();
    executor.bindWeight(sources[i], components);
    result.emplace(sources[i], std::move(components));
  }
  return result;
}

namespace {

/// Every buffer a step writes: outputs are the parameters named y / out
/// (y.<i> for grouped members) or xp (the permute kernels', also a gated
/// fallback's product in its reader's sorted order), gemm outputs, memset
/// targets and the
/// weight buffers qf.dequantize launches fill. A matmul whose x is one of
/// them is chained to an earlier launch and not checked here (whole models
/// are checked against the reference decoder); a gemm reading a filled
/// weight buffer is checked against the weight that filled it.
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

/// Fresh activations for every buffer a step reads; NaN in every output.
/// Returns the activations as the reference reads them, by buffer.
std::map<std::string, std::vector<float>>
fillBuffers(Executor &executor, int64_t batch, CUstream stream,
            const std::set<std::string> &written, std::mt19937_64 &rng) {
  std::map<std::string, std::vector<float>> host;
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (const BufferSpec &spec : executor.artifact().buffers) {
    // A workspace no running step reads is not allocated: nothing to fill.
    if (spec.workspace && !executor.hasWorkspace(spec.name))
      continue;
    cuda::DeviceBuffer &buffer = executor.buffer(batch, spec.name);
    if (written.count(spec.name)) {
      buffer.fill(0xFF, stream); // f16 and bf16 0xFFFF are NaNs
      continue;
    }
    if (!isActivationType(spec.dtype))
      continue;
    std::vector<uint16_t> h(buffer.size() / 2);
    std::vector<float> f(h.size());
    for (size_t i = 0; i < h.size(); ++i) {
      h[i] = toActivation(spec.dtype, dist(rng));
      f[i] = fromActivation(spec.dtype, h[i]);
    }
    buffer.upload(h.data(), h.size() * 2);
    host[spec.name] = std::move(f);
  }
  return host;
}

/// RMSNorm gammas: f16 in [0.5, 1.5], like trained norm weights. Bound to
/// the executor and returned by tensor name.
std::map<std::string, std::vector<float>>
bindRandomGammas(Executor &executor, const Plan &plan, std::mt19937_64 &rng) {
  const Artifact &artifact = executor.artifact();
  std::map<std::string, std::vector<float>> gammas;
  std::uniform_real_distribution<float> gammaDist(0.5f, 1.5f);
  auto bind = [&](const std::string &name) {
    if (name.empty() || gammas.count(name))
      return;
    const TensorSpec &spec = *artifact.findTensor(name);
    if (spec.dtype != DType::F16)
      throw Error("check: norm tensor '" + name + "' is not f16");
    std::vector<uint16_t> h(spec.numBytes() / 2);
    std::vector<float> f(h.size());
    for (size_t i = 0; i < h.size(); ++i) {
      h[i] = format::floatToHalf(gammaDist(rng));
      f[i] = format::halfToFloat(h[i]);
    }
    executor.bindTensor(name, h.data(), h.size() * 2);
    gammas[name] = std::move(f);
  };
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    MatmulLaunch mm;
    if (!asMatmul(artifact, plan, s, mm))
      continue;
    bind(mm.norm);
    InputSource source = inputSource(artifact, plan, s, mm.x);
    if (source.gammaIsTensor)
      bind(source.gamma);
  }
  return gammas;
}

/// The dense [N, K] weight `name` stands for (f32, format::dequantize).
std::vector<float>
dequantizedWeight(const Artifact &artifact,
                  const std::map<std::string, format::TensorMap> &weights,
                  const std::string &name) {
  const WeightSpec &w = *artifact.findWeight(name);
  std::vector<float> dense;
  std::string error;
  if (!format::dequantize(w.encodingAttr, weights.at(w.checkpointName()), w.n,
                          w.k, dense, error))
    throw Error("check: dequantizing '" + name + "': " + error);
  return dense;
}

/// The sorted column order ("perm", as repack makes it from g_idx) of
/// weight entry `name`, which a gated kernel's [M, n] output is scattered
/// through (`y_order`).
std::vector<int32_t>
sortedOrder(const Artifact &artifact,
            const std::map<std::string, format::TensorMap> &weights,
            const std::string &name, int64_t n) {
  const WeightSpec &d = *artifact.findWeight(name);
  if (d.k != n)
    throw Error("check: the output of " + std::to_string(n) +
                " columns is stored in the column order of weight '" + name +
                "' (y_order), whose K is " + std::to_string(d.k));
  auto it = weights.find(d.checkpointName());
  if (it == weights.end() || !it->second.count(format::kGIdx))
    throw Error("check: weight '" + name + "' (y_order) has no random " +
                "g_idx to take its column order from");
  std::vector<int32_t> perm;
  std::string error;
  if (!format::actOrderPermutation(
          format::int32Values(it->second.at(format::kGIdx)).data(), d.k,
          d.encodingAttr.groupSize, perm, error))
    throw Error("check: the column order of weight '" + name +
                "' (y_order): " + error);
  return perm;
}

/// Output `o` of a matmul with `n` columns as the GPU wrote it, in f32 and
/// in column order: under `y_order` the kernel stored column perm[j] at j,
/// which is moved back here (v[m, perm[j]] = y[m, j]).
std::vector<float>
downloadOutput(Executor &executor, int64_t batch,
               const MatmulLaunch::Output &o, int64_t n,
               const std::map<std::string, format::TensorMap> &weights) {
  const Artifact &artifact = executor.artifact();
  std::vector<uint16_t> yh(static_cast<size_t>(batch * n));
  executor.buffer(batch, o.y).download(yh.data(), yh.size() * 2);
  const BufferSpec *ySpec = artifact.findBuffer(o.y);
  if (!ySpec || !isActivationType(ySpec->dtype))
    throw Error("check: output '" + o.y +
                "' is not an f16 or bf16 buffer of the artifact");
  std::vector<float> y(yh.size());
  for (size_t i = 0; i < yh.size(); ++i)
    y[i] = fromActivation(ySpec->dtype, yh[i]);
  if (o.yOrderWeight.empty())
    return y;
  const std::vector<int32_t> perm =
      sortedOrder(artifact, weights, o.yOrderWeight, n);
  std::vector<float> v(y.size());
  for (int64_t m = 0; m < batch; ++m)
    for (int64_t j = 0; j < n; ++j)
      v[m * n + perm[j]] = y[m * n + j];
  return v;
}

/// The weight buffers the plan's qf.dequantize launches fill, each once.
std::set<std::string> dequantizeTargets(const Artifact &artifact,
                                        const Plan &plan) {
  std::set<std::string> targets;
  for (const Step &step : plan.steps) {
    const std::string target = dequantizeTarget(artifact, step);
    if (!target.empty())
      targets.insert(target);
  }
  return targets;
}

/// After a run, weight buffer `buffer` holds the weight of the plan's last
/// qf.dequantize launch into it. The kernel computes each element in f32 in
/// format::dequantize's order and rounds once to the buffer's dtype, so the
/// two must agree exactly (a NaN is the poison left unwritten).
LaunchCheck
checkDequantizedBuffer(Executor &executor, const Plan &plan,
                       const std::string &buffer,
                       const std::map<std::string, format::TensorMap> &weights) {
  const Artifact &artifact = executor.artifact();
  const Step &fill =
      *lastDequantizeInto(artifact, plan, plan.steps.size(), buffer);
  const std::string weight = dequantizeSource(fill);
  const WeightSpec &spec = *artifact.findWeight(weight);
  const DType dtype = artifact.findBuffer(buffer)->dtype;
  const size_t count = static_cast<size_t>(spec.n * spec.k);
  cuda::DeviceBuffer &device = executor.buffer(plan.batch, buffer);
  if (!isActivationType(dtype) || device.size() < count * 2)
    throw Error("check: weight buffer '" + buffer + "' (" +
                std::string(artifactName(dtype)) + ", " +
                std::to_string(device.size()) + " bytes) cannot hold weight '" +
                weight + "' [" + std::to_string(spec.n) + ", " +
                std::to_string(spec.k) + "] in f16 or bf16");
  std::vector<uint16_t> bits(count);
  device.download(bits.data(), count * 2);
  const std::vector<float> dense = dequantizedWeight(artifact, weights, weight);

  LaunchCheck c;
  c.kernel = artifact.kernels[fill.kernelIndex].name;
  c.weight = weight + " dequantized into '" + buffer + "'";
  c.dequantize = true;
  c.n = spec.n;
  c.k = spec.k;
  std::vector<float> got(count), want(count);
  for (size_t i = 0; i < count; ++i) {
    got[i] = fromActivation(dtype, bits[i]);
    want[i] = fromActivation(dtype, toActivation(dtype, dense[i]));
    c.unwritten |= std::isnan(got[i]);
    c.mismatches += !(got[i] == want[i]); // -0 == +0; NaN never matches
  }
  c.relativeError = format::relativeError(got, want);
  c.passed = c.mismatches == 0;
  return c;
}

} // namespace

std::vector<LaunchCheck>
checkPlan(Executor &executor, int64_t batch, CUstream stream,
          const std::map<std::string, format::TensorMap> &weights,
          uint64_t seed) {
  const Artifact &artifact = executor.artifact();
  // The steps that run with the perms bound (an act_order group's kernel
  // or its fallback, PermGuards.h): the ones whose outputs are checked.
  const Plan plan = executor.runningPlan(batch);
  executor.allocate(batch);

  std::mt19937_64 rng(seed);
  const std::map<std::string, std::vector<float>> host =
      fillBuffers(executor, batch, stream, writtenBuffers(artifact, plan), rng);
  const std::map<std::string, std::vector<float>> gammas =
      bindRandomGammas(executor, plan, rng);
  executor.run(batch, stream);
  QFUSE_CU_CTX(cuStreamSynchronize(stream), "running the plan to check it");

  std::vector<LaunchCheck> checks;
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    const Step &step = plan.steps[s];
    MatmulLaunch mm;
    if (!asMatmul(artifact, plan, s, mm))
      continue;
    const std::string kernelName =
        step.kind == Step::Kind::Gemm
            ? std::string("cublas gemm")
            : artifact.kernels[step.kernelIndex].name;
    const InputSource source = inputSource(artifact, plan, s, mm.x);
    auto xIt = host.find(source.x);
    if (xIt == host.end())
      continue; // chained: its input is another launch's output
    auto dequantized = [&](const std::string &name) {
      return dequantizedWeight(artifact, weights, name);
    };
    const int64_t k = artifact.findWeight(mm.outputs.front().weight)->k;
    // The fused prologue must see what a separate RMSNorm would write.
    std::vector<float> x = xIt->second;
    // The norm launch of an act_order prologue (gamma a tensor bound above,
    // or a buffer filled like the activations).
    if (!source.gamma.empty()) {
      auto gamma = source.gammaIsTensor ? gammas.find(source.gamma)
                                        : host.find(source.gamma);
      if (gamma == (source.gammaIsTensor ? gammas.end() : host.end()))
        continue;
      x = format::referenceRMSNorm(x.data(), gamma->second.data(), batch, k,
                                   kAssumedNormEps);
    }
    // The silu_mul prologue's launch: the product rounded to f16, as the
    // elementwise kernel writes it.
    if (!source.up.empty()) {
      auto up = host.find(source.up);
      if (up == host.end())
        continue;
      for (size_t i = 0; i < x.size(); ++i) {
        double g = x[i];
        x[i] = format::halfToFloat(format::floatToHalf(
            static_cast<float>(g / (1.0 + std::exp(-g)) * up->second[i])));
      }
    }
    if (!mm.norm.empty())
      x = format::referenceRMSNorm(x.data(), gammas.at(mm.norm).data(), batch,
                                   k, kAssumedNormEps);
    for (const MatmulLaunch::Output &o : mm.outputs) {
      const WeightSpec &spec = *artifact.findWeight(o.weight);
      std::vector<float> dense = dequantized(o.weight);
      std::vector<float> up;
      if (!o.upWeight.empty())
        up = dequantized(o.upWeight);
      std::vector<float> ref =
          referenceOnAllCores(x.data(), dense.data(),
                              up.empty() ? nullptr : up.data(), batch, spec.n,
                              spec.k);
      const std::vector<float> y =
          downloadOutput(executor, batch, o, spec.n, weights);
      LaunchCheck c;
      c.kernel = kernelName;
      c.weight = o.weight;
      c.m = batch;
      c.n = spec.n;
      c.k = spec.k;
      for (float v : y)
        c.unwritten |= std::isnan(v);
      c.relativeError = format::relativeError(y, ref);
      c.passed = !c.unwritten && c.relativeError <= kRelativeTolerance;
      checks.push_back(c);
    }
  }
  for (const std::string &buffer : dequantizeTargets(artifact, plan))
    checks.push_back(checkDequantizedBuffer(executor, plan, buffer, weights));
  return checks;
}

} // namespace qfuse::runtime::check
