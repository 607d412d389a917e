//===- CalibrationGpuTest.cpp - GPTQ Hessians through the fp16 plan -------===//
//
// LayerwiseCalibrator on the compiled tiny Llama (fp16; bench/
// make-model-artifacts.sh writes artifacts/models/tiny-llama-fp16.qfa,
// QFUSE_CALIBRATION_QFA overrides the path) with the synthetic checkpoint
// of its preset, against the C++ reference decoder's linear inputs
// (ReferenceDecoder::setLinearObserver) on the same tokens:
//
// (a) layer 0's Hessians (q/k/v, o, gate/up, down) equal 2/n X^T X of the
//     reference's rows, relative Frobenius error < 1e-2, over samples whose
//     lengths are not multiples of the chunk;
// (b) after layer 0 is rebound with round-to-nearest int4 weights
//     (dequantized to f16) and propagated, layer 1's Hessians match the
//     reference run with those weights;
// (c) padding rows never count: GpuHessian against gptq::HessianAccumulator
//     on exactly the valid rows of padded chunks (padding poisoned), and the
//     calibrator against the full plan's own activations.
//
// Skips with "qfuse-gpu-skip:" where there is no device; without the
// artifact it skips saying where it looked.
//
//===----------------------------------------------------------------------===//

#include "GpuFixture.h"
#include "TinyLlamaArtifact.h"
#include "qfuse/format/Numerics.h"
#include "qfuse/gptq/Hessian.h"
#include "qfuse/reference/ModelConfig.h"
#include "qfuse/reference/ModelWeights.h"
#include "qfuse/reference/ReferenceDecoder.h"
#include "qfuse/reference/SyntheticModel.h"
#include "qfuse/reference/WeightEncoding.h"
#include "qfuse/runtime/device/DeviceArtifact.h"
#include "qfuse/runtime/gptq/Calibration.h"
#include "qfuse/runtime/Error.h"
#include "qfuse/runtime/checkpoint/ModelCheckpoint.h"
#include "qfuse/runtime/device/ModelLoader.h"
#include "qfuse/runtime/checkpoint/WeightSources.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <random>

#include <unistd.h>

using namespace qfuse::runtime;
namespace ref = qfuse::reference;
namespace fmt = qfuse::format;

namespace {

using Rows = std::vector<std::vector<double>>;

/// H = 2/n sum x x^T in double, row-major [K, K].
std::vector<double> hessianOf(const Rows &rows) {
  const size_t k = rows.front().size();
  std::vector<double> h(k * k, 0.0);
  for (const auto &x : rows)
    for (size_t i = 0; i < k; ++i)
      for (size_t j = 0; j < k; ++j)
        h[i * k + j] += x[i] * x[j];
  for (double &v : h)
    v *= 2.0 / double(rows.size());
  return h;
}

double relativeFrobenius(const std::vector<float> &gpu,
                         const std::vector<double> &expected) {
  double diff = 0, norm = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    const double d = double(gpu[i]) - expected[i];
    diff += d * d;
    norm += expected[i] * expected[i];
  }
  return std::sqrt(diff) / std::max(std::sqrt(norm), 1e-300);
}

/// "model.layers.1.mlp.up_proj" -> (1, Up).
std::pair<int64_t, ref::Projection> projectionOf(const std::string &module) {
  static const std::map<std::string, ref::Projection> kinds = {
      {"q_proj", ref::Projection::Q},       {"k_proj", ref::Projection::K},
      {"v_proj", ref::Projection::V},       {"o_proj", ref::Projection::O},
      {"gate_proj", ref::Projection::Gate}, {"up_proj", ref::Projection::Up},
      {"down_proj", ref::Projection::Down}};
  const auto layer = layerOfName(module);
  const auto kind = kinds.find(module.substr(module.rfind('.') + 1));
  if (!layer || kind == kinds.end())
    throw qfuse::Error("not a decoder projection: '" + module + "'");
  return {*layer, kind->second};
}

const ref::Projection kLinears[] = {ref::Projection::Q,    ref::Projection::K,
                                    ref::Projection::V,    ref::Projection::O,
                                    ref::Projection::Gate, ref::Projection::Up,
                                    ref::Projection::Down};

class CalibrationGpu : public qfuse::testing::GpuFixture {
protected:
  void TearDown() override {
    if (!modelDir.empty())
      std::filesystem::remove_all(modelDir);
  }

  /// Loads the artifact (false: it is missing, and the test should skip)
  /// and the synthetic checkpoint of its preset, on the GPU and for the
  /// reference (fp16 rounding, as the runtime loads an fp16 artifact).
  bool loadModel() {
    artifactPath = qfuse::testing::tinyLlamaFp16ArtifactPath();
    if (!std::ifstream(artifactPath))
      return false;
    artifact.emplace(loadArtifactForDevice(artifactPath, *context));
    modelDir = ::testing::TempDir() + "qfuse-calibration-" +
               std::to_string(::getpid()) + "-" +
               ::testing::UnitTest::GetInstance()->current_test_info()->name();
    config = ref::syntheticPreset("tiny-llama");
    ref::writeSyntheticModel(config, modelDir, {1, ref::StorageType::F16});
    ModelCheckpoint checkpoint = ModelCheckpoint::open(modelDir);
    checkModelAgainstConfig(*artifact, checkpoint);
    executor.emplace(*artifact, *context);
    loadCheckpoint(*executor, checkpoint, /*threads=*/2);
    weights = ref::loadCheckpointWeights(config, modelDir);
    ref::applyEncodingPlan(weights, ref::EncodingPlan{});
    return true;
  }

  /// The reference's inputs of every linear of `layer` over `samples`, each
  /// from position 0.
  std::map<ref::Projection, Rows>
  referenceRows(const ref::ModelWeights &w, int64_t layer,
                const std::vector<std::vector<int32_t>> &samples) const {
    std::map<ref::Projection, Rows> rows;
    ref::ReferenceDecoder decoder(config, w);
    decoder.setLinearObserver(
        [&](int64_t l, ref::Projection p, const std::vector<double> &x) {
          if (l == layer)
            rows[p].push_back(x);
        });
    for (const auto &sample : samples) {
      decoder.reset();
      decoder.prefill(sample);
    }
    return rows;
  }

  /// Every group's Hessian against the reference rows of its first module.
  void expectHessiansMatch(std::vector<HessianGroup> &groups,
                           const std::map<ref::Projection, Rows> &rows,
                           int64_t tokens, double tolerance) {
    for (HessianGroup &group : groups) {
      const auto [layer, p] = projectionOf(group.modules.front());
      const Rows &x = rows.at(p);
      ASSERT_EQ(int64_t(x.size()), tokens) << group.modules.front();
      EXPECT_EQ(group.hessian.samples(), tokens);
      EXPECT_EQ(group.hessian.pendingRows(), 0);
      ASSERT_EQ(group.hessian.columns(), int64_t(x.front().size()));
      const double error = relativeFrobenius(
          group.hessian.download(stream->get()), hessianOf(x));
      EXPECT_LT(error, tolerance)
          << "layer " << layer << " Hessian of '" << group.input << "' ("
          << group.modules.front() << ")";
      std::printf("layer %lld %-32s rel. Frobenius error %.3e\n",
                  (long long)layer, group.modules.front().c_str(), error);
    }
  }

  std::vector<std::vector<int32_t>>
  randomSamples(std::initializer_list<int> lengths, uint32_t seed) const {
    std::mt19937 rng(seed);
    std::vector<std::vector<int32_t>> samples;
    for (int length : lengths) {
      samples.emplace_back();
      for (int i = 0; i < length; ++i)
        samples.back().push_back(int32_t(rng() % uint32_t(config.vocabSize)));
    }
    return samples;
  }

  std::string artifactPath, modelDir;
  std::optional<Artifact> artifact;
  std::optional<Executor> executor;
  ref::ModelConfig config;
  ref::ModelWeights weights;
};

#define LOAD_MODEL_OR_SKIP()                                                   \
  do {                                                                         \
    if (!loadModel())                                                          \
      GTEST_SKIP() << "no compiled fp16 tiny Llama at " << artifactPath        \
                   << " (bench/make-model-artifacts.sh writes it; "            \
                      "QFUSE_CALIBRATION_QFA overrides the path)";             \
  } while (false)

} // namespace

TEST_F(CalibrationGpu, LayerZeroHessiansMatchTheReferenceDecoder) {
  LOAD_MODEL_OR_SKIP();
  std::map<CalibrationPhase, int> progress;
  CalibrationOptions options;
  options.hessianRows = 16; // several GEMMs per Hessian
  options.progress = [&](const CalibrationProgress &p) {
    ++progress[p.phase];
    EXPECT_LE(p.sample, p.samples);
  };
  LayerwiseCalibrator calib(*executor, stream->get(), options);
  ASSERT_EQ(calib.numLayers(), 2);
  ASSERT_EQ(calib.chunkRows(), 8);

  // 21 and 13 tokens: padded last chunks.
  const auto samples = randomSamples({21, 13, 16}, 7);
  calib.begin(samples);
  EXPECT_EQ(calib.tokens(), 50);
  EXPECT_EQ(calib.numChunks(), 3 + 2 + 2);
  EXPECT_EQ(calib.storedLayer(), 0);
  // Llama's one input per layer: the residual stream, [8, 256] f16 a chunk.
  EXPECT_EQ(calib.storeBytes(0), size_t(7 * 8 * 256 * 2));
  EXPECT_EQ(calib.heldStoreBytes(), calib.storeBytes(0));
  EXPECT_EQ(progress[CalibrationPhase::Capture], 3);

  std::vector<HessianGroup> groups = calib.collect(0);
  EXPECT_EQ(progress[CalibrationPhase::Collect], 3);
  ASSERT_EQ(groups.size(), 4u);
  EXPECT_EQ(groups[0].modules,
            (std::vector<std::string>{"model.layers.0.self_attn.q_proj",
                                      "model.layers.0.self_attn.k_proj",
                                      "model.layers.0.self_attn.v_proj"}));
  EXPECT_EQ(groups[1].modules,
            std::vector<std::string>{"model.layers.0.self_attn.o_proj"});
  EXPECT_EQ(groups[2].modules,
            (std::vector<std::string>{"model.layers.0.mlp.gate_proj",
                                      "model.layers.0.mlp.up_proj"}));
  EXPECT_EQ(groups[3].modules,
            std::vector<std::string>{"model.layers.0.mlp.down_proj"});
  expectHessiansMatch(groups, referenceRows(weights, 0, samples),
                      calib.tokens(), 1e-2);

  // Collecting again (the caches are zeroed per sample) gives the same H.
  std::vector<HessianGroup> again = calib.collect(0);
  for (size_t g = 0; g < groups.size(); ++g) {
    std::vector<float> first = groups[g].hessian.download(stream->get());
    EXPECT_LT(
        relativeFrobenius(again[g].hessian.download(stream->get()),
                          std::vector<double>(first.begin(), first.end())),
        1e-6)
        << groups[g].modules.front();
  }
}

TEST_F(CalibrationGpu, PropagatesARoundToNearestLayerZero) {
  LOAD_MODEL_OR_SKIP();
  LayerwiseCalibrator calib(*executor, stream->get());
  const auto samples = randomSamples({19, 24}, 11);
  calib.begin(samples);
  calib.collect(0);

  // Layer 0 quantized (int4, group 128, round to nearest), dequantized and
  // rounded to f16: the same values on the GPU and in the reference.
  ref::ModelWeights quantized = weights;
  for (ref::Projection p : kLinears) {
    ref::LinearWeights &w = quantized.layers[0].projection(p);
    const std::string name = ref::projectionTensorName(0, p);
    std::vector<float> values =
        ref::quantizeDequantize("int4-g128", w.weight, w.n, w.k, name);
    std::vector<uint16_t> halves(values.size());
    for (size_t i = 0; i < values.size(); ++i) {
      halves[i] = fmt::floatToHalf(values[i]);
      values[i] = fmt::halfToFloat(halves[i]);
    }
    EXPECT_NE(values, w.weight) << name << " should change";
    w.weight = values;
    executor->bindWeightComponent(name, "codes", halves.data(),
                                  halves.size() * 2);
  }
  calib.propagate(0);
  EXPECT_EQ(calib.storedLayer(), 1);
  EXPECT_EQ(calib.peakStoreBytes(), calib.storeBytes(0) + calib.storeBytes(1));
  EXPECT_EQ(calib.heldStoreBytes(), calib.storeBytes(1));

  std::vector<HessianGroup> groups = calib.collect(1);
  ASSERT_EQ(groups.size(), 4u);
  EXPECT_EQ(groups[0].modules.front(), "model.layers.1.self_attn.q_proj");
  expectHessiansMatch(groups, referenceRows(quantized, 1, samples),
                      calib.tokens(), 1e-2);

  // The check tells the two layer-0 weights apart: the reference with the
  // fp16 layer 0 is further from the GPU's Hessian than the quantized one.
  const std::vector<float> qkv = groups[0].hessian.download(stream->get());
  const double quantizedError = relativeFrobenius(
      qkv,
      hessianOf(referenceRows(quantized, 1, samples).at(ref::Projection::Q)));
  const double fp16Error = relativeFrobenius(
      qkv,
      hessianOf(referenceRows(weights, 1, samples).at(ref::Projection::Q)));
  std::printf("layer 1 q/k/v: against the fp16 layer 0 %.3e, against the "
              "quantized one %.3e\n",
              fp16Error, quantizedError);
  EXPECT_LT(quantizedError, fp16Error);

  // The last layer frees the store; the order is enforced.
  calib.propagate(1);
  EXPECT_EQ(calib.storedLayer(), 2);
  EXPECT_EQ(calib.heldStoreBytes(), 0u);
  try {
    calib.collect(1);
    FAIL() << "collect after the last propagate";
  } catch (const qfuse::Error &e) {
    EXPECT_NE(std::string(e.what()).find("every layer has been propagated"),
              std::string::npos)
        << e.what();
  }
}

TEST_F(CalibrationGpu, GpuHessianSkipsPaddingRows) {
  // GpuHessian alone: chunks of 8 rows of which 8, 5, 8 and 3 are valid, the
  // padding rows poisoned, staged 16 rows at a time and added directly, in
  // one GEMM and in 3 column blocks (the triangle and its mirror).
  const int64_t k = 256, c = 8;
  const std::vector<int64_t> valid = {8, 5, 8, 3};
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<uint16_t> host(valid.size() * c * k);
  std::vector<float> validRows;
  for (size_t chunk = 0; chunk < valid.size(); ++chunk)
    for (int64_t r = 0; r < c; ++r)
      for (int64_t i = 0; i < k; ++i) {
        const float v = normal(rng) + (i % 7 == 0 ? 2.0f : 0.0f);
        const bool real = r < valid[chunk];
        uint16_t &h = host[(chunk * c + r) * k + i];
        h = real ? fmt::floatToHalf(v) : 0x7e00; // NaN in the padding
        if (real)
          validRows.push_back(fmt::halfToFloat(h));
      }
  cuda::DeviceBuffer x(host.size() * 2, "rows");
  x.upload(host.data(), host.size() * 2);
  qfuse::gptq::HessianAccumulator expected(k);
  expected.add(validRows.data(), int64_t(validRows.size()) / k);

  cuda::Cublas cublas;
  GpuHessian staged(k, stream->get(), 16, "staged");
  GpuHessian direct(k, stream->get(), 0, "direct");
  GpuHessian stagedBlocks(k, stream->get(), 16, "staged blocks", 3);
  GpuHessian directBlocks(k, stream->get(), 0, "direct blocks", 3);
  ASSERT_EQ(staged.blocks(), 1);
  ASSERT_EQ(stagedBlocks.blocks(), 3);
  for (size_t chunk = 0; chunk < valid.size(); ++chunk) {
    const CUdeviceptr rows = x.ptr() + chunk * c * k * 2;
    staged.stage(cublas, rows, valid[chunk], stream->get());
    direct.add(cublas, rows, valid[chunk], stream->get());
    stagedBlocks.stage(cublas, rows, valid[chunk], stream->get());
    directBlocks.add(cublas, rows, valid[chunk], stream->get());
  }
  staged.flush(cublas, stream->get());
  stagedBlocks.flush(cublas, stream->get());
  for (GpuHessian *h : {&staged, &direct, &stagedBlocks, &directBlocks}) {
    EXPECT_EQ(h->samples(), 24);
    const std::vector<float> got = h->download(stream->get());
    EXPECT_LT(relativeFrobenius(got, expected.matrix()), 1e-5);
    if (h->blocks() == 1)
      continue;
    // The mirrored blocks are exact transposes: entries more than a block
    // (at most 88 columns here) apart lie in different blocks.
    int64_t asymmetric = 0;
    for (int64_t i = 0; i < k; ++i)
      for (int64_t j = 0; j + 128 <= i; ++j)
        asymmetric += got[i * k + j] != got[j * k + i];
    EXPECT_EQ(asymmetric, 0) << h->blocks() << " blocks";
  }
}

TEST(GpuHessianBlocks, WideHessiansUpdateTheirLowerTriangle) {
  EXPECT_EQ(GpuHessian::defaultBlocks(4096), 1);
  EXPECT_EQ(GpuHessian::defaultBlocks(8191), 1);
  EXPECT_EQ(GpuHessian::defaultBlocks(14336), 4);
  EXPECT_EQ(GpuHessian::defaultBlocks(18944), 6);
}

TEST_F(CalibrationGpu, CalibratorCountsOnlyTheValidRowsOfAChunk) {
  // The calibrator against the whole plan's own activations on a 13-token
  // sample (chunks of 8 and 5 + 3 padding): the same rows, so only f32
  // summation order separates them.
  LOAD_MODEL_OR_SKIP();
  const int64_t c = 8;
  LayerwiseCalibrator calib(*executor, stream->get());
  const auto samples = randomSamples({13}, 5);
  calib.begin(samples);
  std::vector<HessianGroup> groups = calib.collect(0);

  std::vector<std::vector<float>> rows(groups.size());
  executor->resetState(stream->get());
  const std::vector<int32_t> &tokens = samples[0];
  for (int64_t start = 0; start < int64_t(tokens.size()); start += c) {
    const int64_t real = std::min<int64_t>(c, int64_t(tokens.size()) - start);
    std::vector<int32_t> ids(c, 0), positions(c);
    for (int64_t r = 0; r < c; ++r) {
      positions[size_t(r)] = int32_t(start + r);
      if (r < real)
        ids[size_t(r)] = tokens[size_t(start + r)];
    }
    executor->buffer(c, "input_ids").upload(ids.data(), ids.size() * 4);
    executor->buffer(c, "positions")
        .upload(positions.data(), positions.size() * 4);
    executor->run(c, stream->get());
    stream->synchronize();
    for (size_t g = 0; g < groups.size(); ++g) {
      const int64_t width = groups[g].hessian.columns();
      std::vector<uint16_t> half(size_t(real * width));
      executor->buffer(c, groups[g].input)
          .download(half.data(), half.size() * 2);
      for (uint16_t h : half)
        rows[g].push_back(fmt::halfToFloat(h));
    }
  }
  for (size_t g = 0; g < groups.size(); ++g) {
    const int64_t width = groups[g].hessian.columns();
    qfuse::gptq::HessianAccumulator plan(width);
    plan.add(rows[g].data(), int64_t(rows[g].size()) / width);
    EXPECT_EQ(plan.samples(), 13);
    EXPECT_LT(relativeFrobenius(groups[g].hessian.download(stream->get()),
                                plan.matrix()),
              1e-4)
        << groups[g].modules.front();
  }
}

TEST_F(CalibrationGpu, RejectsSamplesPastMaxSeqAndCallsOutOfOrder) {
  LOAD_MODEL_OR_SKIP();
  LayerwiseCalibrator calib(*executor, stream->get());
  auto expectError = [](const std::function<void()> &body,
                        const std::string &fragment) {
    try {
      body();
      FAIL() << "no error, expected '" << fragment << "'";
    } catch (const qfuse::Error &e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos)
          << e.what();
    }
  };
  expectError([&] { calib.collect(0); }, "begin() has not run");
  // max_seq 256 and chunks of 8: 256 tokens fit, 257 do not.
  expectError([&] { calib.begin({std::vector<int32_t>(257, 1)}); },
              "past the artifact's max_seq 256 (at most 256 tokens)");
  expectError(
      [&] {
        calib.begin({{1, 2, 4096}});
      },
      "token 2 of sample 0 is 4096, outside the vocabulary");
  expectError(
      [&] {
        calib.begin(std::vector<std::vector<int32_t>>{std::vector<int32_t>{}});
      },
      "sample 0 is empty");
  calib.begin({std::vector<int32_t>(256, 3)});
  expectError([&] { calib.collect(1); },
              "collect(1) needs layer 1's inputs, but the store holds layer "
              "0's");
  expectError([&] { calib.propagate(2); }, "the model has layers 0..1");
}
