//===- CublasGemm.cpp - the cuBLAS gemm entry points ----------------------===//
//
// cublasSgemm, cublasHgemm, cublasGemmEx and their strided-batched forms:
// argument checks as cuBLAS makes them, the type combinations its
// cublasGemmEx table lists, then the host GEMM (GemmKernel.h). Compute
// types only pick the scale type and the legal combinations: products are
// always summed in double and rounded once to C's type, so the _FAST
// (down-converting) and 16F (half-accumulating) compute types come out
// more precise than on a GPU. Math modes change nothing.
//
//===----------------------------------------------------------------------===//
#include "CublasContext.h"
#include "GemmKernel.h"
#include "qfuse/sim/Half.h"

#include <cstring>

using namespace qfuse::sim;

namespace {

struct Shape {
  cublasOperation_t transa, transb;
  int m, n, k, lda, ldb, ldc;
};

cublasStatus_t checkShape(cublasHandle_t handle, const Shape &s,
                          const void *alpha, const void *beta) {
  if (!handle)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!validOperation(s.transa) || !validOperation(s.transb) || s.m < 0 ||
      s.n < 0 || s.k < 0 ||
      !validLeading(s.lda, transposed(s.transa) ? s.k : s.m) ||
      !validLeading(s.ldb, transposed(s.transb) ? s.n : s.k) ||
      !validLeading(s.ldc, s.m) || !alpha || !beta)
    return CUBLAS_STATUS_INVALID_VALUE;
  return CUBLAS_STATUS_SUCCESS;
}

bool element(cudaDataType type, Element &out) {
  switch (type) {
  case CUDA_R_16F:
    out = Element::F16;
    return true;
  case CUDA_R_16BF:
    out = Element::BF16;
    return true;
  case CUDA_R_32F:
    out = Element::F32;
    return true;
  case CUDA_R_64F:
    out = Element::F64;
    return true;
  case CUDA_R_8I:
    out = Element::I8;
    return true;
  case CUDA_R_32I:
    out = Element::I32;
    return true;
  default:
    return false;
  }
}

size_t elementBytes(Element type) {
  switch (type) {
  case Element::I8:
    return 1;
  case Element::F16:
  case Element::BF16:
    return 2;
  case Element::F32:
  case Element::I32:
    return 4;
  case Element::F64:
    return 8;
  }
  return 0;
}

/// The A/B/C types cublasGemmEx takes for `compute` (real types only),
/// and the type alpha and beta point at.
bool supported(cublasComputeType_t compute, cudaDataType a, cudaDataType b,
               cudaDataType c, Element &scale) {
  if (a != b)
    return false;
  switch (compute) {
  case CUBLAS_COMPUTE_16F:
  case CUBLAS_COMPUTE_16F_PEDANTIC:
    scale = Element::F16;
    return a == CUDA_R_16F && c == CUDA_R_16F;
  case CUBLAS_COMPUTE_32F:
  case CUBLAS_COMPUTE_32F_PEDANTIC:
    scale = Element::F32;
    if (a == CUDA_R_16F || a == CUDA_R_16BF)
      return c == a || c == CUDA_R_32F;
    return (a == CUDA_R_32F || a == CUDA_R_8I) && c == CUDA_R_32F;
  case CUBLAS_COMPUTE_32F_FAST_16F:
  case CUBLAS_COMPUTE_32F_FAST_16BF:
  case CUBLAS_COMPUTE_32F_FAST_TF32:
  case CUBLAS_COMPUTE_32F_EMULATED_16BFX9:
    scale = Element::F32;
    return a == CUDA_R_32F && c == CUDA_R_32F;
  case CUBLAS_COMPUTE_64F:
  case CUBLAS_COMPUTE_64F_PEDANTIC:
  case CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT:
    scale = Element::F64;
    return a == CUDA_R_64F && c == CUDA_R_64F;
  case CUBLAS_COMPUTE_32I:
  case CUBLAS_COMPUTE_32I_PEDANTIC:
    scale = Element::I32;
    return a == CUDA_R_8I && c == CUDA_R_32I;
  }
  return false;
}

double readScale(const void *value, Element type) {
  switch (type) {
  case Element::F16: {
    uint16_t bits;
    std::memcpy(&bits, value, 2);
    return halfToFloat(bits);
  }
  case Element::F64:
    return *static_cast<const double *>(value);
  case Element::I32:
    return *static_cast<const int32_t *>(value);
  default:
    return *static_cast<const float *>(value);
  }
}

/// Strided batches of one shape: batch i at A + i * strideA elements, ...
struct Batches {
  int count = 1;
  long long strideA = 0, strideB = 0, strideC = 0;
};

cublasStatus_t gemmTyped(cublasHandle_t handle, const Shape &s,
                         const void *alpha, const void *A, cudaDataType aType,
                         const void *B, cudaDataType bType, const void *beta,
                         void *C, cudaDataType cType,
                         cublasComputeType_t compute, const Batches &batches) {
  if (cublasStatus_t status = checkShape(handle, s, alpha, beta))
    return status;
  if (batches.count < 0)
    return CUBLAS_STATUS_INVALID_VALUE;
  GemmArgs g;
  Element scale;
  if (!supported(compute, aType, bType, cType, scale) ||
      !element(aType, g.a.type) || !element(bType, g.b.type) ||
      !element(cType, g.cType))
    return CUBLAS_STATUS_NOT_SUPPORTED;
  g.m = s.m, g.n = s.n, g.k = s.k, g.ldc = s.ldc;
  g.a.ld = s.lda, g.a.transposed = transposed(s.transa);
  g.b.ld = s.ldb, g.b.transposed = transposed(s.transb);
  g.alpha = readScale(alpha, scale);
  g.beta = readScale(beta, scale);
  auto work = [g, A, B, C, batches]() mutable {
    for (int i = 0; i < batches.count; ++i) {
      g.a.data = static_cast<const char *>(A) +
                 i * batches.strideA * elementBytes(g.a.type);
      g.b.data = static_cast<const char *>(B) +
                 i * batches.strideB * elementBytes(g.b.type);
      g.c = static_cast<char *>(C) +
            i * batches.strideC * elementBytes(g.cType);
      gemm(g);
    }
  };
  return inStreamOrder(handle, work);
}

} // namespace

extern "C" {

cublasStatus_t cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t transa,
                              cublasOperation_t transb, int m, int n, int k,
                              const float *alpha, const float *A, int lda,
                              const float *B, int ldb, const float *beta,
                              float *C, int ldc) {
  return gemmTyped(handle, {transa, transb, m, n, k, lda, ldb, ldc}, alpha, A,
                   CUDA_R_32F, B, CUDA_R_32F, beta, C, CUDA_R_32F,
                   CUBLAS_COMPUTE_32F, Batches());
}

cublasStatus_t cublasHgemm(cublasHandle_t handle, cublasOperation_t transa,
                           cublasOperation_t transb, int m, int n, int k,
                           const __half *alpha, const __half *A, int lda,
                           const __half *B, int ldb, const __half *beta,
                           __half *C, int ldc) {
  return gemmTyped(handle, {transa, transb, m, n, k, lda, ldb, ldc}, alpha, A,
                   CUDA_R_16F, B, CUDA_R_16F, beta, C, CUDA_R_16F,
                   CUBLAS_COMPUTE_16F, Batches());
}

cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa,
                            cublasOperation_t transb, int m, int n, int k,
                            const void *alpha, const void *A,
                            cudaDataType Atype, int lda, const void *B,
                            cudaDataType Btype, int ldb, const void *beta,
                            void *C, cudaDataType Ctype, int ldc,
                            cublasComputeType_t computeType,
                            cublasGemmAlgo_t /*algo: one algorithm here*/) {
  return gemmTyped(handle, {transa, transb, m, n, k, lda, ldb, ldc}, alpha, A,
                   Atype, B, Btype, beta, C, Ctype, computeType, Batches());
}

cublasStatus_t
cublasSgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa,
                          cublasOperation_t transb, int m, int n, int k,
                          const float *alpha, const float *A, int lda,
                          long long int strideA, const float *B, int ldb,
                          long long int strideB, const float *beta, float *C,
                          int ldc, long long int strideC, int batchCount) {
  return gemmTyped(handle, {transa, transb, m, n, k, lda, ldb, ldc}, alpha, A,
                   CUDA_R_32F, B, CUDA_R_32F, beta, C, CUDA_R_32F,
                   CUBLAS_COMPUTE_32F,
                   Batches{batchCount, strideA, strideB, strideC});
}

cublasStatus_t cublasGemmStridedBatchedEx(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
    int m, int n, int k, const void *alpha, const void *A, cudaDataType Atype,
    int lda, long long int strideA, const void *B, cudaDataType Btype, int ldb,
    long long int strideB, const void *beta, void *C, cudaDataType Ctype,
    int ldc, long long int strideC, int batchCount,
    cublasComputeType_t computeType, cublasGemmAlgo_t /*algo*/) {
  return gemmTyped(handle, {transa, transb, m, n, k, lda, ldb, ldc}, alpha, A,
                   Atype, B, Btype, beta, C, Ctype, computeType,
                   Batches{batchCount, strideA, strideB, strideC});
}

} // extern "C"
