//===- GptqDeviceWeightsGpuTest.cpp - solver inputs on the device ---------===//
//
// GptqSolver given the modules' weights as the checkpoint stores them on
// the device (f16, bf16: widened there by an exact cuBLAS product; dead
// channels and NVFP4's global scale computed there) against the same
// weights given as f32 on the host: identical codes, scales, zeros, global
// scales and losses, on fresh random weights and Hessians (with dead
// channels). And the pipeline's outputs: codes as bytes and each module's
// f16 weight written on the device from the block kernel's values (in place
// over an f16 input, as the pipeline rebinds), against the host result and
// dequantizeToHalf of it, with the f16 outputs poisoned first. Uses the GPTQ
// artifacts of bench/make-gptq-artifacts.sh
// (artifacts/gptq/test-int4-g128.qfa, test-nvfp4.qfa; QFUSE_GPTQ_ARTIFACTS
// names another folder) and skips without them or without a GPU.
//
//===----------------------------------------------------------------------===//

#include "qfuse/runtime/gptq/GptqSolver.h"

#include "qfuse/runtime/gptq/DequantizeHalf.h"

#include "qfuse/format/Numerics.h"
#include "qfuse/runtime/artifact/Artifact.h"
#include "qfuse/runtime/device/Cuda.h"
#include "qfuse/runtime/device/DeviceArtifact.h"

#include "GptqTestArtifacts.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <optional>
#include <random>

using namespace qfuse;
using namespace qfuse::runtime;

namespace {

using Module = qfuse::testing::GptqTestModule;

void solveBoth(const std::string &artifactName, GptqDeviceWeight type,
               uint64_t seed) {
  SCOPED_TRACE(artifactName + (type == GptqDeviceWeight::BF16 ? " bf16" : " f16") +
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
  // bench/make-gptq-artifacts.sh compiles through the Python frontend: an
  // artifact set by default, of which the device runs its variant.
  Artifact artifact = loadArtifactForDevice(path, context);
  const format::Encoding enc = gptqArtifactEncoding(artifact);
  GptqSolver solver(artifact, context, enc);

  // q/k/v of the test model: 384 + 128 + 128 rows at K = 384.
  const int64_t k = 384, tokens = 512;
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal;
  std::vector<Module> modules = {{"q", 384, {}, {}}, {"k", 128, {}, {}},
                                 {"v", 128, {}, {}}};
  for (Module &m : modules) {
    const float scale = std::uniform_real_distribution<float>(0.01f, 2.0f)(rng);
    for (int64_t i = 0; i < m.n * k; ++i) {
      const float x = normal(rng) * scale;
      const uint16_t b = type == GptqDeviceWeight::BF16
                             ? format::floatToBFloat16(x)
                             : format::floatToHalf(x);
      m.bits.push_back(b);
      m.f32.push_back(type == GptqDeviceWeight::BF16 ? format::bfloat16ToFloat(b)
                                                     : format::halfToFloat(b));
    }
  }
  // H = 2/T X^T X of correlated inputs, two dead channels.
  std::vector<double> x(size_t(tokens * k));
  for (double &v : x)
    v = normal(rng);
  for (int64_t t = 0; t < tokens; ++t)
    for (int64_t c = 1; c < k; ++c)
      x[size_t(t * k + c)] += 0.5 * x[size_t(t * k + c - 1)];
  for (int64_t t = 0; t < tokens; ++t)
    x[size_t(t * k + 5)] = x[size_t(t * k + 77)] = 0.0;
  std::vector<float> h(size_t(k * k));
  for (int64_t i = 0; i < k; ++i)
    for (int64_t j = 0; j < k; ++j) {
      double s = 0;
      for (int64_t t = 0; t < tokens; ++t)
        s += x[size_t(t * k + i)] * x[size_t(t * k + j)];
      h[size_t(i * k + j)] = float(2.0 * s / double(tokens));
    }

  // pipelineOutputs: codes as bytes, and each module's f16 weight into
  // `halves` (in place over the f16 input; its own buffer for bf16),
  // poisoned first with 0x7E00 (NaN).
  std::vector<cuda::DeviceBuffer> stored, halves;
  auto solve = [&](bool onDevice, bool pipelineOutputs,
                   GptqSolveReport &report) {
    GptqSolveOptions options;
    options.codesAsBytes = pipelineOutputs;
    cuda::DeviceBuffer hessian(h.size() * 4, "H");
    hessian.upload(h.data(), h.size() * 4);
    stored.clear();
    halves.clear();
    std::vector<GptqModuleInput> inputs;
    for (Module &m : modules) {
      GptqModuleInput in;
      in.name = m.name;
      in.n = m.n;
      if (onDevice) {
        stored.emplace_back(m.bits.size() * 2, m.name);
        stored.back().upload(m.bits.data(), m.bits.size() * 2);
        in.device = stored.back().ptr();
        in.deviceType = type;
      } else {
        in.weight = m.f32.data();
      }
      if (pipelineOutputs) {
        const std::vector<uint16_t> poison(m.bits.size(), 0x7E00);
        halves.emplace_back(m.bits.size() * 2, m.name + " f16");
        halves.back().upload(poison.data(), poison.size() * 2);
        in.halfOut = type == GptqDeviceWeight::F16 && onDevice
                         ? in.device
                         : halves.back().ptr();
      }
      inputs.push_back(in);
    }
    return solver.solve(inputs, hessian.ptr(), k, options, stream.get(),
                        report);
  };
  GptqSolveReport hostReport, deviceReport, pipelineReport;
  std::vector<GptqModuleResult> host = solve(false, false, hostReport);
  std::vector<GptqModuleResult> pipeline = solve(true, true, pipelineReport);
  ASSERT_EQ(pipeline.size(), host.size());
  for (size_t m = 0; m < host.size(); ++m) {
    SCOPED_TRACE(host[m].name + " (codes as bytes, f16 on the device)");
    const GptqModuleResult &want = host[m], &got = pipeline[m];
    EXPECT_TRUE(got.weight.codes.empty());
    ASSERT_EQ(got.codeBytes.size(), want.weight.codes.size());
    size_t wrongCodes = 0;
    for (size_t i = 0; i < got.codeBytes.size(); ++i)
      wrongCodes +=
          format::codeFromByte(enc.format, got.codeBytes[i]) !=
          want.weight.codes[i];
    EXPECT_EQ(wrongCodes, 0u);
    EXPECT_TRUE(got.weight.scales == want.weight.scales);
    EXPECT_TRUE(got.weight.zeros == want.weight.zeros);
    EXPECT_EQ(got.loss, want.loss);
    ASSERT_TRUE(got.halfWritten);
    std::vector<uint16_t> expected(size_t(want.n * k)), written(expected.size());
    dequantizeToHalf(enc, want.weight, want.n, k, expected.data());
    const CUdeviceptr at = type == GptqDeviceWeight::F16 ? stored[m].ptr()
                                                         : halves[m].ptr();
    QFUSE_CU(cuMemcpyDtoH(written.data(), at, written.size() * 2));
    size_t wrongHalves = 0;
    for (size_t i = 0; i < written.size(); ++i)
      wrongHalves += written[i] != expected[i];
    EXPECT_EQ(wrongHalves, 0u) << "of " << written.size();
  }
  std::vector<GptqModuleResult> device = solve(true, false, deviceReport);
  EXPECT_EQ(hostReport.deadChannels, deviceReport.deadChannels);
  EXPECT_EQ(deviceReport.deadChannels.size(), 2u);
  ASSERT_EQ(host.size(), device.size());
  for (size_t m = 0; m < host.size(); ++m) {
    SCOPED_TRACE(host[m].name);
    EXPECT_TRUE(host[m].weight.codes == device[m].weight.codes);
    EXPECT_TRUE(host[m].weight.scales == device[m].weight.scales);
    EXPECT_TRUE(host[m].weight.zeros == device[m].weight.zeros);
    EXPECT_EQ(host[m].weight.globalScale, device[m].weight.globalScale);
    EXPECT_EQ(host[m].loss, device[m].loss);
  }
}

TEST(GptqDeviceWeightsGpu, Int4F16SameAsHostF32) {
  solveBoth("test-int4-g128.qfa", GptqDeviceWeight::F16,
            std::random_device{}());
}

TEST(GptqDeviceWeightsGpu, Int4BF16SameAsHostF32) {
  solveBoth("test-int4-g128.qfa", GptqDeviceWeight::BF16,
            std::random_device{}());
}

TEST(GptqDeviceWeightsGpu, Nvfp4F16SameAsHostF32) {
  solveBoth("test-nvfp4.qfa", GptqDeviceWeight::F16, std::random_device{}());
}

} // namespace
