//===- ModelConfig.h - A Hugging Face config.json, validated ----*- C++ -*-===//
//
// The fields of a Llama / Mistral / Qwen2 config.json that decide what the
// decoder computes, checked strictly: a field the reference cannot honour is
// an error naming the file and the field, never a silent default. The rules
// are the Python frontend's (python-frontend/qfuse/config.py); both readers
// are tested against one table, testdata/model-configs/cases.json, so a
// config that `qfuse emit` accepts is the one the reference runs.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_REFERENCE_MODELCONFIG_H
#define QFUSE_REFERENCE_MODELCONFIG_H

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace qfuse::reference {

enum class Architecture { Llama, Mistral, Qwen2 };

/// "LlamaForCausalLM", "MistralForCausalLM", "Qwen2ForCausalLM".
const char *architectureName(Architecture arch);
/// "llama", "mistral", "qwen2" (config.json's model_type).
const char *modelTypeName(Architecture arch);

/// rope_parameters (transformers 5) or rope_scaling = {"rope_type": "llama3",
/// ...} (transformers' _compute_llama3_parameters).
struct Llama3RopeScaling {
  double factor = 8.0;
  double lowFreqFactor = 1.0;
  double highFreqFactor = 4.0;
  double originalMaxPositionEmbeddings = 8192;
};

/// Upper bounds on a config's sizes (testdata/model-configs/README.md), so
/// that every size and every product of sizes stays far from int64 and every
/// weight fits one GPU. Each is several times the largest real model's.
struct ConfigLimits {
  static constexpr int64_t kNumHiddenLayers = int64_t(1) << 10;
  static constexpr int64_t kHiddenSize = int64_t(1) << 17;
  static constexpr int64_t kIntermediateSize = int64_t(1) << 20;
  static constexpr int64_t kNumAttentionHeads = int64_t(1) << 12;
  static constexpr int64_t kNumKeyValueHeads = int64_t(1) << 12;
  static constexpr int64_t kHeadDim = int64_t(1) << 12;
  static constexpr int64_t kVocabSize = int64_t(1) << 22;
  static constexpr int64_t kMaxPositionEmbeddings = int64_t(1) << 24;
  static constexpr int64_t kSlidingWindow = int64_t(1) << 24;
  /// num_attention_heads * head_dim: the q_proj output and o_proj input.
  static constexpr int64_t kQWidth = int64_t(1) << 17;
  /// N * K of one weight matrix: 32 GiB in f16.
  static constexpr int64_t kWeightElements = int64_t(1) << 34;
};

/// The linear layers of a decoder layer, plus lm_head.
enum class Projection { Q, K, V, O, Gate, Up, Down, LmHead };
/// "q_proj", ..., "down_proj", "lm_head": the frontend's projection kinds.
const char *projectionName(Projection p);

struct ModelConfig {
  /// Where the config came from; every error message starts with it.
  std::string source = "config.json";
  Architecture architecture = Architecture::Llama;

  int64_t hiddenSize = 0;
  int64_t intermediateSize = 0;
  int64_t numAttentionHeads = 0;
  int64_t numKeyValueHeads = 0; // default: numAttentionHeads
  int64_t headDim = 0;          // default: hiddenSize / numAttentionHeads
  int64_t numHiddenLayers = 0;
  int64_t vocabSize = 0;
  int64_t maxPositionEmbeddings = 0;
  double rmsNormEps = 1e-6;
  double ropeTheta = 10000.0;
  std::optional<Llama3RopeScaling> ropeScaling;
  bool tieWordEmbeddings = false;
  /// Llama/Mistral `attention_bias`: q, k, v and o carry biases.
  bool attentionBias = false;
  /// Llama `mlp_bias`: gate, up and down carry biases.
  bool mlpBias = false;
  /// The attention window when the model uses one (Mistral's sliding_window,
  /// Qwen2's when use_sliding_window); the reference attends to every cached
  /// position, so it is exact only up to it.
  std::optional<int64_t> slidingWindow;

  /// Parses config.json text; `source` names it in errors. Throws
  /// qfuse::Error "<source>: field 'f' ...; expected ...".
  static ModelConfig parse(std::string_view text, const std::string &source);
  /// Reads and parses `path` (a config.json, or a directory holding one).
  static ModelConfig load(const std::string &path);

  /// config.json text for this config, which parse() reads back equal (the
  /// synthetic model writer's output).
  std::string toJson() const;

  int64_t qWidth() const { return numAttentionHeads * headDim; }
  int64_t kvWidth() const { return numKeyValueHeads * headDim; }
  /// Output and input features of a projection ([N, K], Hugging Face's
  /// [out, in]).
  int64_t outFeatures(Projection p) const;
  int64_t inFeatures(Projection p) const;
  /// Whether the checkpoint holds `<projection>.bias`: Qwen2's q/k/v always,
  /// Llama/Mistral on attention_bias / mlp_bias.
  bool hasBias(Projection p) const;

  /// Throws, naming sliding_window and the file, when running `positions`
  /// positions would need the attention window the reference does not have.
  void checkSequenceLength(int64_t positions) const;
};

} // namespace qfuse::reference

#endif // QFUSE_REFERENCE_MODELCONFIG_H
