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
\*===----------------------------------------------------------------------===*/

#ifndef QFUSE_RUNTIME_QFUSE_H
#define QFUSE_RUNTIME_QFUSE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The artifact format version this runtime reads. */
int qfuse_artifact_version(void);

/* The message of the last failed call on this thread ("" if none). */
const char *qfuse_last_error(void);

/* Validates an artifact file completely (no GPU needed). */
int qfuse_validate_artifact(const char *path);

/* Parses the body of a #qf.enc<...> or a named encoding ("int4-g128",
 * "nf4", "nvfp4", ...) and writes its canonical text into out[capacity]. */
int qfuse_canonical_encoding(const char *text, char *out, size_t capacity);

/* CUDA devices visible (0 without a driver or device; not an error). */
int qfuse_device_count(void);

typedef struct qfuse_runtime qfuse_runtime;

/* Loads and validates an artifact and its kernels on a device. */
qfuse_runtime *qfuse_open(const char *artifact_path, int device);
void qfuse_close(qfuse_runtime *runtime);

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

#ifdef __cplusplus
}
#endif

#endif /* QFUSE_RUNTIME_QFUSE_H */
