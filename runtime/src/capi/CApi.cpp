//===- CApi.cpp - the runtime's C API ----------------------------------------===//
//
// Thin: every entry point catches the C++ runtime's exceptions at the
// boundary and turns them into a return code and qfuse_last_error().
//
// Threads (qfuse.h, "Threads"): the last error is per thread; each handle
// has a mutex that its calls hold, so calls on one handle run one at a time
// and calls on different handles run at once; a runtime's calls make its
// device context current on the calling thread first; text a call returns
// is kept per handle and thread.
//
//===----------------------------------------------------------------------===//

#include "qfuse/runtime/qfuse.h"

#include "QuantizeOptionsJson.h"
#include "qfuse/format/Encoding.h"
#include "qfuse/runtime/artifact/Artifact.h"
#include "qfuse/runtime/artifact/ArtifactSet.h"
#include "qfuse/runtime/device/DeviceArtifact.h"
#include "qfuse/runtime/tooling/Check.h"
#include "qfuse/runtime/device/Cuda.h"
#include "qfuse/runtime/Error.h"
#include "qfuse/runtime/device/Executor.h"
#include "qfuse/runtime/device/Generator.h"
#include "qfuse/runtime/checkpoint/ModelCheckpoint.h"
#include "qfuse/runtime/device/ModelLoader.h"
#include "qfuse/runtime/device/QuantizeAtLoad.h"
#include "qfuse/runtime/checkpoint/WeightSources.h"
#include "qfuse/runtime/gptq/QuantizeModel.h"
#include "qfuse/runtime/checkpoint/Safetensors.h"
#include "qfuse/text/ChatFormat.h"
#include "qfuse/text/StopTokens.h"
#include "qfuse/text/Tokenizer.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace {
/// What text-returning calls on one handle return, per calling thread:
/// valid until that thread's next such call on the handle.
class ThreadTexts {
public:
  const std::string &set(std::string text) {
    std::string &slot = texts_[std::this_thread::get_id()];
    slot = std::move(text);
    return slot;
  }

private:
  std::map<std::thread::id, std::string> texts_;
};
} // namespace

struct qfuse_runtime {
  // The path qfuse_open read: its quantize artifact sits beside it.
  std::string artifactPath;
  qfuse::runtime::Artifact artifact;
  qfuse::runtime::cuda::Context context;
  qfuse::runtime::cuda::Stream stream;
  std::unique_ptr<qfuse::runtime::Executor> executor;
  std::optional<qfuse::runtime::SafetensorsFile> weights;
  // Made on the first qfuse_generate (it checks the model contract).
  std::unique_ptr<qfuse::runtime::Generator> generator;
  // Held by every call that touches the executor or the device.
  std::mutex mutex;
};

struct qfuse_tokenizer {
  std::string dir;
  // Read only after qfuse_tokenizer_open (encode and decode are const).
  qfuse::text::Tokenizer tokenizer;
  std::mutex mutex; // guards `texts`
  ThreadTexts texts;
};

struct qfuse_text_stream {
  qfuse::text::StreamDecoder decoder;
  std::mutex mutex; // guards both
  ThreadTexts texts;
};

namespace {
thread_local std::string lastError;

/// Runs `body`, mapping exceptions to -1 and the message.
template <typename Body> int guarded(const char *what, Body &&body) {
  lastError.clear();
  try {
    body();
    return 0;
  } catch (const std::exception &e) {
    lastError = std::string(what) + ": " + qfuse::errorText(e);
  }
  return -1;
}

bool checkHandle(qfuse_runtime *runtime, const char *what) {
  if (runtime)
    return true;
  lastError = std::string(what) + ": the runtime handle is NULL";
  return false;
}

/// guarded() holding the runtime's mutex, with its device context current
/// on this thread (another runtime's may be, or none on a new thread).
template <typename Body>
int onRuntime(qfuse_runtime *runtime, const char *what, Body &&body) {
  if (!checkHandle(runtime, what))
    return -1;
  std::lock_guard<std::mutex> lock(runtime->mutex);
  return guarded(what, [&] {
    runtime->context.makeCurrent();
    body();
  });
}

/// The text a call returns from `texts` under `mutex`, or NULL when `body`
/// (which makes the text) fails.
template <typename Body>
const char *returnText(const char *what, std::mutex &mutex, ThreadTexts &texts,
                       size_t *length, Body &&body) {
  const std::string *kept = nullptr;
  std::lock_guard<std::mutex> lock(mutex);
  const int status = guarded(what, [&] { kept = &texts.set(body()); });
  if (status != 0)
    return nullptr;
  if (length)
    *length = kept->size();
  return kept->c_str();
}
} // namespace

extern "C" {

int qfuse_artifact_version(void) { return qfuse::runtime::kArtifactVersion; }

const char *qfuse_last_error(void) { return lastError.c_str(); }

int qfuse_validate_artifact(const char *path) {
  return guarded("qfuse_validate_artifact", [&] {
    // Every variant of a set; which one runs is the device's choice.
    qfuse::runtime::ArtifactSet::load(path ? path : "");
  });
}

int qfuse_canonical_encoding(const char *text, char *out, size_t capacity) {
  lastError.clear();
  qfuse::format::Encoding enc;
  std::string error;
  std::string input = text ? text : "";
  if (!qfuse::format::encodingFromName(input, enc, error)) {
    std::string parseError;
    if (!qfuse::format::parseEncoding(input, enc, parseError)) {
      lastError = "qfuse_canonical_encoding: '" + input +
                  "' is neither a known encoding name (" + error +
                  ") nor an encoding (" + parseError + ")";
      return -1;
    }
  }
  std::string canonical = qfuse::format::printEncoding(enc);
  if (!out || canonical.size() + 1 > capacity) {
    lastError = "qfuse_canonical_encoding: the output needs " +
                std::to_string(canonical.size() + 1) + " bytes";
    return -1;
  }
  std::memcpy(out, canonical.c_str(), canonical.size() + 1);
  return 0;
}

int qfuse_device_count(void) {
  std::string why;
  return qfuse::runtime::cuda::deviceCount(&why);
}

qfuse_runtime *qfuse_open(const char *artifact_path, int device) {
  std::unique_ptr<qfuse_runtime> runtime;
  guarded("qfuse_open", [&] {
    // The file is read and every variant validated before the GPU is
    // touched: a bad path or artifact is named even where no device is.
    auto set = qfuse::runtime::ArtifactSet::load(artifact_path ? artifact_path
                                                               : "");
    qfuse::runtime::cuda::Context context(device);
    auto artifact =
        qfuse::runtime::takeVariantForDevice(std::move(set), context);
    runtime.reset(new qfuse_runtime{artifact_path ? artifact_path : "",
                                    std::move(artifact),
                                    std::move(context),
                                    qfuse::runtime::cuda::Stream(), nullptr,
                                    std::nullopt, nullptr, {}});
    runtime->executor = std::make_unique<qfuse::runtime::Executor>(
        runtime->artifact, runtime->context);
  });
  return runtime.release();
}

void qfuse_close(qfuse_runtime *runtime) {
  if (!runtime)
    return;
  // Its buffers are freed in its context, whichever thread closes it.
  try {
    runtime->context.makeCurrent();
  } catch (const std::exception &) {
  }
  delete runtime;
}

int qfuse_target_chip(qfuse_runtime *runtime, char *out, size_t capacity) {
  if (!checkHandle(runtime, "qfuse_target_chip"))
    return -1;
  const std::string &chip = runtime->artifact.chip;
  if (!out || chip.size() + 1 > capacity) {
    lastError = "qfuse_target_chip: the output needs " +
                std::to_string(chip.size() + 1) + " bytes";
    return -1;
  }
  std::memcpy(out, chip.c_str(), chip.size() + 1);
  return 0;
}

int qfuse_load_weights(qfuse_runtime *runtime, const char *path) {
  return onRuntime(runtime, "qfuse_load_weights", [&] {
    runtime->weights.emplace(
        qfuse::runtime::SafetensorsFile::open(path ? path : ""));
    runtime->executor->loadWeights(*runtime->weights);
  });
}

int qfuse_bind_random_weights(qfuse_runtime *runtime, uint64_t seed) {
  return onRuntime(runtime, "qfuse_bind_random_weights", [&] {
    qfuse::runtime::check::bindRandomWeights(*runtime->executor, seed);
  });
}

int qfuse_plan_batches(qfuse_runtime *runtime, int64_t *out, int capacity) {
  if (!checkHandle(runtime, "qfuse_plan_batches"))
    return -1;
  int count = static_cast<int>(runtime->artifact.plans.size());
  for (int i = 0; i < count && i < capacity && out; ++i)
    out[i] = runtime->artifact.plans[i].batch;
  return count;
}

int64_t qfuse_buffer_bytes(qfuse_runtime *runtime, int64_t batch,
                           const char *name) {
  if (!checkHandle(runtime, "qfuse_buffer_bytes"))
    return -1;
  const qfuse::runtime::BufferSpec *spec =
      runtime->artifact.findBuffer(name ? name : "");
  if (!spec) {
    lastError = std::string("qfuse_buffer_bytes: no buffer '") +
                (name ? name : "") + "' in " + runtime->artifact.source;
    return -1;
  }
  return static_cast<int64_t>(spec->numBytes(batch));
}

int qfuse_set_input(qfuse_runtime *runtime, int64_t batch, const char *name,
                    const void *data, size_t bytes) {
  return onRuntime(runtime, "qfuse_set_input", [&] {
    runtime->executor->allocate(batch);
    auto &buffer = runtime->executor->buffer(batch, name ? name : "");
    if (bytes != buffer.size())
      throw qfuse::Error("buffer '" + std::string(name) + "' holds " +
                         std::to_string(buffer.size()) + " bytes at batch " +
                         std::to_string(batch) + ", got " +
                         std::to_string(bytes));
    buffer.upload(data, bytes);
  });
}

int qfuse_run(qfuse_runtime *runtime, int64_t batch) {
  return onRuntime(runtime, "qfuse_run", [&] {
    runtime->executor->allocate(batch);
    runtime->executor->run(batch, runtime->stream.get());
    runtime->stream.synchronize();
  });
}

int qfuse_get_output(qfuse_runtime *runtime, int64_t batch, const char *name,
                     void *data, size_t bytes) {
  return onRuntime(runtime, "qfuse_get_output", [&] {
    auto &buffer = runtime->executor->buffer(batch, name ? name : "");
    if (bytes != buffer.size())
      throw qfuse::Error("buffer '" + std::string(name) + "' holds " +
                         std::to_string(buffer.size()) + " bytes, got " +
                         std::to_string(bytes));
    buffer.download(data, bytes);
  });
}

int qfuse_load_checkpoint(qfuse_runtime *runtime, const char *model_dir,
                          int threads) {
  return onRuntime(runtime, "qfuse_load_checkpoint", [&] {
    if (threads < 0)
      throw qfuse::Error("threads is " + std::to_string(threads) +
                         ", expected 0 (every core) or more");
    auto checkpoint =
        qfuse::runtime::ModelCheckpoint::open(model_dir ? model_dir : "");
    qfuse::runtime::checkModelAgainstConfig(runtime->artifact, checkpoint);
    // Round-to-nearest on the GPU where the quantize artifact has the
    // kernel, on the host otherwise (as qfuse-run does by default).
    qfuse::runtime::QuantizeAtLoad rounding(
        runtime->artifactPath, qfuse::runtime::RtnMode::Device,
        runtime->context, /*log=*/nullptr);
    rounding.load(*runtime->executor, checkpoint,
                  static_cast<unsigned>(threads));
  });
}

int qfuse_generate(qfuse_runtime *runtime, const int32_t *prompt_ids,
                   int64_t n_prompt, int64_t max_new, int32_t *out_ids,
                   qfuse_generate_stats *stats) {
  return onRuntime(runtime, "qfuse_generate", [&] {
    if (n_prompt < 0 || (n_prompt > 0 && !prompt_ids))
      throw qfuse::Error("prompt_ids is NULL or n_prompt is negative");
    if (max_new > 0 && !out_ids)
      throw qfuse::Error("out_ids is NULL");
    if (!runtime->generator)
      runtime->generator = std::make_unique<qfuse::runtime::Generator>(
          *runtime->executor, runtime->stream.get());
    std::vector<int32_t> prompt(prompt_ids, prompt_ids + n_prompt);
    qfuse::runtime::Generation out =
        runtime->generator->generate(prompt, max_new);
    std::copy(out.tokens.begin(), out.tokens.end(), out_ids);
    if (stats) {
      stats->ttft_ms = out.ttftMs;
      stats->decode_ms = out.decodeMs;
      stats->decode_tokens_per_s = out.decodeTokensPerSecond;
    }
  });
}

qfuse_sampling qfuse_sampling_default(void) {
  return qfuse_sampling{0.0f, 0, 1.0f, 0.0f, 1.0f, 0};
}

int qfuse_generate_ex(qfuse_runtime *runtime, const int32_t *prompt_ids,
                      int64_t n_prompt, int64_t max_new,
                      const qfuse_sampling *sampling, const int32_t *stop_ids,
                      int64_t n_stop, qfuse_token_callback callback,
                      void *user, int32_t *out_ids, int64_t *n_out,
                      qfuse_generate_stats *stats) {
  return onRuntime(runtime, "qfuse_generate_ex", [&] {
    if (n_prompt < 0 || (n_prompt > 0 && !prompt_ids))
      throw qfuse::Error("prompt_ids is NULL or n_prompt is negative");
    if (max_new > 0 && !out_ids)
      throw qfuse::Error("out_ids is NULL");
    if (n_stop < 0 || (n_stop > 0 && !stop_ids))
      throw qfuse::Error("stop_ids is NULL or n_stop is negative");
    if (!runtime->generator)
      runtime->generator = std::make_unique<qfuse::runtime::Generator>(
          *runtime->executor, runtime->stream.get());
    qfuse::runtime::GenerateOptions options;
    if (sampling)
      options.sampling = {sampling->temperature, sampling->top_k,
                          sampling->top_p,       sampling->min_p,
                          sampling->repetition_penalty, sampling->seed};
    options.stopTokens.assign(stop_ids, stop_ids + n_stop);
    if (callback)
      options.onToken = [&](int32_t token) {
        return callback(token, user) != 0;
      };
    std::vector<int32_t> prompt(prompt_ids, prompt_ids + n_prompt);
    qfuse::runtime::Generation out =
        runtime->generator->generate(prompt, max_new, options);
    std::copy(out.tokens.begin(), out.tokens.end(), out_ids);
    if (n_out)
      *n_out = static_cast<int64_t>(out.tokens.size());
    if (stats) {
      stats->ttft_ms = out.ttftMs;
      stats->decode_ms = out.decodeMs;
      stats->decode_tokens_per_s = out.decodeTokensPerSecond;
    }
  });
}

qfuse_tokenizer *qfuse_tokenizer_open(const char *model_dir) {
  std::unique_ptr<qfuse_tokenizer> tok;
  guarded("qfuse_tokenizer_open", [&] {
    const std::string dir = model_dir ? model_dir : "";
    tok.reset(new qfuse_tokenizer{
        dir, qfuse::text::Tokenizer::fromDirectory(dir), {}, {}});
  });
  return tok.release();
}

void qfuse_tokenizer_close(qfuse_tokenizer *tokenizer) { delete tokenizer; }

int64_t qfuse_tokenizer_encode(qfuse_tokenizer *tokenizer, const char *text,
                               size_t length, int add_special,
                               int32_t *out_ids, size_t capacity) {
  int64_t count = -1;
  guarded("qfuse_tokenizer_encode", [&] {
    if (!tokenizer)
      throw qfuse::Error("the tokenizer handle is NULL");
    if (!text && length)
      throw qfuse::Error("text is NULL");
    const auto ids = tokenizer->tokenizer.encode(
        std::string_view(text ? text : "", length), add_special != 0);
    if (out_ids)
      std::copy_n(ids.begin(), std::min(ids.size(), capacity), out_ids);
    count = static_cast<int64_t>(ids.size());
  });
  return count;
}

const char *qfuse_tokenizer_decode(qfuse_tokenizer *tokenizer,
                                   const int32_t *ids, size_t n,
                                   int skip_special, size_t *length) {
  if (!tokenizer) {
    lastError = "qfuse_tokenizer_decode: the tokenizer handle is NULL";
    return nullptr;
  }
  return returnText("qfuse_tokenizer_decode", tokenizer->mutex,
                    tokenizer->texts, length, [&] {
    if (!ids && n)
      throw qfuse::Error("ids is NULL");
    qfuse::text::DecodeOptions options;
    options.skipSpecialTokens = skip_special != 0;
    return tokenizer->tokenizer.decode(std::vector<int32_t>(ids, ids + n),
                                       options);
  });
}

const char *qfuse_tokenizer_chat(qfuse_tokenizer *tokenizer,
                                 const char *system, const char *user,
                                 size_t *length) {
  if (!tokenizer) {
    lastError = "qfuse_tokenizer_chat: the tokenizer handle is NULL";
    return nullptr;
  }
  return returnText("qfuse_tokenizer_chat", tokenizer->mutex,
                    tokenizer->texts, length, [&] {
    if (!user)
      throw qfuse::Error("the user message is NULL");
    std::vector<qfuse::text::ChatMessage> messages;
    if (system)
      messages.push_back({"system", system});
    messages.push_back({"user", user});
    return qfuse::text::ChatFormat::fromDirectory(tokenizer->dir)
        .apply(messages);
  });
}

int64_t qfuse_tokenizer_stop_ids(qfuse_tokenizer *tokenizer, int chat,
                                 int32_t *out_ids, size_t capacity) {
  int64_t count = -1;
  guarded("qfuse_tokenizer_stop_ids", [&] {
    if (!tokenizer)
      throw qfuse::Error("the tokenizer handle is NULL");
    std::string endOfTurn;
    if (chat)
      endOfTurn =
          qfuse::text::ChatFormat::fromDirectory(tokenizer->dir).endOfTurn();
    const auto ids = qfuse::text::stopTokenIds(
        tokenizer->dir, tokenizer->tokenizer, endOfTurn);
    if (out_ids)
      std::copy_n(ids.begin(), std::min(ids.size(), capacity), out_ids);
    count = static_cast<int64_t>(ids.size());
  });
  return count;
}

qfuse_text_stream *qfuse_text_stream_open(qfuse_tokenizer *tokenizer) {
  std::unique_ptr<qfuse_text_stream> stream;
  guarded("qfuse_text_stream_open", [&] {
    if (!tokenizer)
      throw qfuse::Error("the tokenizer handle is NULL");
    stream.reset(new qfuse_text_stream{
        qfuse::text::StreamDecoder(tokenizer->tokenizer, true), {}, {}});
  });
  return stream.release();
}

const char *qfuse_text_stream_push(qfuse_text_stream *stream, int32_t id,
                                   size_t *length) {
  if (!stream) {
    lastError = "qfuse_text_stream_push: the stream handle is NULL";
    return nullptr;
  }
  return returnText("qfuse_text_stream_push", stream->mutex, stream->texts,
                    length, [&] { return stream->decoder.push(id); });
}

const char *qfuse_text_stream_finish(qfuse_text_stream *stream,
                                     size_t *length) {
  if (!stream) {
    lastError = "qfuse_text_stream_finish: the stream handle is NULL";
    return nullptr;
  }
  return returnText("qfuse_text_stream_finish", stream->mutex, stream->texts,
                    length, [&] { return stream->decoder.finish(); });
}

void qfuse_text_stream_close(qfuse_text_stream *stream) { delete stream; }

int64_t qfuse_quantize(const char *options_json, char *report,
                       size_t capacity) {
  std::string text;
  const int status = guarded("qfuse_quantize", [&] {
    if (!options_json)
      throw qfuse::Error("options_json is NULL");
    qfuse::runtime::QuantizeModelOptions options =
        qfuse::capi::quantizeOptionsFromJson(options_json);
    options.command = std::string("qfuse_quantize(") + options_json + ")";
    text = qfuse::runtime::quantizeModel(options);
  });
  if (status != 0)
    return -1;
  if (report && capacity > 0) {
    const size_t n = std::min(capacity - 1, text.size());
    std::memcpy(report, text.data(), n);
    report[n] = '\0';
  }
  return static_cast<int64_t>(text.size());
}

} // extern "C"
