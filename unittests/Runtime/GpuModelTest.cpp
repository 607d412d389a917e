//===- GpuModelTest.cpp - gemm steps, state buffers, the Generator --------===//
//
// The runtime's whole-model parts on a GPU: cuBLAS gemm steps (with bias
// and residual, run and replayed from a graph) against a double-precision
// CPU reference with outputs poisoned first; state buffers shared by plans
// and kept across runs; and the Generator over a toy model whose tokens a
// CPU loop predicts exactly (Inputs/test_kernels.cu: cache write, then a
// cache "attention"), through padded prefill chunks and graph replays. Every
// test skips with "qfuse-gpu-skip:" and the reason where no device is usable.
//
//===----------------------------------------------------------------------===//

#include "GpuFixture.h"
#include "qfuse/format/Numerics.h"
#include "qfuse/format/Packing.h"
#include "qfuse/runtime/Error.h"
#include "qfuse/runtime/device/Executor.h"
#include "qfuse/runtime/device/Generator.h"
#include "qfuse/runtime/checkpoint/ModelCheckpoint.h"
#include "qfuse/runtime/device/ModelLoader.h"
#include "qfuse/runtime/checkpoint/Safetensors.h"
#include "qfuse/runtime/tooling/Check.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <random>
#include <sstream>

using namespace qfuse::runtime;
using nlohmann::json;
namespace fmt = qfuse::format;

namespace {

class GpuModel : public qfuse::testing::GpuFixture {};

void expectErrorContaining(const std::function<void()> &body,
                           std::initializer_list<std::string> fragments) {
  try {
    body();
    FAIL() << "no error";
  } catch (const qfuse::Error &e) {
    const std::string message = e.what();
    for (const std::string &fragment : fragments)
      EXPECT_NE(message.find(fragment), std::string::npos)
          << "'" << fragment << "' not in: " << message;
  }
}

std::string testPtx() {
  std::ifstream stream(QFUSE_TEST_PTX);
  std::ostringstream text;
  text << stream.rdbuf();
  return text.str();
}

json base(const std::string &chip) {
  return {{"format", "qfuse-artifact"},
          {"version", kArtifactVersion},
          {"producer", "GpuModelTest"},
          {"target", {{"chip", chip}}},
          {"kernels", json::array()},
          {"inputs", json::array()}};
}

//===----------------------------------------------------------------------===//
// gemm steps
//===----------------------------------------------------------------------===//

constexpr int kN = 40, kK = 96;

/// y = x W^T and z = x W^T + b + r, at batches 1 and 3.
json gemmArtifact(const std::string &chip) {
  json a = base(chip);
  a["weights"] = {{{"name", "w"},
                   {"shape", {kN, kK}},
                   {"encoding", "f16"},
                   {"layout", "row_major"}}};
  a["tensors"] = {{{"name", "b"}, {"shape", {kN}}, {"dtype", "f16"}}};
  a["buffers"] = {{{"name", "x"}, {"shape", {"M", kK}}, {"dtype", "f16"}},
                  {{"name", "r"}, {"shape", {"M", kN}}, {"dtype", "f16"}},
                  {{"name", "y"}, {"shape", {"M", kN}}, {"dtype", "f16"}},
                  {{"name", "z"}, {"shape", {"M", kN}}, {"dtype", "f16"}}};
  a["outputs"] = {"y", "z"};
  json steps = {{{"gemm", {{"x", "x"}, {"weight", "w"}, {"y", "y"}}}},
                {{"gemm",
                  {{"x", "x"},
                   {"weight", "w"},
                   {"y", "z"},
                   {"bias", "b"},
                   {"residual", "r"}}}}};
  a["plans"] = {{{"batch", 1}, {"steps", steps}},
                {{"batch", 3}, {"steps", steps}}};
  return a;
}

/// The float a 16-bit f16 or bf16 value stands for.
float toFloat(DType dtype, uint16_t bits) {
  return dtype == DType::BF16 ? fmt::bfloat16ToFloat(bits)
                              : fmt::halfToFloat(bits);
}

/// f16 (or bf16) values drawn uniformly from [-1, 1], and their floats.
std::vector<uint16_t> random16(DType dtype, size_t count, std::mt19937 &rng,
                               std::vector<float> &floats) {
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<uint16_t> h(count);
  floats.resize(count);
  for (size_t i = 0; i < count; ++i) {
    const float v = uniform(rng);
    h[i] = dtype == DType::BF16 ? fmt::floatToBFloat16(v) : fmt::floatToHalf(v);
    floats[i] = toFloat(dtype, h[i]);
  }
  return h;
}

std::vector<uint16_t> randomHalves(size_t count, std::mt19937 &rng,
                                   std::vector<float> &floats) {
  return random16(DType::F16, count, rng, floats);
}

double relativeError(const std::vector<uint16_t> &got,
                     const std::vector<double> &ref, bool &sawNan,
                     DType dtype = DType::F16) {
  double err = 0, norm = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    const double v = toFloat(dtype, got[i]);
    sawNan |= std::isnan(v);
    err += (v - ref[i]) * (v - ref[i]);
    norm += ref[i] * ref[i];
  }
  return std::sqrt(err / norm);
}

} // namespace

TEST_F(GpuModel, GemmStepsMatchADoubleReference) {
  Artifact artifact =
      Artifact::parse(gemmArtifact(context->chip()).dump(), "gemm.qfa");
  Executor executor(artifact, *context);
  std::mt19937 rng(11);
  std::vector<float> wf, bf;
  std::vector<uint16_t> w = randomHalves(kN * kK, rng, wf);
  std::vector<uint16_t> b = randomHalves(kN, rng, bf);
  // The dense f16 weight through the one quantizer (a rounding to f16,
  // exact here): its "codes" are the f16 matrix.
  fmt::TensorMap components;
  std::string error;
  ASSERT_TRUE(fmt::quantizeRTN(artifact.findWeight("w")->encodingAttr,
                               wf.data(), kN, kK, components, error))
      << error;
  executor.bindWeight("w", components);
  executor.bindTensor("b", b.data(), b.size() * 2);

  for (int64_t m : {1, 3}) {
    SCOPED_TRACE("batch " + std::to_string(m));
    executor.allocate(m);
    std::vector<float> xf, rf;
    std::vector<uint16_t> x = randomHalves(size_t(m) * kK, rng, xf);
    std::vector<uint16_t> r = randomHalves(size_t(m) * kN, rng, rf);
    executor.buffer(m, "x").upload(x.data(), x.size() * 2);
    executor.buffer(m, "r").upload(r.data(), r.size() * 2);
    std::vector<double> yRef(size_t(m) * kN), zRef(yRef.size());
    for (int64_t i = 0; i < m; ++i)
      for (int j = 0; j < kN; ++j) {
        double dot = 0;
        for (int k = 0; k < kK; ++k)
          dot += double(xf[i * kK + k]) * wf[j * kK + k];
        yRef[i * kN + j] = dot;
        zRef[i * kN + j] = dot + bf[j] + rf[i * kN + j];
      }
    auto check = [&](const char *how) {
      SCOPED_TRACE(how);
      stream->synchronize();
      for (const char *name : {"y", "z"}) {
        std::vector<uint16_t> got(size_t(m) * kN);
        executor.buffer(m, name).download(got.data(), got.size() * 2);
        bool sawNan = false;
        const double rel =
            relativeError(got, name[0] == 'y' ? yRef : zRef, sawNan);
        EXPECT_FALSE(sawNan) << name << " kept its NaN poison";
        EXPECT_LT(rel, 2e-3) << name;
      }
    };
    auto poison = [&] {
      executor.buffer(m, "y").fill(0xFF, stream->get()); // f16 NaN
      executor.buffer(m, "z").fill(0xFF, stream->get());
    };
    poison();
    executor.run(m, stream->get());
    check("run");
    poison();
    executor.capture(m, stream->get());
    executor.replay(m, stream->get());
    check("graph replay");
  }
}

//===----------------------------------------------------------------------===//
// gemm steps on a weight buffer (version 5: the dequantize + cuBLAS fallback)
//===----------------------------------------------------------------------===//

namespace {

/// Relative error bounds: the outputs' rounding dominates. f16 as for the
/// gemm steps above; bf16 keeps 8 bits, not 11, so its rounding is 8x
/// coarser (~1e-3): check::kRelativeTolerance, far below a wrong weight's ~1.
double gemmTolerance(DType dtype) { return dtype == DType::BF16 ? 1e-2 : 2e-3; }

/// Per dtype: y = x W^T and z = x W^T + b + r, W read from a workspace the
/// test fills itself (in a compiled model a qf.dequantize launch does). The
/// f16 workspace is flat and larger than W; the bf16 one is [N, K].
json workspaceGemmArtifact(const std::string &chip) {
  json a = base(chip);
  a["tensors"] = {{{"name", "b"}, {"shape", {kN}}, {"dtype", "f16"}},
                  {{"name", "b_bf16"}, {"shape", {kN}}, {"dtype", "bf16"}}};
  a["buffers"] = {{{"name", "ws"},
                   {"shape", {kN * kK + 16}},
                   {"dtype", "f16"},
                   {"workspace", true}},
                  {{"name", "ws_bf16"},
                   {"shape", {kN, kK}},
                   {"dtype", "bf16"},
                   {"workspace", true}}};
  json steps = json::array();
  a["outputs"] = json::array();
  for (const char *suffix : {"", "_bf16"}) {
    const std::string dtype = *suffix ? "bf16" : "f16";
    auto name = [&](const char *base) { return std::string(base) + suffix; };
    for (const char *base : {"x", "r", "y", "z"})
      a["buffers"].push_back({{"name", name(base)},
                              {"shape", {"M", base[0] == 'x' ? kK : kN}},
                              {"dtype", dtype}});
    a["outputs"].push_back(name("y"));
    a["outputs"].push_back(name("z"));
    steps.push_back({{"gemm",
                      {{"x", name("x")},
                       {"weight_buffer", name("ws")},
                       {"y", name("y")}}}});
    steps.push_back({{"gemm",
                      {{"x", name("x")},
                       {"weight_buffer", name("ws")},
                       {"y", name("z")},
                       {"bias", name("b")},
                       {"residual", name("r")}}}});
  }
  a["plans"] = {{{"batch", 1}, {"steps", steps}},
                {{"batch", 3}, {"steps", steps}}};
  return a;
}

} // namespace

TEST_F(GpuModel, GemmStepsOnAWorkspaceMatchADoubleReference) {
  Artifact artifact = Artifact::parse(
      workspaceGemmArtifact(context->chip()).dump(), "workspace-gemm.qfa");
  Executor executor(artifact, *context);
  std::mt19937 rng(21);
  const DType dtypes[] = {DType::F16, DType::BF16};
  const std::string suffixes[] = {"", "_bf16"};
  std::vector<float> wf[2], bf[2];
  std::vector<uint16_t> w[2];
  for (int d = 0; d < 2; ++d) {
    w[d] = random16(dtypes[d], kN * kK, rng, wf[d]);
    std::vector<uint16_t> b = random16(dtypes[d], kN, rng, bf[d]);
    executor.bindTensor("b" + suffixes[d], b.data(), b.size() * 2);
  }

  // One allocation per workspace, shared by both plans and not counted in
  // either plan's buffers; the weights are uploaded once, through batch 1.
  executor.allocate(1);
  executor.allocate(3);
  EXPECT_EQ(executor.workspaceBytes(), size_t(kN * kK + 16) * 2 +
                                           size_t(kN * kK) * 2);
  EXPECT_EQ(executor.bufferBytes(3), 2 * size_t(3) * (kK + 3 * kN) * 2);
  EXPECT_EQ(executor.buffer(1, "ws").ptr(), executor.buffer(3, "ws").ptr());
  for (int d = 0; d < 2; ++d)
    executor.buffer(1, "ws" + suffixes[d]).upload(w[d].data(), w[d].size() * 2);
  // A new sequence zeroes state, never a workspace.
  executor.resetState(stream->get());

  for (int64_t m : {1, 3}) {
    for (int d = 0; d < 2; ++d) {
      SCOPED_TRACE("batch " + std::to_string(m) + ", " +
                   std::string(artifactName(dtypes[d])));
      auto name = [&](const char *base) { return base + suffixes[d]; };
      std::vector<float> xf, rf;
      std::vector<uint16_t> x = random16(dtypes[d], size_t(m) * kK, rng, xf);
      std::vector<uint16_t> r = random16(dtypes[d], size_t(m) * kN, rng, rf);
      executor.buffer(m, name("x")).upload(x.data(), x.size() * 2);
      executor.buffer(m, name("r")).upload(r.data(), r.size() * 2);
      std::vector<double> yRef(size_t(m) * kN), zRef(yRef.size());
      for (int64_t i = 0; i < m; ++i)
        for (int j = 0; j < kN; ++j) {
          double dot = 0;
          for (int k = 0; k < kK; ++k)
            dot += double(xf[i * kK + k]) * wf[d][j * kK + k];
          yRef[i * kN + j] = dot;
          zRef[i * kN + j] = dot + bf[d][j] + rf[i * kN + j];
        }
      auto check = [&](const char *how) {
        SCOPED_TRACE(how);
        stream->synchronize();
        for (const char *base : {"y", "z"}) {
          std::vector<uint16_t> got(size_t(m) * kN);
          executor.buffer(m, name(base)).download(got.data(), got.size() * 2);
          bool sawNan = false;
          const double rel = relativeError(got, base[0] == 'y' ? yRef : zRef,
                                           sawNan, dtypes[d]);
          EXPECT_FALSE(sawNan) << base << " kept its NaN poison";
          EXPECT_LT(rel, gemmTolerance(dtypes[d])) << base;
        }
      };
      auto poison = [&] { // 0xFFFF is a NaN in f16 and bf16
        executor.buffer(m, name("y")).fill(0xFF, stream->get());
        executor.buffer(m, name("z")).fill(0xFF, stream->get());
      };
      poison();
      executor.run(m, stream->get());
      check("run");
      poison();
      executor.capture(m, stream->get());
      executor.replay(m, stream->get());
      check("graph replay");
    }
  }
}

/// A plan as the compiler writes the fallback: qf.dequantize launches (the
/// int8 test kernel standing in for a generated one) fill a flat f16
/// workspace with w1, then w2 (another shape), and a bf16 one with w1, each
/// followed by a gemm on it. check::checkPlan must check each gemm against
/// the weight dequantized last before it, and each workspace against the
/// last weight written there, exactly.
TEST_F(GpuModel, CheckFollowsDequantizeLaunchesIntoWorkspaces) {
  if (context->major() < 9)
    GTEST_SKIP() << "the test kernels target sm_90";
  constexpr int kN2 = 24;
  json a = base(context->chip());
  auto param = [](const char *name, const char *type) {
    return json{{"name", name}, {"type", type}};
  };
  a["kernels"] = {{{"name", "qf_test_dequant_int8_16"},
                   {"ptx", testPtx()},
                   {"params",
                    {param("w", "ptr"), param("codes", "ptr"),
                     param("scales", "ptr"), param("n", "i32"),
                     param("k", "i32"), param("bf16", "i32")}}}};
  auto weight = [](const char *name, int n) {
    return json{{"name", name},
                {"shape", {n, kK}},
                {"encoding", "int8, per_channel, scale = f32"},
                {"layout", "row_major"}};
  };
  a["weights"] = {weight("w1", kN), weight("w2", kN2)};
  a["buffers"] = {
      {{"name", "x"}, {"shape", {"M", kK}}, {"dtype", "f16"}},
      {{"name", "y1"}, {"shape", {"M", kN}}, {"dtype", "f16"}},
      {{"name", "y2"}, {"shape", {"M", kN2}}, {"dtype", "f16"}},
      {{"name", "xb"}, {"shape", {"M", kK}}, {"dtype", "bf16"}},
      {{"name", "yb"}, {"shape", {"M", kN}}, {"dtype", "bf16"}},
      {{"name", "ws"},
       {"shape", {kN * kK}},
       {"dtype", "f16"},
       {"workspace", true}},
      {{"name", "ws_bf16"},
       {"shape", {kN, kK}},
       {"dtype", "bf16"},
       {"workspace", true}}};
  a["outputs"] = {"y1", "y2", "yb"};
  auto dequantize = [](const char *w, int n, const char *into, int bf16) {
    return json{{"launch", "qf_test_dequant_int8_16"},
                {"op", "qf.dequantize"},
                {"grid", {(n * kK + 255) / 256, 1, 1}},
                {"block", {256, 1, 1}},
                {"args",
                 {{{"buffer", into}},
                  {{"weight", w}, {"component", "codes"}},
                  {{"weight", w}, {"component", "scales"}},
                  {{"i32", n}},
                  {{"i32", kK}},
                  {{"i32", bf16}}}}};
  };
  auto gemm = [](const char *x, const char *ws, const char *y) {
    return json{{"gemm", {{"x", x}, {"weight_buffer", ws}, {"y", y}}}};
  };
  json steps = {dequantize("w1", kN, "ws", 0),
                gemm("x", "ws", "y1"),
                dequantize("w2", kN2, "ws", 0),
                gemm("x", "ws", "y2"),
                dequantize("w1", kN, "ws_bf16", 1),
                gemm("xb", "ws_bf16", "yb")};
  a["plans"] = {{{"batch", 1}, {"steps", steps}},
                {{"batch", 3}, {"steps", steps}}};
  Artifact artifact = Artifact::parse(a.dump(), "dequantize-fallback.qfa");
  Executor executor(artifact, *context);
  const auto weights = check::bindRandomWeights(executor, 5);
  for (int64_t m : {1, 3}) {
    SCOPED_TRACE("batch " + std::to_string(m));
    check::PlanCheck result =
        check::checkPlan(executor, m, stream->get(), weights, 7 + m);
    EXPECT_TRUE(result.skipped.empty());
    const std::vector<check::LaunchCheck> &checks = result.launches;
    ASSERT_EQ(checks.size(), 5u);
    const char *expected[] = {"w1", "w2", "w1", "w2 dequantized into 'ws'",
                              "w1 dequantized into 'ws_bf16'"};
    for (size_t i = 0; i < checks.size(); ++i) {
      const check::LaunchCheck &c = checks[i];
      EXPECT_EQ(c.weight, expected[i]);
      EXPECT_EQ(c.dequantize, i >= 3);
      EXPECT_TRUE(c.passed) << c.weight << " (" << c.kernel << "): relative "
                            << "error " << c.relativeError << ", "
                            << c.mismatches << " mismatches"
                            << (c.unwritten ? ", unwritten" : "");
    }
    EXPECT_EQ(checks[1].n, kN2);
    EXPECT_EQ(checks[3].n, kN2);
    EXPECT_EQ(checks[2].kernel, "cublas gemm");
  }
}

TEST_F(GpuModel, LoadsACheckpointInParallelAndRandomModels) {
  Artifact artifact =
      Artifact::parse(gemmArtifact(context->chip()).dump(), "gemm.qfa");
  // A checkpoint with the weight in f32 and the bias in bf16.
  std::mt19937 rng(12);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> w(kN * kK), b(kN);
  for (float &v : w)
    v = uniform(rng);
  std::vector<uint16_t> bBits(kN);
  for (int j = 0; j < kN; ++j)
    b[j] = fmt::bfloat16ToFloat(bBits[j] = fmt::floatToBFloat16(uniform(rng)));
  std::string dir = ::testing::TempDir() + "qfuse-gpu-ckpt-XXXXXX";
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  std::ofstream(dir + "/config.json") << "{\"model_type\": \"test\"}";
  SafetensorsWriter writer;
  writer.add("w.weight", DType::F32, {kN, kK}, w.data(), w.size() * 4);
  writer.add("b", DType::BF16, {kN}, bBits.data(), bBits.size() * 2);
  writer.write(dir + "/model.safetensors");
  ModelCheckpoint checkpoint = ModelCheckpoint::open(dir);

  Executor executor(artifact, *context);
  LoadStats stats = loadCheckpoint(executor, checkpoint, 4);
  EXPECT_EQ(stats.weights, 1u);
  EXPECT_EQ(stats.tensors, 1u);
  EXPECT_TRUE(executor.unboundArguments().empty());

  executor.allocate(1);
  std::vector<float> xf, rf;
  std::vector<uint16_t> x = randomHalves(kK, rng, xf);
  std::vector<uint16_t> r = randomHalves(kN, rng, rf);
  executor.buffer(1, "x").upload(x.data(), x.size() * 2);
  executor.buffer(1, "r").upload(r.data(), r.size() * 2);
  executor.buffer(1, "z").fill(0xFF, stream->get());
  executor.run(1, stream->get());
  stream->synchronize();
  std::vector<double> ref(kN);
  for (int j = 0; j < kN; ++j) {
    double dot = 0;
    for (int k = 0; k < kK; ++k) // the weight as the f16 it became
      dot += double(xf[k]) * fmt::halfToFloat(fmt::floatToHalf(w[j * kK + k]));
    ref[j] = dot + b[j] + rf[j];
  }
  std::vector<uint16_t> got(kN);
  executor.buffer(1, "z").download(got.data(), got.size() * 2);
  bool sawNan = false;
  EXPECT_LT(relativeError(got, ref, sawNan), 2e-3);
  EXPECT_FALSE(sawNan);

  // A missing tensor stops the load with its name and the file.
  std::string empty = ::testing::TempDir() + "qfuse-gpu-ckpt-XXXXXX";
  ASSERT_NE(mkdtemp(empty.data()), nullptr);
  std::ofstream(empty + "/config.json") << "{}";
  SafetensorsWriter onlyBias;
  onlyBias.add("b", DType::BF16, {kN}, bBits.data(), bBits.size() * 2);
  onlyBias.write(empty + "/model.safetensors");
  Executor other(artifact, *context);
  expectErrorContaining(
      [&] { loadCheckpoint(other, ModelCheckpoint::open(empty), 2); },
      {"artifact weight 'w'", "'w.weight'", "model.safetensors"});

  // Random models bind everything, with finite values.
  Executor random(artifact, *context);
  bindRandomModel(random, 5, 3);
  EXPECT_TRUE(random.unboundArguments().empty());
  random.allocate(1);
  random.buffer(1, "x").upload(x.data(), x.size() * 2);
  random.buffer(1, "r").upload(r.data(), r.size() * 2);
  random.run(1, stream->get());
  stream->synchronize();
  random.buffer(1, "z").download(got.data(), got.size() * 2);
  for (uint16_t h : got)
    ASSERT_TRUE(std::isfinite(fmt::halfToFloat(h)));
}

//===----------------------------------------------------------------------===//
// State buffers
//===----------------------------------------------------------------------===//

constexpr int kWidth = 256;

TEST_F(GpuModel, StateBuffersPersistAcrossPlansAndRuns) {
  if (context->major() < 9)
    GTEST_SKIP() << "the test kernels target sm_90";
  json a = base(context->chip());
  a["kernels"] = {{{"name", "qf_test_axpy"},
                   {"ptx", testPtx()},
                   {"params",
                    {{{"name", "x"}, {"type", "ptr"}},
                     {{"name", "y"}, {"type", "ptr"}},
                     {{"name", "a"}, {"type", "f32"}},
                     {{"name", "n"}, {"type", "i32"}}}}}};
  a["buffers"] = {
      {{"name", "x"}, {"shape", {"M", kWidth}}, {"dtype", "f32"}},
      {{"name", "acc"}, {"shape", {kWidth}}, {"dtype", "f32"}, {"state", true}}};
  a["outputs"] = {"acc"};
  auto axpy = [](float scale) {
    return json{{"launch", "qf_test_axpy"},
                {"grid", {1, 1, 1}},
                {"block", {kWidth, 1, 1}},
                {"args",
                 {{{"buffer", "x"}},
                  {{"buffer", "acc"}},
                  {{"f32", scale}},
                  {{"i32", kWidth}}}}};
  };
  // acc += 1 * x at batch 1, acc += 2 * x at batch 2.
  a["plans"] = json::array(
      {json{{"batch", 1}, {"steps", json::array({axpy(1.0f)})}},
       json{{"batch", 2}, {"steps", json::array({axpy(2.0f)})}}});
  Artifact artifact = Artifact::parse(a.dump(), "state.qfa");
  Executor executor(artifact, *context);
  executor.allocate(1);
  executor.allocate(2);
  EXPECT_EQ(executor.buffer(1, "acc").ptr(), executor.buffer(2, "acc").ptr());
  EXPECT_NE(executor.buffer(1, "x").ptr(), executor.buffer(2, "x").ptr());
  EXPECT_EQ(executor.stateBytes(), size_t(kWidth) * 4);
  EXPECT_EQ(executor.bufferBytes(1), size_t(kWidth) * 4); // x only

  auto acc = [&] {
    stream->synchronize();
    std::vector<float> values(kWidth);
    executor.stateBuffer("acc").download(values.data(), kWidth * 4);
    return values;
  };
  for (float v : acc())
    ASSERT_EQ(v, 0.0f); // zeroed at allocation

  std::vector<float> x1(kWidth), x2(2 * kWidth);
  for (int i = 0; i < kWidth; ++i) {
    x1[i] = float(i);
    x2[i] = 0.5f * float(i);
  }
  executor.buffer(1, "x").upload(x1.data(), x1.size() * 4);
  executor.buffer(2, "x").upload(x2.data(), x2.size() * 4);
  executor.run(1, stream->get());
  executor.run(2, stream->get());
  std::vector<float> got = acc();
  for (int i = 0; i < kWidth; ++i)
    ASSERT_EQ(got[i], x1[i] + 2.0f * x2[i]) << i;

  // Graph replays keep accumulating into the same state.
  executor.capture(1, stream->get());
  executor.replay(1, stream->get());
  executor.replay(1, stream->get());
  got = acc();
  for (int i = 0; i < kWidth; ++i)
    ASSERT_EQ(got[i], 3.0f * x1[i] + 2.0f * x2[i]) << i;

  executor.resetState(stream->get());
  for (float v : acc())
    ASSERT_EQ(v, 0.0f);
}

//===----------------------------------------------------------------------===//
// Generator
//===----------------------------------------------------------------------===//

namespace {

constexpr int kVocab = 50;

/// The toy model (plans for batches 1 and 4) with `maxSeq` cache rows.
json toyModel(const std::string &chip, int maxSeq) {
  json a = base(chip);
  const std::string ptx = testPtx();
  auto param = [](const char *name, const char *type) {
    return json{{"name", name}, {"type", type}};
  };
  a["kernels"] = {
      {{"name", "qf_test_cache_write"},
       {"ptx", ptx},
       {"params",
        {param("ids", "ptr"), param("pos", "ptr"), param("cache", "ptr"),
         param("m", "i32")}}},
      {{"name", "qf_test_cache_sum"},
       {"ptx", ptx},
       {"params",
        {param("pos", "ptr"), param("cache", "ptr"), param("next", "ptr"),
         param("logits", "ptr"), param("m", "i32"), param("vocab", "i32")}}}};
  a["buffers"] = {
      {{"name", "input_ids"}, {"shape", {"M"}}, {"dtype", "i32"}},
      {{"name", "positions"}, {"shape", {"M"}}, {"dtype", "i32"}},
      {{"name", "next_token"}, {"shape", {"M"}}, {"dtype", "i32"}},
      {{"name", "logits"}, {"shape", {"M", kVocab}}, {"dtype", "f16"}},
      {{"name", "cache"}, {"shape", {maxSeq}}, {"dtype", "i32"}, {"state", true}}};
  a["outputs"] = {"next_token", "logits"};
  a["plans"] = json::array();
  for (int m : {1, 4})
    a["plans"].push_back(
        {{"batch", m},
         {"steps",
          {{{"launch", "qf_test_cache_write"},
            {"grid", {1, 1, 1}},
            {"block", {m, 1, 1}},
            {"args",
             {{{"buffer", "input_ids"}},
              {{"buffer", "positions"}},
              {{"buffer", "cache"}},
              {{"i32", m}}}}},
           {{"launch", "qf_test_cache_sum"},
            {"grid", {m, 1, 1}},
            {"block", {32, 1, 1}},
            {"args",
             {{{"buffer", "positions"}},
              {{"buffer", "cache"}},
              {{"buffer", "next_token"}},
              {{"buffer", "logits"}},
              {{"i32", m}},
              {{"i32", kVocab}}}}}}}});
  a["model"] = {{"architecture", "toy"},
                {"vocab_size", kVocab},
                {"max_seq", maxSeq}};
  return a;
}

/// What the toy model generates: each token is the sum of all before it.
std::vector<int32_t> expectedTokens(std::vector<int32_t> sequence,
                                    int64_t count) {
  std::vector<int32_t> out;
  for (int64_t i = 0; i < count; ++i) {
    int64_t sum = 0;
    for (int32_t t : sequence)
      sum += t;
    out.push_back(int32_t(sum % kVocab));
    sequence.push_back(out.back());
  }
  return out;
}

std::vector<int32_t> prompt(int length, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<int32_t> ids(static_cast<size_t>(length));
  for (int32_t &id : ids)
    id = int32_t(rng() % kVocab);
  return ids;
}

} // namespace

TEST_F(GpuModel, GeneratorMatchesTheToyModel) {
  if (context->major() < 9)
    GTEST_SKIP() << "the test kernels target sm_90";
  Artifact artifact = Artifact::parse(toyModel(context->chip(), 39).dump(),
                                      "toy.qfa");
  Executor executor(artifact, *context);
  Generator generator(executor, stream->get());
  EXPECT_EQ(generator.prefillBatch(), 4);
  EXPECT_EQ(generator.maxSeq(), 39);

  // Prompt lengths around the chunk size: full chunks, a padded last chunk,
  // a prompt of one token; the same generator every time (new sequences).
  for (int length : {1, 3, 4, 7, 9}) {
    SCOPED_TRACE("prompt of " + std::to_string(length));
    std::vector<int32_t> ids = prompt(length, 100 + length);
    Generation out = generator.generate(ids, 10);
    EXPECT_EQ(out.tokens, expectedTokens(ids, 10));
    EXPECT_EQ(out.promptTokens, length);
    EXPECT_GT(out.ttftMs, 0.0);
    EXPECT_GT(out.decodeTokensPerSecond, 0.0);
  }
  // A prompt that ends 2 rows before max_seq: a padded 4-row chunk would
  // write past the cache, so the rest runs through the batch-1 plan.
  std::vector<int32_t> longPrompt = prompt(38, 7);
  EXPECT_EQ(generator.generate(longPrompt, 1).tokens,
            expectedTokens(longPrompt, 1));

  // Logits of the row behind every token: one-hot at the token.
  std::vector<int32_t> ids = prompt(6, 3);
  GenerateOptions options;
  options.keepLogits = true;
  Generation out = generator.generate(ids, 5, options);
  ASSERT_EQ(out.logits.size(), 5u);
  for (size_t s = 0; s < out.logits.size(); ++s) {
    ASSERT_EQ(out.logits[s].size(), size_t(kVocab));
    for (int v = 0; v < kVocab; ++v)
      ASSERT_EQ(out.logits[s][v], v == out.tokens[s] ? 1.0f : 0.0f)
          << "step " << s << ", logit " << v;
  }
  // max_new = 1: no decode step.
  EXPECT_EQ(generator.generate(ids, 1).decodeTokensPerSecond, 0.0);
}

TEST_F(GpuModel, GeneratorRejectsBadRequests) {
  if (context->major() < 9)
    GTEST_SKIP() << "the test kernels target sm_90";
  Artifact artifact = Artifact::parse(toyModel(context->chip(), 39).dump(),
                                      "toy.qfa");
  Executor executor(artifact, *context);
  Generator generator(executor, stream->get());
  expectErrorContaining([&] { generator.generate({}, 4); },
                        {"the prompt is empty"});
  expectErrorContaining([&] { generator.generate(prompt(30, 1), 10); },
                        {"prompt of 30 tokens", "10 new tokens",
                         "max_seq 39"});
  expectErrorContaining([&] { generator.generate({1, kVocab, 2}, 4); },
                        {"prompt token 1 is 50", "[0, 50)"});
  expectErrorContaining([&] { generator.generate({1}, 0); },
                        {"max_new_tokens is 0"});
}

TEST_F(GpuModel, GeneratorChecksTheModelContract) {
  if (context->major() < 9)
    GTEST_SKIP() << "the test kernels target sm_90";
  json noModel = toyModel(context->chip(), 39);
  noModel.erase("model");
  Artifact a = Artifact::parse(noModel.dump(), "toy.qfa");
  Executor ea(a, *context);
  expectErrorContaining([&] { Generator(ea, stream->get()); },
                        {"toy.qfa", "\"model\" object with max_seq"});

  json wrongLogits = toyModel(context->chip(), 39);
  wrongLogits["buffers"][3]["shape"] = {"M", kVocab + 1};
  Artifact b = Artifact::parse(wrongLogits.dump(), "toy.qfa");
  Executor eb(b, *context);
  expectErrorContaining([&] { Generator(eb, stream->get()); },
                        {"buffer 'logits' is [M, 51] f16", "expected [M, 50]"});
}
