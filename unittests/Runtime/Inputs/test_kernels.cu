// Regenerate: nvcc -ptx -arch=compute_90 test_kernels.cu -o test_kernels.ptx
// then lower '.version 9.0' to '.version 8.0' (nothing newer is used).
// Test kernels for the runtime's GPU tests.
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
extern "C" __global__ void qf_test_shared_reverse(float *out, int words) {
  extern __shared__ float buf[];
  for (int i = threadIdx.x; i < words; i += blockDim.x) buf[i] = (float)i;
  __syncthreads();
  out[threadIdx.x] = buf[words - 1 - threadIdx.x];
}
