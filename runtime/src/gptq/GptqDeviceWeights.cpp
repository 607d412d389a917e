//===- GptqDeviceWeights.cpp - the modules' weights on the device ---------===//
//
// The solver's f32 weights from the checkpoint tensors as the device holds
// them (f16, bf16, f32), by the widening kernel (or an exact-but-for--0
// cuBLAS product) instead of host loops, and
// the one value NVFP4's global scale needs (the largest magnitude).
//
//===----------------------------------------------------------------------===//

#include "GptqSolverImpl.h"

#include "qfuse/gptq/Grid.h"
#include "qfuse/runtime/device/DeviceWiden.h"
#include "qfuse/runtime/Error.h"

#include <limits>

namespace qfuse::runtime::detail {
namespace {

/// The cuBLAS element type of a device weight.
cudaDataType_t cublasTypeOf(GptqDeviceWeight type) {
  switch (type) {
  case GptqDeviceWeight::F16:
    return CUDA_R_16F;
  case GptqDeviceWeight::BF16:
    return CUDA_R_16BF;
  case GptqDeviceWeight::F32:
    return CUDA_R_32F;
  }
  return CUDA_R_32F;
}

} // namespace

/// The module's device weight as f32 [n, K] at `dst`: a copy for f32; for
/// f16/bf16 `widen`'s kernel where it has the type (every bit kept), else
/// the [n*K, 1] x [1, 1] product with 1.0 accumulated in f32, exact but
/// for -0, which the sum from +0 makes +0. Returns whether every bit was
/// kept. `ones` holds 1.0 as f16 at byte 0 and as bf16 at byte 16.
bool widenToF32(cublasHandle_t blas, const DeviceWiden *widen,
                const GptqModuleInput &m, int64_t k, CUdeviceptr dst,
                CUstream stream, CUdeviceptr ones) {
  const int64_t count = m.n * k;
  if (m.deviceType == GptqDeviceWeight::F32) {
    QFUSE_CU_CTX(cuMemcpyDtoDAsync(dst, m.device, size_t(count) * 4, stream),
                 "GPTQ: copying the f32 weight of '" + m.name + "'");
    return true;
  }
  const DType source =
      m.deviceType == GptqDeviceWeight::F16 ? DType::F16 : DType::BF16;
  if (widen && widen->has(source)) {
    widen->enqueue(source, m.device, dst, uint64_t(count), stream);
    return true;
  }
  if (count > std::numeric_limits<int>::max())
    throw Error("GPTQ: module '" + m.name + "' has " + std::to_string(count) +
                " elements, more than one cuBLAS call converts");
  const CUdeviceptr one =
      offset(ones, m.deviceType == GptqDeviceWeight::F16 ? 0 : 16);
  const float alpha = 1.0f, beta = 0.0f;
  const cudaDataType_t type = cublasTypeOf(m.deviceType);
  QFUSE_CUBLAS_CTX(
      cublasGemmEx(blas, CUBLAS_OP_N, CUBLAS_OP_N, int(count), 1, 1, &alpha,
                   reinterpret_cast<const void *>(m.device), type, int(count),
                   reinterpret_cast<const void *>(one), type, 1,
                   &beta, reinterpret_cast<void *>(dst), CUDA_R_32F,
                   int(count), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
      "GPTQ: widening the weight of '" + m.name + "' to f32");
  return false;
}

/// The module's weight as given, f32 on the host (`out` holds n * K).
void moduleWeightF32(cublasHandle_t blas, const DeviceWiden *widen,
                     const GptqModuleInput &m, int64_t k, float *out,
                     CUstream stream, CUdeviceptr ones) {
  cuda::DeviceBuffer scratch(size_t(m.n * k) * 4, "GPTQ weight (f32)");
  widenToF32(blas, widen, m, k, scratch.ptr(), stream, ones);
  QFUSE_CU(cuStreamSynchronize(stream));
  scratch.download(out, scratch.size());
}

/// gptq::nvfp4GlobalScale of `count` f32 values on the device: the largest
/// magnitude (cublasIsamax, the first of equals) is the one value it needs.
float deviceGlobalScale(cublasHandle_t blas, CUdeviceptr w, int64_t count,
                        CUstream stream) {
  if (count > std::numeric_limits<int>::max())
    throw Error("GPTQ: " + std::to_string(count) +
                " weights are more than one cublasIsamax reads");
  int index = 0;
  QFUSE_CUBLAS(cublasIsamax(blas, int(count),
                            reinterpret_cast<const float *>(w), 1, &index));
  float amax = 0.0f;
  if (index > 0) {
    QFUSE_CU(cuStreamSynchronize(stream));
    QFUSE_CU(cuMemcpyDtoH(&amax, offset(w, int64_t(index - 1) * 4), 4));
  }
  return gptq::nvfp4GlobalScale(&amax, 1);
}

} // namespace qfuse::runtime::detail
