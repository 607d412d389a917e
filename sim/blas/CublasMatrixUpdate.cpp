//===- CublasMatrixUpdate.cpp - cublasSger and cublasSgeam on the host ----===//
//
// Element-wise matrix updates, column-major: the rank-1 update
// A += alpha x y^T and the extension C = alpha op(A) + beta op(B). Each
// element is formed in double and rounded once.
//
//===----------------------------------------------------------------------===//
#include "CublasContext.h"

using namespace qfuse::sim;

extern "C" {

cublasStatus_t cublasSger_v2(cublasHandle_t handle, int m, int n,
                             const float *alpha, const float *x, int incx,
                             const float *y, int incy, float *A, int lda) {
  if (!handle)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  if (m < 0 || n < 0 || incx == 0 || incy == 0 || !validLeading(lda, m) ||
      !alpha)
    return CUBLAS_STATUS_INVALID_VALUE;
  const double a = *alpha;
  if (m == 0 || n == 0 || a == 0.0)
    return CUBLAS_STATUS_SUCCESS;
  auto work = [=] {
    for (int64_t j = 0; j < n; ++j) {
      const double scaledY = a * double(y[vectorIndex(j, n, incy)]);
      float *column = A + j * int64_t(lda);
      for (int64_t i = 0; i < m; ++i)
        column[i] = float(double(column[i]) +
                          double(x[vectorIndex(i, m, incx)]) * scaledY);
    }
  };
  return inStreamOrder(handle, work);
}

/// In place, as cuBLAS allows: C may be A (with lda == ldc and op(A) = N)
/// or B (likewise); any other aliasing of C is refused. A term whose
/// scale is zero is not read (the matrix may hold NaN, or be C itself),
/// and alone a term keeps its sign: 1 * -0 stays -0.
cublasStatus_t cublasSgeam(cublasHandle_t handle, cublasOperation_t transa,
                           cublasOperation_t transb, int m, int n,
                           const float *alpha, const float *A, int lda,
                           const float *beta, const float *B, int ldb, float *C,
                           int ldc) {
  if (!handle)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!validOperation(transa) || !validOperation(transb) || m < 0 || n < 0 ||
      !validLeading(lda, transposed(transa) ? n : m) ||
      !validLeading(ldb, transposed(transb) ? n : m) || !validLeading(ldc, m) ||
      !alpha || !beta)
    return CUBLAS_STATUS_INVALID_VALUE;
  if ((C == A && (lda != ldc || transposed(transa))) ||
      (C == B && (ldb != ldc || transposed(transb))))
    return CUBLAS_STATUS_INVALID_VALUE;
  const double a = *alpha, b = *beta;
  auto element = [](const float *M, int64_t ld, bool t, int64_t i, int64_t j) {
    return double(t ? M[j + i * ld] : M[i + j * ld]);
  };
  auto work = [=] {
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = 0; i < m; ++i) {
        double value = 0.0;
        if (a != 0.0 && b != 0.0)
          value = a * element(A, lda, transposed(transa), i, j) +
                  b * element(B, ldb, transposed(transb), i, j);
        else if (a != 0.0)
          value = a * element(A, lda, transposed(transa), i, j);
        else if (b != 0.0)
          value = b * element(B, ldb, transposed(transb), i, j);
        C[i + j * int64_t(ldc)] = float(value);
      }
  };
  return inStreamOrder(handle, work);
}

} // extern "C"
