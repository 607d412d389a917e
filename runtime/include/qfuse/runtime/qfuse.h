/*===- qfuse.h - the runtime's C API ---------------------------*- C -*-===*\
 *
 * One header for bindings (the Python frontend loads libqfuse_c.so with
 * ctypes). Every function that can fail returns 0 on success and -1 on
 * error (NULL for qfuse_open); qfuse_last_error() then says what went wrong,
 * naming the file, field or tensor, as the C++ runtime's errors do. The
 * message is per thread and valid until the next call on that thread.
 *
 *   qfuse_runtime *rt = qfuse_open("model.qfa", 0);
 *   qfuse_bind_random_weights(rt, 1234);   // or qfuse_load_weights(rt, path)
 *   qfuse_set_input(rt, 1, "x", x, bytes);
 *   qfuse_run(rt, 1);
 *   qfuse_get_output(rt, 1, "y", y, bytes);
 *   qfuse_close(rt);
 *
 * Whole models (docs/decode-model.md):
 *
 *   qfuse_runtime *rt = qfuse_open("llama-int4.qfa", 0);
 *   qfuse_load_checkpoint(rt, "Llama-3.2-1B/", 0);  // quantized at load
 *   int32_t prompt[] = {128000, 791, 6864}, out[64];
 *   qfuse_generate_stats stats;
 *   qfuse_generate(rt, prompt, 3, 64, out, &stats);
 *
 * GPTQ (docs/gptq.md):
 *
 *   char report[1 << 20];
 *   qfuse_quantize("{\"model\": \"Llama-3.2-1B\", \"encoding\": \"int4-g128\","
 *                  " \"calibration\": \"random:128\", \"out\": \"gptq\"}",
 *                  report, sizeof report);
 *
 * Threads (docs/threads.md):
 * - Every function may be called from any thread, and calls on different
 *   handles (runtimes, tokenizers, streams) run at the same time, on one
 *   device or several. Functions without a handle (qfuse_validate_artifact,
 *   qfuse_canonical_encoding, qfuse_device_count, qfuse_quantize,
 *   qfuse_artifact_version) may run at any time from any thread.
 * - Calls on one handle are serialized: each holds the handle's lock, so a
 *   shared handle is never corrupted, but a sequence of calls is not atomic.
 *   Two threads that share a runtime and each run set_input / run /
 *   get_output must hold a lock of their own around the sequence (or use a
 *   runtime each: they may share a device). qfuse_generate and
 *   qfuse_generate_ex are one call each, so threads may share a runtime
 *   for them, one generation at a time. qfuse_plan_batches and
 *   qfuse_buffer_bytes read only the artifact and never wait.
 * - A runtime may be used from a thread other than the one that opened it:
 *   each call makes the runtime's device context current on its thread.
 * - Tokenizers are read-only once open: encode, stop_ids and the streams
 *   opened on one tokenizer run at once. Text a call returns is kept per
 *   handle and per thread (valid until the same thread's next call on that
 *   handle, or its close).
 * - qfuse_close, qfuse_tokenizer_close and qfuse_text_stream_close must not
 *   overlap another call on the same handle; a tokenizer outlives the
 *   streams opened on it.
 * - qfuse_last_error() is per thread.
 * - The token callback of qfuse_generate_ex runs on the calling thread,
 *   with the runtime's lock held: it must not call into the same runtime.
 *
\*===----------------------------------------------------------------------===*/

#ifndef QFUSE_RUNTIME_QFUSE_H
#define QFUSE_RUNTIME_QFUSE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The newest artifact format version this runtime reads (it reads 2 and
   later; docs/artifact.md, Versioning). */
int qfuse_artifact_version(void);

/* The message of the last failed call on this thread ("" if none). */
const char *qfuse_last_error(void);

/* Validates an artifact file completely (no GPU needed); for an artifact
 * set (one artifact per chip), every variant. */
int qfuse_validate_artifact(const char *path);

/* Parses the body of a #qf.enc<...> or a named encoding ("int4-g128",
 * "nf4", "nvfp4", ...) and writes its canonical text into out[capacity]. */
int qfuse_canonical_encoding(const char *text, char *out, size_t capacity);

/* CUDA devices visible (0 without a driver or device; not an error). */
int qfuse_device_count(void);

typedef struct qfuse_runtime qfuse_runtime;

/* Loads and validates an artifact and its kernels on a device. Of an
 * artifact set it runs the variant for the device: the arch-specific chip of
 * exactly the device's compute capability (sm_90a on 9.0), else the newest
 * other chip at or below it (docs/artifact.md, Artifact sets). */
qfuse_runtime *qfuse_open(const char *artifact_path, int device);
void qfuse_close(qfuse_runtime *runtime);

/* The chip of the artifact (of a set: the variant) the runtime runs, e.g.
 * "sm_90a", written into out[capacity]. */
int qfuse_target_chip(qfuse_runtime *runtime, char *out, size_t capacity);

/* Weights: from a qfuse-packed safetensors file (<weight>.codes, ...), or
 * random ones quantized with round-to-nearest into each encoding. */
int qfuse_load_weights(qfuse_runtime *runtime, const char *safetensors_path);
int qfuse_bind_random_weights(qfuse_runtime *runtime, uint64_t seed);

/* The batch sizes the artifact has plans for; returns how many there are
 * (writing at most `capacity`), or -1. */
int qfuse_plan_batches(qfuse_runtime *runtime, int64_t *out, int capacity);

/* Bytes of buffer `name` at batch size `batch`, or -1. */
int64_t qfuse_buffer_bytes(qfuse_runtime *runtime, int64_t batch,
                           const char *name);

/* Copies host data into / out of a buffer (exactly its size), and runs the
 * plan for `batch` to completion. */
int qfuse_set_input(qfuse_runtime *runtime, int64_t batch, const char *name,
                    const void *data, size_t bytes);
int qfuse_run(qfuse_runtime *runtime, int64_t batch);
int qfuse_get_output(qfuse_runtime *runtime, int64_t batch, const char *name,
                     void *data, size_t bytes);

/* Binds every weight and tensor the plans read from a Hugging Face
 * checkpoint directory (config.json, model.safetensors or an index and its
 * shards): fp16/bf16/f32 linears are quantized with round-to-nearest into
 * the artifact's encodings (on the GPU by the kernels of the quantize
 * artifact beside the opened one, "m.quantize.qfa" for "m.qfa", where it
 * has them; on the host otherwise), AutoGPTQ and compressed-tensors
 * pack-quantized ones converted. `threads` = 0 uses every core. */
int qfuse_load_checkpoint(qfuse_runtime *runtime, const char *model_dir,
                          int threads);

/* What one generation measured (CUDA event times). */
typedef struct qfuse_generate_stats {
  double ttft_ms;             /* prompt copied in -> first token computed */
  double decode_ms;           /* the max_new - 1 decode steps after it */
  double decode_tokens_per_s; /* 0 when max_new is 1 */
} qfuse_generate_stats;

/* Generates `max_new` tokens after the `n_prompt` prompt ids into
 * out_ids[max_new] (greedy, a new sequence at position 0), on an artifact
 * with the model contract of docs/decode-model.md. `stats` may be NULL.
 * Fails on an empty prompt, an id outside the vocabulary, n_prompt +
 * max_new > the artifact's max_seq, or unbound weights. */
int qfuse_generate(qfuse_runtime *runtime, const int32_t *prompt_ids,
                   int64_t n_prompt, int64_t max_new, int32_t *out_ids,
                   qfuse_generate_stats *stats);

/* How generation chooses each token (docs/text-generation.md). Zero
 * temperature is greedy; top_k 0, top_p 1, min_p 0 and repetition_penalty
 * 1 turn those off. qfuse_sampling_default() gives greedy. */
typedef struct qfuse_sampling {
  float temperature;
  int32_t top_k;
  float top_p;
  float min_p;
  float repetition_penalty;
  uint64_t seed;
} qfuse_sampling;
qfuse_sampling qfuse_sampling_default(void);

/* Called with each generated token as soon as it is known; return nonzero
 * to go on, 0 to stop after this token. */
typedef int (*qfuse_token_callback)(int32_t token, void *user);

/* qfuse_generate with sampling (NULL: greedy), stop tokens (generation
 * ends after one of the n_stop stop_ids, which is kept) and a callback
 * (may be NULL). Writes the *n_out (<= max_new) generated ids. */
int qfuse_generate_ex(qfuse_runtime *runtime, const int32_t *prompt_ids,
                      int64_t n_prompt, int64_t max_new,
                      const qfuse_sampling *sampling, const int32_t *stop_ids,
                      int64_t n_stop, qfuse_token_callback callback,
                      void *user, int32_t *out_ids, int64_t *n_out,
                      qfuse_generate_stats *stats);

/* Tokenizers (docs/tokenizer.md), host only: a model directory's
 * tokenizer.json and tokenizer_config.json. Returned text is valid until
 * the next text-returning call on the same handle from the same thread (or
 * the handle's close). */
typedef struct qfuse_tokenizer qfuse_tokenizer;
qfuse_tokenizer *qfuse_tokenizer_open(const char *model_dir);
void qfuse_tokenizer_close(qfuse_tokenizer *tokenizer);
/* Encodes `length` bytes of text; returns the number of ids (writing at
 * most `capacity` into out_ids) or -1. add_special: BOS as the
 * tokenizer's post-processor adds it. */
int64_t qfuse_tokenizer_encode(qfuse_tokenizer *tokenizer, const char *text,
                               size_t length, int add_special,
                               int32_t *out_ids, size_t capacity);
/* The text of `n` ids (UTF-8, *length bytes), or NULL. */
const char *qfuse_tokenizer_decode(qfuse_tokenizer *tokenizer,
                                   const int32_t *ids, size_t n,
                                   int skip_special, size_t *length);
/* The chat prompt for an optional system message (NULL: none) and a user
 * message, in the model's chat format (tokenizer_config.json's
 * chat_template), or NULL. Encode it with add_special = 0. */
const char *qfuse_tokenizer_chat(qfuse_tokenizer *tokenizer,
                                 const char *system, const char *user,
                                 size_t *length);
/* The ids generation stops at (generation_config.json / config.json
 * eos_token_id, tokenizer_config.json's eos_token, and with chat != 0 the
 * chat format's end of turn); returns how many (writing at most
 * `capacity`), or -1. */
int64_t qfuse_tokenizer_stop_ids(qfuse_tokenizer *tokenizer, int chat,
                                 int32_t *out_ids, size_t capacity);
/* Streaming decode: push returns the text that became complete (partial
 * UTF-8 held back, special tokens skipped); finish what is left. */
typedef struct qfuse_text_stream qfuse_text_stream;
qfuse_text_stream *qfuse_text_stream_open(qfuse_tokenizer *tokenizer);
const char *qfuse_text_stream_push(qfuse_text_stream *stream, int32_t id,
                                   size_t *length);
const char *qfuse_text_stream_finish(qfuse_text_stream *stream,
                                     size_t *length);
void qfuse_text_stream_close(qfuse_text_stream *stream);

/* GPTQ of a whole Hugging Face model on the GPU (docs/gptq.md), what the
 * qfuse-quantize tool runs. `options_json` is a JSON object: "model",
 * "encoding", "calibration" ("random:N" or a JSON file of token id lists)
 * and "out" are required; "format" ("qfuse", "compressed-tensors",
 * "auto-gptq"), "seq_len", "fp16_artifact", "gptq_artifact",
 * "decode_artifact", "damp", "act_order", "static_groups", "overwrite",
 * "resume", "save_progress", "seed" and "device" are optional; an unknown
 * key is an error. After each layer the run records its progress in
 * out/.qfuse-progress (unless "save_progress" is false); "resume": true
 * continues an interrupted run from it, with the results the whole run
 * would have given (refused when its inputs differ). Progress lines go to
 * stdout. Returns the length of the JSON report (per layer and
 * module: times, loss, damping, fallbacks) and writes as much of it as
 * fits into report[capacity], NUL-terminated; -1 on error. */
int64_t qfuse_quantize(const char *options_json, char *report,
                       size_t capacity);

#ifdef __cplusplus
}
#endif

#endif /* QFUSE_RUNTIME_QFUSE_H */
