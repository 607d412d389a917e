//===- ModelWeights.cpp - Checkpoint tensors as dense float arrays --------===//

#include "qfuse/reference/ModelWeights.h"

#include "qfuse/runtime/Error.h"
#include "qfuse/runtime/checkpoint/ModelCheckpoint.h"
#include "qfuse/runtime/checkpoint/WeightSources.h"

#include <cstring>

namespace qfuse::reference {
namespace {

using runtime::DType;
using runtime::SafetensorsFile;

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

/// The tensor `name` of `ckpt` as floats, after checking that its shape is
/// `shape`. The runtime's checkpoint reader finds it (one file or shards)
/// and its dense conversion widens F16 / BF16 exactly.
std::vector<float> readDense(const runtime::ModelCheckpoint &ckpt,
                             const std::string &name,
                             const std::vector<int64_t> &shape) {
  const SafetensorsFile *file = nullptr;
  const runtime::TensorInfo *info = ckpt.find(name, &file);
  if (!info)
    throw Error(ckpt.searched() + ": tensor '" + name +
                "' is missing; expected shape " + shapeText(shape));
  if (info->shape != shape)
    throw Error(file->path() + ": tensor '" + name + "' has shape " +
                shapeText(info->shape) + "; expected " + shapeText(shape));
  if (info->dtype != DType::F16 && info->dtype != DType::BF16 &&
      info->dtype != DType::F32)
    throw Error(file->path() + ": tensor '" + name + "' has dtype " +
                std::string(runtime::safetensorsName(info->dtype)) +
                "; expected F16, BF16 or F32 (a dense checkpoint)");
  runtime::TensorView view = file->view(*info);
  std::vector<uint8_t> bytes = runtime::convertDense(
      info->dtype, view.data, info->numElements(), DType::F32,
      file->path() + ": tensor '" + name + "'");
  std::vector<float> out(info->numElements());
  std::memcpy(out.data(), bytes.data(), out.size() * sizeof(float));
  return out;
}

void checkSize(const std::string &name, size_t actual,
               std::vector<int64_t> shape) {
  size_t expected = 1;
  for (int64_t d : shape)
    expected *= size_t(d);
  if (actual != expected)
    throw Error("weights: tensor '" + name + "' has " + std::to_string(actual) +
                " elements; expected " + shapeText(shape));
}

void checkLinear(const ModelConfig &config, int64_t layer, Projection p,
                 const LinearWeights &w) {
  std::string name = projectionTensorName(layer, p);
  int64_t n = config.outFeatures(p), k = config.inFeatures(p);
  if (w.n != n || w.k != k)
    throw Error("weights: '" + name + ".weight' is [" + std::to_string(w.n) +
                ", " + std::to_string(w.k) + "]; expected [" +
                std::to_string(n) + ", " + std::to_string(k) + "]");
  checkSize(name + ".weight", w.weight.size(), {n, k});
  if (config.hasBias(p))
    checkSize(name + ".bias", w.bias.size(), {n});
  else if (!w.bias.empty())
    throw Error("weights: '" + name + ".bias' is present but " + config.source +
                " gives " + projectionName(p) + " no bias");
}

constexpr Projection kLayerProjections[] = {
    Projection::Q,    Projection::K,  Projection::V,   Projection::O,
    Projection::Gate, Projection::Up, Projection::Down};

} // namespace

LinearWeights &LayerWeights::projection(Projection p) {
  return const_cast<LinearWeights &>(
      static_cast<const LayerWeights *>(this)->projection(p));
}

const LinearWeights &LayerWeights::projection(Projection p) const {
  switch (p) {
  case Projection::Q:
    return q;
  case Projection::K:
    return k;
  case Projection::V:
    return v;
  case Projection::O:
    return o;
  case Projection::Gate:
    return gate;
  case Projection::Up:
    return up;
  case Projection::Down:
    return down;
  case Projection::LmHead:
    break;
  }
  throw Error("lm_head is not a layer's projection");
}

std::string projectionTensorName(int64_t layer, Projection p) {
  if (p == Projection::LmHead)
    return "lm_head";
  bool attention = p == Projection::Q || p == Projection::K ||
                   p == Projection::V || p == Projection::O;
  return "model.layers." + std::to_string(layer) +
         (attention ? ".self_attn." : ".mlp.") + projectionName(p);
}

void ModelWeights::check(const ModelConfig &config) const {
  int64_t h = config.hiddenSize;
  checkSize("model.embed_tokens.weight", embedTokens.size(),
            {config.vocabSize, h});
  if (int64_t(layers.size()) != config.numHiddenLayers)
    throw Error("weights: " + std::to_string(layers.size()) +
                " layers; expected num_hidden_layers = " +
                std::to_string(config.numHiddenLayers));
  for (size_t i = 0; i < layers.size(); ++i) {
    std::string prefix = "model.layers." + std::to_string(i);
    checkSize(prefix + ".input_layernorm.weight",
              layers[i].inputLayernorm.size(), {h});
    checkSize(prefix + ".post_attention_layernorm.weight",
              layers[i].postAttentionLayernorm.size(), {h});
    for (Projection p : kLayerProjections)
      checkLinear(config, int64_t(i), p, layers[i].projection(p));
  }
  checkSize("model.norm.weight", norm.size(), {h});
  checkLinear(config, 0, Projection::LmHead, lmHead);
}

ModelWeights loadCheckpointWeights(const ModelConfig &config,
                                   const std::string &dir) {
  runtime::ModelCheckpoint ckpt = runtime::ModelCheckpoint::open(dir);
  int64_t h = config.hiddenSize;
  auto linear = [&](int64_t layer, Projection p) {
    std::string name = projectionTensorName(layer, p);
    LinearWeights w;
    w.n = config.outFeatures(p);
    w.k = config.inFeatures(p);
    w.weight = readDense(ckpt, name + ".weight", {w.n, w.k});
    if (config.hasBias(p))
      w.bias = readDense(ckpt, name + ".bias", {w.n});
    return w;
  };

  ModelWeights m;
  m.embedTokens =
      readDense(ckpt, "model.embed_tokens.weight", {config.vocabSize, h});
  for (int64_t i = 0; i < config.numHiddenLayers; ++i) {
    std::string prefix = "model.layers." + std::to_string(i);
    LayerWeights layer;
    layer.inputLayernorm =
        readDense(ckpt, prefix + ".input_layernorm.weight", {h});
    layer.postAttentionLayernorm =
        readDense(ckpt, prefix + ".post_attention_layernorm.weight", {h});
    for (Projection p : kLayerProjections)
      layer.projection(p) = linear(i, p);
    m.layers.push_back(std::move(layer));
  }
  m.norm = readDense(ckpt, "model.norm.weight", {h});
  if (config.tieWordEmbeddings) {
    // Transformers ties lm_head to the embedding even when a checkpoint
    // also stores lm_head.weight.
    m.lmHead.n = config.vocabSize;
    m.lmHead.k = h;
    m.lmHead.weight = m.embedTokens;
  } else {
    m.lmHead = linear(0, Projection::LmHead);
  }
  return m;
}

} // namespace qfuse::reference
