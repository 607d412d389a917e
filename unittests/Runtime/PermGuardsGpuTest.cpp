//===- PermGuardsGpuTest.cpp - act_order groups checked at load, on a GPU -===//
//
// The act_order q/k/v group and gate/up pair of act-order-groups.mlir
// (test/Tools/qfuse-cpu-check/Inputs), compiled at batches 1 and 16 by
// `ninja qfuse-act-order-artifacts` into artifacts/act-order/ twice: with
// the default fusions (groups.qfa: one permute of the shared input, under
// the contract that the perms are equal, and the fallback for perms that
// differ) and with none (groups-unfused.qfa: each weight on its own perm).
// On the same random weights and inputs:
//
//   - equal perms (one shuffle per K, as GPTQ desc_act): the executor runs
//     the fused group's steps and none of the fallback's;
//   - perms of each weight's own: the fallback's and none of the group's;
//   - either way every output matches the C++ reference (checkPlan) and the
//     unfused artifact's output;
//   - rebinding one member with another perm switches the path;
//   - the fallback's workspace is allocated only where the fallback runs.
//
// The same for act-order-norm.mlir (norm.qfa, norm-unfused.qfa), where the
// groups and a lone weight read an RMSNorm: the norm launch writes the
// permuted input under equal perms, the plain norm feeds the fallback.
//
// And for act-order-silu-mul.mlir (silu-mul.qfa, silu-mul-unfused.qfa),
// where lone down_projs read a silu_mul: the silu_mul launch writes the
// permuted input (no guard: any perm), in place of the silu_mul launch and
// the permute (act_order with 2:4: the plain silu_mul launch into the
// fallback's scratch), so the matmuls read the same values and the outputs
// are equal bit for bit.
//
// And for act-order-mlp.mlir (mlp.qfa, and mlp-unfused.qfa compiled with
// --act-order-sorted-output=false), where act_order down_projs read the
// gated gate/up kernel: that kernel stores its output in down_proj's
// sorted column order (the fallback for gate/up perms that differ gathers
// the product through down_proj's perm) in place of the permute launch,
// so down_proj reads the same values and the outputs are equal bit for bit.
//
// The same for act-order-attention.mlir (attention.qfa, attention-unfused.qfa)
// and its rotary form (rotary-attention*.qfa), where an act_order o_proj
// reads attention: the attention kernel stores its output in o_proj's
// sorted column order, fed valid positions.
//
// QFUSE_ACT_ORDER_ARTIFACTS overrides the directory; the tests skip where
// the artifacts are missing (they need the compiler).
//
//===----------------------------------------------------------------------===//

#include "qfuse/runtime/checkpoint/WeightSources.h"
#include "qfuse/runtime/device/DeviceArtifact.h"
#include "qfuse/runtime/device/Executor.h"
#include "qfuse/runtime/tooling/Check.h"

#include "qfuse/format/Numerics.h"
#include "qfuse/format/Reference.h"

#include "GpuFixture.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <random>

using namespace qfuse::runtime;
using When = PermGuard::When;

namespace {

std::string artifactDir() {
  const char *dir = std::getenv("QFUSE_ACT_ORDER_ARTIFACTS");
  return dir ? dir : QFUSE_ACT_ORDER_ARTIFACTS;
}

/// Random weights for every checkpoint tensor `artifact` reads.
std::map<std::string, qfuse::format::TensorMap>
randomWeights(const Artifact &artifact, RandomPerms perms) {
  std::map<std::string, qfuse::format::TensorMap> weights;
  uint64_t seed = 11;
  for (const WeightSpec &spec : artifact.weights)
    if (!weights.count(spec.checkpointName()))
      weights[spec.checkpointName()] = randomWeight(spec, 1000 * ++seed, perms);
  return weights;
}

/// The steps of the plan for `batch` that run, by guard.
std::map<When, size_t> runningGuards(const Executor &executor, int64_t batch) {
  std::map<When, size_t> count;
  for (const Step &step : executor.runningPlan(batch).steps)
    ++count[step.guard.when];
  return count;
}

class PermGuardsGpu : public qfuse::testing::GpuFixture {
protected:
  void SetUp() override {
    GpuFixture::SetUp();
    if (IsSkipped())
      return;
    const std::string base = artifactDir() + "/" + artifactName();
    for (const std::string &path : {base + ".qfa", base + "-unfused.qfa"})
      if (!std::filesystem::exists(path))
        GTEST_SKIP() << "no " << path << " (ninja qfuse-act-order-artifacts)";
    grouped.emplace(loadArtifactForDevice(base + ".qfa", *context));
    unfused.emplace(loadArtifactForDevice(base + "-unfused.qfa", *context));
  }

  /// The pair of artifacts the tests compare: <name>.qfa, <name>-unfused.qfa.
  virtual std::string artifactName() const { return "groups"; }

  /// Runs `artifact` at `batch` on `weights` and `inputs` (one f16 vector
  /// per artifact input); the outputs, in the artifact's order, as floats.
  std::vector<std::vector<float>>
  run(Executor &executor, int64_t batch,
      const std::vector<std::vector<uint16_t>> &inputs) {
    const Artifact &artifact = executor.artifact();
    executor.allocate(batch);
    for (size_t i = 0; i < inputs.size(); ++i)
      executor.buffer(batch, artifact.inputs[i])
          .upload(inputs[i].data(), inputs[i].size() * 2);
    // NaN poison in every output that is not an input too (a cache).
    for (const std::string &out : artifact.outputs)
      if (std::find(artifact.inputs.begin(), artifact.inputs.end(), out) ==
          artifact.inputs.end())
        executor.buffer(batch, out).fill(0xFF, stream->get());
    executor.capture(batch, stream->get());
    executor.replay(batch, stream->get());
    stream->synchronize();
    std::vector<std::vector<float>> outputs;
    for (const std::string &out : artifact.outputs) {
      cuda::DeviceBuffer &buffer = executor.buffer(batch, out);
      std::vector<uint16_t> bits(buffer.size() / 2);
      buffer.download(bits.data(), bits.size() * 2);
      std::vector<float> values(bits.size());
      for (size_t i = 0; i < bits.size(); ++i)
        values[i] = qfuse::format::halfToFloat(bits[i]);
      outputs.push_back(std::move(values));
    }
    return outputs;
  }

  /// Random f16 activations for every input of `artifact` at `batch`.
  static std::vector<std::vector<uint16_t>>
  randomInputs(const Artifact &a, int64_t batch, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    std::vector<std::vector<uint16_t>> inputs;
    for (const std::string &name : a.inputs) {
      // Every element of the buffer: an RMSNorm's gamma is an input too.
      std::vector<uint16_t> x(a.findBuffer(name)->numBytes(batch) / 2);
      for (uint16_t &v : x)
        v = qfuse::format::floatToHalf(dist(rng));
      inputs.push_back(std::move(x));
    }
    return inputs;
  }

  /// Binds `weights` to `executor` (each checkpoint tensor it reads).
  static void
  bindAll(Executor &executor,
          const std::map<std::string, qfuse::format::TensorMap> &weights) {
    for (const std::string &source : executor.usedWeightSources())
      executor.bindWeight(source, weights.at(source));
  }

  /// Every matmul of `executor`'s plan for `batch` against the C++
  /// reference (checkPlan), and at least one of them.
  void expectChecksPass(
      Executor &executor, int64_t batch,
      const std::map<std::string, qfuse::format::TensorMap> &weights) {
    std::vector<check::LaunchCheck> checks =
        check::checkPlan(executor, batch, stream->get(), weights, 5).launches;
    EXPECT_FALSE(checks.empty());
    for (const check::LaunchCheck &c : checks)
      EXPECT_TRUE(c.passed)
          << c.kernel << " " << c.weight << ": relative error "
          << c.relativeError << (c.unwritten ? " (unwritten)" : "");
  }

  /// `got`'s outputs at `batch` on `inputs` are `want`'s, bit for bit, and
  /// all written.
  void expectSameOutputs(Executor &got, Executor &want, int64_t batch,
                         const std::vector<std::vector<uint16_t>> &inputs) {
    auto gotOut = run(got, batch, inputs);
    auto wantOut = run(want, batch, inputs);
    ASSERT_EQ(gotOut.size(), wantOut.size());
    for (size_t o = 0; o < gotOut.size(); ++o) {
      ASSERT_EQ(gotOut[o].size(), wantOut[o].size());
      size_t differing = 0;
      for (size_t i = 0; i < gotOut[o].size(); ++i) {
        ASSERT_FALSE(std::isnan(gotOut[o][i])) << "output " << o << " unwritten";
        differing += gotOut[o][i] != wantOut[o][i];
      }
      EXPECT_EQ(differing, 0u) << "output " << got.artifact().outputs[o];
    }
  }

  /// The grouped and unfused artifacts on one set of weights: the path the
  /// grouped one takes, its checks and its outputs against the unfused.
  void checkBothPaths(RandomPerms perms, When expected) {
    const std::map<std::string, qfuse::format::TensorMap> weights =
        randomWeights(*grouped, perms);
    Executor fused(*grouped, *context), plain(*unfused, *context);
    bindAll(fused, weights);
    bindAll(plain, weights);
    const When other =
        expected == When::PermsEqual ? When::PermsDiffer : When::PermsEqual;
    for (int64_t batch : {1, 16}) {
      SCOPED_TRACE("batch " + std::to_string(batch));
      std::map<When, size_t> guards = runningGuards(fused, batch);
      EXPECT_GT(guards[expected], 0u);
      EXPECT_EQ(guards[other], 0u);
      // Every launch against the C++ reference on the dequantized weights.
      for (const check::LaunchCheck &c :
           check::checkPlan(fused, batch, stream->get(), weights, 5).launches)
        EXPECT_TRUE(c.passed)
            << c.kernel << " " << c.weight << ": relative error "
            << c.relativeError << (c.unwritten ? " (unwritten)" : "");
      // The same outputs as every weight on its own perm.
      auto inputs = randomInputs(*grouped, batch, 100 + batch);
      auto got = run(fused, batch, inputs);
      auto want = run(plain, batch, inputs);
      ASSERT_EQ(got.size(), want.size());
      for (size_t o = 0; o < got.size(); ++o) {
        for (float v : got[o])
          ASSERT_FALSE(std::isnan(v)) << "output " << o << " unwritten";
        EXPECT_LE(qfuse::format::relativeError(got[o], want[o]),
                  check::kRelativeTolerance)
            << "output " << grouped->outputs[o];
      }
    }
    // The fallback's workspace exists only where the fallback runs.
    if (expected == When::PermsEqual)
      EXPECT_EQ(fused.workspaceBytes(), 0u);
    else
      EXPECT_GT(fused.workspaceBytes(), 0u);
  }

  std::optional<Artifact> grouped, unfused;
};

TEST_F(PermGuardsGpu, EqualPermsRunTheGroupedKernels) {
  checkBothPaths(RandomPerms::PerInput, When::PermsEqual);
}

TEST_F(PermGuardsGpu, DifferentPermsRunTheFallback) {
  checkBothPaths(RandomPerms::PerWeight, When::PermsDiffer);
}

TEST_F(PermGuardsGpu, RebindingAMemberSwitchesThePath) {
  std::map<std::string, qfuse::format::TensorMap> weights =
      randomWeights(*grouped, RandomPerms::PerInput);
  Executor fused(*grouped, *context), plain(*unfused, *context);
  bindAll(fused, weights);
  EXPECT_EQ(runningGuards(fused, 16)[When::PermsDiffer], 0u);
  // k_proj with a perm of its own: q/k/v fall back, gate/up stay fused.
  const WeightSpec &k = *grouped->weightsPackedFrom("k_proj").front();
  weights["k_proj"] = randomWeight(k, 77, RandomPerms::PerWeight);
  fused.bindWeight("k_proj", weights["k_proj"]);
  bindAll(plain, weights);
  std::map<When, size_t> guards = runningGuards(fused, 16);
  EXPECT_GT(guards[When::PermsDiffer], 0u);
  EXPECT_GT(guards[When::PermsEqual], 0u);
  auto inputs = randomInputs(*grouped, 16, 3);
  auto got = run(fused, 16, inputs);
  auto want = run(plain, 16, inputs);
  for (size_t o = 0; o < got.size(); ++o)
    EXPECT_LE(qfuse::format::relativeError(got[o], want[o]),
              check::kRelativeTolerance)
        << "output " << grouped->outputs[o];
}

/// The groups (and a lone weight) reading an RMSNorm (act-order-norm.mlir).
class PermGuardsNormGpu : public PermGuardsGpu {
protected:
  std::string artifactName() const override { return "norm"; }
};

TEST_F(PermGuardsNormGpu, EqualPermsNormWritesThePermutedInput) {
  checkBothPaths(RandomPerms::PerInput, When::PermsEqual);
}

TEST_F(PermGuardsNormGpu, DifferentPermsRunThePlainNormAndFallback) {
  checkBothPaths(RandomPerms::PerWeight, When::PermsDiffer);
}

/// down_proj reading a silu_mul (act-order-silu-mul.mlir).
class SiluMulPrologueGpu : public PermGuardsGpu {
protected:
  std::string artifactName() const override { return "silu-mul"; }
};

TEST_F(SiluMulPrologueGpu, PermutedSiluMulMatchesTheUnfusedBitForBit) {
  for (RandomPerms perms : {RandomPerms::PerInput, RandomPerms::PerWeight}) {
    const std::map<std::string, qfuse::format::TensorMap> weights =
        randomWeights(*grouped, perms);
    Executor fused(*grouped, *context), plain(*unfused, *context);
    bindAll(fused, weights);
    bindAll(plain, weights);
    for (int64_t batch : {1, 16}) {
      SCOPED_TRACE("batch " + std::to_string(batch));
      EXPECT_EQ(runningGuards(fused, batch)[When::PermsDiffer], 0u);
      // The folded launch is followed back to gate and up by the check.
      expectChecksPass(fused, batch, weights);
      expectSameOutputs(fused, plain, batch,
                        randomInputs(*grouped, batch, 200 + batch));
    }
  }
}

/// down_proj reading the gated gate/up kernel (act-order-mlp.mlir).
class SortedOutputGpu : public PermGuardsGpu {
protected:
  std::string artifactName() const override { return "mlp"; }
};

TEST_F(SortedOutputGpu, SortedStoresMatchThePermuteLaunchBitForBit) {
  // No permute launch reads gate/up's output in the sorted artifact.
  for (int64_t batch : {1, 16}) {
    size_t permutes = 0;
    for (const Step &step : grouped->plan(batch).steps)
      permutes += step.op == kPermuteColumnsOp;
    EXPECT_EQ(permutes, 1u) << "batch " << batch << ": gate/up's only";
  }
  // Equal gate/up perms run the gated kernel's scattered stores; a perm
  // each, the fallback's gather through down_proj's perm.
  for (RandomPerms perms : {RandomPerms::PerInput, RandomPerms::PerWeight}) {
    SCOPED_TRACE(perms == RandomPerms::PerInput ? "equal perms"
                                                : "a perm each");
    const std::map<std::string, qfuse::format::TensorMap> weights =
        randomWeights(*grouped, perms);
    Executor sorted(*grouped, *context), plain(*unfused, *context);
    bindAll(sorted, weights);
    bindAll(plain, weights);
    for (int64_t batch : {1, 16}) {
      SCOPED_TRACE("batch " + std::to_string(batch));
      // The gated kernel's output is followed back through down's perm.
      expectChecksPass(sorted, batch, weights);
      expectSameOutputs(sorted, plain, batch,
                        randomInputs(*grouped, batch, 300 + batch));
    }
  }
}

/// o_proj reading attention (act-order-attention.mlir): no permute launch
/// at batches 1 and 16 (the CUDA-core kernel) and 32 (the tiled one, sorted
/// by --sorted-attention-max-batch=4096), and the outputs of the permute
/// launch's artifact, bit for bit, on valid positions.
class SortedAttentionGpu : public PermGuardsGpu {
protected:
  std::string artifactName() const override { return "attention"; }

  void expectSortedStoresMatchThePermuteLaunch() {
    for (int64_t batch : {1, 16, 32}) {
      size_t permutes = 0;
      for (const Step &step : grouped->plan(batch).steps)
        permutes += step.op == kPermuteColumnsOp;
      EXPECT_EQ(permutes, 0u) << "batch " << batch;
    }
    const std::map<std::string, qfuse::format::TensorMap> weights =
        randomWeights(*grouped, RandomPerms::PerWeight);
    Executor sorted(*grouped, *context), plain(*unfused, *context);
    bindAll(sorted, weights);
    bindAll(plain, weights);
    for (int64_t batch : {1, 16, 32}) {
      SCOPED_TRACE("batch " + std::to_string(batch));
      // Row m at cache position m: every row attends the ones before it.
      auto inputs = randomInputs(*grouped, batch, 400 + batch);
      for (size_t i = 0; i < grouped->inputs.size(); ++i)
        if (grouped->findBuffer(grouped->inputs[i])->dtype == DType::I32)
          for (int64_t m = 0; m < batch; ++m) {
            inputs[i][2 * m] = static_cast<uint16_t>(m);
            inputs[i][2 * m + 1] = 0;
          }
      expectSameOutputs(sorted, plain, batch, inputs);
    }
  }
};

TEST_F(SortedAttentionGpu, SortedStoresMatchThePermuteLaunchBitForBit) {
  expectSortedStoresMatchThePermuteLaunch();
}

/// The rotary one-launch form (act-order-rotary-attention.mlir).
class SortedRotaryAttentionGpu : public SortedAttentionGpu {
protected:
  std::string artifactName() const override { return "rotary-attention"; }
};

TEST_F(SortedRotaryAttentionGpu, SortedStoresMatchThePermuteLaunchBitForBit) {
  expectSortedStoresMatchThePermuteLaunch();
}

} // namespace
