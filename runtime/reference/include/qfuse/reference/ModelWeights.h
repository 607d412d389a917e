//===- ModelWeights.h - Decoder weights as float arrays ---------*- C++ -*-===//
//
// Every tensor of a Llama / Mistral / Qwen2 checkpoint as a row-major float
// array, linear weights [out, in] as Hugging Face stores them. The reference
// decoder reads nothing else, so the same struct carries the checkpoint's own
// values or the dequantized values of a chosen encoding (WeightEncoding.h).
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_REFERENCE_MODELWEIGHTS_H
#define QFUSE_REFERENCE_MODELWEIGHTS_H

#include "qfuse/reference/ModelConfig.h"

#include <cstdint>
#include <string>
#include <vector>

namespace qfuse::reference {

/// y = W x (+ b): W is [n, k] row-major; `bias` is empty or [n].
struct LinearWeights {
  int64_t n = 0;
  int64_t k = 0;
  std::vector<float> weight;
  std::vector<float> bias;
};

struct LayerWeights {
  std::vector<float> inputLayernorm;         // [hidden]
  std::vector<float> postAttentionLayernorm; // [hidden]
  LinearWeights q, k, v, o, gate, up, down;

  LinearWeights &projection(Projection p);
  const LinearWeights &projection(Projection p) const;
};

struct ModelWeights {
  std::vector<float> embedTokens; // [vocab, hidden]
  std::vector<LayerWeights> layers;
  std::vector<float> norm; // [hidden]
  /// Tied embeddings: a copy of embedTokens, so that an encoding can
  /// quantize lm_head (as the runtime quantizes a packed copy) while the
  /// embedding stays dense.
  LinearWeights lmHead;

  /// Throws, naming the tensor (Hugging Face's name), when a shape does not
  /// match `config` or a bias is present or missing against
  /// config.hasBias().
  void check(const ModelConfig &config) const;
};

/// The Hugging Face tensor name of a weight: "model.layers.3.mlp.up_proj"
/// for (3, Up), "lm_head" for LmHead (`layer` ignored). Append ".weight" or
/// ".bias".
std::string projectionTensorName(int64_t layer, Projection p);

/// Reads the checkpoint in `dir` through the runtime's reader
/// (runtime::ModelCheckpoint: config.json plus model.safetensors, or the
/// shards named by model.safetensors.index.json): F16, BF16 or F32 tensors,
/// converted to float exactly. Checks every shape against `config`;
/// lm_head.weight comes from model.embed_tokens.weight when the config ties
/// embeddings. Tensors the decoder does not use are ignored. Throws
/// qfuse::Error naming the file and the tensor.
ModelWeights loadCheckpointWeights(const ModelConfig &config,
                                   const std::string &dir);

} // namespace qfuse::reference

#endif // QFUSE_REFERENCE_MODELWEIGHTS_H
