//===- DeviceAmax.cpp - the largest |w| of a device tensor by cuBLAS ------===//
//
// Per slice: widen to f32 (f16/bf16 only), cublasIsamax (1-based index of
// the first largest |x|, blocking with the host pointer mode), read that
// element. The slices' largest is the tensor's: max is exact in any order.
//
//===----------------------------------------------------------------------===//

#include "qfuse/runtime/device/DeviceAmax.h"

#include "qfuse/runtime/Error.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace qfuse::runtime {

DeviceAmax::DeviceAmax()
    : ones_(4, "amax ones"), slice_(size_t(kSliceElements) * 4, "amax slice") {
  const uint16_t ones[2] = {0x3C00, 0x3F80}; // f16 1.0, bf16 1.0
  ones_.upload(ones, sizeof(ones));
}

float DeviceAmax::largestMagnitude(CUdeviceptr w, int64_t count, DType input,
                                   CUstream stream) {
  if (input != DType::F16 && input != DType::BF16 && input != DType::F32)
    throw Error("the largest magnitude of a " +
                std::string(safetensorsName(input)) +
                " tensor: expected F16, BF16 or F32");
  blas_.setStream(stream);
  const size_t elementBytes = input == DType::F32 ? 4 : 2;
  float amax = 0.0f;
  for (int64_t first = 0; first < count; first += kSliceElements) {
    const int len = int(std::min(kSliceElements, count - first));
    CUdeviceptr src = w + CUdeviceptr(size_t(first) * elementBytes);
    CUdeviceptr f32 = src;
    if (input != DType::F32) {
      // [len, 1] x [1, 1] with 1.0, accumulated in f32: every f16/bf16
      // value is an f32 value, so the product is the value itself.
      const float alpha = 1.0f, beta = 0.0f;
      const cudaDataType_t type =
          input == DType::F16 ? CUDA_R_16F : CUDA_R_16BF;
      CUdeviceptr one = ones_.ptr() + (input == DType::F16 ? 0 : 2);
      QFUSE_CUBLAS_CTX(
          cublasGemmEx(blas_.get(), CUBLAS_OP_N, CUBLAS_OP_N, len, 1, 1,
                       &alpha, reinterpret_cast<const void *>(src), type, len,
                       reinterpret_cast<const void *>(one), type, 1, &beta,
                       reinterpret_cast<void *>(slice_.ptr()), CUDA_R_32F, len,
                       CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
          "widening " + std::to_string(len) + " weights to f32 for their "
          "largest magnitude");
      f32 = slice_.ptr();
    }
    int index = 0;
    QFUSE_CUBLAS_CTX(cublasIsamax(blas_.get(), len,
                                  reinterpret_cast<const float *>(f32), 1,
                                  &index),
                     "finding the largest magnitude of " +
                         std::to_string(len) + " weights");
    if (index < 1)
      continue;
    QFUSE_CU(cuStreamSynchronize(stream));
    float value = 0.0f;
    QFUSE_CU(cuMemcpyDtoH(&value, f32 + CUdeviceptr(size_t(index - 1) * 4), 4));
    // std::max(amax, |v|) as nvfp4GlobalScale takes it (a NaN is skipped;
    // the kernel reports it from its own group).
    amax = std::max(amax, std::fabs(value));
  }
  return amax;
}

} // namespace qfuse::runtime
