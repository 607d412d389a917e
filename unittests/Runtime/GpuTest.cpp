//===- GpuTest.cpp - runtime tests that need a GPU ------------------------===//
//
// Device buffers, checked errors, module loading (cubin and PTX), the target
// check, the executor (plans, memsets, weights from qfuse_format and from
// safetensors, CUDA graphs), cuBLAS against a CPU reference, and a smoke run
// of the benchmarks. The kernels are Inputs/test_kernels.ptx (and its cubin,
// built by ptxas). Every test skips with "qfuse-gpu-skip:" and the reason
// where no device is usable.
//
//===----------------------------------------------------------------------===//

#include "GpuFixture.h"
#include "qfuse/format/Layout.h"
#include "qfuse/format/Numerics.h"
#include "qfuse/format/Packing.h"
#include "qfuse/runtime/tooling/Bench.h"
#include "qfuse/runtime/tooling/Check.h"
#include "qfuse/runtime/Error.h"
#include "qfuse/runtime/device/Executor.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <random>
#include <set>
#include <sstream>

using namespace qfuse::runtime;
using nlohmann::json;
namespace fmt = qfuse::format;

namespace {

std::string readFile(const std::string &path, bool binary = false) {
  std::ifstream stream(path, binary ? std::ios::binary : std::ios::in);
  if (!stream)
    throw qfuse::Error("cannot read test input " + path);
  std::ostringstream contents;
  contents << stream.rdbuf();
  return contents.str();
}

std::string encodeBase64(const std::string &bytes) {
  static const char *alphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    uint32_t v = (uint8_t(bytes[i]) << 16) | (uint8_t(bytes[i + 1]) << 8) |
                 uint8_t(bytes[i + 2]);
    for (int s = 18; s >= 0; s -= 6)
      out += alphabet[(v >> s) & 63];
  }
  if (i + 1 == bytes.size()) {
    uint32_t v = uint8_t(bytes[i]) << 16;
    out += alphabet[(v >> 18) & 63];
    out += alphabet[(v >> 12) & 63];
    out += "==";
  } else if (i + 2 == bytes.size()) {
    uint32_t v = (uint8_t(bytes[i]) << 16) | (uint8_t(bytes[i + 1]) << 8);
    out += alphabet[(v >> 18) & 63];
    out += alphabet[(v >> 12) & 63];
    out += alphabet[(v >> 6) & 63];
    out += '=';
  }
  return out;
}

constexpr int kN = 64, kK = 128;    // the int8 weight
constexpr int kWidth = 256;         // x, y per batch row
constexpr int kSharedWords = 16384; // 64 KiB of dynamic shared memory

json launch(const char *kernel, std::array<int, 3> grid, int block, json args,
            int shared = 0) {
  return {{"launch", kernel},
          {"grid", grid},
          {"block", {block, 1, 1}},
          {"shared_bytes", shared},
          {"args", std::move(args)}};
}

/// The test artifact over Inputs/test_kernels.ptx, with the sm_90 cubin
/// embedded when `withCubin`.
json testArtifact(const std::string &chip, bool withCubin) {
  const std::string ptx = readFile(QFUSE_TEST_PTX);
  auto kernel = [&](const char *name, json params) {
    json k = {{"name", name}, {"ptx", ptx}, {"params", std::move(params)}};
    if (withCubin)
      k["cubin_base64"] = encodeBase64(readFile(QFUSE_TEST_CUBIN, true));
    return k;
  };
  auto param = [](const char *name, const char *type) {
    return json{{"name", name}, {"type", type}};
  };
  json steps1 = {
      {{"memset", "y"}},
      launch("qf_test_axpy", {1, 1, 1}, kWidth,
             {{{"buffer", "x"}},
              {{"buffer", "y"}},
              {{"f32", 2.0}},
              {{"i32", kWidth}}}),
      launch("qf_test_bias", {1, 1, 1}, kWidth,
             {{{"buffer", "y"}}, {{"tensor", "bias"}}, {{"i64", kWidth}}}),
      launch("qf_test_dequant_int8", {kN * kK / 256, 1, 1}, 256,
             {{{"buffer", "out"}},
              {{"weight", "model.w"}, {"component", "codes"}},
              {{"weight", "model.w"}, {"component", "scales"}},
              {{"i32", kN}},
              {{"i32", kK}}}),
      launch("qf_test_shared_reverse", {1, 1, 1}, 256,
             {{{"buffer", "rev"}}, {{"i32", kSharedWords}}}, kSharedWords * 4)};
  json steps2 = {
      {{"memset", "y"}},
      launch("qf_test_axpy", {2, 1, 1}, kWidth,
             {{{"buffer", "x"}},
              {{"buffer", "y"}},
              {{"f32", 2.0}},
              {{"i32", 2 * kWidth}}}),
      launch("qf_test_bias", {2, 1, 1}, kWidth,
             {{{"buffer", "y"}}, {{"tensor", "bias"}}, {{"i64", 2 * kWidth}}})};
  return {
      {"format", "qfuse-artifact"},
      {"version", kArtifactVersion},
      {"producer", "GpuTest"},
      {"target", {{"chip", chip}}},
      {"kernels",
       {kernel("qf_test_axpy", {param("x", "ptr"), param("y", "ptr"),
                                param("a", "f32"), param("n", "i32")}),
        kernel("qf_test_bias",
               {param("y", "ptr"), param("bias", "ptr"), param("n", "i64")}),
        kernel("qf_test_dequant_int8",
               {param("out", "ptr"), param("codes", "ptr"),
                param("scales", "ptr"), param("n", "i32"), param("k", "i32")}),
        kernel("qf_test_shared_reverse",
               {param("out", "ptr"), param("words", "i32")})}},
      {"weights",
       {{{"name", "model.w"},
         {"shape", {kN, kK}},
         {"encoding", "int8, per_channel, scale = f32"},
         {"layout", "row_major"}}}},
      {"tensors",
       {{{"name", "bias"}, {"shape", {2 * kWidth}}, {"dtype", "f32"}}}},
      {"buffers",
       {{{"name", "x"}, {"shape", {"M", kWidth}}, {"dtype", "f32"}},
        {{"name", "y"}, {"shape", {"M", kWidth}}, {"dtype", "f32"}},
        {{"name", "out"}, {"shape", {kN, kK}}, {"dtype", "f32"}},
        {{"name", "rev"}, {"shape", {256}}, {"dtype", "f32"}}}},
      {"inputs", {"x"}},
      {"outputs", {"y"}},
      {"plans",
       {{{"batch", 1}, {"steps", steps1}}, {{"batch", 2}, {"steps", steps2}}}}};
}

/// The test artifact with one int4 weight in the matvec kernel's tiled
/// layout; the plan passes its codes to a kernel that reads nothing (n = 0).
json tiledArtifact(const std::string &chip) {
  const int n = 8, k = 256;
  json artifact = testArtifact(chip, false);
  artifact["weights"] = {{{"name", "model.t"},
                          {"shape", {n, k}},
                          {"encoding", "int4, group = 128, scale = f16"},
                          {"layout", "tiled, tile_n = 1, tile_k = 256"}}};
  artifact["plans"] = {
      {{"batch", 1},
       {"steps",
        {launch("qf_test_axpy", {1, 1, 1}, 32,
                {{{"weight", "model.t"}, {"component", "codes"}},
                 {{"buffer", "y"}},
                 {{"f32", 0.0}},
                 {{"i32", 0}}})}}}};
  return artifact;
}

Artifact parse(const json &artifact) {
  return Artifact::parse(artifact.dump(), "gpu-test.qfa");
}

/// A random int8 per-channel weight, packed by qfuse_format.
fmt::TensorMap randomInt8Weight(std::vector<float> &dequantized) {
  std::mt19937 rng(1234);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> w(kN * kK);
  for (float &v : w)
    v = normal(rng);
  fmt::Encoding enc;
  std::string error;
  EXPECT_TRUE(fmt::parseEncoding("int8, per_channel, scale = f32", enc, error))
      << error;
  fmt::TensorMap components;
  EXPECT_TRUE(fmt::quantizeRTN(enc, w.data(), kN, kK, components, error))
      << error;
  EXPECT_TRUE(fmt::dequantize(enc, components, kN, kK, dequantized, error))
      << error;
  return components;
}

std::vector<float> download(cuda::DeviceBuffer &buffer) {
  std::vector<float> values(buffer.size() / sizeof(float));
  buffer.download(values.data(), buffer.size());
  return values;
}

class Gpu : public qfuse::testing::GpuFixture {
protected:
  bool isSm90() const { return context->major() == 9; }
};

void expectErrorContaining(const std::function<void()> &body,
                           std::initializer_list<const char *> fragments) {
  try {
    body();
    FAIL() << "no error";
  } catch (const qfuse::Error &e) {
    const std::string message = e.what();
    for (const char *fragment : fragments)
      EXPECT_NE(message.find(fragment), std::string::npos)
          << "'" << fragment << "' not in: " << message;
  }
}

} // namespace

//===----------------------------------------------------------------------===//
// Cuda.h
//===----------------------------------------------------------------------===//

TEST_F(Gpu, DeviceBufferRoundTrip) {
  std::vector<float> values = {1.5f, -2.0f, 3.25f, 0.0f};
  cuda::DeviceBuffer buffer(values.size() * 4, "roundtrip");
  buffer.upload(values.data(), 16);
  EXPECT_EQ(download(buffer), values);
  buffer.fill(0xff, stream->get());
  buffer.zero(stream->get());
  stream->synchronize();
  EXPECT_EQ(download(buffer), std::vector<float>(4, 0.0f));
  float partial = 7.0f;
  buffer.upload(&partial, 4, 8);
  EXPECT_EQ(download(buffer)[2], 7.0f);
  expectErrorContaining([&] { buffer.upload(values.data(), 16, 4); },
                        {"overruns buffer 'roundtrip'"});
  cuda::DeviceBuffer moved = std::move(buffer);
  EXPECT_TRUE(buffer.empty());
  EXPECT_EQ(moved.size(), 16u);
}

TEST_F(Gpu, FailedCallsNameTheCallAndTheError) {
  expectErrorContaining(
      [] {
        CUdeviceptr ptr;
        QFUSE_CU_CTX(cuMemAlloc(&ptr, size_t(1) << 52), "testing");
      },
      {"CUDA_ERROR_OUT_OF_MEMORY", "cuMemAlloc(&ptr, size_t(1) << 52)",
       "GpuTest.cpp", "while testing"});
  expectErrorContaining(
      [] { cuda::DeviceBuffer huge(size_t(1) << 52, "huge"); },
      {"CUDA_ERROR_OUT_OF_MEMORY", "buffer 'huge'"});
}

TEST_F(Gpu, TargetCheck) {
  const int major = context->major(), minor = context->minor();
  cuda::checkTarget(*ChipTarget::parse("sm_50"), *context);
  cuda::checkTarget(*ChipTarget::parse(context->chip()), *context);
  cuda::checkTarget(*ChipTarget::parse(context->chip() + "a"), *context);
  const std::string newer = "sm_" + std::to_string((major + 1) * 10 + minor);
  expectErrorContaining(
      [&] { cuda::checkTarget(*ChipTarget::parse(newer), *context); },
      {("targets " + newer).c_str(),
       ("recompile for " + context->chip()).c_str()});
  expectErrorContaining(
      [&] { cuda::checkTarget(*ChipTarget::parse("sm_50a"), *context); },
      {"sm_50a", "runs only on compute capability 5.0"});
  EXPECT_TRUE(cuda::cubinRunsOn(*ChipTarget::parse("sm_90"), 9, 0));
  EXPECT_FALSE(cuda::cubinRunsOn(*ChipTarget::parse("sm_90"), 10, 0));
  EXPECT_FALSE(cuda::cubinRunsOn(*ChipTarget::parse("sm_90a"), 9, 1));
  EXPECT_TRUE(cuda::cubinRunsOn(*ChipTarget::parse("sm_80"), 8, 6));

  // The executor refuses an artifact for a newer chip before loading code.
  json artifact = testArtifact(newer, false);
  Artifact parsed = parse(artifact);
  expectErrorContaining([&] { Executor executor(parsed, *context); },
                        {("targets " + newer).c_str()});
}

TEST_F(Gpu, PtxJitErrorsCarryTheLog) {
  expectErrorContaining(
      [] {
        cuda::Module::loadPtx(".version 8.0\n.target sm_90\n"
                              ".address_size 64\n.visible .entry broken() {\n"
                              "  bogus.instruction;\n}\n",
                              "kernel 'broken'");
      },
      {"cuModuleLoadDataEx", "kernel 'broken'"});
}

TEST_F(Gpu, ModulesLoadFromCubinOrPtx) {
  Artifact withCubin = parse(testArtifact("sm_90", true));
  Artifact ptxOnly = parse(testArtifact("sm_90", false));
  if (context->major() < 9)
    GTEST_SKIP() << "the test kernels target sm_90";
  Executor fromCubin(withCubin, *context);
  // qfuse-sim refuses the cubin as a GPU without a binary for it would.
  EXPECT_EQ(fromCubin.loadedFromCubin("qf_test_axpy"),
            isSm90() && !onSimulator());
  Executor fromPtx(ptxOnly, *context);
  EXPECT_FALSE(fromPtx.loadedFromCubin("qf_test_axpy"));
  // The four kernels carry the same code: one module serves them all.
  EXPECT_EQ(fromPtx.numModules(), 1u);
  EXPECT_EQ(fromCubin.numModules(), 1u);
}

TEST_F(Gpu, CublasMatchesAReference) {
  const int m = 3, n = 40, k = 96;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<uint16_t> x(m * k), w(n * k);
  std::vector<float> xf(m * k), wf(n * k);
  for (int i = 0; i < m * k; ++i)
    xf[i] = fmt::halfToFloat(x[i] = fmt::floatToHalf(uniform(rng)));
  for (int i = 0; i < n * k; ++i)
    wf[i] = fmt::halfToFloat(w[i] = fmt::floatToHalf(uniform(rng)));
  cuda::DeviceBuffer dx(x.size() * 2, "x"), dw(w.size() * 2, "w"),
      dy(m * n * 2, "y");
  dx.upload(x.data(), dx.size());
  dw.upload(w.data(), dw.size());
  dy.fill(0xff, stream->get()); // poison
  cuda::Cublas cublas;
  cublas.setStream(stream->get());
  cublas.gemmRowMajor(CUDA_R_16F, dy.ptr(), dx.ptr(), dw.ptr(), m, n, k);
  stream->synchronize();
  std::vector<uint16_t> y(m * n);
  dy.download(y.data(), dy.size());
  double errorSq = 0, refSq = 0;
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double ref = 0;
      for (int kk = 0; kk < k; ++kk)
        ref += double(xf[i * k + kk]) * wf[j * k + kk];
      const double got = fmt::halfToFloat(y[i * n + j]);
      errorSq += (got - ref) * (got - ref);
      refSq += ref * ref;
    }
  EXPECT_LT(std::sqrt(errorSq / refSq), 2e-3);
}

//===----------------------------------------------------------------------===//
// Executor
//===----------------------------------------------------------------------===//

TEST_F(Gpu, ExecutorRunsAndReplaysAPlan) {
  if (context->major() < 9)
    GTEST_SKIP() << "the test kernels target sm_90";
  Artifact artifact = parse(testArtifact(context->chip(), false));
  Executor executor(artifact, *context);

  // Nothing bound yet: the error lists what is missing.
  expectErrorContaining([&] { executor.run(1, stream->get()); },
                        {"unbound arguments",
                         "weight 'model.w' component "
                         "'codes'",
                         "tensor 'bias'"});

  std::vector<float> dequantized;
  executor.bindWeight("model.w", randomInt8Weight(dequantized));
  std::vector<float> bias(2 * kWidth), x(2 * kWidth);
  for (int i = 0; i < 2 * kWidth; ++i) {
    bias[i] = 0.25f * i;
    x[i] = 1.0f - 0.5f * i;
  }
  executor.bindTensor("bias", bias.data(), bias.size() * 4);
  EXPECT_TRUE(executor.unboundArguments().empty());

  executor.allocate(1);
  executor.buffer(1, "x").upload(x.data(), kWidth * 4);
  executor.buffer(1, "y").fill(0xff, stream->get()); // poison
  executor.buffer(1, "out").fill(0xff, stream->get());
  executor.run(1, stream->get());
  stream->synchronize();
  std::vector<float> y = download(executor.buffer(1, "y"));
  for (int i = 0; i < kWidth; ++i)
    ASSERT_EQ(y[i], 2.0f * x[i] + bias[i]) << i;
  EXPECT_EQ(download(executor.buffer(1, "out")), dequantized);
  std::vector<float> rev = download(executor.buffer(1, "rev"));
  for (int t = 0; t < 256; ++t)
    ASSERT_EQ(rev[t], float(kSharedWords - 1 - t)) << t;

  // The graph reads the buffers at replay time; the memset step makes
  // replays idempotent.
  executor.capture(1, stream->get());
  EXPECT_TRUE(executor.hasGraph(1));
  for (float &v : x)
    v *= -3.0f;
  executor.buffer(1, "x").upload(x.data(), kWidth * 4);
  executor.replay(1, stream->get());
  executor.replay(1, stream->get());
  stream->synchronize();
  y = download(executor.buffer(1, "y"));
  for (int i = 0; i < kWidth; ++i)
    ASSERT_EQ(y[i], 2.0f * x[i] + bias[i]) << i;

  // Batch 2 has its own buffers.
  executor.allocate(2);
  EXPECT_EQ(executor.buffer(2, "x").size(), 2u * kWidth * 4);
  executor.buffer(2, "x").upload(x.data(), x.size() * 4);
  executor.run(2, stream->get());
  stream->synchronize();
  y = download(executor.buffer(2, "y"));
  for (int i = 0; i < 2 * kWidth; ++i)
    ASSERT_EQ(y[i], 2.0f * x[i] + bias[i]) << i;

  expectErrorContaining([&] { executor.run(3, stream->get()); },
                        {"no plan for batch 3", "1, 2"});
  expectErrorContaining([&] { executor.replay(2, stream->get()); },
                        {"no captured graph for batch 2"});
}

TEST_F(Gpu, ExecutorLoadsWeightsFromSafetensors) {
  if (context->major() < 9)
    GTEST_SKIP() << "the test kernels target sm_90";
  Artifact artifact = parse(testArtifact(context->chip(), false));
  Executor executor(artifact, *context);
  std::vector<float> dequantized;
  fmt::TensorMap components = randomInt8Weight(dequantized);
  std::vector<float> bias(2 * kWidth, 1.0f);

  SafetensorsWriter writer;
  for (const auto &[name, tensor] : components)
    writer.add("model.w." + name,
               *parseSafetensorsDType(fmt::dtypeName(tensor.dtype)),
               tensor.shape, tensor.data.data(), tensor.data.size());
  writer.add("bias", DType::F32, {2 * kWidth}, bias.data(), bias.size() * 4);
  SafetensorsFile file =
      SafetensorsFile::fromBytes(writer.serialize(), "packed.safetensors");
  executor.loadWeights(file);
  executor.allocate(1);
  executor.run(1, stream->get());
  stream->synchronize();
  EXPECT_EQ(download(executor.buffer(1, "out")), dequantized);

  // A component of the wrong shape is named with what was expected.
  SafetensorsWriter bad;
  std::vector<uint8_t> codes(kN * kK / 2);
  bad.add("model.w.codes", DType::U8, {kN, kK / 2}, codes.data(), codes.size());
  bad.add("model.w.scales", DType::F32, {kN, 1}, bias.data(), kN * 4);
  bad.add("bias", DType::F32, {2 * kWidth}, bias.data(), bias.size() * 4);
  SafetensorsFile badFile =
      SafetensorsFile::fromBytes(bad.serialize(), "bad.safetensors");
  expectErrorContaining([&] { executor.loadWeights(badFile); },
                        {"bad.safetensors", "model.w", "'codes'",
                         "U8 [64, 128]", "found U8 [64, 64]"});
}

TEST_F(Gpu, ExecutorRepacksToTheArtifactsLayout) {
  if (context->major() < 9)
    GTEST_SKIP() << "the test kernels target sm_90";
  const int n = 8, k = 256;
  json artifact = tiledArtifact(context->chip());
  Artifact parsed = parse(artifact);
  Executor executor(parsed, *context);

  std::vector<float> w(n * k);
  for (int i = 0; i < n * k; ++i)
    w[i] = std::sin(0.37f * i);
  const fmt::Encoding &enc = parsed.weights[0].encodingAttr;
  fmt::TensorMap rowMajor, tiled;
  std::string error;
  ASSERT_TRUE(fmt::quantizeRTN(enc, w.data(), n, k, rowMajor, error)) << error;
  ASSERT_TRUE(fmt::repack(enc, parsed.weights[0].layoutAttr, rowMajor, n, k,
                          tiled, error))
      << error;
  executor.bindWeight("model.t", rowMajor);

  const std::vector<uint8_t> &expected = tiled.at("codes").data;
  ASSERT_EQ(executor.componentBytes("model.t", "codes"), expected.size());
  std::vector<uint8_t> onDevice(expected.size());
  ASSERT_EQ(cuMemcpyDtoH(onDevice.data(),
                         executor.componentPointer("model.t", "codes"),
                         onDevice.size()),
            CUDA_SUCCESS);
  EXPECT_EQ(onDevice, expected);
  EXPECT_NE(onDevice, rowMajor.at("codes").data); // the layout moved nibbles
  executor.run(1, stream->get());
  stream->synchronize();
}

//===----------------------------------------------------------------------===//
// Bench
//===----------------------------------------------------------------------===//

TEST_F(Gpu, BenchmarksRun) {
  bench::Config config;
  config.warmup = 1;
  config.iterations = bench::kMinIterations;

  bench::CopyResult copy =
      bench::copyBandwidth(stream->get(), 64u << 20, config);
  EXPECT_EQ(copy.stats.samplesMs.size(), size_t(bench::kMinIterations));
  EXPECT_GT(copy.gbPerSecond, 0.0);

  cuda::Cublas cublas;
  bench::GemmShape shape = bench::parseGemmShape("1x256x1536");
  bench::GemmResult gemm =
      bench::cublasGemm(*context, cublas, stream->get(), "k_proj", shape.m,
                        {shape.matmul}, config);
  if (gemm.l2Flushed)
    EXPECT_EQ(gemm.copies, bench::kMaxCopies);
  else
    EXPECT_GT(uint64_t(gemm.copies) * 256 * 1536 * 2,
              3 * bench::l2Bytes(*context));
  EXPECT_GT(gemm.stats.medianMs, 0.0);
  EXPECT_EQ(bench::decodeStepMatmuls("qwen2.5-1.5b").size(), 197u);
  EXPECT_EQ(bench::decodeStepMatmuls("llama3-8b").size(), 225u);

  if (context->major() < 9)
    return;
  Artifact artifact = parse(testArtifact(context->chip(), false));
  Executor executor(artifact, *context);
  bench::bindPlaceholderWeights(executor, stream->get());
  EXPECT_TRUE(executor.unboundArguments().empty());
  bench::PlanResult plan =
      bench::artifactPlan(*context, executor, stream->get(), 1, config);
  EXPECT_EQ(plan.weightBytes, uint64_t(kN * kK + kN * 4));
  // 8 KiB of weights: the copies stop at the cap and the L2 is flushed.
  EXPECT_EQ(plan.copies, bench::kMaxCopies);
  EXPECT_TRUE(plan.l2Flushed);
  EXPECT_GT(plan.stats.medianMs, 0.0);
  EXPECT_EQ(plan.steps, 5u);
}

//===----------------------------------------------------------------------===//
// Compiled matvec formats against the C++ reference
//===----------------------------------------------------------------------===//

namespace {

/// tiledArtifact with an act_order weight whose `perm` (made by the repack)
/// is passed to the do-nothing kernel.
json actOrderArtifact(const std::string &chip) {
  json artifact = tiledArtifact(chip);
  artifact["weights"][0]["encoding"] = "int4, group = 64, scale = f16, act_order";
  artifact["weights"][0]["layout"] = "tiled, tile_n = 1, tile_k = 32";
  artifact["plans"][0]["steps"][0]["args"][1] = {{"weight", "model.t"},
                                                 {"component", "perm"}};
  return artifact;
}

} // namespace

// act_order weights bind in the sorted layout: the device codes and `perm`
// are exactly qfuse_format's repack of the row-major components.
TEST_F(Gpu, ExecutorSortsActOrderColumns) {
  if (context->major() < 9)
    GTEST_SKIP() << "the test kernels target sm_90";
  const int n = 8, k = 256;
  Artifact parsed = parse(actOrderArtifact(context->chip()));
  Executor executor(parsed, *context);
  const fmt::Encoding &enc = parsed.weights[0].encodingAttr;
  std::vector<float> w(n * k);
  for (int i = 0; i < n * k; ++i)
    w[i] = std::sin(0.37f * i);
  std::vector<int32_t> gIdx(k);
  for (int col = 0; col < k; ++col)
    gIdx[col] = (col * 5) % k / 64; // every group 64 columns, interleaved
  fmt::QuantizeOptions options;
  options.gIdx = gIdx.data();
  fmt::TensorMap rowMajor, sorted;
  std::string error;
  ASSERT_TRUE(fmt::quantizeRTN(enc, w.data(), n, k, rowMajor, error, options))
      << error;
  ASSERT_TRUE(fmt::repack(enc, parsed.weights[0].layoutAttr, rowMajor, n, k,
                          sorted, error))
      << error;
  executor.bindWeight("model.t", rowMajor);
  for (const char *component : {"codes", "perm"}) {
    const std::vector<uint8_t> &expected = sorted.at(component).data;
    ASSERT_EQ(executor.componentBytes("model.t", component), expected.size());
    std::vector<uint8_t> onDevice(expected.size());
    ASSERT_EQ(cuMemcpyDtoH(onDevice.data(),
                           executor.componentPointer("model.t", component),
                           onDevice.size()),
              CUDA_SUCCESS);
    EXPECT_EQ(onDevice, expected) << component;
  }
  EXPECT_TRUE(executor.unboundArguments().empty());
}

TEST(GpuTestInputs, PermIsALayoutComponentOfActOrderWeights) {
  Artifact parsed = parse(actOrderArtifact("sm_90"));
  ASSERT_NE(parsed.weights[0].findComponent("perm"), nullptr);
  EXPECT_EQ(parsed.weights[0].findComponent("perm")->shape,
            (std::vector<int64_t>{256}));
  json plain = actOrderArtifact("sm_90");
  plain["weights"][0]["encoding"] = "int4, group = 64, scale = f16";
  expectErrorContaining([&] { parse(plain); },
                        {"has no component 'perm'", "codes, scales"});
}

namespace {

/// The repository root, from the test kernels' path.
std::string repositoryRoot() {
  std::string ptx = QFUSE_TEST_PTX;
  const std::string suffix = "unittests/Runtime/Inputs/test_kernels.ptx";
  return ptx.substr(0, ptx.size() - suffix.size());
}

/// Checks, at every batch size the artifact was compiled for (1, 2, 4, 8),
/// each launch whose weight is in `weights` against format::referenceMatmul
/// on random weights quantized into its encoding (check::checkPlan): the
/// formats of test/Tools/qfuse-compile/Inputs/formats.mlir, compiled by
/// bench/make-artifacts.sh into artifacts/formats.qfa (QFUSE_FORMATS_QFA
/// overrides the path). Shapes include odd N (1000, 333) and odd K (1000,
/// 1056).
void checkCompiledFormats(cuda::Context &context, cuda::Stream &stream,
                          std::initializer_list<const char *> weights) {
  const char *overridePath = std::getenv("QFUSE_FORMATS_QFA");
  const std::string path =
      overridePath ? overridePath : repositoryRoot() + "artifacts/formats.qfa";
  if (!std::ifstream(path))
    GTEST_SKIP() << "no compiled formats artifact at " << path
                 << " (bench/make-artifacts.sh writes it on the compiler "
                    "machine; the GPU round carries it)";
  Artifact artifact = Artifact::load(path);
  for (const char *w : weights)
    ASSERT_NE(artifact.findWeight(w), nullptr)
        << path << " has no weight '" << w << "': recompile it";
  Executor executor(artifact, context);
  auto hostWeights = check::bindRandomWeights(executor, 20261129);
  std::set<int64_t> batches;
  for (const Plan &plan : artifact.plans)
    batches.insert(plan.batch);
  EXPECT_EQ(batches, (std::set<int64_t>{1, 2, 4, 8}));
  for (int64_t batch : batches) {
    int checked = 0;
    for (const check::LaunchCheck &c :
         check::checkPlan(executor, batch, stream.get(), hostWeights, 7 + batch)
             .launches) {
      // A launch may read the weight's copy in another layout
      // ("<name>@tiled_n32_k32"): counted under its checkpoint tensor.
      const WeightSpec *spec = artifact.findWeight(c.weight);
      const std::string source = spec ? spec->checkpointName() : c.weight;
      if (std::find_if(weights.begin(), weights.end(), [&](const char *w) {
            return source == w;
          }) == weights.end())
        continue;
      ++checked;
      EXPECT_TRUE(c.passed)
          << c.weight << " (" << c.kernel << ") M=" << c.m << " N=" << c.n
          << " K=" << c.k << ": relative error " << c.relativeError
          << (c.unwritten ? ", outputs left unwritten" : "");
    }
    EXPECT_EQ(checked, int(weights.size())) << "batch " << batch;
  }
}

} // namespace

// GPTQ act_order: columns sorted by group at bind time (qfuse_format's
// repack adds `perm`), activations gathered through it into shared memory.
// Random desc_act g_idx (check::bindRandomWeights); int4 1536x1536 g128,
// uint4 asymmetric N = 1000 g64, int8 K = 1000 g40.
TEST_F(Gpu, MatVecActOrderMatchesTheReference) {
  checkCompiledFormats(*context, *stream,
                       {"int4_act", "uint4_act", "int8_act_k1000"});
}

// 2:4 sparse int4 (tiled, g128, N = 1000), uint4 with zero points (g64),
// int8 per channel (N = 333): kept codes plus 2-bit positions.
TEST_F(Gpu, MatVecSparse24IntegersMatchTheReference) {
  checkCompiledFormats(*context, *stream,
                       {"sp24_int4", "sp24_uint4", "sp24_int8"});
}

// Codebooks of 2 bits (inline), 3 bits (inline, N = 8960; named f16 table,
// N = 333, K = 1056) and 8 bits (named f32 table, per channel, N = 1000).
TEST_F(Gpu, MatVecCodebooksOfOtherWidthsMatchTheReference) {
  checkCompiledFormats(*context, *stream, {"cb2", "cb3", "cb3_k1056", "cb8"});
}

TEST(GpuTestInputs, ParseOnTheCpu) {
  Artifact withCubin = parse(testArtifact("sm_90", true));
  EXPECT_FALSE(withCubin.kernels[0].cubin.empty());
  EXPECT_EQ(withCubin.plans.size(), 2u);
  Artifact tiled = parse(tiledArtifact("sm_90"));
  EXPECT_FALSE(tiled.weights[0].layoutAttr.isRowMajor());
}

TEST(BenchHost, ParsesShapes) {
  bench::GemmShape shape = bench::parseGemmShape("16x4096x1024");
  EXPECT_EQ(shape.m, 16);
  EXPECT_EQ(shape.matmul.n, 4096);
  EXPECT_EQ(shape.matmul.k, 1024);
  EXPECT_THROW(bench::parseGemmShape("4096x1024"), qfuse::Error);
  EXPECT_THROW(bench::parseGemmShape("1x0x5"), qfuse::Error);
  EXPECT_THROW(bench::parseGemmShape("1xx5"), qfuse::Error);
  EXPECT_THROW(bench::decodeStepMatmuls("gpt2"), qfuse::Error);
  bench::Stats stats = bench::Stats::of({3, 1, 2, 10});
  EXPECT_EQ(stats.medianMs, 2.5);
  EXPECT_EQ(stats.minMs, 1);
  EXPECT_EQ(stats.maxMs, 10);
  EXPECT_EQ(bench::rotatingCopies(60, 60), 4);
}
