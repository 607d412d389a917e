//===- CusolverCholesky.cpp - potrf, potrs and potri on the host ----------===//
//
// Single-precision Cholesky as cuSOLVER (and LAPACK) define it, column-
// major: potrf factors A = L L^T (lower) or U^T U (upper) over the `uplo`
// triangle, potrs solves with the factor, potri inverts from it. Both
// triangles are handled as L, held row by row (row i of L is column i of
// U = L^T): dot products run over contiguous floats, summed in double.
//
//===----------------------------------------------------------------------===//
#include "CusolverContext.h"
#include "ParallelFor.h"

#include <algorithm>
#include <cmath>
#include <vector>

using qfuse::sim::inStreamOrder;
using qfuse::sim::parallelFor;

namespace {

/// The `uplo` triangle of an n x n matrix as lower-triangular rows: row i
/// holds L(i, 0..i) at offset i (i + 1) / 2.
struct Lower {
  int64_t n = 0;
  std::vector<float> rows;

  float *row(int64_t i) { return &rows[size_t(i * (i + 1) / 2)]; }
  const float *row(int64_t i) const { return &rows[size_t(i * (i + 1) / 2)]; }

  /// Where L(i, j), j <= i, lives in the column-major matrix.
  static int64_t index(bool upper, int64_t i, int64_t j, int64_t lda) {
    return upper ? j + i * lda : i + j * lda;
  }

  Lower(const float *A, int64_t size, int64_t lda, bool upper) : n(size) {
    rows.resize(size_t(n * (n + 1) / 2));
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j <= i; ++j)
        row(i)[j] = A[index(upper, i, j, lda)];
  }

  void storeTo(float *A, int64_t lda, bool upper) const {
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j <= i; ++j)
        A[index(upper, i, j, lda)] = row(i)[j];
  }
};

double dot(const float *x, const float *y, int64_t count) {
  double sum = 0.0;
  for (int64_t p = 0; p < count; ++p)
    sum += double(x[p]) * double(y[p]);
  return sum;
}

/// Left-looking Cholesky, column j of L at a time. Returns 0, or (as
/// LAPACK's potf2) the 1-based column whose pivot is not positive, that
/// pivot left on the diagonal and the later columns untouched.
int factor(Lower &l) {
  for (int64_t j = 0; j < l.n; ++j) {
    float *rowJ = l.row(j);
    const double pivot = double(rowJ[j]) - dot(rowJ, rowJ, j);
    if (!(pivot > 0.0)) { // NaN fails too
      rowJ[j] = float(pivot);
      return int(j + 1);
    }
    rowJ[j] = float(std::sqrt(pivot));
    const double diagonal = rowJ[j];
    const int64_t below = l.n - j - 1;
    constexpr int64_t kChunk = 64;
    parallelFor(
        (below + kChunk - 1) / kChunk, double(below) * double(j),
        [&](int64_t chunk) {
          const int64_t end = std::min(l.n, j + 1 + (chunk + 1) * kChunk);
          for (int64_t i = j + 1 + chunk * kChunk; i < end; ++i) {
            float *rowI = l.row(i);
            rowI[j] = float((double(rowI[j]) - dot(rowI, rowJ, j)) / diagonal);
          }
        });
  }
  return 0;
}

/// x = (L L^T)^-1 b, in place: L y = b forward, then L^T x = y backward
/// (column i of L^T is row i of L).
void solve(const Lower &l, double *x) {
  for (int64_t i = 0; i < l.n; ++i) {
    double sum = x[i];
    for (int64_t j = 0; j < i; ++j)
      sum -= double(l.row(i)[j]) * x[j];
    x[i] = sum / double(l.row(i)[i]);
  }
  for (int64_t i = l.n - 1; i >= 0; --i) {
    x[i] /= double(l.row(i)[i]);
    for (int64_t j = 0; j < i; ++j)
      x[j] -= double(l.row(i)[j]) * x[i];
  }
}

bool validTriangle(cublasFillMode_t uplo) {
  return uplo == CUBLAS_FILL_MODE_LOWER || uplo == CUBLAS_FILL_MODE_UPPER;
}

/// Inverse of A = L L^T into `out` (dense, row-major n x n), or the
/// 1-based index of a zero diagonal of L (as LAPACK's trtri).
int invert(const Lower &l, std::vector<double> &out) {
  const int64_t n = l.n;
  for (int64_t i = 0; i < n; ++i)
    if (l.row(i)[i] == 0.0f)
      return int(i + 1);
  // inv(L), lower; column c is L x = e_c, stored as row c of `inverse`
  // (inverse[c * n + r] = inv(L)(r, c)).
  std::vector<double> inverse(size_t(n * n), 0.0);
  parallelFor(n, double(n) * double(n) * double(n) / 6, [&](int64_t c) {
    double *x = &inverse[size_t(c * n)];
    for (int64_t r = c; r < n; ++r) {
      double sum = r == c ? 1.0 : 0.0;
      for (int64_t j = c; j < r; ++j)
        sum -= double(l.row(r)[j]) * x[j];
      x[r] = sum / double(l.row(r)[r]);
    }
  });
  // A^-1 = inv(L)^T inv(L): (i, j) = sum over r >= max(i, j).
  out.assign(size_t(n * n), 0.0);
  parallelFor(n, double(n) * double(n) * double(n) / 6, [&](int64_t i) {
    for (int64_t j = 0; j <= i; ++j) {
      double sum = 0.0;
      for (int64_t r = i; r < n; ++r)
        sum += inverse[size_t(i * n + r)] * inverse[size_t(j * n + r)];
      out[size_t(i * n + j)] = out[size_t(j * n + i)] = sum;
    }
  });
  return 0;
}

/// The argument checks potrf and potri share, as cuSOLVER makes them.
cusolverStatus_t checkFactor(cusolverDnHandle_t handle, cublasFillMode_t uplo,
                             int n, int lda, const int *devInfo) {
  if (!handle)
    return CUSOLVER_STATUS_NOT_INITIALIZED;
  if (!validTriangle(uplo) || n < 0 || lda < std::max(1, n) || !devInfo)
    return CUSOLVER_STATUS_INVALID_VALUE;
  return CUSOLVER_STATUS_SUCCESS;
}

} // namespace

extern "C" {

cusolverStatus_t cusolverDnSpotrf_bufferSize(cusolverDnHandle_t handle,
                                             cublasFillMode_t uplo, int n,
                                             float * /*A*/, int lda,
                                             int *Lwork) {
  if (!handle)
    return CUSOLVER_STATUS_NOT_INITIALIZED;
  if (!validTriangle(uplo) || n < 0 || lda < std::max(1, n) || !Lwork)
    return CUSOLVER_STATUS_INVALID_VALUE;
  *Lwork = std::max(1, n); // unused: the factor is formed in host memory
  return CUSOLVER_STATUS_SUCCESS;
}

cusolverStatus_t cusolverDnSpotrf(cusolverDnHandle_t handle,
                                  cublasFillMode_t uplo, int n, float *A,
                                  int lda, float * /*Workspace*/, int /*Lwork*/,
                                  int *devInfo) {
  if (cusolverStatus_t status = checkFactor(handle, uplo, n, lda, devInfo))
    return status;
  return inStreamOrder(handle, [=] {
    const bool upper = uplo == CUBLAS_FILL_MODE_UPPER;
    Lower l(A, n, lda, upper);
    *devInfo = factor(l);
    l.storeTo(A, lda, upper);
  });
}

cusolverStatus_t cusolverDnSpotrs(cusolverDnHandle_t handle,
                                  cublasFillMode_t uplo, int n, int nrhs,
                                  const float *A, int lda, float *B, int ldb,
                                  int *devInfo) {
  if (!handle)
    return CUSOLVER_STATUS_NOT_INITIALIZED;
  if (!validTriangle(uplo) || n < 0 || nrhs < 0 || lda < std::max(1, n) ||
      ldb < std::max(1, n) || !devInfo)
    return CUSOLVER_STATUS_INVALID_VALUE;
  return inStreamOrder(handle, [=] {
    const Lower l(A, n, lda, uplo == CUBLAS_FILL_MODE_UPPER);
    parallelFor(nrhs, double(nrhs) * double(n) * double(n), [&](int64_t c) {
      float *b = B + c * int64_t(ldb);
      std::vector<double> x(b, b + n);
      solve(l, x.data());
      for (int64_t i = 0; i < n; ++i)
        b[i] = float(x[size_t(i)]);
    });
    *devInfo = 0;
  });
}

cusolverStatus_t cusolverDnSpotri_bufferSize(cusolverDnHandle_t handle,
                                             cublasFillMode_t uplo, int n,
                                             float * /*A*/, int lda,
                                             int *lwork) {
  return cusolverDnSpotrf_bufferSize(handle, uplo, n, nullptr, lda, lwork);
}

cusolverStatus_t cusolverDnSpotri(cusolverDnHandle_t handle,
                                  cublasFillMode_t uplo, int n, float *A,
                                  int lda, float * /*work*/, int /*lwork*/,
                                  int *devInfo) {
  if (cusolverStatus_t status = checkFactor(handle, uplo, n, lda, devInfo))
    return status;
  return inStreamOrder(handle, [=] {
    const bool upper = uplo == CUBLAS_FILL_MODE_UPPER;
    Lower l(A, n, lda, upper);
    std::vector<double> inverse;
    *devInfo = invert(l, inverse);
    if (*devInfo != 0)
      return;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j <= i; ++j)
        l.row(i)[j] = float(inverse[size_t(i * n + j)]);
    l.storeTo(A, lda, upper);
  });
}

} // extern "C"
