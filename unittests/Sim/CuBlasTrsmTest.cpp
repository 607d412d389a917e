//===- CuBlasTrsmTest.cpp - the stand-in cublasStrsm in every mode --------===//
//
// Every side / fill / operation / diagonal combination, checked by its
// residual: op(A) X = alpha B (left) or X op(A) = alpha B (right), within
// 1e-5 of the sum of the magnitudes of the terms (X is rounded to float,
// 2^-24 relative, over at most a dozen terms). The triangle cuBLAS must
// not read holds NaN, and so does a unit diagonal.
//
//===----------------------------------------------------------------------===//
#include "SimBlasTestUtil.h"

#include <gtest/gtest.h>

#include <string>

using namespace qfuse::sim::test;

namespace {

struct Mode {
  cublasSideMode_t side;
  cublasFillMode_t uplo;
  cublasOperation_t trans;
  cublasDiagType_t diag;
};

/// A triangular s x s matrix as stored: diagonal in [2.25, 3], the other
/// referenced elements in +-[0.125, 0.5], NaN wherever cuBLAS may not read.
Matrix triangular(const Mode &mode, int s, Rng &rng) {
  Matrix a(CUDA_R_32F, s, s, s + 2);
  for (int j = 0; j < s; ++j)
    for (int i = 0; i < s; ++i) {
      const bool inTriangle =
          mode.uplo == CUBLAS_FILL_MODE_LOWER ? i > j : i < j;
      if (i == j && mode.diag == CUBLAS_DIAG_NON_UNIT)
        a.set(i, j, 2.0 + std::fabs(rng.value()));
      else if (inTriangle)
        a.set(i, j, rng.value() / 2);
    }
  return a;
}

/// op(A)(i, j) as cuBLAS reads it: 1 on a unit diagonal, 0 off-triangle.
double opEffective(const Matrix &a, const Mode &mode, int i, int j) {
  if (mode.trans != CUBLAS_OP_N)
    std::swap(i, j);
  if (i == j)
    return mode.diag == CUBLAS_DIAG_UNIT ? 1.0 : a.at(i, j);
  const bool inTriangle = mode.uplo == CUBLAS_FILL_MODE_LOWER ? i > j : i < j;
  return inTriangle ? a.at(i, j) : 0.0;
}

void checkTrsm(const Mode &mode, Rng &rng) {
  SCOPED_TRACE("side " + std::to_string(mode.side) + " uplo " +
               std::to_string(mode.uplo) + " trans " +
               std::to_string(mode.trans) + " diag " +
               std::to_string(mode.diag));
  const int m = 9, n = 6;
  const bool left = mode.side == CUBLAS_SIDE_LEFT;
  const int s = left ? m : n;
  const Matrix a = triangular(mode, s, rng);
  Matrix b(CUDA_R_32F, m, n, m + 1);
  b.fillRandom(rng);
  const Matrix original = b;
  const float alpha = -1.5f;
  Handle handle;
  ASSERT_EQ(
      cublasStrsm(handle, mode.side, mode.uplo, mode.trans, mode.diag, m, n,
                  &alpha,
                  static_cast<const float *>(const_cast<Matrix &>(a).data()),
                  int(a.ld), static_cast<float *>(b.data()), int(b.ld)),
      CUBLAS_STATUS_SUCCESS);
  for (int j = 0; j < n; ++j) {
    for (int i = 0; i < m; ++i) {
      double sum = 0.0, magnitude = 0.0;
      for (int p = 0; p < s; ++p) {
        const double term = left ? opEffective(a, mode, i, p) * b.at(p, j)
                                 : b.at(i, p) * opEffective(a, mode, p, j);
        sum += term;
        magnitude += std::fabs(term);
      }
      const double rhs = alpha * original.at(i, j);
      ASSERT_NEAR(sum, rhs, 1e-5 * (magnitude + std::fabs(rhs)))
          << "row " << i << ", column " << j;
    }
    EXPECT_TRUE(std::isnan(b.at(m, j))); // padding untouched
  }
}

TEST(CuBlasTrsm, EverySideFillOperationAndDiagonal) {
  Rng rng;
  for (cublasSideMode_t side : {CUBLAS_SIDE_LEFT, CUBLAS_SIDE_RIGHT})
    for (cublasFillMode_t uplo :
         {CUBLAS_FILL_MODE_LOWER, CUBLAS_FILL_MODE_UPPER})
      for (cublasOperation_t trans : {CUBLAS_OP_N, CUBLAS_OP_T, CUBLAS_OP_C})
        for (cublasDiagType_t diag : {CUBLAS_DIAG_NON_UNIT, CUBLAS_DIAG_UNIT})
          checkTrsm({side, uplo, trans, diag}, rng);
}

TEST(CuBlasTrsm, BadArgumentsAndAlphaZero) {
  Handle handle;
  std::vector<float> a(16, std::numeric_limits<float>::quiet_NaN()),
      b(16, 1.0f);
  const float zero = 0.0f, one = 1.0f;
  // alpha = 0: B = 0 without reading A (all NaN here).
  ASSERT_EQ(cublasStrsm(handle, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER,
                        CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, 4, 4, &zero,
                        a.data(), 4, b.data(), 4),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(b, std::vector<float>(16, 0.0f));
  EXPECT_EQ(cublasStrsm(handle, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_FULL,
                        CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, 4, 4, &one, a.data(),
                        4, b.data(), 4),
            CUBLAS_STATUS_INVALID_VALUE);
  // Right side: A is n x n, so lda = 2 >= n = 2 is enough with m = 4.
  EXPECT_EQ(cublasStrsm(handle, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_UPPER,
                        CUBLAS_OP_T, CUBLAS_DIAG_UNIT, 4, 2, &zero, a.data(), 2,
                        b.data(), 4),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(cublasStrsm(handle, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER,
                        CUBLAS_OP_T, CUBLAS_DIAG_UNIT, 4, 2, &one, a.data(), 2,
                        b.data(), 4),
            CUBLAS_STATUS_INVALID_VALUE); // left: lda < m
  EXPECT_EQ(cublasStrsm(handle, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER,
                        CUBLAS_OP_N, CUBLAS_DIAG_UNIT, 4, -1, &one, a.data(), 4,
                        b.data(), 4),
            CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_EQ(cublasStrsm(nullptr, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER,
                        CUBLAS_OP_N, CUBLAS_DIAG_UNIT, 4, 4, &one, a.data(), 4,
                        b.data(), 4),
            CUBLAS_STATUS_NOT_INITIALIZED);
}

} // namespace
