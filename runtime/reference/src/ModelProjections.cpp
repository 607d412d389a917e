//===- ModelProjections.cpp - A config's projections: names and shapes ----===//
//
// The linear layers of a decoder layer and lm_head as a config shapes them:
// their names (the frontend's projection kinds), their [out, in] features
// and which carry a bias (Qwen2's q/k/v always, Llama/Mistral on
// attention_bias and mlp_bias).
//
//===----------------------------------------------------------------------===//

#include "qfuse/reference/ModelConfig.h"

namespace qfuse::reference {

const char *projectionName(Projection p) {
  switch (p) {
  case Projection::Q:
    return "q_proj";
  case Projection::K:
    return "k_proj";
  case Projection::V:
    return "v_proj";
  case Projection::O:
    return "o_proj";
  case Projection::Gate:
    return "gate_proj";
  case Projection::Up:
    return "up_proj";
  case Projection::Down:
    return "down_proj";
  case Projection::LmHead:
    return "lm_head";
  }
  return "?";
}

int64_t ModelConfig::outFeatures(Projection p) const {
  switch (p) {
  case Projection::Q:
    return qWidth();
  case Projection::K:
  case Projection::V:
    return kvWidth();
  case Projection::O:
  case Projection::Down:
    return hiddenSize;
  case Projection::Gate:
  case Projection::Up:
    return intermediateSize;
  case Projection::LmHead:
    return vocabSize;
  }
  return 0;
}

int64_t ModelConfig::inFeatures(Projection p) const {
  switch (p) {
  case Projection::O:
    return qWidth();
  case Projection::Down:
    return intermediateSize;
  default:
    return hiddenSize;
  }
}

bool ModelConfig::hasBias(Projection p) const {
  switch (p) {
  case Projection::Q:
  case Projection::K:
  case Projection::V:
    return architecture == Architecture::Qwen2 || attentionBias;
  case Projection::O:
    return architecture != Architecture::Qwen2 && attentionBias;
  case Projection::Gate:
  case Projection::Up:
  case Projection::Down:
    return architecture != Architecture::Qwen2 && mlpBias;
  case Projection::LmHead:
    return false;
  }
  return false;
}

} // namespace qfuse::reference
