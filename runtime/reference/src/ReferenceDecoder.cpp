//===- ReferenceDecoder.cpp - A plain C++ Llama/Mistral/Qwen2 decoder -----===//

#include "qfuse/reference/ReferenceDecoder.h"

#include "qfuse/format/Numerics.h"
#include "qfuse/reference/Ops.h"
#include "qfuse/runtime/Error.h"

namespace qfuse::reference {
namespace {

void addInPlace(std::vector<double> &h, const std::vector<double> &x) {
  for (size_t i = 0; i < h.size(); ++i)
    h[i] += x[i];
}

} // namespace

ReferenceDecoder::ReferenceDecoder(ModelConfig config, ModelWeights weights,
                                   DecoderOptions options)
    : config_(std::move(config)), weights_(std::move(weights)),
      options_(options) {
  weights_.check(config_);
  invFreq_ =
      ropeInvFreq(config_.headDim, config_.ropeTheta, config_.ropeScaling);
  reset();
}

void ReferenceDecoder::reset() {
  keyCache_.assign(size_t(config_.numHiddenLayers), {});
  valueCache_.assign(size_t(config_.numHiddenLayers), {});
  position_ = 0;
}

void ReferenceDecoder::round(std::vector<double> &values) const {
  if (!options_.roundActivationsToF16)
    return;
  // One rounding from double (through float could round twice).
  for (double &v : values)
    v = double(format::halfToFloat(format::doubleToHalf(v)));
}

void ReferenceDecoder::checkTokens(const std::vector<int32_t> &ids,
                                   int64_t start) const {
  if (ids.empty())
    throw Error("reference decoder: no tokens to run");
  for (size_t i = 0; i < ids.size(); ++i)
    if (ids[i] < 0 || ids[i] >= config_.vocabSize)
      throw Error("reference decoder: token " + std::to_string(ids[i]) +
                  " at position " + std::to_string(start + int64_t(i)) +
                  " is outside [0, vocab_size = " +
                  std::to_string(config_.vocabSize) + ")");
  config_.checkSequenceLength(start + int64_t(ids.size()));
}

std::vector<double> ReferenceDecoder::embed(int32_t id) const {
  const float *row = weights_.embedTokens.data() + id * config_.hiddenSize;
  std::vector<double> h(row, row + config_.hiddenSize);
  round(h);
  return h;
}

void ReferenceDecoder::observe(int64_t l, Projection p,
                               const std::vector<double> &x) const {
  if (observer_)
    observer_(l, p, x);
}

void ReferenceDecoder::mlp(int64_t l, const LayerWeights &layer,
                           std::vector<double> &h) const {
  std::vector<double> x =
      rmsNorm(h, layer.postAttentionLayernorm, config_.rmsNormEps);
  round(x);
  observe(l, Projection::Gate, x);
  observe(l, Projection::Up, x);
  std::vector<double> gate = linear(x, layer.gate);
  round(gate);
  std::vector<double> up = linear(x, layer.up);
  round(up);
  std::vector<double> act = siluMul(gate, up);
  round(act);
  observe(l, Projection::Down, act);
  std::vector<double> down = linear(act, layer.down);
  round(down);
  addInPlace(h, down);
  round(h);
}

std::vector<double>
ReferenceDecoder::logitsOf(const std::vector<double> &h) const {
  std::vector<double> x = rmsNorm(h, weights_.norm, config_.rmsNormEps);
  round(x);
  observe(-1, Projection::LmHead, x);
  std::vector<double> logits = linear(x, weights_.lmHead);
  round(logits);
  return logits;
}

std::vector<double> ReferenceDecoder::forwardOne(int32_t id) {
  const int64_t heads = config_.numAttentionHeads;
  const int64_t kvHeads = config_.numKeyValueHeads;
  const int64_t d = config_.headDim;
  std::vector<double> h = embed(id);
  for (size_t l = 0; l < weights_.layers.size(); ++l) {
    const LayerWeights &layer = weights_.layers[l];
    std::vector<double> x =
        rmsNorm(h, layer.inputLayernorm, config_.rmsNormEps);
    round(x);
    observe(int64_t(l), Projection::Q, x);
    observe(int64_t(l), Projection::K, x);
    observe(int64_t(l), Projection::V, x);
    std::vector<double> q = linear(x, layer.q);
    std::vector<double> k = linear(x, layer.k);
    std::vector<double> v = linear(x, layer.v);
    round(q);
    round(k);
    round(v);
    applyRotary(q, heads, d, position_, invFreq_);
    applyRotary(k, kvHeads, d, position_, invFreq_);
    round(q);
    round(k);
    keyCache_[l].insert(keyCache_[l].end(), k.begin(), k.end());
    valueCache_[l].insert(valueCache_[l].end(), v.begin(), v.end());
    std::vector<double> a = attention(q, keyCache_[l], valueCache_[l],
                                      position_ + 1, heads, kvHeads, d);
    round(a);
    observe(int64_t(l), Projection::O, a);
    std::vector<double> o = linear(a, layer.o);
    round(o);
    addInPlace(h, o);
    round(h);
    mlp(int64_t(l), layer, h);
  }
  ++position_;
  return logitsOf(h);
}

std::vector<double> ReferenceDecoder::prefill(const std::vector<int32_t> &ids) {
  checkTokens(ids, position_);
  std::vector<double> logits;
  for (int32_t id : ids)
    logits = forwardOne(id);
  return logits;
}

std::vector<double> ReferenceDecoder::step(int32_t id) { return prefill({id}); }

std::vector<int32_t> ReferenceDecoder::generateGreedy(
    const std::vector<int32_t> &prompt, int64_t count,
    std::vector<std::vector<double>> *logitsPerToken) {
  std::vector<int32_t> tokens;
  std::vector<double> logits = prefill(prompt);
  for (int64_t i = 0; i < count; ++i) {
    int32_t next = int32_t(argmax(logits));
    tokens.push_back(next);
    if (logitsPerToken)
      logitsPerToken->push_back(logits);
    if (i + 1 < count)
      logits = step(next);
  }
  return tokens;
}

std::vector<std::vector<double>>
ReferenceDecoder::forwardWithoutCache(const std::vector<int32_t> &ids) const {
  checkTokens(ids, 0);
  const int64_t heads = config_.numAttentionHeads;
  const int64_t kvHeads = config_.numKeyValueHeads;
  const int64_t d = config_.headDim;
  const int64_t n = int64_t(ids.size());
  // The residual stream of every position, advanced one layer at a time.
  std::vector<std::vector<double>> hs;
  for (int32_t id : ids)
    hs.push_back(embed(id));
  for (size_t l = 0; l < weights_.layers.size(); ++l) {
    const LayerWeights &layer = weights_.layers[l];
    std::vector<std::vector<double>> qs;
    std::vector<double> keys, values;
    for (int64_t p = 0; p < n; ++p) {
      std::vector<double> x =
          rmsNorm(hs[size_t(p)], layer.inputLayernorm, config_.rmsNormEps);
      round(x);
      observe(int64_t(l), Projection::Q, x);
      observe(int64_t(l), Projection::K, x);
      observe(int64_t(l), Projection::V, x);
      std::vector<double> q = linear(x, layer.q), k = linear(x, layer.k),
                          v = linear(x, layer.v);
      round(q);
      round(k);
      round(v);
      applyRotary(q, heads, d, p, invFreq_);
      applyRotary(k, kvHeads, d, p, invFreq_);
      round(q);
      round(k);
      qs.push_back(std::move(q));
      keys.insert(keys.end(), k.begin(), k.end());
      values.insert(values.end(), v.begin(), v.end());
    }
    for (int64_t p = 0; p < n; ++p) {
      // Causal: position p sees the keys of positions 0..p only.
      std::vector<double> a =
          attention(qs[size_t(p)], keys, values, p + 1, heads, kvHeads, d);
      round(a);
      observe(int64_t(l), Projection::O, a);
      std::vector<double> o = linear(a, layer.o);
      round(o);
      addInPlace(hs[size_t(p)], o);
      round(hs[size_t(p)]);
      mlp(int64_t(l), layer, hs[size_t(p)]);
    }
  }
  std::vector<std::vector<double>> logits;
  for (const auto &h : hs)
    logits.push_back(logitsOf(h));
  return logits;
}

} // namespace qfuse::reference
