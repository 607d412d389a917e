//===- GptqActOrderGpuTest.cpp - act-order and static groups' moves -------===//
//
// GptqSolver's act-order and static-group preparation on the device (H ->
// P^T H P, W's columns in the processing order, the static parameters
// expanded per position; GptqSolvePermute.cpp) and the act-order results
// put back in column order there (code bytes, the device-packed codes
// component and the f16 values written over the module's f16 weight),
// against GptqSolveOptions::hostPrepare (the host loops they replaced) on
// f32 host weights: identical codes, scales, zeros, g_idx, global scales,
// permutation and losses (the static groups' parameters fitted on the
// device from device weights, GptqSolveFits.cpp, against Grid::fit on the
// host; per channel, Grid::fit over each row's min and max from the
// device); the f16 weight against dequantizeToHalf of the host result,
// poisoned first. Fresh random weights and Hessians (two dead
// channels, per-channel spread so that the permutation is far from the
// identity) each run.
//
// Uses the GPTQ artifacts of bench/make-gptq-artifacts.sh
// (artifacts/gptq/; QFUSE_GPTQ_ARTIFACTS names another folder): static
// groups and per channel read test-{int4-g128,uint4-g128-asym,nvfp4,int8}
// .qfa, dynamic groups with g_idx test-{int4-g128,uint4-g128-asym}-act.qfa
// (act_order encodings). Skips without them or without a GPU.
//
//===----------------------------------------------------------------------===//

#include "qfuse/runtime/gptq/GptqSolver.h"

#include "qfuse/runtime/gptq/DequantizeHalf.h"

#include "qfuse/format/Numerics.h"
#include "qfuse/format/Packing.h"
#include "qfuse/runtime/artifact/Artifact.h"
#include "qfuse/runtime/device/Cuda.h"
#include "qfuse/runtime/device/DeviceArtifact.h"
#include "qfuse/runtime/device/DeviceGather.h"

#include "GptqTestArtifacts.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <random>

using namespace qfuse;
using namespace qfuse::runtime;

namespace {

using Module = qfuse::testing::GptqTestModule;

/// H = 2/T X^T X of correlated inputs whose channels have spread scales,
/// channels 5 and 77 dead.
std::vector<float> randomHessian(int64_t k, std::mt19937_64 &rng) {
  const int64_t tokens = 512;
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> spread(0.2, 3.0);
  std::vector<double> x(static_cast<size_t>(tokens * k)),
      scale(static_cast<size_t>(k));
  for (double &s : scale)
    s = spread(rng);
  for (double &v : x)
    v = normal(rng);
  for (int64_t t = 0; t < tokens; ++t)
    for (int64_t c = 1; c < k; ++c)
      x[size_t(t * k + c)] += 0.5 * x[size_t(t * k + c - 1)];
  for (int64_t t = 0; t < tokens; ++t)
    for (int64_t c = 0; c < k; ++c)
      x[size_t(t * k + c)] *= (c == 5 || c == 77) ? 0.0 : scale[size_t(c)];
  std::vector<float> h(size_t(k * k));
  for (int64_t i = 0; i < k; ++i)
    for (int64_t j = 0; j < k; ++j) {
      double s = 0;
      for (int64_t t = 0; t < tokens; ++t)
        s += x[size_t(t * k + i)] * x[size_t(t * k + j)];
      h[size_t(i * k + j)] = float(2.0 * s / double(tokens));
    }
  return h;
}

void expectSameResult(const GptqModuleResult &want,
                      const GptqModuleResult &got, bool codesAsBytes,
                      const format::Encoding &enc) {
  size_t wrongCodes = 0;
  if (codesAsBytes) {
    EXPECT_TRUE(got.weight.codes.empty());
    ASSERT_EQ(got.codeBytes.size(), want.weight.codes.size());
    for (size_t i = 0; i < got.codeBytes.size(); ++i)
      wrongCodes += format::codeFromByte(enc.format, got.codeBytes[i]) !=
                    want.weight.codes[i];
  } else {
    ASSERT_EQ(got.weight.codes.size(), want.weight.codes.size());
    for (size_t i = 0; i < got.weight.codes.size(); ++i)
      wrongCodes += got.weight.codes[i] != want.weight.codes[i];
  }
  EXPECT_EQ(wrongCodes, 0u) << "of " << want.weight.codes.size();
  EXPECT_TRUE(qfuse::testing::sameBits(got.weight.scales, want.weight.scales));
  EXPECT_TRUE(qfuse::testing::sameBits(got.weight.zeros, want.weight.zeros));
  EXPECT_TRUE(got.weight.gIdx == want.weight.gIdx);
  EXPECT_EQ(got.weight.globalScale, want.weight.globalScale);
  EXPECT_EQ(got.loss, want.loss);
}

/// The pipeline's outputs of one module against the reference: the codes
/// component packed on the device (where `packed`) against
/// format::packCodeBytes, and the f16 weight written at `half` against
/// dequantizeToHalf.
void expectPipelineOutputs(const GptqModuleResult &want,
                           const GptqModuleResult &got,
                           const format::Encoding &enc, int64_t k,
                           bool packed, CUdeviceptr half) {
  if (packed) {
    format::TensorMap components;
    std::vector<uint8_t> bytes(want.weight.codes.size());
    for (size_t i = 0; i < bytes.size(); ++i)
      bytes[i] = uint8_t(want.weight.codes[i]);
    std::string message;
    ASSERT_TRUE(format::packCodeBytes(enc, bytes.data(), want.weight, want.n,
                                      k, components, message))
        << message;
    const std::vector<uint8_t> &expected = components.at(format::kCodes).data;
    ASSERT_EQ(got.packedCodes.size(), expected.size())
        << "packed on the device";
    EXPECT_TRUE(std::equal(expected.begin(), expected.end(),
                           got.packedCodes.data()));
  }
  ASSERT_TRUE(got.halfWritten);
  std::vector<uint16_t> expected(size_t(want.n * k)), written(expected.size());
  dequantizeToHalf(enc, want.weight, want.n, k, expected.data());
  QFUSE_CU(cuMemcpyDtoH(written.data(), half, written.size() * 2));
  size_t wrongHalves = 0;
  for (size_t i = 0; i < written.size(); ++i)
    wrongHalves += written[i] != expected[i];
  EXPECT_EQ(wrongHalves, 0u) << "of " << written.size();
}

/// One group of the test model (`names` stacked at K = k) with act-order:
/// host-prepared on f32 host weights (the reference), against the device
/// moves on f16 device weights with the pipeline's outputs (unless eager)
/// and on the same f32 host weights.
void solveBoth(const std::string &artifactName,
               const std::vector<std::pair<std::string, int64_t>> &names,
               int64_t k, bool staticGroups, bool eager, uint64_t seed) {
  SCOPED_TRACE(artifactName + (staticGroups ? " static" : " dynamic") +
               (eager ? " eager" : "") + ", K " + std::to_string(k) +
               ", seed " + std::to_string(seed));
  std::string why;
  if (cuda::deviceCount(&why) == 0)
    GTEST_SKIP() << "qfuse-gpu-skip: no usable CUDA device: " << why;
  const std::string path = qfuse::testing::gptqArtifactDir() + artifactName;
  if (!std::ifstream(path))
    GTEST_SKIP() << "no GPTQ artifact at " << path
                 << " (bench/make-gptq-artifacts.sh writes it)";
  cuda::Context context(0);
  cuda::Stream stream;
  Artifact artifact = loadArtifactForDevice(path, context);
  const format::Encoding enc = gptqArtifactEncoding(artifact);
  ASSERT_TRUE(staticGroups || enc.isPerChannel() || enc.actOrder)
      << "dynamic act-order needs an act_order artifact";
  GptqSolver solver(artifact, context, enc);
  DeviceGather gather(artifact, context);

  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal;
  std::vector<Module> modules;
  for (const auto &[name, n] : names) {
    Module m{name, n, {}, {}};
    const float scale = std::uniform_real_distribution<float>(0.01f, 2.0f)(rng);
    for (int64_t i = 0; i < n * k; ++i) {
      const uint16_t b = format::floatToHalf(normal(rng) * scale);
      m.bits.push_back(b);
      m.f32.push_back(format::halfToFloat(b));
    }
    modules.push_back(std::move(m));
  }
  const std::vector<float> h = randomHessian(k, rng);

  // The f16 weights on the device, and the f16 outputs (poisoned).
  std::vector<cuda::DeviceBuffer> stored, halves;
  auto solve = [&](bool onDevice, bool hostPrepare, bool pipelineOutputs,
                   GptqSolveReport &report) {
    GptqSolveOptions options;
    options.actOrder = true;
    options.staticGroups = staticGroups;
    options.eager = eager;
    options.hostPrepare = hostPrepare;
    options.codesAsBytes = pipelineOutputs;
    // Device weights move by the gather kernel (column gathers), host
    // weights by copies: both against hostPrepare below.
    if (onDevice && gather.has(format::codeBits(enc))) {
      options.gather = &gather;
      options.checkGather = pipelineOutputs; // the bytes too, compared below
    }
    cuda::DeviceBuffer hessian(h.size() * 4, "H");
    hessian.upload(h.data(), h.size() * 4);
    const std::vector<GptqModuleInput> inputs = qfuse::testing::gptqTestInputs(
        modules, onDevice, GptqDeviceWeight::F16,
        pipelineOutputs ? qfuse::testing::GptqHalfOut::OwnBuffer
                        : qfuse::testing::GptqHalfOut::None,
        stored, halves);
    std::vector<GptqModuleResult> results = solver.solve(
        inputs, hessian.ptr(), k, options, stream.get(), report);
    EXPECT_FALSE(report.fellBackToRTN);
    return results;
  };
  GptqSolveReport hostReport, pipelineReport, deviceReport;
  const std::vector<GptqModuleResult> host =
      solve(false, true, false, hostReport);
  EXPECT_EQ(hostReport.deadChannels.size(), 2u);
  bool identity = true;
  for (size_t i = 0; i < hostReport.permutation.size(); ++i)
    identity = identity && hostReport.permutation[i] == int64_t(i);
  EXPECT_FALSE(identity) << "the test's permutation should move columns";

  // The pipeline: f16 on the device, codes as bytes (and packed on the
  // device where the artifact has the gather kernel), the f16 values into
  // poisoned buffers, checked against dequantizeToHalf of the reference.
  const bool pipeline = !eager;
  std::vector<GptqModuleResult> got =
      solve(true, false, pipeline, pipelineReport);
  // Static groups and per channel are fitted from device weights on the
  // device (per channel from each row's min and max, GptqSolveFits.cpp);
  // host weights and hostPrepare on the host.
  EXPECT_FALSE(hostReport.fitOnDevice);
  EXPECT_EQ(pipelineReport.fitOnDevice, staticGroups || enc.isPerChannel());
  EXPECT_EQ(pipelineReport.permutation, hostReport.permutation);
  EXPECT_EQ(pipelineReport.deadChannels, hostReport.deadChannels);
  ASSERT_EQ(got.size(), host.size());
  for (size_t m = 0; m < host.size(); ++m) {
    SCOPED_TRACE(host[m].name + " (f16 on the device)");
    const GptqModuleResult &want = host[m];
    expectSameResult(want, got[m], pipeline, enc);
    if (pipeline)
      expectPipelineOutputs(want, got[m], enc, k,
                            gather.has(format::codeBits(enc)),
                            halves[m].ptr());
  }

  // The device moves on host f32 weights (uploaded, then moved there).
  const std::vector<GptqModuleResult> device =
      solve(false, false, false, deviceReport);
  ASSERT_EQ(device.size(), host.size());
  for (size_t m = 0; m < host.size(); ++m) {
    SCOPED_TRACE(host[m].name + " (f32 on the host)");
    expectSameResult(host[m], device[m], false, enc);
  }
}

const std::vector<std::pair<std::string, int64_t>> kQkv = {
    {"q", 384}, {"k", 128}, {"v", 128}};

uint64_t freshSeed() { return std::random_device{}(); }

TEST(GptqActOrderGpu, Int4StaticGroupsQkv) {
  solveBoth("test-int4-g128.qfa", kQkv, 384, true, false, freshSeed());
}

TEST(GptqActOrderGpu, Int4StaticGroupsDown) {
  // down_proj of the even model: 384 rows at K = 640, five blocks.
  solveBoth("test-int4-g128.qfa", {{"down", 384}}, 640, true, false,
            freshSeed());
}

TEST(GptqActOrderGpu, Int4StaticGroupsEager) {
  solveBoth("test-int4-g128.qfa", kQkv, 384, true, true, freshSeed());
}

TEST(GptqActOrderGpu, Uint4AsymStaticGroupsQkv) {
  solveBoth("test-uint4-g128-asym.qfa", kQkv, 384, true, false, freshSeed());
}

TEST(GptqActOrderGpu, Nvfp4StaticGroupsQkv) {
  solveBoth("test-nvfp4.qfa", kQkv, 384, true, false, freshSeed());
}

TEST(GptqActOrderGpu, Int8PerChannelDownOddK) {
  // down_proj of the odd model: K = 576, a last block of 64 columns.
  solveBoth("test-int8.qfa", {{"down", 384}}, 576, false, false,
            freshSeed());
}

TEST(GptqActOrderGpu, Int4DynamicGIdxQkv) {
  solveBoth("test-int4-g128-act.qfa", kQkv, 384, false, false, freshSeed());
}

TEST(GptqActOrderGpu, Uint4AsymDynamicGIdxQkv) {
  solveBoth("test-uint4-g128-asym-act.qfa", kQkv, 384, false, false,
            freshSeed());
}

TEST(GptqActOrderGpu, Int4DynamicGIdxEager) {
  solveBoth("test-int4-g128-act.qfa", kQkv, 384, false, true, freshSeed());
}

} // namespace
