//===- Generator.cpp - Token generation over a model artifact -------------===//

#include "qfuse/runtime/device/Generator.h"

#include "qfuse/format/Numerics.h"
#include "qfuse/format/Sampling.h"
#include "qfuse/runtime/Error.h"

#include <algorithm>
#include <optional>

namespace qfuse::runtime {
namespace {

constexpr const char *kInputIds = "input_ids";
constexpr const char *kPositions = "positions";
constexpr const char *kNextToken = "next_token";
constexpr const char *kLogits = "logits";
constexpr const char *kSamplingParams = "sampling_params";
constexpr const char *kPenaltyMask = "penalty_mask";

std::string dimsText(const BufferSpec &spec) {
  std::string text = "[";
  for (size_t i = 0; i < spec.shape.size(); ++i)
    text += (i ? ", " : "") + (spec.shape[i].isBatch
                                   ? std::string("M")
                                   : std::to_string(spec.shape[i].value));
  return text + "] " + std::string(artifactName(spec.dtype));
}

using Chunks = std::vector<std::pair<int64_t, int64_t>>;

/// Rejects a request the artifact cannot serve: an empty prompt, no new
/// tokens, more tokens than max_seq, or an id outside the vocabulary.
void checkRequest(const std::vector<int32_t> &prompt, int64_t maxNewTokens,
                  int64_t vocab, int64_t maxSeq) {
  const std::string what = "generate";
  const int64_t promptTokens = static_cast<int64_t>(prompt.size());
  if (prompt.empty())
    throw Error(what + ": the prompt is empty (at least one token id)");
  if (maxNewTokens < 1)
    throw Error(what + ": max_new_tokens is " + std::to_string(maxNewTokens) +
                ", expected at least 1");
  if (promptTokens + maxNewTokens > maxSeq)
    throw Error(what + ": a prompt of " + std::to_string(promptTokens) +
                " tokens plus " + std::to_string(maxNewTokens) +
                " new tokens exceeds the artifact's max_seq " +
                std::to_string(maxSeq));
  for (size_t i = 0; i < prompt.size(); ++i)
    if (prompt[i] < 0 || prompt[i] >= vocab)
      throw Error(what + ": prompt token " + std::to_string(i) + " is " +
                  std::to_string(prompt[i]) + ", outside the vocabulary [0, " +
                  std::to_string(vocab) + ")");
}

/// Host staging in pinned memory, so every copy of a generation is
/// asynchronous: the prefill ids, every step's position, the tokens out.
struct StagedPrompt {
  cuda::PinnedBuffer ids;
  cuda::PinnedBuffer positions;
  cuda::PinnedBuffer tokens;
  /// Prefill rows, padding included; decode positions start here.
  int64_t staged = 0;
};

/// Prefill: each chunk's ids and positions, padded to its plan's batch.
/// A padding row sits at a position past the prompt with token 0. That is
/// safe: attention is causal, so no real row reads a later row, and a
/// padding row's cache entries (at positions >= the prompt length) are
/// rewritten by the decode step at that position before any attention
/// reads them (each step writes its cache row, then attends).
StagedPrompt stagePrompt(const std::vector<int32_t> &prompt,
                         const Chunks &chunks, int64_t maxNewTokens) {
  const int64_t promptTokens = static_cast<int64_t>(prompt.size());
  StagedPrompt out;
  for (const auto &chunk : chunks)
    out.staged += chunk.first;
  const int64_t staged = out.staged;
  out.ids = cuda::PinnedBuffer(size_t(staged) * 4, "prefill input_ids");
  out.positions =
      cuda::PinnedBuffer(size_t(staged + maxNewTokens) * 4, "positions");
  out.tokens = cuda::PinnedBuffer(size_t(maxNewTokens) * 4, "generated tokens");
  int64_t at = 0, position = 0;
  for (const auto &[batch, real] : chunks) {
    for (int64_t i = 0; i < batch; ++i) {
      out.ids.as<int32_t>()[at + i] = i < real ? prompt[position + i] : 0;
      out.positions.as<int32_t>()[at + i] = static_cast<int32_t>(position + i);
    }
    at += batch;
    position += real;
  }
  // Decode step s (1-based) feeds token s - 1 at position prompt + s - 1.
  for (int64_t s = 1; s < maxNewTokens; ++s)
    out.positions.as<int32_t>()[staged + s] =
        static_cast<int32_t>(promptTokens + s - 1);
  return out;
}

/// Every plan a generation runs is a graph, captured once per binding of
/// the weights (rebinding drops them): a prefill chunk is hundreds of
/// launches, whose host-side cost a replay does not pay again. Captured
/// before anything is queued on the stream.
void captureGraphs(Executor &executor, CUstream stream, const Chunks &chunks) {
  if (!executor.hasGraph(1))
    executor.capture(1, stream);
  for (const auto &chunk : chunks)
    if (!executor.hasGraph(chunk.first))
      executor.capture(chunk.first, stream);
}

/// The plan batches a generation replays, ascending: its prefill chunks'
/// and the decode step's (1).
std::vector<int64_t> replayedBatches(const Chunks &chunks) {
  std::vector<int64_t> used = {1};
  for (const auto &chunk : chunks)
    used.push_back(chunk.first);
  std::sort(used.begin(), used.end());
  used.erase(std::unique(used.begin(), used.end()), used.end());
  return used;
}

} // namespace

Generator::Generator(Executor &executor, CUstream stream)
    : executor_(executor), stream_(stream) {
  const Artifact &artifact = executor.artifact();
  auto fail = [&](const std::string &what) {
    throw Error("artifact '" + artifact.source + "' as a model: " + what +
                " (docs/decode-model.md)");
  };
  if (!artifact.model.present || artifact.model.maxSeq <= 0 ||
      artifact.model.vocabSize <= 0)
    fail("needs a \"model\" object with max_seq and vocab_size");
  maxSeq_ = artifact.model.maxSeq;
  vocab_ = artifact.model.vocabSize;

  // Each contract buffer: [M] (or [M, columns]) of its dtype, per plan; the
  // sampler's are [1, columns].
  auto expect = [&](const char *name, DType dtype, int64_t columns,
                    bool batchRows = true) {
    const BufferSpec *spec = artifact.findBuffer(name);
    if (!spec)
      fail(std::string("no buffer '") + name + "'");
    const bool rowsOk = batchRows ? spec->shape[0].isBatch
                                  : (!spec->shape[0].isBatch &&
                                     spec->shape[0].value == 1);
    const bool shapeOk =
        !spec->state && spec->dtype == dtype &&
        spec->shape.size() == (columns ? 2u : 1u) && rowsOk &&
        (!columns ||
         (!spec->shape[1].isBatch && spec->shape[1].value == columns));
    if (!shapeOk)
      fail(std::string("buffer '") + name + "' is " + dimsText(*spec) +
           (spec->state ? " (state)" : "") + ", expected [" +
           (batchRows ? "M" : "1") +
           (columns ? ", " + std::to_string(columns) : std::string()) + "] " +
           std::string(artifactName(dtype)));
  };
  expect(kInputIds, DType::I32, 0);
  expect(kPositions, DType::I32, 0);
  expect(kNextToken, DType::I32, 0);
  expect(kLogits, DType::F16, vocab_);
  deviceSampler_ = artifact.findBuffer(kSamplingParams) != nullptr;
  if (deviceSampler_) {
    expect(kSamplingParams, DType::I32, format::sampling::kParamSlots, false);
    expect(kPenaltyMask, DType::I8, vocab_, false);
  }
  if (!artifact.findPlan(1))
    fail("no plan for batch 1 (decode steps run it)");
  for (const Plan &plan : artifact.plans)
    batches_.push_back(plan.batch);
  std::sort(batches_.begin(), batches_.end());
  prefillBatch_ = batches_.back();
  for (int64_t batch : batches_)
    executor_.allocate(batch);
}

void Generator::reset() { executor_.resetState(stream_); }

std::vector<std::pair<int64_t, int64_t>>
Generator::prefillChunks(int64_t count) const {
  std::vector<std::pair<int64_t, int64_t>> chunks;
  int64_t position = 0;
  while (position < count) {
    const int64_t remaining = count - position;
    int64_t batch = 0, real = 0;
    if (remaining >= prefillBatch_) {
      batch = real = prefillBatch_;
    } else {
      // The smallest plan that takes the rest in one go, padded, as long as
      // its padding rows stay inside the caches (positions < max_seq)...
      for (int64_t b : batches_)
        if (b >= remaining && position + b <= maxSeq_) {
          batch = b;
          real = remaining;
          break;
        }
      // ...else the largest plan that needs no padding (batch 1 always
      // exists, so this ends).
      if (batch == 0)
        for (int64_t b : batches_)
          if (b <= remaining)
            batch = real = b;
    }
    chunks.emplace_back(batch, real);
    position += real;
  }
  return chunks;
}

void Generator::copyLogitsRow(int64_t batch, int64_t row,
                              std::vector<float> &out) {
  QFUSE_CU_CTX(cuStreamSynchronize(stream_), "waiting for the logits");
  std::vector<uint16_t> half(static_cast<size_t>(vocab_));
  executor_.buffer(batch, kLogits)
      .download(half.data(), half.size() * 2,
                static_cast<size_t>(row * vocab_ * 2));
  out.resize(half.size());
  for (size_t i = 0; i < half.size(); ++i)
    out[i] = format::halfToFloat(half[i]);
}

void Generator::prepareDeviceSampler(const SamplingOptions &sampling,
                                     const std::vector<int32_t> &prompt,
                                     const std::vector<int64_t> &batches,
                                     SamplerStaging &staging) {
  if (std::string why = sampling.check(); !why.empty())
    throw Error("sampling: " + why);
  auto &row = staging.params;
  auto &maskStaging = staging.mask;
  const auto values = format::sampling::paramRow(
      sampling.temperature, sampling.topK, sampling.topP, sampling.minP,
      sampling.repetitionPenalty, sampling.seed);
  row.assign(values.begin(), values.end());
  maskStaging.assign(static_cast<size_t>(vocab_), 0);
  for (int32_t id : prompt)
    maskStaging[static_cast<size_t>(id)] = 1;
  for (int64_t batch : batches) {
    QFUSE_CU_CTX(cuMemcpyHtoDAsync(executor_.buffer(batch, kSamplingParams).ptr(),
                                   row.data(), row.size() * 4, stream_),
                 "writing the sampling parameters");
    QFUSE_CU_CTX(cuMemcpyHtoDAsync(executor_.buffer(batch, kPenaltyMask).ptr(),
                                   maskStaging.data(), maskStaging.size(),
                                   stream_),
                 "writing the repetition penalty mask");
  }
}

/// One generation's token choice (generate): what it was asked, the host
/// sampler with the ids it has seen, the pinned tokens, the results.
struct Generator::TokenLoop {
  const GenerateOptions &options;
  Generation &out;
  cuda::PinnedBuffer &tokens;
  int64_t promptTokens = 0;
  /// The artifact's sampler chooses (its next_token).
  bool onDevice = false;
  /// Each token is known on the host before the next step runs.
  bool stepwise = false;
  /// The decode step's input_ids.
  CUdeviceptr decodeIds = 0;
  std::optional<Sampler> sampler = std::nullopt;
  std::vector<int32_t> history = {};
  /// Tokens taken so far.
  int64_t generated = 0;
};

void Generator::copyIn(int64_t batch, const char *buffer,
                       const cuda::PinnedBuffer &host, int64_t at) {
  QFUSE_CU_CTX(cuMemcpyHtoDAsync(executor_.buffer(batch, buffer).ptr(),
                                 host.as<int32_t>() + at, size_t(batch) * 4,
                                 stream_),
               std::string("copying ") + buffer + " to the device");
}

bool Generator::takeToken(TokenLoop &loop, int64_t batch, int64_t row,
                          CUdeviceptr from, int64_t index) {
  const GenerateOptions &options = loop.options;
  cuda::PinnedBuffer &tokens = loop.tokens;
  std::vector<float> logits;
  if (loop.sampler || options.keepLogits)
    copyLogitsRow(batch, row, logits); // synchronizes
  if (loop.sampler) {
    // The draw's counter is the row's position, as on the device.
    const int32_t token = loop.sampler->sample(
        logits, loop.history,
        static_cast<uint64_t>(loop.promptTokens - 1 + index));
    tokens.as<int32_t>()[index] = token;
    loop.history.push_back(token);
  } else {
    QFUSE_CU_CTX(
        cuMemcpyDtoHAsync(tokens.as<int32_t>() + index, from, 4, stream_),
        "reading a generated token back");
    if (loop.stepwise)
      QFUSE_CU_CTX(cuStreamSynchronize(stream_), "waiting for a token");
  }
  if (options.keepLogits)
    loop.out.logits.push_back(std::move(logits));
  loop.generated = index + 1;
  if (!loop.stepwise)
    return true;
  const int32_t token = tokens.as<int32_t>()[index];
  if (loop.onDevice && options.sampling.repetitionPenalty != 1)
    QFUSE_CU_CTX(cuMemsetD8Async(executor_.buffer(1, kPenaltyMask).ptr() +
                                     static_cast<CUdeviceptr>(token),
                                 1, 1, stream_),
                 "marking the token in the penalty mask");
  const bool stop =
      std::find(options.stopTokens.begin(), options.stopTokens.end(), token) !=
      options.stopTokens.end();
  const bool more = options.onToken ? options.onToken(token) : true;
  return more && !stop;
}

void Generator::feedToken(const TokenLoop &loop, CUdeviceptr from,
                          int64_t index) {
  const CUdeviceptr decodeIds = loop.decodeIds;
  if (loop.sampler)
    QFUSE_CU_CTX(cuMemcpyHtoDAsync(decodeIds, loop.tokens.as<int32_t>() + index,
                                   4, stream_),
                 "feeding the sampled token to the decode step");
  else
    QFUSE_CU_CTX(cuMemcpyDtoDAsync(decodeIds, from, 4, stream_),
                 "feeding the token to the decode step");
}

Generation Generator::generate(const std::vector<int32_t> &prompt,
                               int64_t maxNewTokens,
                               const GenerateOptions &options) {
  const int64_t promptTokens = static_cast<int64_t>(prompt.size());
  checkRequest(prompt, maxNewTokens, vocab_, maxSeq_);

  const auto chunks = prefillChunks(promptTokens);
  StagedPrompt staging = stagePrompt(prompt, chunks, maxNewTokens);
  const int64_t staged = staging.staged;
  cuda::PinnedBuffer &ids = staging.ids;
  cuda::PinnedBuffer &positions = staging.positions;
  cuda::PinnedBuffer &tokens = staging.tokens;

  Generation out;
  out.promptTokens = promptTokens;
  const bool onDevice = deviceSampler_ && !options.hostSampling;
  captureGraphs(executor_, stream_, chunks);
  // The host staging of the device sampler's inputs lives until the end.
  // Host sampling over such an artifact: its next_token is unused, but its
  // parameters must be valid.
  SamplerStaging samplerStaging;
  if (deviceSampler_)
    prepareDeviceSampler(onDevice ? options.sampling : SamplingOptions{},
                         prompt, replayedBatches(chunks), samplerStaging);
  reset();

  TokenLoop loop{options, out, tokens};
  loop.promptTokens = promptTokens;
  loop.onDevice = onDevice;
  // The next decode step's input is this step's output: a device copy, so
  // no step waits for the host.
  loop.decodeIds = executor_.buffer(1, kInputIds).ptr();
  // Stepwise: each token is known on the host before the next step runs
  // (callback, stop tokens, host sampling); the token the host chose is
  // copied to the decode step's input_ids from pinned memory.
  loop.stepwise = options.stepwise(deviceSampler_);
  if (options.sampling.needsLogits() && !onDevice) {
    loop.sampler.emplace(options.sampling);
    loop.history = prompt;
  }

  cuda::Event start, firstToken, end;
  start.record(stream_);
  int64_t at = 0;
  for (const auto &[batch, real] : chunks) {
    copyIn(batch, kInputIds, ids, at);
    copyIn(batch, kPositions, positions, at);
    executor_.replay(batch, stream_);
    at += batch;
  }
  const auto [lastBatch, lastReal] = chunks.back();
  const CUdeviceptr first =
      executor_.buffer(lastBatch, kNextToken).ptr() + (lastReal - 1) * 4;
  firstToken.record(stream_);
  bool more = takeToken(loop, lastBatch, lastReal - 1, first, 0);
  if (maxNewTokens > 1 && more)
    feedToken(loop, first, 0);

  const CUdeviceptr decodeNext = executor_.buffer(1, kNextToken).ptr();
  for (int64_t s = 1; s < maxNewTokens && more; ++s) {
    copyIn(1, kPositions, positions, staged + s);
    executor_.replay(1, stream_);
    more = takeToken(loop, 1, 0, decodeNext, s);
    if (s + 1 < maxNewTokens && more)
      feedToken(loop, decodeNext, s);
  }
  end.record(stream_);
  end.synchronize();

  const int64_t generated = loop.generated;
  out.tokens.assign(tokens.as<int32_t>(), tokens.as<int32_t>() + generated);
  out.ttftMs = cuda::Event::elapsedMs(start, firstToken);
  out.decodeMs = cuda::Event::elapsedMs(firstToken, end);
  if (generated > 1 && out.decodeMs > 0)
    out.decodeTokensPerSecond =
        double(generated - 1) / (out.decodeMs / 1000.0);
  return out;
}

} // namespace qfuse::runtime
