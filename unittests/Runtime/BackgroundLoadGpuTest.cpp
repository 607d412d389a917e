//===- BackgroundLoadGpuTest.cpp - weights bound while the model runs -----===//
//
// BackgroundLoad (qfuse-quantize's load beside the layers) on the compiled
// tiny Llama (fp16; bench/make-model-artifacts.sh writes
// artifacts/models/tiny-llama-fp16.qfa, QFUSE_CALIBRATION_QFA overrides the
// path) with the synthetic checkpoint of its preset:
//
// (a) the stages: the prologue's, one per layer (each naming only its
//     layer's weights), the rest; every weight the plans read once;
// (b) a stage bound runs (runSteps of the prologue after stage 0), a layer
//     not yet bound is refused naming what is missing, and once every stage
//     is bound (with fewer workers after layer 0) the executor holds the
//     bytes loadCheckpoint binds: every weight component equal, and the
//     whole plan's outputs bit-identical;
// (c) a bf16 checkpoint: the converted embedding made in parts of two rows
//     binds what loadCheckpoint binds (the plan's outputs on ids spread
//     over the vocabulary bit-identical);
// (d) a checkpoint short of the artifact's last layer: the waiting bind
//     rethrows the missing tensor's error instead of hanging;
// (e) a bf16 checkpoint with its layers' linear modules StoredOnDevice
//     (the qf_round_bf16_to_f16 kernel of the quantize test artifact,
//     QFUSE_QUANTIZE_QFA): every component loadCheckpoint's bytes (the
//     host's rounding), the plan's outputs bit-identical, and each
//     module's stored bf16 bytes taken once, equal to the checkpoint's;
// (f) the same with a module value past f16's range: the bind throws the
//     host's error naming the tensor and the element.
//
//===----------------------------------------------------------------------===//

#include "GpuFixture.h"
#include "TinyLlamaArtifact.h"
#include "qfuse/reference/ModelConfig.h"
#include "qfuse/reference/SyntheticModel.h"
#include "qfuse/runtime/Error.h"
#include "qfuse/runtime/artifact/PlanLayers.h"
#include "qfuse/runtime/checkpoint/ModelCheckpoint.h"
#include "qfuse/runtime/device/BackgroundLoad.h"
#include "qfuse/runtime/device/DeviceArtifact.h"
#include "qfuse/runtime/device/DeviceHalfRound.h"
#include "qfuse/runtime/device/ModelLoader.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>

#include <unistd.h>

using namespace qfuse::runtime;
namespace ref = qfuse::reference;

namespace {

/// The bytes at a device pointer.
std::vector<uint8_t> deviceBytes(CUdeviceptr ptr, size_t size) {
  std::vector<uint8_t> bytes(size);
  QFUSE_CU(cuMemcpyDtoH(bytes.data(), ptr, size));
  return bytes;
}

class BackgroundLoadGpu : public qfuse::testing::GpuFixture {
protected:
  void TearDown() override {
    if (!modelDir.empty())
      std::filesystem::remove_all(modelDir);
  }

  /// The artifact (false: missing, the test skips) and the synthetic
  /// checkpoint of its preset with `layers` decoder layers (0: the
  /// preset's), stored as `storage`.
  bool prepare(int64_t layers = 0,
               ref::StorageType storage = ref::StorageType::F16) {
    artifactPath = qfuse::testing::tinyLlamaFp16ArtifactPath();
    if (!std::ifstream(artifactPath))
      return false;
    artifact.emplace(loadArtifactForDevice(artifactPath, *context));
    modelDir = ::testing::TempDir() + "qfuse-background-load-" +
               std::to_string(::getpid()) + "-" +
               ::testing::UnitTest::GetInstance()->current_test_info()->name();
    ref::ModelConfig config = ref::syntheticPreset("tiny-llama");
    if (layers > 0)
      config.numHiddenLayers = layers;
    ref::writeSyntheticModel(config, modelDir, {1, storage});
    checkpoint.emplace(ModelCheckpoint::open(modelDir));
    for (const Plan &plan : artifact->plans)
      batch = std::max(batch, plan.batch);
    layers_ = analyzePlanLayers(*artifact, batch);
    return true;
  }

  /// Runs the whole plan for `batch` on tokens 1, 2, ..., 7 (or, with
  /// `vocab`, spread over all of it) and returns every output buffer's
  /// bytes.
  std::vector<std::vector<uint8_t>> runPlan(Executor &executor,
                                            int64_t vocab = 0) {
    executor.allocate(batch);
    executor.resetState(stream->get());
    std::vector<int32_t> ids(static_cast<size_t>(batch)),
        positions(static_cast<size_t>(batch));
    for (int64_t i = 0; i < batch; ++i) {
      ids[size_t(i)] = vocab ? int32_t((i * (vocab / batch + 1)) % vocab)
                             : int32_t(1 + i % 7);
      positions[size_t(i)] = int32_t(i);
    }
    executor.buffer(batch, "input_ids").upload(ids.data(), ids.size() * 4);
    executor.buffer(batch, "positions")
        .upload(positions.data(), positions.size() * 4);
    executor.run(batch, stream->get());
    stream->synchronize();
    std::vector<std::vector<uint8_t>> outputs;
    for (const std::string &name : artifact->outputs) {
      cuda::DeviceBuffer &out = executor.buffer(batch, name);
      outputs.push_back(deviceBytes(out.ptr(), out.size()));
    }
    return outputs;
  }

  std::string artifactPath, modelDir;
  std::optional<Artifact> artifact;
  std::optional<ModelCheckpoint> checkpoint;
  int64_t batch = 0;
  PlanLayers layers_;
};

#define PREPARE_OR_SKIP(...)                                                   \
  do {                                                                         \
    if (!prepare(__VA_ARGS__))                                                 \
      GTEST_SKIP() << "no compiled fp16 tiny Llama at " << artifactPath        \
                   << " (bench/make-model-artifacts.sh writes it; "            \
                      "QFUSE_CALIBRATION_QFA overrides the path)";             \
  } while (false)

TEST_F(BackgroundLoadGpu, StagesFollowTheLayers) {
  PREPARE_OR_SKIP();
  Executor executor(*artifact, *context);
  std::vector<LoadStage> stages = layerLoadStages(*artifact, layers_);
  ASSERT_EQ(stages.size(), layers_.layers.size() + 2);
  std::multiset<std::string> staged;
  for (size_t s = 0; s < stages.size(); ++s)
    for (const std::string &weight : stages[s].weights) {
      staged.insert(weight);
      const std::optional<int64_t> layer = layerOfName(weight);
      if (s >= 1 && s <= layers_.layers.size())
        EXPECT_EQ(layer, std::optional<int64_t>(int64_t(s) - 1))
            << weight << " in stage " << s;
      else
        EXPECT_FALSE(layer) << weight << " in stage " << s;
    }
  const std::set<std::string> used = executor.usedWeightSources();
  EXPECT_EQ(staged, std::multiset<std::string>(used.begin(), used.end()));
  EXPECT_FALSE(stages[1].weights.empty());
}

TEST_F(BackgroundLoadGpu, BindsWhatLoadCheckpointBinds) {
  PREPARE_OR_SKIP();
  Executor serial(*artifact, *context);
  const LoadStats serialStats = loadCheckpoint(serial, *checkpoint, 2);

  Executor staged(*artifact, *context);
  // Two workers for the prologue and layer 0, one for the rest (as
  // qfuse-quantize has fewer once the layers run): the same bytes.
  BackgroundLoad load(staged, *context, *checkpoint,
                      layerLoadStages(*artifact, layers_),
                      LoadWorkers{2, 1, /*firstStages=*/2});
  load.bindThrough(0);
  staged.allocate(batch);
  staged.runSteps(batch, layers_.prologue.first, layers_.prologue.last,
                  stream->get());
  // Layer 0's weights are not bound before their stage is.
  const StepRange layer0 = layers_.layers[0].steps;
  try {
    staged.runSteps(batch, layer0.first, layer0.last, stream->get());
    FAIL() << "layer 0 ran before its weights were bound";
  } catch (const qfuse::Error &e) {
    EXPECT_NE(std::string(e.what()).find("unbound arguments"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("model.layers.0."), std::string::npos)
        << e.what();
  }
  load.bindThrough(1);
  staged.runSteps(batch, layer0.first, layer0.last, stream->get());
  stream->synchronize();
  const LoadStats stats = load.finish();
  // Stages are ready in order, the last when the load ends.
  for (size_t s = 0; s < load.numStages(); ++s) {
    EXPECT_GE(load.readySeconds(s), s ? load.readySeconds(s - 1) : 0.0) << s;
    EXPECT_LE(load.readySeconds(s), stats.seconds) << s;
  }
  EXPECT_EQ(stats.weights, serialStats.weights);
  EXPECT_EQ(stats.tensors, serialStats.tensors);
  EXPECT_TRUE(staged.unboundArguments().empty());

  for (const auto &[weight, component] : serial.usedWeightComponents()) {
    const size_t bytes = serial.componentBytes(weight, component);
    ASSERT_EQ(staged.componentBytes(weight, component), bytes)
        << weight << "." << component;
    EXPECT_EQ(deviceBytes(staged.componentPointer(weight, component), bytes),
              deviceBytes(serial.componentPointer(weight, component), bytes))
        << weight << "." << component;
  }
  EXPECT_EQ(runPlan(staged), runPlan(serial));
}

TEST_F(BackgroundLoadGpu, ConvertedTensorsInPartsBindTheSameBytes) {
  // bf16 into the f16 artifact: the embedding is converted, here in parts
  // of two rows (uploaded at their offsets) on three workers.
  PREPARE_OR_SKIP(0, ref::StorageType::BF16);
  const TensorSpec *embedding =
      artifact->findTensor("model.embed_tokens.weight");
  ASSERT_TRUE(embedding);
  ASSERT_EQ(embedding->shape.size(), 2u);
  Executor serial(*artifact, *context);
  loadCheckpoint(serial, *checkpoint, 2);
  Executor staged(*artifact, *context);
  BackgroundLoad load(staged, *context, *checkpoint,
                      layerLoadStages(*artifact, layers_), LoadWorkers::same(3),
                      /*partElements=*/2 * uint64_t(embedding->shape[1]));
  const LoadStats stats = load.finish();
  EXPECT_EQ(stats.tensors, serial.usedTensors().size());
  EXPECT_TRUE(staged.unboundArguments().empty());
  // Rows of every part read: ids spread over the whole vocabulary.
  const int64_t vocab = embedding->shape[0];
  EXPECT_EQ(runPlan(staged, vocab), runPlan(serial, vocab));
}

TEST_F(BackgroundLoadGpu, MissingLayerIsAnErrorNotAHang) {
  PREPARE_OR_SKIP(/*layers=*/1);
  ASSERT_GE(layers_.layers.size(), 2u) << "the test needs a second layer";
  Executor executor(*artifact, *context);
  BackgroundLoad load(executor, *context, *checkpoint,
                      layerLoadStages(*artifact, layers_),
                      LoadWorkers::same(2));
  try {
    load.finish();
    FAIL() << "a checkpoint without layer 1 loaded";
  } catch (const qfuse::Error &e) {
    EXPECT_NE(std::string(e.what()).find("model.layers.1."), std::string::npos)
        << e.what();
  }
}

/// The rounding kernel of the quantize test artifact, or null (the test
/// skips) where it is missing or older than the kernel.
std::unique_ptr<DeviceHalfRound> halfRoundKernel(const cuda::Context &context,
                                                 std::string &why) {
  const char *env = std::getenv("QFUSE_QUANTIZE_QFA");
  const std::string path = env ? env : QFUSE_QUANTIZE_QFA_DEFAULT;
  if (!std::ifstream(path)) {
    why = "no quantize artifact at " + path;
    return nullptr;
  }
  auto round = std::make_unique<DeviceHalfRound>(
      loadArtifactForDevice(path, context), context);
  if (!round->any()) {
    why = path + " has no qf_round_bf16_to_f16 kernel";
    return nullptr;
  }
  return round;
}

/// Every linear module of `layers`.
StoredOnDevice storedModules(const DeviceHalfRound &round,
                             const PlanLayers &layers) {
  StoredOnDevice stored{&round, {}};
  for (const PlanLayer &layer : layers.layers)
    for (const LinearModule &linear : layer.linears)
      stored.weights.insert(linear.weight);
  return stored;
}

TEST_F(BackgroundLoadGpu, Bf16ModulesRoundOnTheDeviceAndStay) {
  PREPARE_OR_SKIP(0, ref::StorageType::BF16);
  std::string why;
  std::unique_ptr<DeviceHalfRound> round = halfRoundKernel(*context, why);
  if (!round)
    GTEST_SKIP() << "qfuse-gpu-skip: " << why;
  Executor serial(*artifact, *context);
  loadCheckpoint(serial, *checkpoint, 2);
  Executor staged(*artifact, *context);
  const StoredOnDevice stored = storedModules(*round, layers_);
  ASSERT_FALSE(stored.weights.empty());
  BackgroundLoad load(staged, *context, *checkpoint,
                      layerLoadStages(*artifact, layers_), LoadWorkers::same(2),
                      BackgroundLoad::kPartElements, stored);
  load.finish();
  EXPECT_TRUE(staged.unboundArguments().empty());
  for (const auto &[weight, component] : serial.usedWeightComponents()) {
    const size_t bytes = serial.componentBytes(weight, component);
    ASSERT_EQ(staged.componentBytes(weight, component), bytes)
        << weight << "." << component;
    EXPECT_EQ(deviceBytes(staged.componentPointer(weight, component), bytes),
              deviceBytes(serial.componentPointer(weight, component), bytes))
        << weight << "." << component;
  }
  EXPECT_EQ(runPlan(staged), runPlan(serial));
  for (const std::string &module : stored.weights) {
    const TensorView view = checkpoint->view(module + ".weight");
    const size_t bytes = size_t(view.info->numElements()) * 2;
    cuda::DeviceBuffer bf16 = load.takeStored(module);
    ASSERT_EQ(bf16.size(), bytes) << module;
    EXPECT_EQ(deviceBytes(bf16.ptr(), bytes),
              std::vector<uint8_t>(view.data, view.data + bytes))
        << module;
    EXPECT_TRUE(load.takeStored(module).empty()) << module << ": taken twice";
  }
  EXPECT_TRUE(load.takeStored("model.embed_tokens").empty());
}

TEST_F(BackgroundLoadGpu, Bf16ModuleOverflowingF16IsTheHostsError) {
  PREPARE_OR_SKIP(0, ref::StorageType::BF16);
  std::string why;
  std::unique_ptr<DeviceHalfRound> round = halfRoundKernel(*context, why);
  if (!round)
    GTEST_SKIP() << "qfuse-gpu-skip: " << why;
  const std::string module = layers_.layers.at(0).linears.at(0).weight;
  // Element 5 of the module becomes -65536 (bf16 0xC780) in the file.
  checkpoint.reset();
  const std::string file = modelDir + "/model.safetensors";
  std::fstream io(file, std::ios::in | std::ios::out | std::ios::binary);
  ASSERT_TRUE(io) << file;
  uint64_t headerBytes = 0;
  io.read(reinterpret_cast<char *>(&headerBytes), 8);
  std::string header(headerBytes, '\0');
  io.read(header.data(), std::streamsize(headerBytes));
  const nlohmann::json entry =
      nlohmann::json::parse(header).at(module + ".weight");
  ASSERT_EQ(entry.at("dtype"), "BF16");
  const uint64_t at =
      8 + headerBytes + entry.at("data_offsets")[0].get<uint64_t>() + 2 * 5;
  const uint8_t big[2] = {0x80, 0xC7};
  io.seekp(std::streamoff(at));
  io.write(reinterpret_cast<const char *>(big), 2);
  io.close();
  checkpoint.emplace(ModelCheckpoint::open(modelDir));

  Executor staged(*artifact, *context);
  BackgroundLoad load(staged, *context, *checkpoint,
                      layerLoadStages(*artifact, layers_), LoadWorkers::same(2),
                      BackgroundLoad::kPartElements,
                      storedModules(*round, layers_));
  try {
    load.finish();
    FAIL() << "a bf16 module past f16's range loaded";
  } catch (const qfuse::Error &e) {
    EXPECT_NE(std::string(e.what()).find(
                  "tensor '" + module +
                  ".weight': element 5 = -65536.000000 overflows f16"),
              std::string::npos)
        << e.what();
  }
}

} // namespace
