//===- CublasTrsm.cpp - cublasStrsm on the host ---------------------------===//
//
// op(A) X = alpha B (left) or X op(A) = alpha B (right), X over B. Each
// right-hand side (a column of B on the left, a row on the right) is one
// triangular solve M x = alpha b, in double, with M = op(A) on the left
// and op(A)^T on the right. Only A's `uplo` triangle is read, and its
// diagonal only for CUBLAS_DIAG_NON_UNIT.
//
//===----------------------------------------------------------------------===//
#include "CublasContext.h"
#include "ParallelFor.h"

#include <vector>

using namespace qfuse::sim;

namespace {

/// The triangular M, dense and row-major in double (the unread triangle
/// zero), so that each solve reads its rows contiguously.
struct Triangle {
  int64_t size = 0;
  bool lower = false, unit = false;
  std::vector<double> m;

  void solve(double *x) const {
    if (lower) {
      for (int64_t r = 0; r < size; ++r)
        x[r] = finish(r, x[r] - dot(r, 0, r, x));
    } else {
      for (int64_t r = size - 1; r >= 0; --r)
        x[r] = finish(r, x[r] - dot(r, r + 1, size, x));
    }
  }

private:
  double dot(int64_t r, int64_t begin, int64_t end, const double *x) const {
    double sum = 0.0;
    for (int64_t c = begin; c < end; ++c)
      sum += m[r * size + c] * x[c];
    return sum;
  }
  double finish(int64_t r, double value) const {
    return unit ? value : value / m[r * size + r];
  }
};

Triangle makeTriangle(const float *A, int lda, int64_t size, bool storedLower,
                      bool transposeA, bool unit) {
  Triangle t;
  t.size = size;
  t.unit = unit;
  t.lower = storedLower != transposeA;
  t.m.assign(size_t(size * size), 0.0);
  for (int64_t j = 0; j < size; ++j) // stored column j
    for (int64_t i = storedLower ? j : 0; i < (storedLower ? size : j + 1);
         ++i) {
      const double value = A[i + j * int64_t(lda)];
      t.m[transposeA ? j * size + i : i * size + j] = value;
    }
  return t;
}

} // namespace

extern "C" {

cublasStatus_t cublasStrsm_v2(cublasHandle_t handle, cublasSideMode_t side,
                              cublasFillMode_t uplo, cublasOperation_t trans,
                              cublasDiagType_t diag, int m, int n,
                              const float *alpha, const float *A, int lda,
                              float *B, int ldb) {
  if (!handle)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  const bool left = side == CUBLAS_SIDE_LEFT;
  if ((!left && side != CUBLAS_SIDE_RIGHT) ||
      (uplo != CUBLAS_FILL_MODE_LOWER && uplo != CUBLAS_FILL_MODE_UPPER) ||
      !validOperation(trans) ||
      (diag != CUBLAS_DIAG_UNIT && diag != CUBLAS_DIAG_NON_UNIT) || m < 0 ||
      n < 0 || !validLeading(lda, left ? m : n) || !validLeading(ldb, m) ||
      !alpha)
    return CUBLAS_STATUS_INVALID_VALUE;
  if (m == 0 || n == 0)
    return CUBLAS_STATUS_SUCCESS;
  const double a = *alpha;
  if (a == 0.0) { // reference BLAS: B = 0, A unread
    auto work = [=] {
      for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < m; ++i)
          B[i + j * int64_t(ldb)] = 0.0f;
    };
    return inStreamOrder(handle, work);
  }
  auto work = [=] {
    // Left: M = op(A). Right: x^T op(A) = b^T is op(A)^T x = b.
    const int64_t size = left ? m : n;
    const Triangle t =
        makeTriangle(A, lda, size, uplo == CUBLAS_FILL_MODE_LOWER,
                     transposed(trans) == left, diag == CUBLAS_DIAG_UNIT);
    // A left-side system is a column of B (stride 1), a right-side one a
    // row.
    const int64_t systems = left ? n : m;
    const int64_t stride = left ? 1 : ldb, step = left ? ldb : 1;
    parallelFor(systems, double(systems) * double(size) * double(size) / 2,
                [&](int64_t s) {
                  std::vector<double> x(size_t(size), 0.0);
                  float *b = B + s * step;
                  for (int64_t r = 0; r < size; ++r)
                    x[r] = a * double(b[r * stride]);
                  t.solve(x.data());
                  for (int64_t r = 0; r < size; ++r)
                    b[r * stride] = float(x[r]);
                });
  };
  return inStreamOrder(handle, work);
}

} // extern "C"
