//===- ModelCheckpointTest.cpp - Hugging Face directories, on the CPU -----===//
//
// Small real checkpoint directories (config.json and safetensors files
// written by SafetensorsWriter) read through ModelCheckpoint and turned into
// an artifact's weights and tensors by ModelWeights: single files and
// sharded indexes (and each way an index can be wrong), missing tensors,
// wrong shapes and dtypes, bf16 -> f16 exactness, tied embeddings,
// AutoGPTQ / compressed-tensors checkpoints against the artifact's encoding,
// and stored bytes viewed where they are what is bound (storedWeight).
//
//===----------------------------------------------------------------------===//

#include "TempFiles.h"

#include "qfuse/format/Numerics.h"
#include "qfuse/format/Packing.h"
#include "qfuse/runtime/Error.h"
#include "qfuse/runtime/artifact/Artifact.h"
#include "qfuse/runtime/checkpoint/Importers.h"
#include "qfuse/runtime/checkpoint/ModelCheckpoint.h"
#include "qfuse/runtime/checkpoint/Safetensors.h"
#include "qfuse/runtime/checkpoint/WeightSources.h"
#include "qfuse/runtime/device/TensorParts.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <optional>
#include <random>
#include <thread>

using namespace qfuse::runtime;
using nlohmann::json;
using qfuse::testing::expectError;
using qfuse::testing::makeTempDir;
namespace fmt = qfuse::format;

namespace {

constexpr int64_t kVocab = 32, kHidden = 128, kOut = 16;
constexpr const char *kQ = "model.layers.0.self_attn.q_proj";

/// A fresh, empty directory under the test temp dir.
std::string makeDir() { return makeTempDir("qfuse-ckpt"); }

void writeText(const std::string &path, const std::string &text) {
  std::ofstream(path) << text;
}

/// An artifact over the model's weights: q_proj in `qEncoding`, lm_head
/// dense f16, the embedding and the final norm as f16 tensors.
Artifact modelArtifact(const std::string &qEncoding = "int4, group = 128, "
                                                      "scale = f16") {
  json a = {
      {"format", "qfuse-artifact"},
      {"version", kArtifactVersion},
      {"target", {{"chip", "sm_90"}}},
      {"kernels", json::array()},
      {"weights",
       {{{"name", kQ},
         {"shape", {kOut, kHidden}},
         {"encoding", qEncoding},
         {"layout", "row_major"}},
        {{"name", "lm_head"},
         {"shape", {kVocab, kHidden}},
         {"encoding", "f16"},
         {"layout", "row_major"}}}},
      {"tensors",
       {{{"name", "model.embed_tokens.weight"},
         {"shape", {kVocab, kHidden}},
         {"dtype", "f16"}},
        {{"name", "model.norm.weight"}, {"shape", {kHidden}}, {"dtype", "f16"}}}},
      {"buffers", {{{"name", "h"}, {"shape", {"M", kHidden}}, {"dtype", "f16"}}}},
      {"inputs", json::array()},
      {"outputs", {"h"}},
      {"plans", {{{"batch", 1}, {"steps", {{{"memset", "h"}}}}}}},
      {"model",
       {{"vocab_size", kVocab}, {"hidden_size", kHidden}, {"max_seq", 64}}}};
  return Artifact::parse(a.dump(), "model.qfa");
}

/// bf16 values (exactly representable in f16 too: normal-range exponents,
/// 8-bit mantissas), as bytes, and their float values.
std::vector<uint8_t> bf16Bytes(size_t count, uint32_t seed,
                               std::vector<float> *values = nullptr) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 0.05f);
  std::vector<uint8_t> bytes(count * 2);
  if (values)
    values->resize(count);
  for (size_t i = 0; i < count; ++i) {
    // At least 1e-3 in magnitude: f16's normal range starts at 6.1e-5, and
    // its subnormals have fewer bits than bf16.
    const float v = normal(rng);
    const uint16_t bits =
        fmt::floatToBFloat16(std::copysign(1e-3f + std::fabs(v), v));
    std::memcpy(&bytes[2 * i], &bits, 2);
    if (values)
      (*values)[i] = fmt::bfloat16ToFloat(bits);
  }
  return bytes;
}

void addBf16(SafetensorsWriter &writer, const std::string &name,
             std::vector<int64_t> shape, uint32_t seed) {
  size_t count = 1;
  for (int64_t e : shape)
    count *= size_t(e);
  std::vector<uint8_t> bytes = bf16Bytes(count, seed);
  writer.add(name, DType::BF16, std::move(shape), bytes.data(), bytes.size());
}

/// Adds qfuse_format tensors (checkpoint layouts) under `prefix`.
void addFormatTensors(SafetensorsWriter &writer, const std::string &prefix,
                      const fmt::TensorMap &tensors) {
  for (const auto &[name, tensor] : tensors)
    writer.add(prefix + name, *parseSafetensorsDType(fmt::dtypeName(tensor.dtype)),
               tensor.shape, tensor.data.data(), tensor.data.size());
}

/// The whole bf16 model in one writer (lm_head optional).
SafetensorsWriter bf16Model(bool withLmHead) {
  SafetensorsWriter writer;
  addBf16(writer, std::string(kQ) + ".weight", {kOut, kHidden}, 1);
  addBf16(writer, "model.embed_tokens.weight", {kVocab, kHidden}, 2);
  addBf16(writer, "model.norm.weight", {kHidden}, 3);
  if (withLmHead)
    addBf16(writer, "lm_head.weight", {kVocab, kHidden}, 4);
  return writer;
}

std::string config(const json &extra = json::object()) {
  json c = {{"architectures", {"LlamaForCausalLM"}},
            {"model_type", "llama"},
            {"vocab_size", kVocab},
            {"hidden_size", kHidden},
            {"num_hidden_layers", 1}};
  c.update(extra);
  return c.dump();
}

/// A single-file checkpoint directory.
std::string singleFile(const SafetensorsWriter &writer,
                       const std::string &configText = config()) {
  std::string dir = makeDir();
  writeText(dir + "/config.json", configText);
  writer.write(dir + "/model.safetensors");
  return dir;
}

/// The tensors of `kQ` RTN-quantized from `values` into `encoding`.
fmt::PackedWeight quantized(const std::string &encoding,
                            const std::vector<float> &values) {
  fmt::PackedWeight w;
  std::string error;
  EXPECT_TRUE(fmt::parseEncoding(encoding, w.encoding, error)) << error;
  w.n = kOut;
  w.k = kHidden;
  EXPECT_TRUE(fmt::quantizeRTN(w.encoding, values.data(), kOut, kHidden,
                               w.components, error))
      << error;
  return w;
}

std::vector<float> normalValues(size_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 0.05f);
  std::vector<float> v(count);
  for (float &x : v)
    x = normal(rng);
  return v;
}

} // namespace

//===----------------------------------------------------------------------===//
// Directories
//===----------------------------------------------------------------------===//

TEST(ModelCheckpoint, ReadsConfigAndASingleFile) {
  std::string dir = singleFile(bf16Model(true),
                               config({{"tie_word_embeddings", false}}));
  ModelCheckpoint checkpoint = ModelCheckpoint::open(dir);
  EXPECT_EQ(checkpoint.config().vocabSize, kVocab);
  EXPECT_EQ(checkpoint.config().modelType, "llama");
  EXPECT_EQ(checkpoint.config().tieWordEmbeddings, std::optional<bool>(false));
  EXPECT_EQ(checkpoint.config().quantization, CheckpointQuantization::None);
  EXPECT_TRUE(checkpoint.contains("lm_head.weight"));
  EXPECT_EQ(checkpoint.view("model.norm.weight").size, size_t(kHidden) * 2);
  EXPECT_NE(checkpoint.searched().find("model.safetensors"), std::string::npos);
}

TEST(ModelCheckpoint, ReadsShardsThroughTheIndex) {
  std::string dir = makeDir();
  writeText(dir + "/config.json", config());
  SafetensorsWriter a, b;
  addBf16(a, std::string(kQ) + ".weight", {kOut, kHidden}, 1);
  addBf16(a, "model.embed_tokens.weight", {kVocab, kHidden}, 2);
  addBf16(b, "model.norm.weight", {kHidden}, 3);
  a.write(dir + "/model-00001-of-00002.safetensors");
  b.write(dir + "/model-00002-of-00002.safetensors");
  writeText(dir + "/model.safetensors.index.json",
            json{{"metadata", {{"total_size", 0}}},
                 {"weight_map",
                  {{std::string(kQ) + ".weight",
                    "model-00001-of-00002.safetensors"},
                   {"model.embed_tokens.weight",
                    "model-00001-of-00002.safetensors"},
                   {"model.norm.weight", "model-00002-of-00002.safetensors"}}}}
                .dump());
  ModelCheckpoint checkpoint = ModelCheckpoint::open(dir);
  EXPECT_EQ(checkpoint.files().size(), 2u);
  const SafetensorsFile *file = nullptr;
  ASSERT_NE(checkpoint.find("model.norm.weight", &file), nullptr);
  EXPECT_NE(file->path().find("00002-of-00002"), std::string::npos);
  EXPECT_NE(checkpoint.searched().find("2 shards"), std::string::npos);
  expectError([&] { checkpoint.view("lm_head.weight"); },
              {"tensor 'lm_head.weight' not found",
               "model.safetensors.index.json (2 shards)"});
}

namespace {

/// A sharded directory with one edit to its index (or shards).
std::string shardedWith(const std::function<void(json &index)> &editIndex,
                        bool duplicateNorm = false) {
  std::string dir = makeDir();
  writeText(dir + "/config.json", config());
  SafetensorsWriter a, b;
  addBf16(a, "model.embed_tokens.weight", {kVocab, kHidden}, 2);
  if (duplicateNorm)
    addBf16(a, "model.norm.weight", {kHidden}, 3);
  addBf16(b, "model.norm.weight", {kHidden}, 3);
  a.write(dir + "/a.safetensors");
  b.write(dir + "/b.safetensors");
  json index = {{"weight_map",
                 {{"model.embed_tokens.weight", "a.safetensors"},
                  {"model.norm.weight", "b.safetensors"}}}};
  editIndex(index);
  writeText(dir + "/model.safetensors.index.json", index.dump());
  return dir;
}

} // namespace

TEST(ModelCheckpoint, IndexNamingAMissingShard) {
  std::string dir = shardedWith([](json &index) {
    index["weight_map"]["model.norm.weight"] = "c.safetensors";
  });
  expectError([&] { ModelCheckpoint::open(dir); },
              {"model.safetensors.index.json", "shard 'c.safetensors'",
               "'model.norm.weight'", "does not exist"});
}

TEST(ModelCheckpoint, IndexListingATensorTwice) {
  // JSON objects cannot hold a key twice; the strict parser says so.
  std::string dir = shardedWith([](json &) {});
  writeText(dir + "/model.safetensors.index.json",
            R"({"weight_map": {"model.norm.weight": "b.safetensors",
                "model.embed_tokens.weight": "a.safetensors",
                "model.norm.weight": "a.safetensors"}})");
  expectError([&] { ModelCheckpoint::open(dir); },
              {"model.safetensors.index.json", "duplicate key "
                                               "'model.norm.weight'"});
}

TEST(ModelCheckpoint, TensorStoredInTwoShards) {
  std::string dir = shardedWith([](json &) {}, /*duplicateNorm=*/true);
  expectError([&] { ModelCheckpoint::open(dir); },
              {"tensor 'model.norm.weight' appears in both", "a.safetensors",
               "b.safetensors"});
}

TEST(ModelCheckpoint, IndexAssigningATensorToTheWrongShard) {
  std::string dir = shardedWith([](json &index) {
    index["weight_map"]["model.norm.weight"] = "a.safetensors";
  });
  expectError([&] { ModelCheckpoint::open(dir); },
              {"lists tensor 'model.norm.weight' in shard 'a.safetensors', "
               "which does not hold it"});
}

TEST(ModelCheckpoint, DirectoryWithoutWeights) {
  std::string dir = makeDir();
  writeText(dir + "/config.json", config());
  expectError([&] { ModelCheckpoint::open(dir); },
              {"neither model.safetensors nor model.safetensors.index.json"});
  std::string empty = makeDir();
  expectError([&] { ModelCheckpoint::open(empty); }, {"no config.json"});
}

TEST(ModelCheckpoint, UnsupportedQuantMethod) {
  std::string dir = singleFile(
      bf16Model(true),
      config({{"quantization_config", {{"quant_method", "awq"}}}}));
  expectError([&] { ModelCheckpoint::open(dir); },
              {"quantization_config", "quant_method \"awq\" is not "
                                      "supported"});
}

// Found by fuzz/config (fuzz/config/crashes): nlohmann's type_error escaped
// instead of an error naming the field, and an unsigned group_size past
// int64 wrapped to a negative one (per channel).
TEST(ModelCheckpoint, ConfigFieldsOfTheWrongTypeNameTheField) {
  auto parse = [](const char *text) {
    return [text] { parseCheckpointConfig(text, "c.json"); };
  };
  expectError(parse(R"({"model_type": []})"),
              {"'c.json'", "'model_type' must be a string, found []"});
  expectError(parse(R"({"quantization_config": {"quant_method": 4}})"),
              {"'c.json': quantization_config",
               "'quant_method' must be a string, found 4"});
  expectError(
      parse(R"({"quantization_config": {"quant_method": "compressed-tensors",
                "format": "pack-quantized", "config_groups": {"g": {"weights":
                {"num_bits": 4, "strategy": {}}}}}})"),
      {"config_groups.g", "'strategy' must be a string, found {}"});
  expectError(
      parse(R"({"quantization_config": {"quant_method": "gptq", "bits": 4,
                "group_size": 18446744073709551488}})"),
      {"'group_size' must be an integer, found 18446744073709551488"});
}

//===----------------------------------------------------------------------===//
// Weights and tensors
//===----------------------------------------------------------------------===//

TEST(ModelWeights, QuantizesBf16WithRoundToNearest) {
  SafetensorsWriter writer = bf16Model(true);
  ModelCheckpoint checkpoint = ModelCheckpoint::open(singleFile(writer));
  Artifact artifact = modelArtifact();
  fmt::TensorMap got = checkpointWeight(checkpoint, *artifact.findWeight(kQ));
  // The same values through the one quantizer.
  std::vector<float> values;
  bf16Bytes(size_t(kOut * kHidden), 1, &values);
  fmt::PackedWeight expected =
      quantized("int4, group = 128, scale = f16", values);
  ASSERT_EQ(got.size(), expected.components.size());
  for (const auto &[name, tensor] : expected.components)
    EXPECT_EQ(got.at(name).data, tensor.data) << name;
}

// Quantize-at-load's device hook (DenseQuantizer): asked for exactly the
// dense weight with its encoding, dtype and mapped bytes; its components are
// used when it takes the weight, the host's round-to-nearest when it
// declines.
TEST(ModelWeights, DenseQuantizerHookTakesOrDeclines) {
  ModelCheckpoint checkpoint = ModelCheckpoint::open(singleFile(bf16Model(true)));
  Artifact artifact = modelArtifact();
  const WeightSpec &q = *artifact.findWeight(kQ);
  int calls = 0;
  DenseQuantizer decline = [&](const fmt::Encoding &enc, DType dtype,
                               const uint8_t *data, int64_t n, int64_t k,
                               fmt::TensorMap &) {
    ++calls;
    EXPECT_EQ(enc, q.encodingAttr);
    EXPECT_EQ(dtype, DType::BF16);
    EXPECT_NE(data, nullptr);
    EXPECT_EQ(n, kOut);
    EXPECT_EQ(k, kHidden);
    return false;
  };
  fmt::TensorMap host = checkpointWeight(checkpoint, q);
  EXPECT_EQ(checkpointWeight(checkpoint, q, &decline).at("codes").data,
            host.at("codes").data);
  EXPECT_EQ(calls, 1);
  DenseQuantizer take = [&](const fmt::Encoding &, DType, const uint8_t *,
                            int64_t, int64_t, fmt::TensorMap &out) {
    out = host;
    out.at("codes").data.assign(out.at("codes").data.size(), 0x5A);
    return true;
  };
  fmt::TensorMap device = checkpointWeight(checkpoint, q, &take);
  EXPECT_EQ(device.at("codes").data.front(), 0x5A);
  // An unquantized weight (bf16 into the f16 lm_head) is converted, not
  // rounded to a grid: the hook is not asked.
  calls = 0;
  checkpointWeight(checkpoint, *artifact.findWeight("lm_head"), &decline);
  EXPECT_EQ(calls, 0);
  // Unquantized 2:4 keeps two of each quad, which the device kernels do:
  // the hook is asked, and the host keeps them where it declines.
  WeightSpec sparse = *artifact.findWeight("lm_head");
  sparse.encoding = "f16, sparse = 2:4";
  std::string error;
  ASSERT_TRUE(fmt::parseEncoding(sparse.encoding, sparse.encodingAttr, error))
      << error;
  int sparseCalls = 0;
  DenseQuantizer declineSparse = [&](const fmt::Encoding &enc, DType,
                                     const uint8_t *, int64_t, int64_t,
                                     fmt::TensorMap &) {
    ++sparseCalls;
    EXPECT_TRUE(enc.isSparse24() && !enc.isQuantized());
    return false;
  };
  fmt::TensorMap kept = checkpointWeight(checkpoint, sparse, &declineSparse);
  EXPECT_EQ(sparseCalls, 1);
  EXPECT_EQ(kept.count("meta"), 1u);
}

TEST(ModelWeights, Bf16ToF16IsExactWhereBothRepresentTheValue) {
  ModelCheckpoint checkpoint =
      ModelCheckpoint::open(singleFile(bf16Model(true)));
  Artifact artifact = modelArtifact();
  std::vector<uint8_t> bytes =
      checkpointTensor(checkpoint, *artifact.findTensor("model.norm.weight"));
  std::vector<float> values;
  bf16Bytes(size_t(kHidden), 3, &values);
  ASSERT_EQ(bytes.size(), size_t(kHidden) * 2);
  for (int64_t i = 0; i < kHidden; ++i) {
    uint16_t half;
    std::memcpy(&half, &bytes[2 * i], 2);
    ASSERT_EQ(fmt::halfToFloat(half), values[i]) << i;
  }
  // The dense f16 lm_head: the same values, as one "codes" component.
  fmt::TensorMap head =
      checkpointWeight(checkpoint, *artifact.findWeight("lm_head"));
  std::vector<float> headValues;
  bf16Bytes(size_t(kVocab * kHidden), 4, &headValues);
  const fmt::Tensor &codes = head.at("codes");
  ASSERT_EQ(codes.data.size(), headValues.size() * 2);
  for (size_t i = 0; i < headValues.size(); ++i) {
    uint16_t half;
    std::memcpy(&half, &codes.data[2 * i], 2);
    ASSERT_EQ(fmt::halfToFloat(half), headValues[i]) << i;
  }
}

// A named codebook table's values are not in a dense checkpoint: the load
// says so, naming the weight and the table, instead of an internal error.
TEST(ModelWeights, NamedCodebookTableFromADenseCheckpoint) {
  SafetensorsWriter writer = bf16Model(true);
  ModelCheckpoint checkpoint = ModelCheckpoint::open(singleFile(writer));
  Artifact artifact = modelArtifact(
      "codebook, bits = 4, table = \"lut.q\" : f16, group = 128, scale = f16");
  expectError([&] { checkpointWeight(checkpoint, *artifact.findWeight(kQ)); },
              {kQ, "'lut.q'", "dense checkpoint does not hold",
               "table = [...]"});
}

TEST(ModelWeights, ConversionThatOverflowsF16) {
  const float big = 1e6f;
  expectError(
      [&] {
        convertDense(DType::F32, reinterpret_cast<const uint8_t *>(&big), 1,
                     DType::F16, "tensor 't'");
      },
      {"tensor 't'", "element 0", "overflows f16"});
}

// Found by fuzz/safetensors (fuzz/safetensors/crashes/empty-f16-tensor):
// an empty tensor's conversion passed null pointers to memcpy.
TEST(ModelWeights, EmptyTensorConvertsToNothing) {
  const uint8_t none[1] = {};
  EXPECT_TRUE(convertDense(DType::F16, none, 0, DType::F32, "tensor 't'").empty());
  EXPECT_TRUE(convertDense(DType::BF16, none, 0, DType::F16, "tensor 't'").empty());
}

TEST(ModelWeights, MissingTensorNamesItAndTheFile) {
  SafetensorsWriter writer;
  addBf16(writer, "model.embed_tokens.weight", {kVocab, kHidden}, 2);
  ModelCheckpoint checkpoint = ModelCheckpoint::open(singleFile(writer));
  Artifact artifact = modelArtifact();
  expectError(
      [&] {
        checkpointTensor(checkpoint, *artifact.findTensor("model.norm.weight"));
      },
      {"tensor 'model.norm.weight' not found", "model.safetensors"});
  expectError([&] { checkpointWeight(checkpoint, *artifact.findWeight(kQ)); },
              {std::string("artifact weight '") + kQ + "'",
               std::string(kQ) + ".weight", ".qweight", ".weight_packed",
               "model.safetensors"});
}

TEST(ModelWeights, WrongShapeNamesBothShapes) {
  SafetensorsWriter writer;
  addBf16(writer, std::string(kQ) + ".weight", {kOut, 2 * kHidden}, 1);
  addBf16(writer, "model.norm.weight", {kHidden + 1}, 3);
  ModelCheckpoint checkpoint = ModelCheckpoint::open(singleFile(writer));
  Artifact artifact = modelArtifact();
  expectError([&] { checkpointWeight(checkpoint, *artifact.findWeight(kQ)); },
              {std::string(kQ) + ".weight", "shape [16, 256]",
               "expected [16, 128]"});
  expectError(
      [&] {
        checkpointTensor(checkpoint, *artifact.findTensor("model.norm.weight"));
      },
      {"'model.norm.weight'", "shape [129]", "expected [128]"});
}

TEST(ModelWeights, UnsupportedDtype) {
  SafetensorsWriter writer;
  std::vector<int32_t> ints(size_t(kOut * kHidden), 1);
  writer.add(std::string(kQ) + ".weight", DType::I32, {kOut, kHidden},
             ints.data(), ints.size() * 4);
  ModelCheckpoint checkpoint = ModelCheckpoint::open(singleFile(writer));
  Artifact artifact = modelArtifact();
  expectError([&] { checkpointWeight(checkpoint, *artifact.findWeight(kQ)); },
              {std::string(kQ) + ".weight", "unsupported dtype I32"});
}

TEST(ModelWeights, TiedEmbeddingsStandInForLmHead) {
  Artifact artifact = modelArtifact();
  const WeightSpec &head = *artifact.findWeight("lm_head");
  std::vector<float> embed;
  bf16Bytes(size_t(kVocab * kHidden), 2, &embed);
  auto expectEmbedding = [&](const fmt::TensorMap &got) {
    const fmt::Tensor &codes = got.at("codes");
    for (size_t i = 0; i < embed.size(); ++i) {
      uint16_t half;
      std::memcpy(&half, &codes.data[2 * i], 2);
      ASSERT_EQ(fmt::halfToFloat(half), embed[i]) << i;
    }
  };
  ModelCheckpoint tied = ModelCheckpoint::open(
      singleFile(bf16Model(false), config({{"tie_word_embeddings", true}})));
  expectEmbedding(checkpointWeight(tied, head));
  // Absent: transformers' default ties.
  ModelCheckpoint unsaid =
      ModelCheckpoint::open(singleFile(bf16Model(false), config()));
  expectEmbedding(checkpointWeight(unsaid, head));
  ModelCheckpoint untied = ModelCheckpoint::open(
      singleFile(bf16Model(false), config({{"tie_word_embeddings", false}})));
  expectError([&] { checkpointWeight(untied, head); },
              {"'lm_head.weight' not found", "tie_word_embeddings = false"});
}

TEST(ModelWeights, ModelMustMatchTheConfig) {
  ModelCheckpoint checkpoint = ModelCheckpoint::open(
      singleFile(bf16Model(true), config({{"vocab_size", 33}})));
  expectError([&] { checkModelAgainstConfig(modelArtifact(), checkpoint); },
              {"model.vocab_size = 32", "vocab_size = 33"});
  ModelCheckpoint matching = ModelCheckpoint::open(singleFile(bf16Model(true)));
  checkModelAgainstConfig(modelArtifact(), matching);
}

//===----------------------------------------------------------------------===//
// Quantized checkpoints
//===----------------------------------------------------------------------===//

namespace {

json gptqConfig() {
  return {{"quantization_config",
           {{"quant_method", "gptq"},
            {"bits", 4},
            {"group_size", 128},
            {"desc_act", false},
            {"sym", true}}}};
}

json compressedConfig() {
  return {{"quantization_config",
           {{"quant_method", "compressed-tensors"},
            {"format", "pack-quantized"},
            {"config_groups",
             {{"group_0",
               {{"targets", {"Linear"}},
                {"weights",
                 {{"num_bits", 4},
                  {"group_size", 128},
                  {"strategy", "group"},
                  {"symmetric", true}}}}}}}}}};
}

} // namespace

TEST(ModelWeights, ConvertsAutoGPTQ) {
  fmt::PackedWeight w = quantized("int4, group = 128, scale = f16",
                                  normalValues(size_t(kOut * kHidden), 5));
  fmt::TensorMap tensors;
  std::string error;
  ASSERT_TRUE(fmt::toGPTQv1(w, tensors, error)) << error;
  SafetensorsWriter writer;
  addFormatTensors(writer, std::string(kQ) + ".", tensors);
  ModelCheckpoint checkpoint =
      ModelCheckpoint::open(singleFile(writer, config(gptqConfig())));
  EXPECT_EQ(checkpoint.config().quantization, CheckpointQuantization::GPTQ);
  EXPECT_EQ(checkpoint.config().groupSize, 128);

  fmt::TensorMap got =
      checkpointWeight(checkpoint, *modelArtifact().findWeight(kQ));
  for (const auto &[name, tensor] : w.components)
    EXPECT_EQ(got.at(name).data, tensor.data) << name;

  // The artifact asks for another encoding: named, with both encodings.
  Artifact asym =
      modelArtifact("uint4, group = 128, scale = f16, zero = int");
  expectError([&] { checkpointWeight(checkpoint, *asym.findWeight(kQ)); },
              {std::string(kQ) + ".qweight", "AutoGPTQ",
               "\"int4, group = 128, scale = f16\"",
               "\"uint4, group = 128, scale = f16, zero = int\""});

  // GPTQ tensors without the config that says how to read them.
  ModelCheckpoint unsaid = ModelCheckpoint::open(singleFile(writer));
  expectError([&] { checkpointWeight(unsaid, *modelArtifact().findWeight(kQ)); },
              {std::string(kQ) + ".qweight", "not gptq"});
}

TEST(ModelWeights, ConvertsCompressedTensors) {
  fmt::PackedWeight w = quantized("int4, group = 128, scale = f16",
                                  normalValues(size_t(kOut * kHidden), 6));
  fmt::TensorMap tensors;
  std::string error;
  ASSERT_TRUE(fmt::toCompressedTensors(w, tensors, error)) << error;
  SafetensorsWriter writer;
  addFormatTensors(writer, std::string(kQ) + ".", tensors);
  ModelCheckpoint checkpoint =
      ModelCheckpoint::open(singleFile(writer, config(compressedConfig())));
  EXPECT_EQ(checkpoint.config().quantization,
            CheckpointQuantization::CompressedTensors);
  fmt::TensorMap got =
      checkpointWeight(checkpoint, *modelArtifact().findWeight(kQ));
  for (const auto &[name, tensor] : w.components)
    EXPECT_EQ(got.at(name).data, tensor.data) << name;

  Artifact group64 = modelArtifact("int4, group = 64, scale = f16");
  expectError([&] { checkpointWeight(checkpoint, *group64.findWeight(kQ)); },
              {std::string(kQ) + ".weight_packed", "compressed-tensors"});
}

//===----------------------------------------------------------------------===//
// Random weights
//===----------------------------------------------------------------------===//

TEST(ModelWeights, RandomWeightsAreDeterministicAndNotZero) {
  Artifact artifact = modelArtifact();
  const WeightSpec &q = *artifact.findWeight(kQ);
  fmt::TensorMap a = randomWeight(q, 7), b = randomWeight(q, 7),
                 c = randomWeight(q, 8);
  EXPECT_EQ(a.at("codes").data, b.at("codes").data);
  EXPECT_NE(a.at("codes").data, c.at("codes").data);
  size_t zeros = 0;
  for (uint8_t byte : a.at("codes").data)
    zeros += byte == 0;
  EXPECT_LT(zeros, a.at("codes").data.size() / 4);

  std::vector<uint8_t> norm =
      randomTensor(*artifact.findTensor("model.norm.weight"), 9);
  ASSERT_EQ(norm.size(), size_t(kHidden) * 2);
  for (int64_t i = 0; i < kHidden; ++i) {
    uint16_t half;
    std::memcpy(&half, &norm[2 * i], 2);
    EXPECT_NEAR(fmt::halfToFloat(half), 1.0f, 0.2f) << i;
  }
}

// Packing once: the packed directory loads to exactly the components the
// original checkpoint quantizes to, dense tensors in the artifact dtype, and
// a packed weight for another encoding is refused by name.
TEST(ModelWeights, PackedCheckpointLoadsWithoutQuantizing) {
  SafetensorsWriter writer = bf16Model(true);
  ModelCheckpoint original = ModelCheckpoint::open(singleFile(writer));
  Artifact artifact = modelArtifact();
  const std::string packedDir = makeDir() + "/packed";
  writePackedCheckpoint(artifact, original, packedDir);
  ModelCheckpoint packed = ModelCheckpoint::open(packedDir);
  EXPECT_TRUE(packed.contains(std::string(kQ) + ".codes"));
  EXPECT_FALSE(packed.contains(std::string(kQ) + ".weight"));
  for (const WeightSpec &weight : artifact.weights) {
    fmt::TensorMap want = checkpointWeight(original, weight);
    fmt::TensorMap got = checkpointWeight(packed, weight);
    ASSERT_EQ(got.size(), want.size()) << weight.name;
    for (const auto &[name, tensor] : want) {
      EXPECT_EQ(got.at(name).data, tensor.data) << weight.name << "." << name;
      EXPECT_EQ(got.at(name).shape, tensor.shape) << weight.name << "." << name;
    }
  }
  for (const TensorSpec &tensor : artifact.tensors)
    EXPECT_EQ(checkpointTensor(packed, tensor),
              checkpointTensor(original, tensor))
        << tensor.name;

  Artifact other = modelArtifact("uint4, group = 128, scale = f16, zero = int");
  try {
    checkpointWeight(packed, *other.findWeight(kQ));
    FAIL() << "a weight packed as int4 loaded for a uint4 artifact";
  } catch (const qfuse::Error &e) {
    EXPECT_NE(std::string(e.what()).find("was packed as \"int4, group = 128, "
                                         "scale = f16\""),
              std::string::npos)
        << e.what();
  }
}

//===----------------------------------------------------------------------===//
// Stored bytes bound as they are
//===----------------------------------------------------------------------===//

namespace {

/// f16 values of bf16Bytes (exact in f16), as bytes.
std::vector<uint8_t> f16Bytes(size_t count, uint32_t seed) {
  std::vector<float> values;
  bf16Bytes(count, seed, &values);
  std::vector<uint8_t> bytes(count * 2);
  for (size_t i = 0; i < count; ++i) {
    const uint16_t half = fmt::floatToHalf(values[i]);
    std::memcpy(&bytes[2 * i], &half, 2);
  }
  return bytes;
}

/// The whole model in f16; the lm_head's element `nanAt` a NaN if given.
SafetensorsWriter f16Model(std::optional<size_t> nanAt = std::nullopt) {
  SafetensorsWriter writer;
  auto add = [&](const std::string &name, std::vector<int64_t> shape,
                 uint32_t seed, std::optional<size_t> nan = std::nullopt) {
    std::vector<uint8_t> bytes =
        f16Bytes(size_t(fmt::numElements(shape)), seed);
    if (nan) {
      const uint16_t quietNan = 0x7E00;
      std::memcpy(&bytes[2 * *nan], &quietNan, 2);
    }
    writer.add(name, DType::F16, std::move(shape), bytes.data(), bytes.size());
  };
  add(std::string(kQ) + ".weight", {kOut, kHidden}, 1);
  add("model.embed_tokens.weight", {kVocab, kHidden}, 2);
  add("model.norm.weight", {kHidden}, 3);
  add("lm_head.weight", {kVocab, kHidden}, 4, nanAt);
  return writer;
}

/// storedWeight's views hold checkpointWeight's components, byte for byte.
void expectSameComponents(const RowMajorViews &views,
                          const fmt::TensorMap &want, const std::string &what) {
  ASSERT_EQ(views.size(), want.size()) << what;
  for (const auto &[name, tensor] : want) {
    SCOPED_TRACE(what + "." + name);
    ASSERT_TRUE(views.count(name));
    const RowMajorView &view = views.at(name);
    EXPECT_EQ(view.dtype, fmt::dtypeName(tensor.dtype));
    EXPECT_EQ(view.shape, tensor.shape);
    ASSERT_EQ(view.size, tensor.data.size());
    EXPECT_TRUE(std::equal(tensor.data.begin(), tensor.data.end(), view.data));
  }
}

std::string errorOf(const std::function<void()> &body) {
  try {
    body();
  } catch (const qfuse::Error &e) {
    return e.what();
  }
  return "no error";
}

} // namespace

// Where the stored bytes are what is bound (f16 into the f16 encoding,
// qfuse-packed components, tensors in the artifact's dtype), storedWeight
// and storedTensor view them in the mapped file: checkpointWeight's and
// checkpointTensor's bytes without their copy. What is converted (another
// dtype, a quantized encoding, a NaN) is left to those, and errors are
// theirs.
TEST(ModelWeights, StoredBytesAreViewedInTheMappedFile) {
  Artifact artifact = modelArtifact();
  const WeightSpec &head = *artifact.findWeight("lm_head");
  const WeightSpec &q = *artifact.findWeight(kQ);
  ModelCheckpoint f16 = ModelCheckpoint::open(singleFile(f16Model()));
  std::optional<RowMajorViews> stored = storedWeight(f16, head);
  ASSERT_TRUE(stored);
  EXPECT_EQ(stored->at("codes").data, f16.view("lm_head.weight").data);
  expectSameComponents(*stored, checkpointWeight(f16, head), "lm_head");
  EXPECT_FALSE(storedWeight(f16, q)); // int4: quantized
  for (const TensorSpec &tensor : artifact.tensors) {
    std::optional<TensorView> view = storedTensor(f16, tensor);
    ASSERT_TRUE(view) << tensor.name;
    EXPECT_EQ(view->data, f16.view(tensor.name).data);
    EXPECT_EQ(std::vector<uint8_t>(view->data, view->data + view->size),
              checkpointTensor(f16, tensor))
        << tensor.name;
  }

  // bf16 into f16 is converted, and so is a NaN (quantizeRTN's own).
  ModelCheckpoint bf16 = ModelCheckpoint::open(singleFile(bf16Model(true)));
  EXPECT_FALSE(storedWeight(bf16, head));
  EXPECT_FALSE(storedTensor(bf16, *artifact.findTensor("model.norm.weight")));
  ModelCheckpoint nan = ModelCheckpoint::open(singleFile(f16Model(100)));
  EXPECT_FALSE(storedWeight(nan, head));

  // qfuse-packed: every component is viewed.
  const std::string packedDir = makeDir() + "/packed";
  writePackedCheckpoint(artifact, bf16, packedDir);
  ModelCheckpoint packed = ModelCheckpoint::open(packedDir);
  for (const WeightSpec &weight : artifact.weights) {
    std::optional<RowMajorViews> views = storedWeight(packed, weight);
    ASSERT_TRUE(views) << weight.name;
    expectSameComponents(*views, checkpointWeight(packed, weight), weight.name);
  }
  Artifact uint4 = modelArtifact("uint4, group = 128, scale = f16, zero = int");
  const WeightSpec &otherQ = *uint4.findWeight(kQ);
  EXPECT_EQ(errorOf([&] { storedWeight(packed, otherQ); }),
            errorOf([&] { checkpointWeight(packed, otherQ); }));

  // A missing tensor and a wrong shape: checkpointWeight's errors.
  SafetensorsWriter wrong;
  addBf16(wrong, "lm_head.weight", {kVocab, 2 * kHidden}, 4);
  ModelCheckpoint broken = ModelCheckpoint::open(singleFile(wrong));
  for (const WeightSpec *weight : {&q, &head}) {
    const std::string expected =
        errorOf([&] { checkpointWeight(broken, *weight); });
    EXPECT_NE(expected, "no error");
    EXPECT_EQ(errorOf([&] { storedWeight(broken, *weight); }), expected);
  }
}

// A converted tensor made in parts on several threads (BackgroundLoad's
// row ranges, TensorParts.h) is checkpointTensor's bytes; an overflow in a
// part names the element's index in the whole tensor; a tensor that is not
// converted (viewed instead) is refused.
TEST(ModelWeights, ConvertedPartsMakeTheWholeTensor) {
  Artifact artifact = modelArtifact();
  const TensorSpec &embedding =
      *artifact.findTensor("model.embed_tokens.weight");
  ModelCheckpoint bf16 = ModelCheckpoint::open(singleFile(bf16Model(true)));
  const std::vector<uint8_t> whole = checkpointTensor(bf16, embedding);
  for (uint64_t partRows : {1, 3, 7, 32, 100}) {
    SCOPED_TRACE("rows per part " + std::to_string(partRows));
    std::vector<uint8_t> parts(whole.size(), 0xAB);
    const std::vector<ElementRange> ranges =
        rowParts(kVocab, kHidden, partRows * kHidden);
    std::vector<std::thread> threads;
    for (const ElementRange &range : ranges)
      threads.emplace_back([&, range] {
        checkpointTensorPart(bf16, embedding, range.first, range.count,
                             parts.data());
      });
    for (std::thread &thread : threads)
      thread.join();
    EXPECT_EQ(parts, whole);
  }

  SafetensorsWriter big;
  std::vector<float> values(size_t(kHidden), 0.5f);
  values[kHidden - 2] = 1e6f;
  big.add("model.norm.weight", DType::F32, {kHidden}, values.data(),
          values.size() * 4);
  ModelCheckpoint overflow = ModelCheckpoint::open(singleFile(big));
  std::vector<uint8_t> out(size_t(kHidden) * 2);
  const TensorSpec &norm = *artifact.findTensor("model.norm.weight");
  EXPECT_NO_THROW(checkpointTensorPart(overflow, norm, 0, 64, out.data()));
  expectError(
      [&] {
        checkpointTensorPart(overflow, norm, 64, kHidden - 64, out.data());
      },
      {"model.norm.weight", "element " + std::to_string(kHidden - 2),
       "overflows f16"});

  ModelCheckpoint f16 = ModelCheckpoint::open(singleFile(f16Model()));
  EXPECT_TRUE(convertsInParts(bf16, embedding));
  EXPECT_TRUE(convertsInParts(overflow, norm));
  EXPECT_FALSE(convertsInParts(f16, embedding));      // viewed, not converted
  EXPECT_FALSE(convertsInParts(overflow, embedding)); // missing: reported later
  expectError([&] { checkpointTensorPart(f16, embedding, 0, 1, out.data()); },
              {"model.embed_tokens.weight", "F16 to f16"});
  expectError(
      [&] {
        checkpointTensorPart(bf16, embedding, kVocab * kHidden - 1, 2,
                             out.data());
      },
      {"model.embed_tokens.weight", "elements ["});
}
