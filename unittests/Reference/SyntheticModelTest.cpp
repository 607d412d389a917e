//===- SyntheticModelTest.cpp - Synthetic models through the real reader --===//

#include "qfuse/reference/SyntheticModel.h"

#include "qfuse/format/Numerics.h"
#include "qfuse/runtime/Error.h"
#include "qfuse/runtime/checkpoint/Safetensors.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>

namespace qfuse::reference {
namespace {

namespace fs = std::filesystem;
using runtime::DType;
using runtime::SafetensorsFile;

fs::path scratch(const std::string &name) {
  fs::path dir = fs::path(QFUSE_TEST_SCRATCH) / name;
  fs::remove_all(dir);
  return dir;
}

/// Hugging Face's tensor names for `config`, written out here rather than
/// taken from the library.
std::map<std::string, std::vector<int64_t>>
expectedTensors(const ModelConfig &c) {
  int64_t h = c.hiddenSize, i = c.intermediateSize, q = c.qWidth(),
          kv = c.kvWidth();
  std::map<std::string, std::vector<int64_t>> t;
  t["model.embed_tokens.weight"] = {c.vocabSize, h};
  for (int64_t l = 0; l < c.numHiddenLayers; ++l) {
    std::string p = "model.layers." + std::to_string(l) + ".";
    t[p + "input_layernorm.weight"] = {h};
    t[p + "self_attn.q_proj.weight"] = {q, h};
    t[p + "self_attn.k_proj.weight"] = {kv, h};
    t[p + "self_attn.v_proj.weight"] = {kv, h};
    t[p + "self_attn.o_proj.weight"] = {h, q};
    if (c.architecture == Architecture::Qwen2) {
      t[p + "self_attn.q_proj.bias"] = {q};
      t[p + "self_attn.k_proj.bias"] = {kv};
      t[p + "self_attn.v_proj.bias"] = {kv};
    }
    t[p + "post_attention_layernorm.weight"] = {h};
    t[p + "mlp.gate_proj.weight"] = {i, h};
    t[p + "mlp.up_proj.weight"] = {i, h};
    t[p + "mlp.down_proj.weight"] = {h, i};
  }
  t["model.norm.weight"] = {h};
  if (!c.tieWordEmbeddings)
    t["lm_head.weight"] = {c.vocabSize, h};
  return t;
}

std::vector<float> decode(const SafetensorsFile &file,
                          const std::string &name) {
  runtime::TensorView view = file.view(name);
  std::vector<float> out(view.size / 2);
  for (size_t i = 0; i < out.size(); ++i) {
    uint16_t bits = uint16_t(view.data[2 * i] | view.data[2 * i + 1] << 8);
    out[i] = view.info->dtype == DType::F16 ? format::halfToFloat(bits)
                                            : format::bfloat16ToFloat(bits);
  }
  return out;
}

void expectSameWeights(const ModelWeights &a, const ModelWeights &b) {
  EXPECT_EQ(a.embedTokens, b.embedTokens);
  EXPECT_EQ(a.norm, b.norm);
  EXPECT_EQ(a.lmHead.weight, b.lmHead.weight);
  ASSERT_EQ(a.layers.size(), b.layers.size());
  for (size_t l = 0; l < a.layers.size(); ++l) {
    EXPECT_EQ(a.layers[l].inputLayernorm, b.layers[l].inputLayernorm);
    EXPECT_EQ(a.layers[l].postAttentionLayernorm,
              b.layers[l].postAttentionLayernorm);
    for (Projection p :
         {Projection::Q, Projection::K, Projection::V, Projection::O,
          Projection::Gate, Projection::Up, Projection::Down}) {
      EXPECT_EQ(a.layers[l].projection(p).weight,
                b.layers[l].projection(p).weight)
          << l << " " << projectionName(p);
      EXPECT_EQ(a.layers[l].projection(p).bias, b.layers[l].projection(p).bias)
          << l << " " << projectionName(p);
    }
  }
}

class ReferenceSynthetic
    : public ::testing::TestWithParam<std::tuple<std::string, StorageType>> {};

TEST_P(ReferenceSynthetic, WritesHuggingFaceTensorsThatTheReaderReadsBack) {
  auto [preset, dtype] = GetParam();
  ModelConfig config = syntheticPreset(preset);
  fs::path dir = scratch("synthetic-" + preset +
                         (dtype == StorageType::F16 ? "-f16" : "-bf16"));
  ModelWeights written = writeSyntheticModel(config, dir.string(), {5, dtype});

  // config.json parses back to the preset.
  ModelConfig reread = ModelConfig::load(dir.string());
  EXPECT_EQ(reread.toJson(), config.toJson());

  // Exactly Hugging Face's names and shapes, in the checkpoint's dtype.
  SafetensorsFile file =
      SafetensorsFile::open((dir / "model.safetensors").string());
  std::map<std::string, std::vector<int64_t>> expected =
      expectedTensors(config);
  std::map<std::string, std::vector<int64_t>> actual;
  for (const runtime::TensorInfo &info : file.tensors()) {
    actual[info.name] = info.shape;
    EXPECT_EQ(info.dtype, dtype == StorageType::F16 ? DType::F16 : DType::BF16)
        << info.name;
  }
  EXPECT_EQ(actual, expected);

  // The bytes hold the returned weights, and the loader returns them too.
  EXPECT_EQ(decode(file, "model.embed_tokens.weight"), written.embedTokens);
  EXPECT_EQ(decode(file, "model.layers.1.mlp.down_proj.weight"),
            written.layers[1].down.weight);
  if (config.hasBias(Projection::K))
    EXPECT_EQ(decode(file, "model.layers.0.self_attn.k_proj.bias"),
              written.layers[0].k.bias);
  ModelWeights loaded = loadCheckpointWeights(reread, dir.string());
  expectSameWeights(loaded, written);
  if (config.tieWordEmbeddings)
    EXPECT_EQ(loaded.lmHead.weight, loaded.embedTokens);
}

INSTANTIATE_TEST_SUITE_P(
    Presets, ReferenceSynthetic,
    ::testing::Combine(::testing::Values("tiny-llama", "tiny-qwen2"),
                       ::testing::Values(StorageType::F16, StorageType::BF16)),
    [](const auto &info) {
      std::string name =
          std::get<0>(info.param) +
          (std::get<1>(info.param) == StorageType::F16 ? "_f16" : "_bf16");
      for (char &c : name)
        if (c == '-')
          c = '_';
      return name;
    });

std::vector<char> fileBytes(const fs::path &path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(ReferenceSynthetic, SameSeedSameBytesOtherSeedOtherWeights) {
  ModelConfig config = syntheticPreset("tiny-llama");
  fs::path a = scratch("seed-a"), b = scratch("seed-b"), c = scratch("seed-c");
  writeSyntheticModel(config, a.string(), {11, StorageType::F16});
  writeSyntheticModel(config, b.string(), {11, StorageType::F16});
  writeSyntheticModel(config, c.string(), {12, StorageType::F16});
  EXPECT_EQ(fileBytes(a / "model.safetensors"),
            fileBytes(b / "model.safetensors"));
  EXPECT_NE(fileBytes(a / "model.safetensors"),
            fileBytes(c / "model.safetensors"));
}

/// Mean and standard deviation of `v`.
std::pair<double, double> moments(const std::vector<float> &v) {
  double sum = 0, sq = 0;
  for (float x : v) {
    sum += x;
    sq += double(x) * x;
  }
  double mean = sum / double(v.size());
  return {mean, std::sqrt(sq / double(v.size()) - mean * mean)};
}

TEST(ReferenceSynthetic, WeightsAreScaledLikeARealInit) {
  ModelConfig config = syntheticPreset("tiny-qwen2");
  ModelWeights w = syntheticWeights(config, {3, StorageType::F16});
  auto [embedMean, embedStd] = moments(w.embedTokens);
  EXPECT_NEAR(embedMean, 0.0, 0.01);
  EXPECT_NEAR(embedStd, 1.0, 0.01);
  for (Projection p : {Projection::Q, Projection::O, Projection::Down}) {
    auto [mean, sd] = moments(w.layers[0].projection(p).weight);
    double expected = 1 / std::sqrt(double(config.inFeatures(p)));
    EXPECT_NEAR(mean, 0.0, 0.05 * expected) << projectionName(p);
    EXPECT_NEAR(sd, expected, 0.05 * expected) << projectionName(p);
  }
  auto [normMean, normStd] = moments(w.layers[1].inputLayernorm);
  EXPECT_NEAR(normMean, 1.0, 0.03);
  EXPECT_NEAR(normStd, 0.1, 0.03);
  auto [biasMean, biasStd] = moments(w.layers[0].q.bias);
  EXPECT_NEAR(biasMean, 0.0, 0.05);
  EXPECT_NEAR(biasStd, 0.1, 0.03);
}

TEST(ReferenceSynthetic, UnknownPresetIsAnError) {
  try {
    syntheticPreset("tiny-gpt2");
    FAIL();
  } catch (const Error &e) {
    EXPECT_STREQ(e.what(), "unknown synthetic model preset 'tiny-gpt2'; "
                           "expected one of tiny-llama, tiny-qwen2");
  }
}

//===----------------------------------------------------------------------===//
// Checkpoint loading: shards and the errors of a wrong checkpoint
//===----------------------------------------------------------------------===//

void addF16(runtime::SafetensorsWriter &w, const std::string &name,
            std::vector<int64_t> shape, const std::vector<float> &values) {
  std::vector<uint8_t> bytes;
  for (float v : values) {
    uint16_t bits = format::floatToHalf(v);
    bytes.push_back(uint8_t(bits));
    bytes.push_back(uint8_t(bits >> 8));
  }
  w.add(name, DType::F16, std::move(shape), bytes.data(), bytes.size());
}

TEST(ReferenceCheckpoint, ReadsShardsThroughTheIndex) {
  ModelConfig config = syntheticPreset("tiny-llama");
  fs::path single = scratch("shards-single"), sharded = scratch("shards");
  ModelWeights written =
      writeSyntheticModel(config, single.string(), {9, StorageType::F16});
  // Split the single file's tensors over two shards, alternating.
  SafetensorsFile file =
      SafetensorsFile::open((single / "model.safetensors").string());
  runtime::SafetensorsWriter shard[2];
  std::string index = R"({"metadata": {}, "weight_map": {)";
  int n = 0;
  for (const runtime::TensorInfo &info : file.tensors()) {
    int s = n % 2;
    runtime::TensorView view = file.view(info);
    shard[s].add(info.name, info.dtype, info.shape, view.data, view.size);
    index += (n ? ", \"" : "\"") + info.name + "\": \"model-0000" +
             std::to_string(s + 1) + "-of-00002.safetensors\"";
    ++n;
  }
  index += "}}";
  fs::create_directories(sharded);
  fs::copy_file(single / "config.json", sharded / "config.json");
  shard[0].write((sharded / "model-00001-of-00002.safetensors").string());
  shard[1].write((sharded / "model-00002-of-00002.safetensors").string());
  std::ofstream(sharded / "model.safetensors.index.json") << index;
  expectSameWeights(loadCheckpointWeights(config, sharded.string()), written);
}

std::string loadError(const ModelConfig &config, const fs::path &dir) {
  try {
    loadCheckpointWeights(config, dir.string());
  } catch (const Error &e) {
    return e.what();
  }
  return "loaded";
}

TEST(ReferenceCheckpoint, NamesTheMissingOrMisshapenTensor) {
  ModelConfig config = syntheticPreset("tiny-qwen2");
  ModelWeights w = syntheticWeights(config, {1, StorageType::F16});
  fs::path dir = scratch("broken");
  fs::create_directories(dir);
  std::ofstream(dir / "config.json") << config.toJson();
  std::string path = (dir / "model.safetensors").string();

  // Everything but layer 1's k_proj bias.
  auto writeAll = [&](const std::string &skip, std::vector<int64_t> normShape) {
    runtime::SafetensorsWriter writer;
    for (const auto &[name, shape] : expectedTensors(config)) {
      if (name == skip)
        continue;
      int64_t count = 1;
      for (int64_t d : shape)
        count *= d;
      if (name == "model.norm.weight")
        addF16(writer, name, normShape,
               std::vector<float>(size_t(normShape[0]), 1.0f));
      else
        addF16(writer, name, shape, std::vector<float>(size_t(count), 0.5f));
    }
    writer.write(path);
  };
  writeAll("model.layers.1.self_attn.k_proj.bias", {config.hiddenSize});
  EXPECT_EQ(loadError(config, dir),
            path + ": tensor 'model.layers.1.self_attn.k_proj.bias' is "
                   "missing; expected shape [128]");
  writeAll("", {config.hiddenSize + 1});
  EXPECT_EQ(loadError(config, dir),
            path + ": tensor 'model.norm.weight' has shape [257]; expected "
                   "[256]");
  fs::remove(path);
  EXPECT_EQ(loadError(config, dir), "checkpoint '" + dir.string() +
                                        "': neither model.safetensors nor "
                                        "model.safetensors.index.json");
}

TEST(ReferenceCheckpoint, RejectsQuantizedTensorsInADenseSlot) {
  ModelConfig config = syntheticPreset("tiny-llama");
  fs::path dir = scratch("int-embed");
  writeSyntheticModel(config, dir.string(), {1, StorageType::F16});
  runtime::SafetensorsWriter writer;
  {
    // Closed (unmapped) before the file is rewritten.
    SafetensorsFile file =
        SafetensorsFile::open((dir / "model.safetensors").string());
    for (const runtime::TensorInfo &info : file.tensors()) {
      runtime::TensorView view = file.view(info);
      bool embed = info.name == "model.embed_tokens.weight";
      writer.add(info.name, embed ? DType::I16 : info.dtype, info.shape,
                 view.data, view.size);
    }
  }
  std::string path = (dir / "model.safetensors").string();
  writer.write(path);
  EXPECT_EQ(loadError(config, dir),
            path + ": tensor 'model.embed_tokens.weight' has dtype I16; "
                   "expected F16, BF16 or F32 (a dense checkpoint)");
}

} // namespace
} // namespace qfuse::reference
