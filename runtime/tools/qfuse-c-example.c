/*===- qfuse-c-example.c - the C API end to end on a GPU ------------------===*\
 *
 * Loads an artifact, binds random round-to-nearest weights, fills every
 * input with random halves, poisons every output with NaN, runs each
 * compiled batch size and checks that every output element was written
 * with a finite value. Exit 0 on success. Numerics against the reference
 * are qfuse-bench --check's job; this checks the C boundary.
 *
 *   qfuse-c-example model.qfa
\*===----------------------------------------------------------------------===*/

#include "qfuse/runtime/qfuse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char *what) {
  fprintf(stderr, "qfuse-c-example: %s: %s\n", what, qfuse_last_error());
  return 1;
}

/* Random half in [-1, 1): sign, exponent 14 or below, random mantissa. */
static unsigned short randomHalf(unsigned *state) {
  *state = *state * 1664525u + 1013904223u;
  unsigned bits = *state >> 8;
  return (unsigned short)(((bits & 1) << 15) | ((10 + (bits >> 1) % 5) << 10) |
                          ((bits >> 4) & 0x3FF));
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: qfuse-c-example <artifact.qfa>\n");
    return 2;
  }
  qfuse_runtime *rt = qfuse_open(argv[1], 0);
  if (!rt)
    return fail("open");
  if (qfuse_bind_random_weights(rt, 7) != 0)
    return fail("bind_random_weights");
  int64_t batches[16];
  int count = qfuse_plan_batches(rt, batches, 16);
  unsigned state = 12345;
  /* Inputs and outputs by the names the examples use. */
  const char *inputs[] = {"attention_projections.input0",
                          "mlp_projections.input0", "mlp_projections.input1"};
  const char *outputs[] = {"model.layers.0.self_attn.q_proj.out",
                           "model.layers.0.self_attn.k_proj.out",
                           "model.layers.0.self_attn.v_proj.out",
                           "model.layers.0.mlp.gate_proj.out",
                           "model.layers.0.mlp.up_proj.out",
                           "model.layers.0.mlp.down_proj.out"};
  for (int b = 0; b < count && b < 16; ++b) {
    int64_t batch = batches[b];
    for (size_t i = 0; i < sizeof(inputs) / sizeof(*inputs); ++i) {
      int64_t bytes = qfuse_buffer_bytes(rt, batch, inputs[i]);
      if (bytes < 0)
        continue; /* not in this artifact */
      unsigned short *x = malloc((size_t)bytes);
      for (int64_t j = 0; j < bytes / 2; ++j)
        x[j] = randomHalf(&state);
      if (qfuse_set_input(rt, batch, inputs[i], x, (size_t)bytes) != 0)
        return fail("set_input");
      free(x);
    }
    int checked = 0;
    for (size_t i = 0; i < sizeof(outputs) / sizeof(*outputs); ++i) {
      int64_t bytes = qfuse_buffer_bytes(rt, batch, outputs[i]);
      if (bytes < 0)
        continue;
      unsigned short *poison = malloc((size_t)bytes);
      memset(poison, 0xFF, (size_t)bytes); /* f16 NaN */
      if (qfuse_set_input(rt, batch, outputs[i], poison, (size_t)bytes) != 0)
        return fail("poison output");
      free(poison);
    }
    if (qfuse_run(rt, batch) != 0)
      return fail("run");
    for (size_t i = 0; i < sizeof(outputs) / sizeof(*outputs); ++i) {
      int64_t bytes = qfuse_buffer_bytes(rt, batch, outputs[i]);
      if (bytes < 0)
        continue;
      unsigned short *y = malloc((size_t)bytes);
      if (qfuse_get_output(rt, batch, outputs[i], y, (size_t)bytes) != 0)
        return fail("get_output");
      for (int64_t j = 0; j < bytes / 2; ++j)
        if ((y[j] & 0x7C00) == 0x7C00) { /* NaN or infinity */
          fprintf(stderr, "qfuse-c-example: %s[%lld] not written at batch %lld\n",
                  outputs[i], (long long)j, (long long)batch);
          return 1;
        }
      free(y);
      ++checked;
    }
    printf("qfuse-c-example: batch %lld: %d outputs written and finite\n",
           (long long)batch, checked);
    if (checked == 0) {
      fprintf(stderr, "qfuse-c-example: no known outputs in %s\n", argv[1]);
      return 1;
    }
  }
  qfuse_close(rt);
  return 0;
}
