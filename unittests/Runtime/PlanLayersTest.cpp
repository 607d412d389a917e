//===- PlanLayersTest.cpp - A model plan split into decoder layers --------===//
//
// analyzePlanLayers on a small fake Llama plan with the structure the
// compiler emits for an fp16 model (embedding; per layer: norm, q/k/v gemms
// sharing x, rotary attention over the layer's KV cache state buffers, o
// gemm with the residual, norm, gate/up gemms, silu_mul, down gemm with the
// residual; final norm, lm_head, argmax), then one broken plan per rule,
// each expected to fail naming the step. The compiled Llama-3-8B fp16 plan
// (artifacts/, when present) is split too. The load stages of the split
// (LoadStages.h: what a layer-at-a-time run reads first) on both.
//
//===----------------------------------------------------------------------===//

#include "qfuse/runtime/artifact/PlanLayers.h"

#include "qfuse/runtime/artifact/LoadStages.h"

#include "qfuse/runtime/Error.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <optional>
#include <set>
#include <string>

using namespace qfuse::runtime;
using nlohmann::json;

namespace {

constexpr int64_t kHidden = 64, kKv = 32, kInter = 128, kVocab = 32,
                  kMaxSeq = 16;

std::string layerName(int64_t l) {
  return "model.layers." + std::to_string(l) + ".";
}

json launch(const std::string &kernel, std::initializer_list<json> args) {
  return {{"launch", kernel},
          {"grid", {1, 1, 1}},
          {"block", {32, 1, 1}},
          {"args", json(args)}};
}
json buf(const std::string &name) { return {{"buffer", name}}; }
json tensor(const std::string &name) { return {{"tensor", name}}; }
json gemm(const std::string &x, const std::string &weight,
          const std::string &residual = "") {
  json g = {{"x", x}, {"weight", weight}, {"y", weight + ".out"}};
  if (!residual.empty())
    g["residual"] = residual;
  return {{"gemm", g}};
}

/// The fake model: `layers` decoder layers and the artifact around a plan.
/// Buffers, weights and tensors are declared for every layer index below
/// `declaredLayers` so that broken plans still parse.
struct FakeLlama {
  int64_t layers = 2;
  int64_t declaredLayers = 3;
  /// An untagged residual add launch instead of the down gemm's residual.
  bool separateResidualAdd = false;

  /// Per layer, the steps (first: the input norm).
  std::vector<json> layerSteps(int64_t l, const std::string &h) const {
    const std::string p = layerName(l);
    const std::string xn = "value" + std::to_string(10 * l + 1);
    const std::string attn = "value" + std::to_string(10 * l + 2);
    const std::string xn2 = "value" + std::to_string(10 * l + 3);
    const std::string act = "value" + std::to_string(10 * l + 4);
    std::vector<json> steps = {
        launch("rms_norm",
               {buf(h), tensor(p + "input_layernorm.weight"), buf(xn)}),
        gemm(xn, p + "self_attn.q_proj"),
        gemm(xn, p + "self_attn.k_proj"),
        gemm(xn, p + "self_attn.v_proj"),
        launch("attention",
               {buf(p + "self_attn.q_proj.out"),
                buf(p + "self_attn.k_proj.out"),
                buf(p + "self_attn.v_proj.out"), buf(p + "self_attn.key_cache"),
                buf(p + "self_attn.value_cache"), buf("positions"), buf(attn)}),
        gemm(attn, p + "self_attn.o_proj", h),
        launch("rms_norm",
               {buf(p + "self_attn.o_proj.out"),
                tensor(p + "post_attention_layernorm.weight"), buf(xn2)}),
        gemm(xn2, p + "mlp.gate_proj"),
        gemm(xn2, p + "mlp.up_proj"),
        launch("silu_mul", {buf(p + "mlp.gate_proj.out"),
                            buf(p + "mlp.up_proj.out"), buf(act)})};
    if (separateResidualAdd) {
      steps.push_back(gemm(act, p + "mlp.down_proj"));
      steps.push_back(
          launch("add", {buf(p + "mlp.down_proj.out"),
                         buf(p + "self_attn.o_proj.out"), buf(output(l))}));
    } else {
      steps.push_back(
          gemm(act, p + "mlp.down_proj", p + "self_attn.o_proj.out"));
    }
    return steps;
  }
  /// The residual stream after layer l.
  std::string output(int64_t l) const {
    return separateResidualAdd ? "residual" + std::to_string(l)
                               : layerName(l) + "mlp.down_proj.out";
  }
  std::string input(int64_t l) const { return l == 0 ? "h0" : output(l - 1); }

  std::vector<json> steps() const {
    std::vector<json> all = {
        launch("embedding", {tensor("model.embed_tokens.weight"),
                             buf("input_ids"), buf("h0")})};
    for (int64_t l = 0; l < layers; ++l)
      for (json &step : layerSteps(l, input(l)))
        all.push_back(step);
    all.push_back(launch("rms_norm", {buf(output(layers - 1)),
                                      tensor("model.norm.weight"), buf("hf")}));
    all.push_back(gemm("hf", "lm_head"));
    all.push_back(launch("argmax", {buf("lm_head.out"), buf("next_token")}));
    return all;
  }

  json artifact(const std::vector<json> &planSteps) const {
    json kernels = json::array();
    for (auto [name, params] :
         std::initializer_list<std::pair<const char *, int>>{{"embedding", 3},
                                                             {"rms_norm", 3},
                                                             {"attention", 7},
                                                             {"silu_mul", 3},
                                                             {"add", 3},
                                                             {"argmax", 2}}) {
      json list = json::array();
      for (int i = 0; i < params; ++i)
        list.push_back({{"name", "p" + std::to_string(i)}, {"type", "ptr"}});
      kernels.push_back(
          {{"name", name},
           {"ptx", std::string(".visible .entry ") + name + "()\n{\nret;\n}\n"},
           {"params", list}});
    }
    json weights = json::array(), tensors = json::array(),
         buffers = json::array();
    auto weight = [&](const std::string &name, int64_t n, int64_t k) {
      weights.push_back({{"name", name},
                         {"shape", {n, k}},
                         {"encoding", "f16"},
                         {"layout", "row_major"}});
      buffers.push_back(
          {{"name", name + ".out"}, {"shape", {"M", n}}, {"dtype", "f16"}});
    };
    auto activation = [&](const std::string &name, int64_t width) {
      buffers.push_back(
          {{"name", name}, {"shape", {"M", width}}, {"dtype", "f16"}});
    };
    json inputs = {"input_ids", "positions"};
    buffers.push_back(
        {{"name", "input_ids"}, {"shape", {"M"}}, {"dtype", "i32"}});
    buffers.push_back(
        {{"name", "positions"}, {"shape", {"M"}}, {"dtype", "i32"}});
    buffers.push_back(
        {{"name", "next_token"}, {"shape", {"M"}}, {"dtype", "i32"}});
    activation("h0", kHidden);
    activation("hf", kHidden);
    tensors.push_back({{"name", "model.embed_tokens.weight"},
                       {"shape", {kVocab, kHidden}},
                       {"dtype", "f16"}});
    tensors.push_back({{"name", "model.norm.weight"},
                       {"shape", {kHidden}},
                       {"dtype", "f16"}});
    weight("lm_head", kVocab, kHidden);
    for (int64_t l = 0; l < declaredLayers; ++l) {
      const std::string p = layerName(l);
      weight(p + "self_attn.q_proj", kHidden, kHidden);
      weight(p + "self_attn.k_proj", kKv, kHidden);
      weight(p + "self_attn.v_proj", kKv, kHidden);
      weight(p + "self_attn.o_proj", kHidden, kHidden);
      weight(p + "mlp.gate_proj", kInter, kHidden);
      weight(p + "mlp.up_proj", kInter, kHidden);
      weight(p + "mlp.down_proj", kHidden, kInter);
      for (const char *norm : {"input_layernorm", "post_attention_layernorm"})
        tensors.push_back({{"name", p + norm + ".weight"},
                           {"shape", {kHidden}},
                           {"dtype", "f16"}});
      for (const char *cache : {"key_cache", "value_cache"}) {
        buffers.push_back({{"name", p + "self_attn." + cache},
                           {"shape", {kMaxSeq, kKv}},
                           {"dtype", "f16"},
                           {"state", true}});
        inputs.push_back(p + "self_attn." + cache);
      }
      activation("value" + std::to_string(10 * l + 1), kHidden);
      activation("value" + std::to_string(10 * l + 2), kHidden);
      activation("value" + std::to_string(10 * l + 3), kHidden);
      activation("value" + std::to_string(10 * l + 4), kInter);
      activation("residual" + std::to_string(l), kHidden);
    }
    activation("scratch", kHidden);
    json plans = json::array();
    for (int64_t batch : {1, 8})
      plans.push_back({{"batch", batch}, {"steps", planSteps}});
    return {{"format", "qfuse-artifact"},
            {"version", 2},
            {"producer", "PlanLayersTest"},
            {"target", {{"chip", "sm_90"}}},
            {"kernels", kernels},
            {"weights", weights},
            {"tensors", tensors},
            {"buffers", buffers},
            {"inputs", inputs},
            {"outputs", {"next_token", "lm_head.out"}},
            {"plans", plans},
            {"model",
             {{"architecture", "LlamaForCausalLM"},
              {"vocab_size", kVocab},
              {"hidden_size", kHidden},
              {"num_layers", layers},
              {"num_heads", 4},
              {"num_kv_heads", 2},
              {"head_dim", 16},
              {"max_seq", kMaxSeq}}}};
  }

  Artifact parse(const std::vector<json> &planSteps) const {
    return Artifact::parse(artifact(planSteps).dump(), "fake.qfa");
  }
  Artifact parse() const { return parse(steps()); }
};

std::vector<std::string> moduleNames(const SharedInput &group) {
  std::vector<std::string> names;
  for (const LinearModule &m : group.modules)
    names.push_back(m.weight);
  return names;
}

void expectRange(const StepRange &range, size_t first, size_t last,
                 const std::string &what) {
  EXPECT_EQ(range.first, first) << what;
  EXPECT_EQ(range.last, last) << what;
}

/// analyzePlanLayers on `steps` must fail naming every fragment.
void expectAnalysisError(const FakeLlama &model, const std::vector<json> &steps,
                         std::initializer_list<std::string> fragments) {
  Artifact artifact = model.parse(steps);
  try {
    analyzePlanLayers(artifact, 8);
    FAIL() << "no error";
  } catch (const qfuse::Error &e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("artifact 'fake.qfa', plan for batch 8"),
              std::string::npos)
        << message;
    for (const std::string &fragment : fragments)
      EXPECT_NE(message.find(fragment), std::string::npos)
          << "'" << fragment << "' not in: " << message;
  }
}

} // namespace

TEST(PlanLayers, NamesTheirLayer) {
  EXPECT_EQ(layerOfName("model.layers.0.self_attn.q_proj"), 0);
  EXPECT_EQ(layerOfName("model.layers.31.mlp.down_proj.out"), 31);
  EXPECT_EQ(layerOfName("model.layers.7."), 7);
  EXPECT_EQ(layerOfName("model.layers.x.mlp"), std::nullopt);
  EXPECT_EQ(layerOfName("model.layers..mlp"), std::nullopt);
  EXPECT_EQ(layerOfName("model.layers.3"), std::nullopt);
  EXPECT_EQ(layerOfName("model.norm.weight"), std::nullopt);
  EXPECT_EQ(layerOfName("lm_head"), std::nullopt);
  EXPECT_EQ(layerOfName("xmodel.layers.1.q"), std::nullopt);
}

TEST(PlanLayers, SplitsATwoLayerPlan) {
  FakeLlama model;
  Artifact artifact = model.parse();
  for (int64_t batch : {1, 8}) {
    PlanLayers split = analyzePlanLayers(artifact, batch);
    EXPECT_EQ(split.batch, batch);
    expectRange(split.prologue, 0, 1, "prologue");
    ASSERT_EQ(split.layers.size(), 2u);
    expectRange(split.layers[0].steps, 1, 12, "layer 0");
    expectRange(split.layers[1].steps, 12, 23, "layer 1");
    expectRange(split.epilogue, 23, 26, "epilogue");

    for (int64_t l = 0; l < 2; ++l) {
      const PlanLayer &layer = split.layers[size_t(l)];
      const std::string p = layerName(l);
      const std::string what = "layer " + std::to_string(l);
      EXPECT_EQ(layer.index, l);
      // The residual stream only: layer 1's comes from a buffer named after
      // layer 0, which must not place any step in layer 0.
      EXPECT_EQ(layer.inputs, std::vector<std::string>{model.input(l)}) << what;
      EXPECT_EQ(layer.planInputs, std::vector<std::string>{"positions"});
      EXPECT_EQ(layer.stateBuffers,
                (std::vector<std::string>{p + "self_attn.key_cache",
                                          p + "self_attn.value_cache"}));
      ASSERT_EQ(layer.linears.size(), 7u) << what;
      EXPECT_EQ(layer.linears[0].step, layer.steps.first + 1);
      EXPECT_EQ(layer.linears[0].weight, p + "self_attn.q_proj");
      EXPECT_EQ(layer.linears[6].weight, p + "mlp.down_proj");

      ASSERT_EQ(layer.groups.size(), 4u) << what;
      auto value = [&](int64_t i) {
        return "value" + std::to_string(10 * l + i);
      };
      EXPECT_EQ(layer.groups[0].x, value(1));
      EXPECT_EQ(moduleNames(layer.groups[0]),
                (std::vector<std::string>{p + "self_attn.q_proj",
                                          p + "self_attn.k_proj",
                                          p + "self_attn.v_proj"}));
      EXPECT_EQ(layer.groups[1].x, value(2));
      EXPECT_EQ(moduleNames(layer.groups[1]),
                std::vector<std::string>{p + "self_attn.o_proj"});
      EXPECT_EQ(layer.groups[2].x, value(3));
      EXPECT_EQ(
          moduleNames(layer.groups[2]),
          (std::vector<std::string>{p + "mlp.gate_proj", p + "mlp.up_proj"}));
      EXPECT_EQ(layer.groups[3].x, value(4));
      EXPECT_EQ(layer.groups[3].modules.front().step, layer.steps.last - 1);
    }
  }
}

TEST(PlanLayers, UntaggedStepsJoinTheNeighbourTheyReadFrom) {
  // The residual add after down_proj touches only buffers: it reads layer
  // l's outputs, so it closes layer l. A memset of a scratch buffer before
  // layer 1 reads nothing, so it opens layer 1.
  FakeLlama model;
  model.separateResidualAdd = true;
  std::vector<json> steps = model.steps();
  steps.insert(steps.begin() + 13, json{{"memset", "scratch"}});
  PlanLayers split = analyzePlanLayers(model.parse(steps), 8);
  ASSERT_EQ(split.layers.size(), 2u);
  expectRange(split.prologue, 0, 1, "prologue");
  expectRange(split.layers[0].steps, 1, 13, "layer 0 with its add");
  expectRange(split.layers[1].steps, 13, 26, "layer 1 with the memset");
  expectRange(split.epilogue, 26, 29, "epilogue");
  EXPECT_EQ(split.layers[1].inputs, std::vector<std::string>{"residual0"});
  // Both inputs of the last layer's add come from that layer.
  EXPECT_TRUE(split.layers[1].steps.contains(25));
}

TEST(PlanLayers, OneLayerIsNotSplit) {
  FakeLlama model;
  model.layers = 1;
  PlanLayers split = analyzePlanLayers(model.parse(), 1);
  ASSERT_EQ(split.layers.size(), 1u);
  expectRange(split.layers[0].steps, 1, 12, "layer 0");
  expectRange(split.epilogue, 12, 15, "epilogue");
}

TEST(PlanLayers, RejectsALayerSplitInTwo) {
  FakeLlama model;
  std::vector<json> steps = model.steps();
  // A layer-0 norm in the middle of layer 1.
  steps.insert(steps.begin() + 14,
               launch("rms_norm", {buf("value11"),
                                   tensor("model.layers.0.input_layernorm."
                                          "weight"),
                                   buf("scratch")}));
  expectAnalysisError(model, steps,
                      {"step 14 (launch rms_norm) touches layer 0",
                       "'model.layers.0.input_layernorm.weight'",
                       "one contiguous range"});
}

TEST(PlanLayers, RejectsLayersOutOfOrder) {
  FakeLlama model;
  model.layers = 3;
  std::vector<json> steps = model.steps();
  // Layer 0, then layer 2's steps where layer 1's should be.
  std::vector<json> reordered(steps.begin(), steps.begin() + 12);
  std::vector<json> layer2 = model.layerSteps(2, model.input(1));
  reordered.insert(reordered.end(), layer2.begin(), layer2.end());
  expectAnalysisError(model, reordered,
                      {"step 12 (launch rms_norm) starts layer 2",
                       "where layer 1 was expected"});

  // A plan that starts at layer 1.
  std::vector<json> late = {steps[0]};
  for (json &step : model.layerSteps(1, "h0"))
    late.push_back(step);
  expectAnalysisError(model, late,
                      {"step 1 (launch rms_norm) starts layer 1",
                       "where layer 0 was expected"});
}

TEST(PlanLayers, RejectsAStepOfTwoLayers) {
  FakeLlama model;
  std::vector<json> steps = model.steps();
  steps[13]["gemm"]["bias"] = "model.layers.0.input_layernorm.weight";
  expectAnalysisError(model, steps,
                      {"step 13 (gemm model.layers.1.self_attn.q_proj) "
                       "touches two layers",
                       "'model.layers.1.self_attn.q_proj' and "
                       "'model.layers.0.input_layernorm.weight'"});
}

TEST(PlanLayers, RejectsAModelWideStepBetweenLayers) {
  FakeLlama model;
  std::vector<json> steps = model.steps();
  steps.insert(
      steps.begin() + 12,
      launch("rms_norm", {buf(model.output(0)), tensor("model.norm.weight"),
                          buf("scratch")}));
  expectAnalysisError(model, steps,
                      {"step 13 (launch rms_norm) touches layer 1",
                       "after step 12 (launch rms_norm)", "'model.norm.weight'",
                       "model-wide steps between layers"});
}

TEST(PlanLayers, RejectsInputsFromBeforeThePreviousLayer) {
  // Layer 2's o_proj adds layer 0's output: calibration keeps only the
  // inputs of one layer, so it cannot feed this.
  FakeLlama model;
  model.layers = 3;
  std::vector<json> steps = model.steps();
  steps[22 + 6]["gemm"]["residual"] = model.output(0);
  expectAnalysisError(model, steps,
                      {"step 28 (gemm model.layers.2.self_attn.o_proj) in "
                       "layer 2 reads buffer 'model.layers.0.mlp.down_proj."
                       "out'",
                       "produced by step 11 (gemm model.layers.0.mlp."
                       "down_proj) in layer 0",
                       "only its own buffers and those of layer 1"});

  // Layer 1 reading the embedding (the prologue's).
  FakeLlama two;
  std::vector<json> fromPrologue = two.steps();
  fromPrologue[12 + 5]["gemm"]["residual"] = "h0";
  expectAnalysisError(two, fromPrologue,
                      {"reads buffer 'h0'",
                       "produced by step 0 (launch embedding) in the "
                       "prologue",
                       "those of layer 0"});
}

TEST(PlanLayers, RejectsPlansWithoutLayersAndWrongLayerCounts) {
  FakeLlama model;
  std::vector<json> steps = model.steps();
  expectAnalysisError(model, {steps.front(), steps.back()},
                      {"no step touches a \"model.layers.<l>.\""});

  json artifact = model.artifact(steps);
  artifact["model"]["num_layers"] = 3;
  try {
    analyzePlanLayers(Artifact::parse(artifact.dump(), "fake.qfa"), 1);
    FAIL() << "no error";
  } catch (const qfuse::Error &e) {
    EXPECT_NE(std::string(e.what()).find(
                  "steps for 2 layers, but \"model\" says num_layers = 3"),
              std::string::npos)
        << e.what();
  }
}

TEST(PlanLayers, SplitsTheCompiledLlama3Plan) {
  // Written by bench/make-model-artifacts.sh (qfuse emit --encoding fp16,
  // qfuse-compile --batch-sizes 1,8); artifacts/ is not in git.
  const std::string path =
      std::string(QFUSE_PLAN_LAYERS_ARTIFACTS) + "/llama3-8b-fp16.qfa";
  if (!std::ifstream(path))
    GTEST_SKIP() << "no compiled artifact at " << path;
  Artifact artifact = Artifact::load(path);
  PlanLayers split = analyzePlanLayers(artifact, 8);
  ASSERT_EQ(split.layers.size(), 32u);
  expectRange(split.prologue, 0, 1, "prologue");
  for (const PlanLayer &layer : split.layers) {
    EXPECT_EQ(layer.steps.size(), 11u);
    EXPECT_EQ(layer.inputs.size(), 1u);
    EXPECT_EQ(layer.stateBuffers.size(), 2u);
    ASSERT_EQ(layer.groups.size(), 4u);
    EXPECT_EQ(layer.groups[0].modules.size(), 3u);
    EXPECT_EQ(layer.groups[2].modules.size(), 2u);
  }
  EXPECT_EQ(split.layers[1].inputs[0], "model.layers.0.mlp.down_proj.out");
  expectRange(split.epilogue, 353, 356, "epilogue");
}

TEST(LoadStages, FollowTheLayersOfAFakeLlama) {
  FakeLlama model;
  Artifact artifact = model.parse();
  std::vector<LoadStage> stages =
      layerLoadStages(artifact, analyzePlanLayers(artifact, 8));
  ASSERT_EQ(stages.size(), 4u);
  EXPECT_TRUE(stages[0].weights.empty());
  EXPECT_EQ(stages[0].tensors,
            std::vector<std::string>{"model.embed_tokens.weight"});
  for (int64_t l = 0; l < 2; ++l) {
    const std::string p = layerName(l);
    const LoadStage &stage = stages[size_t(1 + l)];
    EXPECT_EQ(stage.weights,
              (std::vector<std::string>{
                  p + "self_attn.q_proj", p + "self_attn.k_proj",
                  p + "self_attn.v_proj", p + "self_attn.o_proj",
                  p + "mlp.gate_proj", p + "mlp.up_proj", p + "mlp.down_proj"}))
        << "layer " << l;
    EXPECT_EQ(stage.tensors,
              (std::vector<std::string>{p + "input_layernorm.weight",
                                        p + "post_attention_layernorm.weight"}))
        << "layer " << l;
  }
  EXPECT_EQ(stages[3].weights, std::vector<std::string>{"lm_head"});
  EXPECT_EQ(stages[3].tensors, std::vector<std::string>{"model.norm.weight"});
}

TEST(LoadStages, CoverTheCompiledTinyLlamaOnce) {
  // Written by bench/make-model-artifacts.sh; artifacts/ is not in git.
  const std::string path =
      std::string(QFUSE_PLAN_LAYERS_ARTIFACTS) + "/tiny-llama-fp16.qfa";
  if (!std::ifstream(path))
    GTEST_SKIP() << "no compiled artifact at " << path;
  Artifact artifact = Artifact::load(path);
  int64_t batch = 0;
  for (const Plan &plan : artifact.plans)
    batch = std::max(batch, plan.batch);
  const PlanLayers split = analyzePlanLayers(artifact, batch);
  std::vector<LoadStage> stages = layerLoadStages(artifact, split);
  ASSERT_EQ(stages.size(), split.layers.size() + 2);
  std::multiset<std::string> staged;
  for (size_t s = 0; s < stages.size(); ++s) {
    const bool layer = s >= 1 && s <= split.layers.size();
    if (layer)
      EXPECT_FALSE(stages[s].weights.empty()) << "stage " << s;
    for (const std::string &weight : stages[s].weights) {
      staged.insert(weight);
      EXPECT_EQ(layerOfName(weight),
                layer ? std::optional<int64_t>(int64_t(s) - 1) : std::nullopt)
          << weight << " in stage " << s;
    }
    for (const std::string &tensor : stages[s].tensors)
      staged.insert(tensor);
  }
  // Every weight and tensor a plan reads, each once.
  std::multiset<std::string> read;
  for (const WeightSpec &weight : artifact.weights)
    read.insert(weight.checkpointName());
  for (const TensorSpec &tensor : artifact.tensors)
    read.insert(tensor.name);
  EXPECT_EQ(staged, read);
}
