//===- CublasContext.h - the stand-in cuBLAS handle and argument checks ---===//
//
// cublasHandle_t points at a cublasContext, which the real header leaves
// opaque: here it records what the setters set. The stream is only passed
// back to the simulated driver, which runs each call's computation in its
// order (StreamOrder.h).
//
//===----------------------------------------------------------------------===//
#ifndef QFUSE_SIM_BLAS_CUBLASCONTEXT_H
#define QFUSE_SIM_BLAS_CUBLASCONTEXT_H

#include "StreamOrder.h"

#include <cublas_v2.h>

#include <algorithm>
#include <cstdint>

struct cublasContext {
  cudaStream_t stream = nullptr;
  void *workspace = nullptr;
  size_t workspaceBytes = 0;
  cublasPointerMode_t pointerMode = CUBLAS_POINTER_MODE_HOST;
  cublasMath_t mathMode = CUBLAS_DEFAULT_MATH;
};

namespace qfuse::sim {

inline bool validOperation(cublasOperation_t op) {
  return op == CUBLAS_OP_N || op == CUBLAS_OP_T || op == CUBLAS_OP_C;
}

inline bool transposed(cublasOperation_t op) { return op != CUBLAS_OP_N; }

/// A leading dimension is valid when it covers the rows (and is >= 1).
inline bool validLeading(int ld, int rows) { return ld >= std::max(1, rows); }

/// Level-1 vectors: element i of n at i * inc, or from the far end for a
/// negative increment (as reference BLAS does).
inline int64_t vectorIndex(int64_t i, int64_t n, int inc) {
  return inc >= 0 ? i * inc : (i - (n - 1)) * int64_t(inc);
}

/// Runs a call's computation, after its arguments were checked, in the
/// handle's stream order (StreamOrder.h).
inline cublasStatus_t inStreamOrder(cublasHandle_t handle,
                                    std::function<void()> work) {
  return runInStreamOrder(handle->stream, std::move(work))
             ? CUBLAS_STATUS_SUCCESS
             : CUBLAS_STATUS_EXECUTION_FAILED;
}

} // namespace qfuse::sim

#endif // QFUSE_SIM_BLAS_CUBLASCONTEXT_H
