//===- Generator.h - Token generation over a model artifact -----*- C++ -*-===//
//
// Runs a whole-model artifact (docs/decode-model.md) as a decoder: the
// prompt in chunks through the largest plan (prefill), then one token per
// replay of the batch-1 plan (decode). Plans run as CUDA graphs, captured
// on first use; the inputs are copied into their buffers before each replay
// and the next decode step's input_ids come from the previous step's
// next_token by a device copy, so decoding never waits for the host.
//
//   Generator generator(executor, stream.get());   // checks the contract
//   Generation out = generator.generate({1, 2, 3}, 64);
//   out.tokens; out.ttftMs; out.decodeTokensPerSecond;
//
// The artifact must have the buffers input_ids [M] i32, positions [M] i32,
// next_token [M] i32 and logits [M, vocab] f16, a plan for batch 1, and a
// "model" object with max_seq and vocab_size; the caches are its state
// buffers. Times are CUDA event times on the stream.
//
// An artifact emitted with `--sampling` (qf.sample, docs/sampling.md) also
// has sampling_params [1, 8] i32 and penalty_mask [1, vocab] i8: its
// next_token is drawn on the device from the parameters the Generator
// writes before the first step, and decoding never reads the logits back.
// Other artifacts sample on the host (the same draws: the counter of a draw
// is the position of the row sampled, on either side).
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_RUNTIME_DEVICE_GENERATOR_H
#define QFUSE_RUNTIME_DEVICE_GENERATOR_H

#include "qfuse/runtime/device/Cuda.h"
#include "qfuse/runtime/device/Executor.h"
#include "qfuse/runtime/sampling/Sampler.h"

#include <cstdint>
#include <functional>
#include <vector>

namespace qfuse::runtime {

struct GenerateOptions {
  /// Keep, per generated token, the logits of the row that produced it
  /// (as float) in Generation::logits. Reads them back after every step, so
  /// the decode timing then includes those copies.
  bool keepLogits = false;
  /// How the next token is chosen; greedy by default (the model's
  /// next_token, chosen on the device). With an artifact that samples on
  /// the device, every choice is its next_token; otherwise sampling and the
  /// repetition penalty read each step's logits back and choose on the host.
  SamplingOptions sampling;
  /// Choose on the host even when the artifact samples on the device.
  bool hostSampling = false;
  /// Generation ends after any of these ids (kept as the last token).
  std::vector<int32_t> stopTokens;
  /// Called with each token as soon as it is known; returning false ends
  /// generation after it.
  std::function<bool(int32_t)> onToken;

  /// Whether each step waits for its token on the host (a callback, stop
  /// tokens, host sampling, or the device sampler's penalty mask, which
  /// the host updates with each token); otherwise decoding never waits for
  /// the host.
  bool stepwise(bool deviceSampler) const {
    const bool host = sampling.needsLogits() && (hostSampling || !deviceSampler);
    const bool deviceMask = deviceSampler && !hostSampling &&
                            sampling.repetitionPenalty != 1;
    return keepLogits || onToken || !stopTokens.empty() || host || deviceMask;
  }
};

struct Generation {
  /// The generated ids: max_new_tokens of them, or fewer when a stop
  /// token or the callback ended the generation.
  std::vector<int32_t> tokens;
  int64_t promptTokens = 0;
  /// Prefill: from the first prompt copy to the first token computed.
  double ttftMs = 0;
  /// Decode: the graph replays after the first token.
  double decodeMs = 0;
  double decodeTokensPerSecond = 0; // 0 when only one token was generated
  /// logits[i]: the vocab_size logits that chose tokens[i] (keepLogits).
  std::vector<std::vector<float>> logits;
};

class Generator {
public:
  /// Checks the model contract against the executor's artifact and
  /// allocates the plans' buffers; the executor's weights may be bound
  /// later, before generate. `stream` must not be the legacy stream.
  Generator(Executor &executor, CUstream stream);

  int64_t maxSeq() const { return maxSeq_; }
  int64_t vocabSize() const { return vocab_; }
  /// The batch of the plan the prompt runs through (the largest).
  int64_t prefillBatch() const { return prefillBatch_; }
  /// Whether the artifact draws next_token on the device (qf.sample).
  bool samplesOnDevice() const { return deviceSampler_; }

  /// Generates up to `maxNewTokens` tokens after `prompt` (greedy unless
  /// options.sampling says otherwise), starting a new sequence at
  /// position 0. Throws when the
  /// prompt is empty, a token id is outside [0, vocab_size), or prompt +
  /// maxNewTokens exceeds max_seq.
  Generation generate(const std::vector<int32_t> &prompt, int64_t maxNewTokens,
                      const GenerateOptions &options = {});

  /// Zeroes the state buffers (the caches) for a new sequence. generate
  /// calls it first; nothing reads a cache row before rewriting it, so this
  /// is hygiene, not correctness.
  void reset();

private:
  /// The plan batches the prompt's [start, start + count) run through,
  /// each chunk's (batch, real rows).
  std::vector<std::pair<int64_t, int64_t>> prefillChunks(int64_t count) const;
  void copyLogitsRow(int64_t batch, int64_t row, std::vector<float> &out);
  /// Host copies of the device sampler's inputs, alive until the copies
  /// from them are done.
  struct SamplerStaging {
    std::vector<int32_t> params;
    std::vector<uint8_t> mask;
  };
  /// Writes the sampling parameters, and the prompt's penalty mask, into
  /// the plans `batches` run (stream-ordered, before their first replay).
  void prepareDeviceSampler(const SamplingOptions &sampling,
                            const std::vector<int32_t> &prompt,
                            const std::vector<int64_t> &batches,
                            SamplerStaging &staging);
  /// Copies rows [at, at + batch) of `host` (i32) into plan `batch`'s
  /// `buffer` (stream-ordered).
  void copyIn(int64_t batch, const char *buffer,
              const cuda::PinnedBuffer &host, int64_t at);
  /// generate's state while it takes tokens (Generator.cpp).
  struct TokenLoop;
  /// Takes token `index` from row `row` of the plan `batch` just replayed:
  /// the device's choice (next_token at `from`) or the host sampler's over
  /// the row's logits. Returns whether to go on (stop tokens, onToken).
  bool takeToken(TokenLoop &loop, int64_t batch, int64_t row,
                 CUdeviceptr from, int64_t index);
  /// Copies token `index` into the decode step's input_ids: from `from` on
  /// the device, or the host sampler's choice from pinned memory.
  void feedToken(const TokenLoop &loop, CUdeviceptr from, int64_t index);

  Executor &executor_;
  CUstream stream_;
  int64_t maxSeq_ = 0;
  int64_t vocab_ = 0;
  int64_t prefillBatch_ = 1;
  std::vector<int64_t> batches_; // compiled plan batches, ascending
  bool deviceSampler_ = false;   // the artifact has sampling_params
};

} // namespace qfuse::runtime

#endif // QFUSE_RUNTIME_DEVICE_GENERATOR_H
