//===- ReferenceDecoder.h - The decoder to check against --------*- C++ -*-===//
//
// The numbers a compiled decode step is checked against
// (docs/reference-decoder.md). One position at a time, in double:
//
//   h = embed[id]
//   per layer:  x = rmsnorm(h, g1);  q, k, v = x Wq^T (+bq), x Wk^T, x Wv^T
//               q, k = rotary(q, k, pos);  append k, v to the layer's cache
//               a = causal GQA attention(q, cache[0..pos]);  h = h + a Wo^T
//               x = rmsnorm(h, g2);  h = h + (silu(x Wg^T) * x Wu^T) Wd^T
//   logits = rmsnorm(h, g) Wlm^T
//
// With roundActivationsToF16 (the default), every op's output is rounded to
// f16 where the GPU pipeline stores f16 -- the embedding row, each norm,
// each projection (bias included), q and k after rotary (so the cache holds
// f16), the attention output, silu_mul, both residual sums and the logits
// -- while everything inside an op stays in double. Without it, nothing is
// rounded: the exact function of the weights.
//
// A LinearObserver sees the input of every linear module as it is applied
// (GPTQ calibration's reference: the rows whose Hessian a layer needs).
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_REFERENCE_REFERENCEDECODER_H
#define QFUSE_REFERENCE_REFERENCEDECODER_H

#include "qfuse/reference/ModelConfig.h"
#include "qfuse/reference/ModelWeights.h"

#include <cstdint>
#include <functional>
#include <vector>

namespace qfuse::reference {

struct DecoderOptions {
  /// Round op outputs to f16 at the points listed above, so that the
  /// reference follows an f16 GPU pipeline rather than exact arithmetic.
  bool roundActivationsToF16 = true;
};

/// Called with the input x of each linear module, once per module and
/// position, just before the projection: (layer, projection, x) with x as
/// the projection reads it (after the f16 rounding, when enabled). q/k/v
/// report the same x, gate/up too; lm_head reports layer -1.
using LinearObserver = std::function<void(int64_t layer, Projection projection,
                                          const std::vector<double> &x)>;

class ReferenceDecoder {
public:
  /// Checks `weights` against `config` (ModelWeights::check).
  ReferenceDecoder(ModelConfig config, ModelWeights weights,
                   DecoderOptions options = {});

  /// Runs `ids` at the next positions (0, 1, ... after construction or
  /// reset()) and returns the logits of the last one. Throws on an empty
  /// list, a token outside [0, vocab_size), or a sequence longer than the
  /// config's sliding window.
  std::vector<double> prefill(const std::vector<int32_t> &ids);
  /// One decode step: prefill({id}).
  std::vector<double> step(int32_t id);
  /// Greedy generation: prefill(prompt), then `count` tokens, each the
  /// argmax (lowest index on ties) of the previous logits and fed back.
  /// `logitsPerToken`, when given, receives the logits each token was chosen
  /// from.
  std::vector<int32_t>
  generateGreedy(const std::vector<int32_t> &prompt, int64_t count,
                 std::vector<std::vector<double>> *logitsPerToken = nullptr);

  /// Empties the KV cache; the next token is at position 0 again.
  void reset();
  /// The position the next token will take (= tokens cached).
  int64_t position() const { return position_; }

  /// The logits of every position of `ids` from position 0, computed layer
  /// by layer over the whole sequence without the incremental cache (the
  /// check that the cache changes nothing). Leaves the cache alone.
  std::vector<std::vector<double>>
  forwardWithoutCache(const std::vector<int32_t> &ids) const;

  /// Reports every linear module's input to `observer` from now on (an
  /// empty function stops it). prefill/step report position by position;
  /// forwardWithoutCache layer by layer.
  void setLinearObserver(LinearObserver observer) {
    observer_ = std::move(observer);
  }

  const ModelConfig &config() const { return config_; }
  const ModelWeights &weights() const { return weights_; }
  const DecoderOptions &options() const { return options_; }

private:
  /// Rounds to f16 when the options say so.
  void round(std::vector<double> &values) const;
  std::vector<double> embed(int32_t id) const;
  std::vector<double> logitsOf(const std::vector<double> &h) const;
  /// The MLP half of layer `l` on the residual stream `h`, in place.
  void mlp(int64_t l, const LayerWeights &layer, std::vector<double> &h) const;
  /// Tells the observer, if any, that `p` of layer `l` reads `x`.
  void observe(int64_t l, Projection p, const std::vector<double> &x) const;
  std::vector<double> forwardOne(int32_t id);
  void checkTokens(const std::vector<int32_t> &ids, int64_t start) const;

  ModelConfig config_;
  ModelWeights weights_;
  DecoderOptions options_;
  std::vector<double> invFreq_;
  /// Per layer, [position_, kvWidth] row-major, rotated keys and values.
  std::vector<std::vector<double>> keyCache_, valueCache_;
  int64_t position_ = 0;
  LinearObserver observer_;
};

} // namespace qfuse::reference

#endif // QFUSE_REFERENCE_REFERENCEDECODER_H
