//===- Sampler.h - Choosing the next token from the logits ------*- C++ -*-===//
//
// Sampling on the host over one row of logits, in the order of Hugging
// Face's generate(): repetition penalty (over the prompt and the tokens so
// far), then temperature, top-k, top-p, min-p, then a draw from the
// renormalised distribution. Greedy (temperature 0) takes the argmax after
// the penalty, lowest id on ties, as the device's argmax does. Top-k and
// top-p keep every token tied with the last one kept, so each filter is a
// threshold on the value (as the device sampler's, qf.sample).
//
//   Sampler sampler({.temperature = 0.7f, .topP = 0.9f, .seed = 42});
//   int32_t next = sampler.sample(logits, history, position);
//
// Draws are counter-based: draw c under a seed is Philox4x32-10's uniform
// (qfuse/format/Sampling.h, shared with the device kernel), so the same
// (seed, counter) gives the same u on the host and the device, in any
// order. The Generator's counter is the position of the row sampled.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_RUNTIME_SAMPLING_SAMPLER_H
#define QFUSE_RUNTIME_SAMPLING_SAMPLER_H

#include <cstdint>
#include <string>
#include <vector>

namespace qfuse::runtime {

struct SamplingOptions {
  float temperature = 0;        // 0: greedy
  int32_t topK = 0;             // 0: off
  float topP = 1;               // 1: off; in (0, 1]
  float minP = 0;               // 0: off; in [0, 1]
  float repetitionPenalty = 1;  // 1: off; > 0
  uint64_t seed = 0;

  bool greedy() const { return temperature == 0; }
  /// Whether the next token needs the logits on the host (the device's
  /// argmax is the greedy choice without a penalty).
  bool needsLogits() const { return !greedy() || repetitionPenalty != 1; }
  /// "" when valid, else what is wrong (naming the option).
  std::string check() const;
};

class Sampler {
public:
  /// Throws qfuse::Error when options.check() finds a problem.
  explicit Sampler(const SamplingOptions &options);

  const SamplingOptions &options() const { return options_; }

  /// The distribution the next token is drawn from, over the whole
  /// vocabulary (zero where filtered out); for greedy, one at the argmax.
  /// `history`: the token ids so far (prompt and generated), for the
  /// repetition penalty.
  std::vector<double> distribution(const std::vector<float> &logits,
                                   const std::vector<int32_t> &history) const;
  /// A token drawn from distribution() with draw `counter`'s uniform (the
  /// argmax for greedy).
  int32_t sample(const std::vector<float> &logits,
                 const std::vector<int32_t> &history, uint64_t counter) const;
  /// The same with counters 0, 1, 2, ... over this sampler's calls.
  int32_t sample(const std::vector<float> &logits,
                 const std::vector<int32_t> &history) {
    return sample(logits, history, nextCounter_++);
  }
  /// Draw `counter`'s uniform in [0, 1) under the seed.
  double uniform(uint64_t counter) const;
  /// The first token whose cumulative probability (in id order) exceeds u;
  /// the last token of non-zero probability when rounding leaves u above
  /// the total.
  static int32_t pick(const std::vector<double> &p, double u);

private:
  SamplingOptions options_;
  uint64_t nextCounter_ = 0;
};

} // namespace qfuse::runtime

#endif // QFUSE_RUNTIME_SAMPLING_SAMPLER_H
