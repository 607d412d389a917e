//===- ConfigCasesTest.cpp - The shared config.json table, in C++ ---------===//
//
// Runs every case of testdata/model-configs/cases.json through
// ModelConfig::parse. The Python frontend's tests run the same table
// (python-frontend/tests/test_config_cases.py), so the two readers accept
// and reject the same configs with the same messages.
//
//===----------------------------------------------------------------------===//

#include "qfuse/reference/ModelConfig.h"
#include "qfuse/runtime/Error.h"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <string>

namespace qfuse::reference {
namespace {

using nlohmann::json;

json loadTable() {
  std::ifstream in(QFUSE_CONFIG_CASES);
  if (!in)
    throw std::runtime_error(std::string(QFUSE_CONFIG_CASES) +
                             ": cannot read the shared config cases");
  return json::parse(in);
}

/// "rope_scaling.factor" -> /rope_scaling/factor.
json::json_pointer pointer(const std::string &dotted) {
  std::string path = "/" + dotted;
  std::replace(path.begin(), path.end(), '.', '/');
  return json::json_pointer(path);
}

/// The case's config: its base, minus `remove`, plus `set`.
json buildConfig(const json &testCase, const json &bases) {
  json config = bases.at(testCase.at("base").get<std::string>());
  json remove = testCase.value("remove", json::array());
  json set = testCase.value("set", json::object());
  for (const json &dotted : remove) {
    json::json_pointer where = pointer(dotted.get<std::string>());
    config.at(where.parent_pointer()).erase(where.back());
  }
  for (const auto &[dotted, value] : set.items())
    config[pointer(dotted)] = value;
  return config;
}

/// The values a `valid` case may name, read from a parsed config.
json observed(const ModelConfig &c) {
  json biases = json::array();
  for (Projection p :
       {Projection::Q, Projection::K, Projection::V, Projection::O,
        Projection::Gate, Projection::Up, Projection::Down})
    if (c.hasBias(p))
      biases.push_back(projectionName(p));
  std::sort(biases.begin(), biases.end());
  return {
      {"architecture", architectureName(c.architecture)},
      {"hidden_size", c.hiddenSize},
      {"intermediate_size", c.intermediateSize},
      {"num_attention_heads", c.numAttentionHeads},
      {"num_key_value_heads", c.numKeyValueHeads},
      {"head_dim", c.headDim},
      {"num_hidden_layers", c.numHiddenLayers},
      {"vocab_size", c.vocabSize},
      {"max_position_embeddings", c.maxPositionEmbeddings},
      {"q_width", c.qWidth()},
      {"kv_width", c.kvWidth()},
      {"rms_norm_eps", c.rmsNormEps},
      {"rope_theta", c.ropeTheta},
      {"rope_scaling_factor",
       c.ropeScaling ? json(c.ropeScaling->factor) : json(nullptr)},
      {"tie_word_embeddings", c.tieWordEmbeddings},
      {"sliding_window",
       c.slidingWindow ? json(*c.slidingWindow) : json(nullptr)},
      {"biases", biases},
  };
}

TEST(ConfigCases, LimitsAreTheTables) {
  json limits = {
      {"num_hidden_layers", ConfigLimits::kNumHiddenLayers},
      {"hidden_size", ConfigLimits::kHiddenSize},
      {"intermediate_size", ConfigLimits::kIntermediateSize},
      {"num_attention_heads", ConfigLimits::kNumAttentionHeads},
      {"num_key_value_heads", ConfigLimits::kNumKeyValueHeads},
      {"head_dim", ConfigLimits::kHeadDim},
      {"vocab_size", ConfigLimits::kVocabSize},
      {"max_position_embeddings", ConfigLimits::kMaxPositionEmbeddings},
      {"sliding_window", ConfigLimits::kSlidingWindow},
      {"q_width", ConfigLimits::kQWidth},
      {"weight_elements", ConfigLimits::kWeightElements},
  };
  EXPECT_EQ(limits, loadTable().at("limits"));
}

TEST(ConfigCases, EveryCase) {
  json table = loadTable();
  ASSERT_FALSE(table.at("cases").empty());
  for (const json &testCase : table.at("cases")) {
    std::string name = testCase.at("name").get<std::string>();
    SCOPED_TRACE("case " + name);
    ASSERT_NE(testCase.contains("valid"), testCase.contains("error"))
        << "a case has exactly one of 'valid' and 'error'";
    std::string source = "cases/" + name + "/config.json";
    std::string text = buildConfig(testCase, table.at("bases")).dump();
    if (testCase.contains("valid")) {
      json got;
      try {
        got = observed(ModelConfig::parse(text, source));
      } catch (const Error &e) {
        ADD_FAILURE() << "rejected: " << e.what();
        continue;
      }
      for (const auto &[key, value] : testCase.at("valid").items()) {
        ASSERT_TRUE(got.contains(key))
            << "unknown key '" << key << "' in 'valid'";
        json want = value;
        if (key == "biases")
          std::sort(want.begin(), want.end());
        EXPECT_EQ(got.at(key), want) << key;
      }
      continue;
    }
    try {
      ModelConfig::parse(text, source);
      ADD_FAILURE() << "accepted: " << text;
    } catch (const Error &e) {
      std::string message = e.what();
      EXPECT_EQ(message.rfind(source + ": field '", 0), 0u) << message;
      for (const json &needle : testCase.at("error"))
        EXPECT_NE(message.find(needle.get<std::string>()), std::string::npos)
            << "expected '" << needle.get<std::string>() << "' in: " << message;
    }
  }
}

} // namespace
} // namespace qfuse::reference
