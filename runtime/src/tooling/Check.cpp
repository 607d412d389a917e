//===- Check.cpp - compiled plans against the C++ reference ----------------===//

#include "qfuse/runtime/tooling/Check.h"

#include "CheckSteps.h"

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
#include <optional>
#include <random>
#include <set>
#include <thread>

namespace qfuse::runtime::check {

namespace {

/// The RMSNorm epsilon the check assumes. The compiler bakes eps into the
/// kernel and the artifact does not record it; with activations uniform in
/// [-1, 1] (mean square ~1/3) any eps <= 1e-4 moves the row scale by less
/// than 3e-4 relative, far below kRelativeTolerance.
constexpr double kAssumedNormEps = 1e-5;

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

/// The f16 and bf16 vectors the plan binds as tensors, drawn afresh: RMSNorm
/// gammas (a norm launch's `gamma`, a fused prologue's `norm`) in [0.5, 1.5],
/// like trained norm weights, and epilogue biases (a kernel's `bias`, a gemm's)
/// in [-1, 1]. A separate norm launch on the placeholders' zeros would
/// leave the matmul after it nothing to check, and a zero bias would go
/// unchecked. Bound to the executor and returned by tensor name.
std::map<std::string, std::vector<float>>
bindRandomVectors(Executor &executor, const Plan &plan, std::mt19937_64 &rng) {
  const Artifact &artifact = executor.artifact();
  std::map<std::string, std::vector<float>> vectors;
  std::uniform_real_distribution<float> gammaDist(0.5f, 1.5f),
      biasDist(-1.0f, 1.0f);
  auto bind = [&](const std::string &name,
                  std::uniform_real_distribution<float> &dist) {
    const TensorSpec &spec = *artifact.findTensor(name);
    if (vectors.count(name) || !isActivationType(spec.dtype))
      return; // a matmul that needs another type's is skipped, saying so
    std::vector<uint16_t> h(spec.numBytes() / 2);
    std::vector<float> f(h.size());
    for (size_t i = 0; i < h.size(); ++i) {
      h[i] = toActivation(spec.dtype, dist(rng));
      f[i] = fromActivation(spec.dtype, h[i]);
    }
    executor.bindTensor(name, h.data(), h.size() * 2);
    vectors[name] = std::move(f);
  };
  for (const Step &step : plan.steps) {
    if (step.kind == Step::Kind::Gemm && !step.gemm.bias.empty())
      bind(step.gemm.bias, biasDist);
    if (step.kind != Step::Kind::Launch)
      continue;
    const Kernel &kernel = artifact.kernels[step.kernelIndex];
    for (size_t a = 0; a < step.args.size(); ++a) {
      if (step.args[a].kind != Arg::Kind::Tensor)
        continue;
      const std::string param =
          kernel.params[a].name.substr(0, kernel.params[a].name.find('.'));
      if (param == "gamma" || param == "norm")
        bind(step.args[a].name, gammaDist);
      else if (param == "bias")
        bind(step.args[a].name, biasDist);
    }
  }
  return vectors;
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
/// through (`y_order`) and in which the weight's own kernel reads its input.
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
    throw Error("check: weight '" + name + "' has no random g_idx to " +
                "take its sorted column order from");
  std::vector<int32_t> perm;
  std::string error;
  if (!format::actOrderPermutation(
          format::int32Values(it->second.at(format::kGIdx)).data(), d.k,
          d.encodingAttr.groupSize, perm, error))
    throw Error("check: the sorted column order of weight '" + name +
                "': " + error);
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

/// What the reference multiplies for each matmul: the activations each
/// buffer held when a step read it (the fresh ones fillBuffers drew, and
/// another launch's output as the run left it, downloaded once, for the
/// steps no later step may write it after) through the prologues, in
/// checkpoint column order.
class ReferenceInputs {
public:
  ReferenceInputs(Executor &executor, const Plan &plan,
                  const std::map<std::string, format::TensorMap> &weights,
                  std::map<std::string, std::vector<float>> drawn,
                  std::map<std::string, std::vector<float>> vectors)
      : executor_(executor), artifact_(executor.artifact()), plan_(plan),
        weights_(weights), drawn_(std::move(drawn)),
        vectors_(std::move(vectors)) {}

  /// The activations matmul `mm` (step `s`) multiplies: its input behind
  /// any act_order prologue launch, through that launch's RMSNorm or
  /// silu_mul and the fused RMSNorm prologue. nullopt with `why` set when a
  /// buffer or tensor it needs is not known.
  std::optional<std::vector<float>> forMatmul(size_t s, const MatmulLaunch &mm,
                                              std::string &why);

  /// Output `o` of matmul step `s`: what its epilogue added, row-major
  /// [M, N] (empty without a bias or residual); nullopt with `why` set
  /// when a bias or residual it adds is not known.
  std::optional<std::vector<float>> epilogue(size_t s,
                                             const MatmulLaunch::Output &o,
                                             int64_t n, std::string &why);

private:
  /// Buffer `name` as step `reader` read it, or nullptr with `why` saying
  /// why it is not known (`role` names the buffer there).
  const std::vector<float> *read(const std::string &name, size_t reader,
                                 const std::string &role, std::string &why);
  /// The f16 or bf16 vector tensor `name` (`role` names it there), or
  /// nullptr with `why` set.
  const std::vector<float> *vectorTensor(const std::string &name,
                                         const std::string &role,
                                         std::string &why);

  Executor &executor_;
  const Artifact &artifact_;
  const Plan &plan_;
  const std::map<std::string, format::TensorMap> &weights_;
  std::map<std::string, std::vector<float>> drawn_, downloaded_, vectors_;
};

const std::vector<float> *ReferenceInputs::read(const std::string &name,
                                                size_t reader,
                                                const std::string &role,
                                                std::string &why) {
  auto drawn = drawn_.find(name);
  if (drawn != drawn_.end())
    return &drawn->second;
  const std::string what = "its " + role + " '" + name + "'";
  const BufferSpec *spec = artifact_.findBuffer(name);
  if (!spec || !isActivationType(spec->dtype) ||
      (spec->workspace && !executor_.hasWorkspace(name))) {
    why = what + " is not an f16 or bf16 activation buffer";
    return nullptr;
  }
  if (std::optional<size_t> writer =
          firstWriterFrom(artifact_, plan_, reader, name)) {
    why = what + " is another launch's output, and step " +
          std::to_string(*writer) + " may write it again before the run ends";
    return nullptr;
  }
  auto [it, fresh] = downloaded_.try_emplace(name);
  if (fresh) {
    cuda::DeviceBuffer &buffer = executor_.buffer(plan_.batch, name);
    std::vector<uint16_t> bits(buffer.size() / 2);
    buffer.download(bits.data(), bits.size() * 2);
    for (uint16_t b : bits)
      it->second.push_back(fromActivation(spec->dtype, b));
  }
  const std::vector<float> &values = it->second;
  // Zeros (a norm launch on placeholder gammas) would make the check
  // vacuous; NaN (poison left unwritten) or infinity fails another launch.
  if (std::all_of(values.begin(), values.end(), [](float v) { return v == 0; }))
    why = what + ", another launch's output, is all zeros";
  else if (!std::all_of(values.begin(), values.end(),
                        [](float v) { return std::isfinite(v); }))
    why = what + ", another launch's output, holds NaN or infinity";
  return why.empty() ? &values : nullptr;
}

const std::vector<float> *ReferenceInputs::vectorTensor(const std::string &name,
                                                        const std::string &role,
                                                        std::string &why) {
  auto it = vectors_.find(name);
  if (it != vectors_.end())
    return &it->second;
  why = "its " + role + " '" + name + "' is not an f16 or bf16 tensor";
  return nullptr;
}

std::optional<std::vector<float>>
ReferenceInputs::epilogue(size_t s, const MatmulLaunch::Output &o, int64_t n,
                          std::string &why) {
  const int64_t batch = plan_.batch;
  std::vector<float> added;
  if (!o.bias.empty() || !o.residual.empty())
    added.assign(size_t(batch * n), 0.0f);
  if (!o.bias.empty()) {
    const std::vector<float> *b = o.biasIsTensor
                                      ? vectorTensor(o.bias, "bias", why)
                                      : read(o.bias, s, "bias", why);
    if (!b)
      return std::nullopt;
    for (int64_t m = 0; m < batch; ++m)
      for (int64_t j = 0; j < n; ++j)
        added[m * n + j] += (*b)[j];
  }
  if (!o.residual.empty()) {
    const std::vector<float> *r = read(o.residual, s, "residual", why);
    if (!r)
      return std::nullopt;
    for (size_t i = 0; i < added.size(); ++i)
      added[i] += (*r)[i];
  }
  return added;
}

std::optional<std::vector<float>>
ReferenceInputs::forMatmul(size_t s, const MatmulLaunch &mm, std::string &why) {
  const InputSource source = inputSource(artifact_, plan_, s, mm.x);
  const std::vector<float> *in = read(source.x, source.reader, "input", why);
  if (!in)
    return std::nullopt;
  std::vector<float> x = *in;
  const int64_t batch = plan_.batch;
  const WeightSpec &weight = *artifact_.findWeight(mm.outputs.front().weight);
  const int64_t k = weight.k;
  // A kernel on sorted columns read its input in that order, whoever wrote
  // it (a y_order or out_order store, docs/act-order.md): x[m, perm[j]] is
  // what it read at j. A prologue launch read it in checkpoint order.
  if (source.reader == s && plan_.steps[s].kind == Step::Kind::Launch &&
      format::sortsColumns(weight.encodingAttr)) {
    const std::vector<int32_t> perm =
        sortedOrder(artifact_, weights_, weight.name, k);
    for (int64_t m = 0; m < batch; ++m)
      for (int64_t j = 0; j < k; ++j)
        x[m * k + perm[j]] = (*in)[m * k + j];
  }
  // The norm launch of an act_order prologue (gamma a tensor bound above,
  // or a buffer).
  if (!source.gamma.empty()) {
    const std::vector<float> *g =
        source.gammaIsTensor
            ? vectorTensor(source.gamma, "RMSNorm gamma", why)
            : read(source.gamma, source.reader, "RMSNorm gamma", why);
    if (!g)
      return std::nullopt;
    x = format::referenceRMSNorm(x.data(), g->data(), batch, k,
                                 kAssumedNormEps);
  }
  // The silu_mul prologue's launch: the product rounded to f16, as the
  // elementwise kernel writes it.
  if (!source.up.empty()) {
    const std::vector<float> *up =
        read(source.up, source.reader, "silu_mul up input", why);
    if (!up)
      return std::nullopt;
    for (size_t i = 0; i < x.size(); ++i) {
      double g = x[i];
      x[i] = format::halfToFloat(format::floatToHalf(
          static_cast<float>(g / (1.0 + std::exp(-g)) * (*up)[i])));
    }
  }
  // The fused prologue must see what a separate RMSNorm would write.
  if (!mm.norm.empty()) {
    const std::vector<float> *g = vectorTensor(mm.norm, "RMSNorm gamma", why);
    if (!g)
      return std::nullopt;
    x = format::referenceRMSNorm(x.data(), g->data(), batch, k,
                                 kAssumedNormEps);
  }
  return x;
}

/// What step `step` launches, as the checks name it.
std::string launchName(const Artifact &artifact, const Step &step) {
  return step.kind == Step::Kind::Gemm
             ? std::string("cublas gemm")
             : artifact.kernels[step.kernelIndex].name;
}

/// Output `o` of matmul launch `kernel` against the reference on `x`, plus
/// what its epilogue `added` ([M, N], or empty).
LaunchCheck
checkOutput(Executor &executor, int64_t batch, const std::string &kernel,
            const std::vector<float> &x, const MatmulLaunch::Output &o,
            const std::vector<float> &added,
            const std::map<std::string, format::TensorMap> &weights) {
  const Artifact &artifact = executor.artifact();
  const WeightSpec &spec = *artifact.findWeight(o.weight);
  std::vector<float> dense = dequantizedWeight(artifact, weights, o.weight);
  std::vector<float> up;
  if (!o.upWeight.empty())
    up = dequantizedWeight(artifact, weights, o.upWeight);
  std::vector<float> ref = referenceOnAllCores(x.data(), dense.data(),
                                               up.empty() ? nullptr : up.data(),
                                               batch, spec.n, spec.k);
  for (size_t i = 0; i < added.size(); ++i)
    ref[i] += added[i];
  const std::vector<float> y =
      downloadOutput(executor, batch, o, spec.n, weights);
  LaunchCheck c;
  c.kernel = kernel;
  c.weight = o.weight;
  c.m = batch;
  c.n = spec.n;
  c.k = spec.k;
  for (float v : y)
    c.unwritten |= std::isnan(v);
  c.relativeError = format::relativeError(y, ref);
  c.passed = !c.unwritten && c.relativeError <= kRelativeTolerance;
  return c;
}

/// Matmul `mm` (step `s`) as a launch the check skips for `reason`.
SkippedLaunch skippedLaunch(const Artifact &artifact, const Plan &plan,
                            size_t s, const MatmulLaunch &mm,
                            std::string reason) {
  SkippedLaunch skipped;
  skipped.kernel = launchName(artifact, plan.steps[s]);
  for (const MatmulLaunch::Output &o : mm.outputs)
    if (!o.weight.empty())
      skipped.weights += (skipped.weights.empty() ? "" : ", ") + o.weight;
  skipped.m = plan.batch;
  skipped.step = s;
  skipped.reason = std::move(reason);
  return skipped;
}

} // namespace

PlanCheck checkPlan(Executor &executor, int64_t batch, CUstream stream,
                    const std::map<std::string, format::TensorMap> &weights,
                    uint64_t seed) {
  const Artifact &artifact = executor.artifact();
  // The steps that run with the perms bound (an act_order group's kernel
  // or its fallback, PermGuards.h): the ones whose outputs are checked.
  const Plan plan = executor.runningPlan(batch);
  executor.allocate(batch);

  std::mt19937_64 rng(seed);
  std::map<std::string, std::vector<float>> drawn =
      fillBuffers(executor, batch, stream, writtenBuffers(artifact, plan), rng);
  ReferenceInputs inputs(executor, plan, weights, std::move(drawn),
                         bindRandomVectors(executor, plan, rng));
  executor.run(batch, stream);
  QFUSE_CU_CTX(cuStreamSynchronize(stream), "running the plan to check it");

  PlanCheck result;
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    MatmulLaunch mm;
    if (!asMatmul(artifact, plan, s, mm))
      continue;
    std::string why =
        mm.skip.empty() ? outputRewritten(artifact, plan, s, mm) : mm.skip;
    std::optional<std::vector<float>> x;
    if (why.empty())
      x = inputs.forMatmul(s, mm, why);
    std::vector<std::vector<float>> added;
    for (size_t i = 0; x && i < mm.outputs.size(); ++i) {
      const MatmulLaunch::Output &o = mm.outputs[i];
      std::optional<std::vector<float>> terms =
          inputs.epilogue(s, o, artifact.findWeight(o.weight)->n, why);
      if (!terms)
        x.reset();
      else
        added.push_back(std::move(*terms));
    }
    if (!x) {
      result.skipped.push_back(skippedLaunch(artifact, plan, s, mm, why));
      continue;
    }
    for (size_t i = 0; i < mm.outputs.size(); ++i)
      result.launches.push_back(
          checkOutput(executor, batch, launchName(artifact, plan.steps[s]), *x,
                      mm.outputs[i], added[i], weights));
  }
  for (const std::string &buffer : dequantizeTargets(artifact, plan))
    result.launches.push_back(
        checkDequantizedBuffer(executor, plan, buffer, weights));
  return result;
}

} // namespace qfuse::runtime::check
