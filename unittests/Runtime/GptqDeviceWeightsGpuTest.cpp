//===- GptqDeviceWeightsGpuTest.cpp - solver inputs on the device ---------===//
//
// GptqSolver given the modules' weights as the checkpoint stores them on
// the device (f16, bf16: widened there by the quantize test artifact's
// qf_widen_*_to_f32 kernels, as qfuse-quantize widens them; dead
// channels and NVFP4's global scale computed there) against the same
// weights given as f32 on the host: identical codes, scales, zeros, global
// scales and losses, on fresh random weights and Hessians (with dead
// channels). And the pipeline's outputs: codes as bytes and each module's
// f16 weight written on the device from the block kernel's values (in place
// over an f16 input, as the pipeline rebinds), against the host result and
// dequantizeToHalf of it, with the f16 outputs poisoned first. With static
// groups, the fits on the device (GptqSolveFits.cpp) against Grid::fit on
// the host, and a scale that does not fit named by row and group on both.
// Per channel, the fits from each row's [min, max] computed on the device
// (qf.row_min_max) against Grid::fit over the downloaded rows
// (hostPrepare), on rows whose extremes are zeros of either sign.
// Uses the GPTQ artifacts of bench/make-gptq-artifacts.sh
// (artifacts/gptq/test-int4-g128.qfa, test-uint4-g128-asym.qfa,
// test-nvfp4.qfa, test-int8.qfa, test-fp8.qfa, test-uint8-pc-fzero.qfa;
// QFUSE_GPTQ_ARTIFACTS names another folder) and the quantize test artifact
// (QuantizeArtifactFixture.h), and skips without them or without a GPU.
//
//===----------------------------------------------------------------------===//

#include "qfuse/runtime/gptq/GptqSolver.h"

#include "qfuse/runtime/gptq/DequantizeHalf.h"

#include "qfuse/runtime/Error.h"

#include "qfuse/format/Numerics.h"
#include "qfuse/runtime/artifact/Artifact.h"
#include "qfuse/runtime/device/Cuda.h"
#include "qfuse/runtime/device/DeviceArtifact.h"
#include "qfuse/runtime/device/DeviceWiden.h"

#include "GptqTestArtifacts.h"
#include "QuantizeArtifactFixture.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <optional>
#include <random>

using namespace qfuse;
using namespace qfuse::runtime;

namespace {

using Module = qfuse::testing::GptqTestModule;

/// q/k/v of the test model at K = `k` (384 + 128 + 128 rows), normal
/// weights of a random scale per module, as `type`.
std::vector<Module> randomModules(std::mt19937_64 &rng, GptqDeviceWeight type,
                                  int64_t k) {
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
  return modules;
}

/// Rows of q whose min or max is a zero of either sign, before or after
/// the dead channels' +0 (columns 5 and 77): positive-only, negative-only
/// and all-zero rows (zeros of alternating sign), whose fits must be the
/// host's, the sign of a zero extreme included (a float zero point keeps
/// it). The order of zeros of either sign is GridRangeFitTest's
/// (unittests/Gptq).
void zeroExtremeRows(Module &q, GptqDeviceWeight type, int64_t k) {
  auto set = [&](int64_t r, int64_t c, uint16_t bits) {
    q.bits[size_t(r * k + c)] = bits;
    q.f32[size_t(r * k + c)] = type == GptqDeviceWeight::BF16
                                   ? format::bfloat16ToFloat(bits)
                                   : format::halfToFloat(bits);
  };
  const uint16_t sign = 0x8000;
  for (int64_t r = 10; r < 15; ++r)
    for (int64_t c = 0; c < k; ++c) {
      // 10, 11: positive only; 12, 14: negative only; 13: zeros.
      const uint16_t b = q.bits[size_t(r * k + c)];
      const bool zero = (b & ~sign) == 0;
      const uint16_t wanted = r == 13 || zero
                                  ? uint16_t(c % 2 == 0 ? sign : 0)
                              : r == 12 || r == 14 ? uint16_t(b | sign)
                                                   : uint16_t(b & ~sign);
      set(r, c, wanted);
    }
  set(10, 3, sign);  // min: -0 before the dead channel's +0
  set(11, 100, sign); // min: -0 after it
  set(12, 7, sign);  // max: -0 after the dead channel's +0
  set(14, 1, sign);  // max: -0 before it
  set(14, 9, 0);     // and a +0 after both
}

/// Per channel: the fits from the device's [min, max] (`device`) against
/// the same device weights fitted on the host (`reference`, hostPrepare:
/// Grid::fit over the downloaded rows), bit for bit.
void compareWithHostPrepare(const std::vector<GptqModuleResult> &device,
                            const std::vector<GptqModuleResult> &reference,
                            const GptqSolveReport &referenceReport) {
  EXPECT_FALSE(referenceReport.fitOnDevice);
  ASSERT_EQ(reference.size(), device.size());
  for (size_t m = 0; m < device.size(); ++m) {
    SCOPED_TRACE(device[m].name + " (per channel, against hostPrepare)");
    EXPECT_TRUE(qfuse::testing::sameBits(reference[m].weight.scales,
                                         device[m].weight.scales));
    EXPECT_TRUE(qfuse::testing::sameBits(reference[m].weight.zeros,
                                         device[m].weight.zeros));
    EXPECT_TRUE(reference[m].weight.codes == device[m].weight.codes);
    EXPECT_EQ(reference[m].loss, device[m].loss);
  }
}

void solveBoth(const std::string &artifactName, GptqDeviceWeight type,
               bool staticGroups, uint64_t seed) {
  SCOPED_TRACE(artifactName + (type == GptqDeviceWeight::BF16 ? " bf16" : " f16") +
               (staticGroups ? " static groups" : "") + ", seed " +
               std::to_string(seed));
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
  const std::string quantizePath = qfuse::testing::quantizeTestArtifactPath();
  if (!std::ifstream(quantizePath))
    GTEST_SKIP() << "qfuse-gpu-skip: no quantize artifact at " << quantizePath
                 << " (its widening kernels; "
                    "bench/quantize-at-load/make-artifacts.sh)";
  const DeviceWiden widen(loadArtifactForDevice(quantizePath, context),
                          context);
  ASSERT_TRUE(widen.has(DType::F16) && widen.has(DType::BF16))
      << quantizePath << " lacks a qf_widen_*_to_f32 kernel";

  // q/k/v of the test model: 384 + 128 + 128 rows at K = 384.
  const int64_t k = 384, tokens = 512;
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal;
  std::vector<Module> modules = randomModules(rng, type, k);
  zeroExtremeRows(modules[0], type, k);
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
                   GptqSolveReport &report, bool hostPrepare = false) {
    GptqSolveOptions options;
    options.codesAsBytes = pipelineOutputs;
    options.staticGroups = staticGroups;
    options.hostPrepare = hostPrepare;
    options.widen = &widen;
    cuda::DeviceBuffer hessian(h.size() * 4, "H");
    hessian.upload(h.data(), h.size() * 4);
    const std::vector<GptqModuleInput> inputs = qfuse::testing::gptqTestInputs(
        modules, onDevice, type,
        pipelineOutputs ? qfuse::testing::GptqHalfOut::InPlaceOverF16
                        : qfuse::testing::GptqHalfOut::None,
        stored, halves);
    return solver.solve(inputs, hessian.ptr(), k, options, stream.get(),
                        report);
  };
  GptqSolveReport hostReport, deviceReport, pipelineReport, referenceReport;
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
    EXPECT_TRUE(qfuse::testing::sameBits(got.weight.scales, want.weight.scales));
    EXPECT_TRUE(qfuse::testing::sameBits(got.weight.zeros, want.weight.zeros));
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
  // Static groups and per channel: fitted from device weights on the device
  // (GptqSolveFits.cpp), by Grid::fit on the host from host weights.
  const bool fitsOnDevice = staticGroups || enc.isPerChannel();
  EXPECT_FALSE(hostReport.fitOnDevice);
  EXPECT_TRUE(pipelineReport.exactWidening);
  EXPECT_EQ(pipelineReport.fitOnDevice, fitsOnDevice);
  EXPECT_EQ(deviceReport.fitOnDevice, fitsOnDevice);
  if (enc.isPerChannel())
    compareWithHostPrepare(device, solve(true, false, referenceReport, true),
                           referenceReport);
  EXPECT_EQ(hostReport.deadChannels, deviceReport.deadChannels);
  EXPECT_EQ(deviceReport.deadChannels.size(), 2u);
  ASSERT_EQ(host.size(), device.size());
  for (size_t m = 0; m < host.size(); ++m) {
    SCOPED_TRACE(host[m].name);
    EXPECT_TRUE(host[m].weight.codes == device[m].weight.codes);
    EXPECT_TRUE(qfuse::testing::sameBits(host[m].weight.scales,
                                         device[m].weight.scales));
    EXPECT_TRUE(qfuse::testing::sameBits(host[m].weight.zeros,
                                         device[m].weight.zeros));
    EXPECT_EQ(host[m].weight.globalScale, device[m].weight.globalScale);
    EXPECT_EQ(host[m].loss, device[m].loss);
  }
}

TEST(GptqDeviceWeightsGpu, Int4F16SameAsHostF32) {
  solveBoth("test-int4-g128.qfa", GptqDeviceWeight::F16, false,
            std::random_device{}());
}

TEST(GptqDeviceWeightsGpu, Int4BF16SameAsHostF32) {
  solveBoth("test-int4-g128.qfa", GptqDeviceWeight::BF16, false,
            std::random_device{}());
}

TEST(GptqDeviceWeightsGpu, Nvfp4F16SameAsHostF32) {
  solveBoth("test-nvfp4.qfa", GptqDeviceWeight::F16, false,
            std::random_device{}());
}

// Static groups without act-order: the fits on the device against the
// host's.
TEST(GptqDeviceWeightsGpu, Int4StaticGroupsF16SameAsHostF32) {
  solveBoth("test-int4-g128.qfa", GptqDeviceWeight::F16, true,
            std::random_device{}());
}

TEST(GptqDeviceWeightsGpu, Uint4AsymStaticGroupsBF16SameAsHostF32) {
  solveBoth("test-uint4-g128-asym.qfa", GptqDeviceWeight::BF16, true,
            std::random_device{}());
}

TEST(GptqDeviceWeightsGpu, Nvfp4StaticGroupsF16SameAsHostF32) {
  solveBoth("test-nvfp4.qfa", GptqDeviceWeight::F16, true,
            std::random_device{}());
}

// Per channel: each row's [min, max] on the device (qf.row_min_max), the
// fit on the host from those two values, against the host's fits.
TEST(GptqDeviceWeightsGpu, Int8PerChannelF16SameAsHost) {
  solveBoth("test-int8.qfa", GptqDeviceWeight::F16, false,
            std::random_device{}());
}

TEST(GptqDeviceWeightsGpu, Fp8PerChannelBF16SameAsHost) {
  solveBoth("test-fp8.qfa", GptqDeviceWeight::BF16, false,
            std::random_device{}());
}

// A float zero point keeps the sign of a zero min: the selection of -0 or
// +0 shows in the zeros.
TEST(GptqDeviceWeightsGpu, Uint8FloatZeroPerChannelF16SameAsHost) {
  solveBoth("test-uint8-pc-fzero.qfa", GptqDeviceWeight::F16, false,
            std::random_device{}());
}

TEST(GptqDeviceWeightsGpu, StaticScaleOverflowNamesRowAndGroup) {
  // One bf16 weight far past the f16 scale's range (1e30 / 7 > 65504) at
  // row 200 (q's), column 300 (group 2): both fits refuse it by name.
  std::string why;
  if (cuda::deviceCount(&why) == 0)
    GTEST_SKIP() << "qfuse-gpu-skip: no usable CUDA device: " << why;
  const std::string path =
      qfuse::testing::gptqArtifactDir() + "test-int4-g128.qfa";
  if (!std::ifstream(path))
    GTEST_SKIP() << "no GPTQ artifact at " << path;
  cuda::Context context(0);
  cuda::Stream stream;
  Artifact artifact = loadArtifactForDevice(path, context);
  const format::Encoding enc = gptqArtifactEncoding(artifact);
  ASSERT_EQ(enc.scaleType, format::ScalarType::F16);
  GptqSolver solver(artifact, context, enc);
  const int64_t k = 384;
  std::vector<Module> modules = {{"q", 384, {}, {}}, {"k", 128, {}, {}},
                                 {"v", 128, {}, {}}};
  std::mt19937_64 rng(std::random_device{}());
  std::normal_distribution<float> normal;
  for (Module &m : modules)
    for (int64_t i = 0; i < m.n * k; ++i) {
      const float x = m.name == "q" && i == 200 * k + 300 ? 1e30f : normal(rng);
      m.bits.push_back(format::floatToBFloat16(x));
      m.f32.push_back(format::bfloat16ToFloat(m.bits.back()));
    }
  std::vector<float> h(size_t(k * k), 0.0f);
  for (int64_t i = 0; i < k; ++i)
    h[size_t(i * k + i)] = 1.0f;
  std::vector<cuda::DeviceBuffer> stored, halves;
  for (bool onDevice : {false, true}) {
    SCOPED_TRACE(onDevice ? "fitted on the device" : "fitted on the host");
    GptqSolveOptions options;
    options.staticGroups = true;
    cuda::DeviceBuffer hessian(h.size() * 4, "H");
    hessian.upload(h.data(), h.size() * 4);
    GptqSolveReport report;
    const std::vector<GptqModuleInput> inputs = qfuse::testing::gptqTestInputs(
        modules, onDevice, GptqDeviceWeight::BF16,
        qfuse::testing::GptqHalfOut::None, stored, halves);
    try {
      solver.solve(inputs, hessian.ptr(), k, options, stream.get(), report);
      ADD_FAILURE() << "no error for a scale that does not fit";
    } catch (const Error &e) {
      EXPECT_NE(std::string(e.what()).find(
                    "row 200, group 2: the group's scale does not fit"),
                std::string::npos)
          << e.what();
    }
    EXPECT_EQ(report.fitOnDevice, onDevice);
  }
}

} // namespace
