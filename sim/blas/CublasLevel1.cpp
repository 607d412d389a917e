//===- CublasLevel1.cpp - cuBLAS level-1 routines on the host -------------===//
//
// Reference-BLAS semantics: n <= 0 does nothing, a negative increment walks
// the vector from its far end, isamax is 1-based (0 for an empty vector).
// Device and host pointer modes both read and write through the pointers
// given, which are host memory in the simulator.
//
//===----------------------------------------------------------------------===//
#include "CublasContext.h"

#include <cmath>

using qfuse::sim::inStreamOrder;
using qfuse::sim::vectorIndex;

extern "C" {

cublasStatus_t cublasScopy_v2(cublasHandle_t handle, int n, const float *x,
                              int incx, float *y, int incy) {
  if (!handle)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  return inStreamOrder(handle, [=] {
    for (int64_t i = 0; i < n; ++i)
      y[vectorIndex(i, n, incy)] = x[vectorIndex(i, n, incx)];
  });
}

cublasStatus_t cublasSaxpy_v2(cublasHandle_t handle, int n, const float *alpha,
                              const float *x, int incx, float *y, int incy) {
  if (!handle)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!alpha)
    return CUBLAS_STATUS_INVALID_VALUE;
  const float a = *alpha;
  if (n <= 0 || a == 0.0f) // reference BLAS leaves y alone at alpha = 0
    return CUBLAS_STATUS_SUCCESS;
  return inStreamOrder(handle, [=] {
    for (int64_t i = 0; i < n; ++i)
      y[vectorIndex(i, n, incy)] += a * x[vectorIndex(i, n, incx)];
  });
}

cublasStatus_t cublasSscal_v2(cublasHandle_t handle, int n, const float *alpha,
                              float *x, int incx) {
  if (!handle)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!alpha)
    return CUBLAS_STATUS_INVALID_VALUE;
  if (n <= 0 || incx <= 0)
    return CUBLAS_STATUS_SUCCESS;
  const float a = *alpha;
  return inStreamOrder(handle, [=] {
    for (int64_t i = 0; i < n; ++i)
      x[i * incx] *= a;
  });
}

/// The dot product is summed in double, in index order, then rounded once.
cublasStatus_t cublasSdot_v2(cublasHandle_t handle, int n, const float *x,
                             int incx, const float *y, int incy,
                             float *result) {
  if (!handle)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!result)
    return CUBLAS_STATUS_INVALID_VALUE;
  return inStreamOrder(handle, [=] {
    double sum = 0.0;
    for (int64_t i = 0; i < n; ++i)
      sum += double(x[vectorIndex(i, n, incx)]) *
             double(y[vectorIndex(i, n, incy)]);
    *result = float(sum);
  });
}

/// The first index of the largest |x_i|, 1-based; 0 for n <= 0 or
/// incx <= 0. Like reference BLAS, a NaN never compares larger.
cublasStatus_t cublasIsamax_v2(cublasHandle_t handle, int n, const float *x,
                               int incx, int *result) {
  if (!handle)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!result)
    return CUBLAS_STATUS_INVALID_VALUE;
  return inStreamOrder(handle, [=] {
    if (n <= 0 || incx <= 0) {
      *result = 0;
      return;
    }
    int best = 0;
    float largest = std::fabs(x[0]);
    for (int i = 1; i < n; ++i) {
      const float magnitude = std::fabs(x[int64_t(i) * incx]);
      if (magnitude > largest) {
        largest = magnitude;
        best = i;
      }
    }
    *result = best + 1;
  });
}

} // extern "C"
