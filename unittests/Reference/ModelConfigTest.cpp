//===- ModelConfigTest.cpp - config.json parsing and its rejections -------===//

#include "qfuse/reference/ModelConfig.h"
#include "qfuse/reference/SyntheticModel.h"
#include "qfuse/runtime/Error.h"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace qfuse::reference {
namespace {

using nlohmann::json;

// Real configs, abridged to the fields that matter plus a few that do not
// (torch_dtype, bos_token_id), which the parser must ignore.
const char *kLlama31 = R"({
  "architectures": ["LlamaForCausalLM"], "model_type": "llama",
  "hidden_size": 4096, "intermediate_size": 14336,
  "num_attention_heads": 32, "num_key_value_heads": 8,
  "num_hidden_layers": 32, "vocab_size": 128256,
  "max_position_embeddings": 131072, "rms_norm_eps": 1e-05,
  "rope_theta": 500000.0, "hidden_act": "silu", "attention_bias": false,
  "mlp_bias": false, "tie_word_embeddings": false, "torch_dtype": "bfloat16",
  "bos_token_id": 128000,
  "rope_scaling": {"factor": 8.0, "low_freq_factor": 1.0,
                   "high_freq_factor": 4.0,
                   "original_max_position_embeddings": 8192,
                   "rope_type": "llama3"}})";

const char *kMistral = R"({
  "architectures": ["MistralForCausalLM"], "model_type": "mistral",
  "hidden_size": 4096, "intermediate_size": 14336,
  "num_attention_heads": 32, "num_key_value_heads": 8,
  "num_hidden_layers": 32, "vocab_size": 32000,
  "max_position_embeddings": 32768, "rms_norm_eps": 1e-05,
  "rope_theta": 10000.0, "hidden_act": "silu", "sliding_window": 4096,
  "tie_word_embeddings": false})";

const char *kQwen2 = R"({
  "architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2",
  "hidden_size": 896, "intermediate_size": 4864,
  "num_attention_heads": 14, "num_key_value_heads": 2,
  "num_hidden_layers": 24, "vocab_size": 151936,
  "max_position_embeddings": 32768, "rms_norm_eps": 1e-06,
  "rope_theta": 1000000.0, "hidden_act": "silu", "sliding_window": 32768,
  "use_sliding_window": false, "max_window_layers": 24,
  "tie_word_embeddings": true, "rope_scaling": null})";

TEST(ReferenceConfig, ParsesLlama31) {
  ModelConfig c = ModelConfig::parse(kLlama31, "llama/config.json");
  EXPECT_EQ(c.architecture, Architecture::Llama);
  EXPECT_EQ(c.hiddenSize, 4096);
  EXPECT_EQ(c.intermediateSize, 14336);
  EXPECT_EQ(c.numAttentionHeads, 32);
  EXPECT_EQ(c.numKeyValueHeads, 8);
  EXPECT_EQ(c.headDim, 128);
  EXPECT_EQ(c.numHiddenLayers, 32);
  EXPECT_EQ(c.vocabSize, 128256);
  EXPECT_EQ(c.rmsNormEps, 1e-5);
  EXPECT_EQ(c.ropeTheta, 500000.0);
  ASSERT_TRUE(c.ropeScaling.has_value());
  EXPECT_EQ(c.ropeScaling->factor, 8.0);
  EXPECT_EQ(c.ropeScaling->lowFreqFactor, 1.0);
  EXPECT_EQ(c.ropeScaling->highFreqFactor, 4.0);
  EXPECT_EQ(c.ropeScaling->originalMaxPositionEmbeddings, 8192.0);
  EXPECT_FALSE(c.tieWordEmbeddings);
  EXPECT_FALSE(c.slidingWindow.has_value());
  EXPECT_EQ(c.qWidth(), 4096);
  EXPECT_EQ(c.kvWidth(), 1024);
  EXPECT_EQ(c.outFeatures(Projection::K), 1024);
  EXPECT_EQ(c.inFeatures(Projection::Down), 14336);
  EXPECT_EQ(c.outFeatures(Projection::LmHead), 128256);
  for (Projection p : {Projection::Q, Projection::O, Projection::Up})
    EXPECT_FALSE(c.hasBias(p));
  c.checkSequenceLength(1 << 20); // no window
}

TEST(ReferenceConfig, ParsesMistralWithItsSlidingWindow) {
  ModelConfig c = ModelConfig::parse(kMistral, "mistral/config.json");
  EXPECT_EQ(c.architecture, Architecture::Mistral);
  EXPECT_EQ(c.headDim, 128);
  EXPECT_FALSE(c.ropeScaling.has_value());
  ASSERT_TRUE(c.slidingWindow.has_value());
  EXPECT_EQ(*c.slidingWindow, 4096);
  c.checkSequenceLength(4096);
  try {
    c.checkSequenceLength(4097);
    FAIL() << "4097 positions exceed the window";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find(
                  "mistral/config.json: field 'sliding_window' is 4096"),
              std::string::npos)
        << e.what();
  }
}

TEST(ReferenceConfig, ParsesQwen2WithBiasesAndTiedEmbeddings) {
  ModelConfig c = ModelConfig::parse(kQwen2, "qwen/config.json");
  EXPECT_EQ(c.architecture, Architecture::Qwen2);
  EXPECT_EQ(c.headDim, 64);
  EXPECT_EQ(c.numKeyValueHeads, 2);
  EXPECT_TRUE(c.tieWordEmbeddings);
  EXPECT_EQ(c.rmsNormEps, 1e-6);
  EXPECT_EQ(c.ropeTheta, 1e6);
  // use_sliding_window false: sliding_window is not in effect.
  EXPECT_FALSE(c.slidingWindow.has_value());
  EXPECT_TRUE(c.hasBias(Projection::Q));
  EXPECT_TRUE(c.hasBias(Projection::K));
  EXPECT_TRUE(c.hasBias(Projection::V));
  EXPECT_FALSE(c.hasBias(Projection::O));
  EXPECT_FALSE(c.hasBias(Projection::Gate));
  EXPECT_FALSE(c.hasBias(Projection::LmHead));

  json j = json::parse(kQwen2);
  j["use_sliding_window"] = true;
  j["sliding_window"] = 64;
  ModelConfig windowed = ModelConfig::parse(j.dump(), "qwen/config.json");
  ASSERT_TRUE(windowed.slidingWindow.has_value());
  EXPECT_EQ(*windowed.slidingWindow, 64);
  EXPECT_THROW(windowed.checkSequenceLength(65), Error);
}

TEST(ReferenceConfig, AppliesHuggingFaceDefaults) {
  json j = json::parse(kLlama31);
  for (const char *field :
       {"num_key_value_heads", "rms_norm_eps", "rope_theta", "rope_scaling",
        "tie_word_embeddings", "hidden_act", "attention_bias", "mlp_bias",
        "max_position_embeddings"})
    j.erase(field);
  j["head_dim"] = nullptr; // Mistral writes null for "hidden / heads"
  ModelConfig c = ModelConfig::parse(j.dump(), "config.json");
  EXPECT_EQ(c.numKeyValueHeads, 32);
  EXPECT_EQ(c.headDim, 128);
  EXPECT_EQ(c.rmsNormEps, 1e-6);
  EXPECT_EQ(c.ropeTheta, 10000.0);
  EXPECT_FALSE(c.ropeScaling.has_value());
  EXPECT_FALSE(c.tieWordEmbeddings);
  EXPECT_EQ(c.maxPositionEmbeddings, 2048);

  // An explicit head_dim need not be hidden / heads (Gemma-like shapes).
  j["head_dim"] = 64;
  EXPECT_EQ(ModelConfig::parse(j.dump(), "config.json").qWidth(), 32 * 64);
  // Old configs name only the model type; rope_type "default" is no scaling.
  j.erase("architectures");
  j["model_type"] = "mistral";
  j["rope_scaling"] = {{"rope_type", "default"}};
  ModelConfig m = ModelConfig::parse(j.dump(), "config.json");
  EXPECT_EQ(m.architecture, Architecture::Mistral);
  EXPECT_FALSE(m.ropeScaling.has_value());
}

TEST(ReferenceConfig, AttentionAndMlpBiasForLlama) {
  json j = json::parse(kLlama31);
  j["attention_bias"] = true;
  ModelConfig c = ModelConfig::parse(j.dump(), "config.json");
  for (Projection p :
       {Projection::Q, Projection::K, Projection::V, Projection::O})
    EXPECT_TRUE(c.hasBias(p)) << projectionName(p);
  EXPECT_FALSE(c.hasBias(Projection::Gate));
  j["mlp_bias"] = true;
  c = ModelConfig::parse(j.dump(), "config.json");
  for (Projection p : {Projection::Gate, Projection::Up, Projection::Down})
    EXPECT_TRUE(c.hasBias(p)) << projectionName(p);
}

// Valid and invalid configs field by field, and the size limits, are the
// shared table's (ConfigCasesTest.cpp), which the Python frontend runs too.

TEST(ReferenceConfig, RejectsMalformedJson) {
  auto message = [](const std::string &text) {
    try {
      ModelConfig::parse(text, "bad/config.json");
    } catch (const Error &e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(
      message("{\"hidden_size\": ").find("bad/config.json is not valid JSON"),
      std::string::npos);
  EXPECT_NE(message(R"({"hidden_size": 8, "hidden_size": 16})")
                .find("bad/config.json: duplicate key 'hidden_size'"),
            std::string::npos);
  EXPECT_NE(message("[1, 2]").find("bad/config.json: is array, expected a "
                                   "JSON object"),
            std::string::npos);
}

bool sameConfig(const ModelConfig &a, const ModelConfig &b) {
  auto scaling = [](const std::optional<Llama3RopeScaling> &s) {
    return s ? std::vector<double>{s->factor, s->lowFreqFactor,
                                   s->highFreqFactor,
                                   s->originalMaxPositionEmbeddings}
             : std::vector<double>{};
  };
  return a.architecture == b.architecture && a.hiddenSize == b.hiddenSize &&
         a.intermediateSize == b.intermediateSize &&
         a.numAttentionHeads == b.numAttentionHeads &&
         a.numKeyValueHeads == b.numKeyValueHeads && a.headDim == b.headDim &&
         a.numHiddenLayers == b.numHiddenLayers && a.vocabSize == b.vocabSize &&
         a.maxPositionEmbeddings == b.maxPositionEmbeddings &&
         a.rmsNormEps == b.rmsNormEps && a.ropeTheta == b.ropeTheta &&
         scaling(a.ropeScaling) == scaling(b.ropeScaling) &&
         a.tieWordEmbeddings == b.tieWordEmbeddings &&
         a.attentionBias == b.attentionBias && a.mlpBias == b.mlpBias &&
         a.slidingWindow == b.slidingWindow;
}

TEST(ReferenceConfig, ToJsonParsesBackEqual) {
  std::vector<ModelConfig> configs = {
      ModelConfig::parse(kLlama31, "a"), ModelConfig::parse(kMistral, "b"),
      ModelConfig::parse(kQwen2, "c"), syntheticPreset("tiny-llama"),
      syntheticPreset("tiny-qwen2")};
  json windowed = json::parse(kQwen2);
  windowed["use_sliding_window"] = true;
  configs.push_back(ModelConfig::parse(windowed.dump(), "d"));
  json biased = json::parse(kLlama31);
  biased["attention_bias"] = true;
  biased["mlp_bias"] = true;
  configs.push_back(ModelConfig::parse(biased.dump(), "e"));
  for (const ModelConfig &c : configs)
    EXPECT_TRUE(sameConfig(ModelConfig::parse(c.toJson(), "x"), c))
        << c.toJson();
}

/// `text` as transformers 5 writes it: rope_theta and rope_scaling folded
/// into one rope_parameters object.
std::string transformers5(const char *text) {
  json j = json::parse(text);
  json params = {{"rope_type", "default"}};
  if (j.contains("rope_theta"))
    params["rope_theta"] = j["rope_theta"];
  if (j.contains("rope_scaling") && j["rope_scaling"].is_object())
    params.update(j["rope_scaling"]);
  j.erase("rope_theta");
  j.erase("rope_scaling");
  j["rope_parameters"] = params;
  return j.dump();
}

// The rules, valid and invalid, are the shared table's (rope_parameters_*);
// here: each reference config in the transformers 5 spelling is the same
// model, and a file holding one loads so.
TEST(ReferenceConfig, ReadsTransformers5RopeParameters) {
  for (const char *text : {kLlama31, kMistral, kQwen2}) {
    std::string tf5 = transformers5(text);
    ASSERT_NE(tf5.find("rope_parameters"), std::string::npos);
    ModelConfig c = ModelConfig::parse(tf5, "tf5/config.json");
    EXPECT_TRUE(sameConfig(c, ModelConfig::parse(text, "config.json"))) << tf5;
  }
  namespace fs = std::filesystem;
  fs::path dir = fs::path(QFUSE_TEST_SCRATCH) / "config-tf5";
  fs::create_directories(dir);
  std::ofstream(dir / "config.json") << transformers5(kLlama31);
  ModelConfig c = ModelConfig::load(dir.string());
  EXPECT_EQ(c.ropeTheta, 500000.0);
  ASSERT_TRUE(c.ropeScaling.has_value());
  EXPECT_EQ(c.ropeScaling->factor, 8.0);
  EXPECT_EQ(c.ropeScaling->originalMaxPositionEmbeddings, 8192.0);
}

TEST(ReferenceConfig, LoadsAFileOrADirectoryAndNamesUnreadableOnes) {
  namespace fs = std::filesystem;
  fs::path dir = fs::path(QFUSE_TEST_SCRATCH) / "config-load";
  fs::create_directories(dir);
  std::ofstream(dir / "config.json") << kQwen2;
  EXPECT_EQ(ModelConfig::load(dir.string()).architecture, Architecture::Qwen2);
  ModelConfig c = ModelConfig::load((dir / "config.json").string());
  EXPECT_EQ(c.source, (dir / "config.json").string());
  std::string missing = (dir / "absent.json").string();
  try {
    ModelConfig::load(missing);
    FAIL();
  } catch (const Error &e) {
    EXPECT_EQ(std::string(e.what()).rfind(missing + ": cannot read", 0), 0u)
        << e.what();
  }
}

} // namespace
} // namespace qfuse::reference
