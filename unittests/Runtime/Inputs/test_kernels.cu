// Regenerate: nvcc -ptx -arch=compute_90 test_kernels.cu -o test_kernels.ptx
// then lower '.version 9.0' to '.version 8.0' (nothing newer is used).
// Test kernels for the runtime's GPU tests.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
extern "C" __global__ void qf_test_axpy(const float *x, float *y, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
extern "C" __global__ void qf_test_bias(float *y, const float *bias, long long n) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] += bias[i];
}
extern "C" __global__ void qf_test_dequant_int8(float *out, const unsigned char *codes,
                                                const float *scales, int n, int k) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n * k) out[i] = (float)(signed char)codes[i] * scales[i / k];
}
// A qf.dequantize stand-in: the int8 per-channel weight (f32 scales) as a
// dense f16 matrix (bf16 when `bf16` is set), each element computed in f32
// and rounded once, as the compiler's dequantize kernels do.
extern "C" __global__ void qf_test_dequant_int8_16(unsigned short *w,
                                                   const unsigned char *codes,
                                                   const float *scales, int n,
                                                   int k, int bf16) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n * k) return;
  float v = (float)(signed char)codes[i] * scales[i / k];
  w[i] = bf16 ? __bfloat16_as_ushort(__float2bfloat16_rn(v))
              : __half_as_ushort(__float2half_rn(v));
}
extern "C" __global__ void qf_test_shared_reverse(float *out, int words) {
  extern __shared__ float buf[];
  for (int i = threadIdx.x; i < words; i += blockDim.x) buf[i] = (float)i;
  __syncthreads();
  out[threadIdx.x] = buf[words - 1 - threadIdx.x];
}
// A toy language model for the Generator's tests. As a real model writes
// the KV cache and then attends, one launch stores each row's token at its
// position of a state buffer, and a second predicts, per row, the sum of the
// cached tokens up to its position modulo the vocabulary (one-hot f16
// logits). A row that read a later or stale cache entry would change it.
extern "C" __global__ void qf_test_cache_write(const int *ids, const int *pos,
                                               int *cache, int m) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < m) cache[pos[i]] = ids[i];
}
extern "C" __global__ void qf_test_cache_sum(const int *pos, const int *cache,
                                             int *next, unsigned short *logits,
                                             int m, int vocab) {
  int i = blockIdx.x;
  if (i >= m) return;
  long long sum = 0;
  for (int j = 0; j <= pos[i]; ++j) sum += cache[j];
  int token = (int)(sum % vocab);
  if (threadIdx.x == 0) next[i] = token;
  for (int v = threadIdx.x; v < vocab; v += blockDim.x)
    logits[i * vocab + v] = v == token ? 0x3C00 : 0;
}
