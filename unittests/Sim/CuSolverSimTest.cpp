//===- CuSolverSimTest.cpp - the stand-in cuSOLVER Cholesky routines ------===//
//
// potrf on both triangles (checked as L L^T = A), the devInfo of a matrix
// that is not positive definite, potrs and potri from the factor. The
// triangle not named by uplo holds NaN: it must be neither read nor
// written. Tolerances: 1e-5 of the sum of the magnitudes of the terms for
// the factor (float storage, 2^-24 relative, over n terms), 1e-4 for
// solves and inverses of these well-conditioned (diagonally dominant)
// matrices.
//
//===----------------------------------------------------------------------===//
#include "SimBlasTestUtil.h"

#include <cusolverDn.h>
#include <gtest/gtest.h>

using namespace qfuse::sim::test;

namespace {

struct Solver {
  cusolverDnHandle_t h = nullptr;
  Solver() { cusolverDnCreate(&h); }
  ~Solver() { cusolverDnDestroy(h); }
  operator cusolverDnHandle_t() const { return h; }
};

bool inTriangle(cublasFillMode_t uplo, int i, int j) {
  return uplo == CUBLAS_FILL_MODE_LOWER ? i >= j : i <= j;
}

/// A symmetric positive definite n x n matrix M M^T + n I (double), and
/// its `uplo` triangle stored with NaN everywhere else.
Matrix spd(int n, cublasFillMode_t uplo, Rng &rng, std::vector<double> &full) {
  std::vector<double> m(size_t(n * n));
  for (double &v : m)
    v = rng.value();
  full.assign(size_t(n * n), 0.0);
  Matrix a(CUDA_R_32F, n, n, n + 3);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      double sum = i == j ? n : 0.0;
      for (int p = 0; p < n; ++p)
        sum += m[size_t(i * n + p)] * m[size_t(j * n + p)];
      full[size_t(i + j * n)] = double(float(sum));
      if (inTriangle(uplo, i, j))
        a.set(i, j, sum);
    }
  return a;
}

/// The factor's L(i, j) (i >= j) from the stored triangle.
double factorL(const Matrix &a, cublasFillMode_t uplo, int i, int j) {
  return uplo == CUBLAS_FILL_MODE_LOWER ? a.at(i, j) : a.at(j, i);
}

void checkOtherTriangleUntouched(const Matrix &a, cublasFillMode_t uplo) {
  for (int j = 0; j < a.cols; ++j)
    for (int i = 0; i < a.ld; ++i)
      if (i >= a.rows || !inTriangle(uplo, i, j))
        ASSERT_TRUE(std::isnan(a.at(i, j))) << i << ", " << j;
}

TEST(CuBlasSimCusolverPotrf, FactorsBothTriangles) {
  Rng rng;
  Solver solver;
  const int n = 23;
  for (cublasFillMode_t uplo :
       {CUBLAS_FILL_MODE_LOWER, CUBLAS_FILL_MODE_UPPER}) {
    std::vector<double> full;
    Matrix a = spd(n, uplo, rng, full);
    int lwork = 0, info = -1;
    ASSERT_EQ(cusolverDnSpotrf_bufferSize(solver, uplo, n,
                                          static_cast<float *>(a.data()),
                                          int(a.ld), &lwork),
              CUSOLVER_STATUS_SUCCESS);
    ASSERT_GT(lwork, 0);
    std::vector<float> work(static_cast<size_t>(lwork));
    ASSERT_EQ(cusolverDnSpotrf(solver, uplo, n, static_cast<float *>(a.data()),
                               int(a.ld), work.data(), lwork, &info),
              CUSOLVER_STATUS_SUCCESS);
    EXPECT_EQ(info, 0);
    for (int j = 0; j < n; ++j)
      for (int i = j; i < n; ++i) {
        double sum = 0.0, magnitude = 0.0;
        for (int p = 0; p <= j; ++p) {
          const double term = factorL(a, uplo, i, p) * factorL(a, uplo, j, p);
          sum += term;
          magnitude += std::fabs(term);
        }
        ASSERT_NEAR(sum, full[size_t(i + j * n)], 1e-5 * magnitude)
            << "uplo " << uplo << ", (" << i << ", " << j << ")";
      }
    checkOtherTriangleUntouched(a, uplo);
  }
}

TEST(CuBlasSimCusolverPotrf, ReportsTheFirstNonPositivePivot) {
  Rng rng;
  Solver solver;
  const int n = 12;
  for (cublasFillMode_t uplo :
       {CUBLAS_FILL_MODE_LOWER, CUBLAS_FILL_MODE_UPPER}) {
    std::vector<double> full;
    Matrix a = spd(n, uplo, rng, full);
    a.set(4, 4, -1.0); // leading minors 1..4 stay positive definite
    int info = 0;
    std::vector<float> work(64);
    ASSERT_EQ(cusolverDnSpotrf(solver, uplo, n, static_cast<float *>(a.data()),
                               int(a.ld), work.data(), 64, &info),
              CUSOLVER_STATUS_SUCCESS);
    EXPECT_EQ(info, 5);
    Matrix b = spd(n, uplo, rng, full);
    b.set(0, 0, std::numeric_limits<double>::quiet_NaN());
    ASSERT_EQ(cusolverDnSpotrf(solver, uplo, n, static_cast<float *>(b.data()),
                               int(b.ld), work.data(), 64, &info),
              CUSOLVER_STATUS_SUCCESS);
    EXPECT_EQ(info, 1);
  }
}

TEST(CuBlasSimCusolverPotrf, SolvesAndInvertsFromTheFactor) {
  Rng rng;
  Solver solver;
  const int n = 17, nrhs = 3;
  for (cublasFillMode_t uplo :
       {CUBLAS_FILL_MODE_LOWER, CUBLAS_FILL_MODE_UPPER}) {
    std::vector<double> full;
    Matrix a = spd(n, uplo, rng, full);
    int info = -1;
    std::vector<float> work(64);
    ASSERT_EQ(cusolverDnSpotrf(solver, uplo, n, static_cast<float *>(a.data()),
                               int(a.ld), work.data(), 64, &info),
              CUSOLVER_STATUS_SUCCESS);
    ASSERT_EQ(info, 0);
    Matrix b(CUDA_R_32F, n, nrhs, n + 1);
    b.fillRandom(rng);
    const Matrix rhs = b;
    ASSERT_EQ(cusolverDnSpotrs(
                  solver, uplo, n, nrhs, static_cast<float *>(a.data()),
                  int(a.ld), static_cast<float *>(b.data()), int(b.ld), &info),
              CUSOLVER_STATUS_SUCCESS);
    EXPECT_EQ(info, 0);
    for (int c = 0; c < nrhs; ++c)
      for (int i = 0; i < n; ++i) {
        double sum = 0.0;
        for (int p = 0; p < n; ++p)
          sum += full[size_t(i + p * n)] * b.at(p, c);
        ASSERT_NEAR(sum, rhs.at(i, c), 1e-4) << uplo;
      }
    ASSERT_EQ(cusolverDnSpotri(solver, uplo, n, static_cast<float *>(a.data()),
                               int(a.ld), work.data(), 64, &info),
              CUSOLVER_STATUS_SUCCESS);
    EXPECT_EQ(info, 0);
    checkOtherTriangleUntouched(a, uplo);
    auto inverse = [&](int i, int j) {
      return inTriangle(uplo, i, j) ? a.at(i, j) : a.at(j, i);
    };
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) {
        double sum = 0.0;
        for (int p = 0; p < n; ++p)
          sum += full[size_t(i + p * n)] * inverse(p, j);
        ASSERT_NEAR(sum, i == j ? 1.0 : 0.0, 1e-4) << uplo;
      }
  }
}

TEST(CuBlasSimCusolverHandle, StreamsModesAndBadArguments) {
  Solver solver;
  auto *stream = reinterpret_cast<cudaStream_t>(uintptr_t(0x40));
  EXPECT_EQ(cusolverDnSetStream(solver, stream), CUSOLVER_STATUS_SUCCESS);
  cudaStream_t got = nullptr;
  EXPECT_EQ(cusolverDnGetStream(solver, &got), CUSOLVER_STATUS_SUCCESS);
  EXPECT_EQ(got, stream);
  EXPECT_EQ(cusolverDnSetMathMode(solver, CUSOLVER_FP32_EMULATED_BF16X9_MATH),
            CUSOLVER_STATUS_SUCCESS);
  EXPECT_EQ(cusolverDnSetMathMode(solver, CUSOLVER_DEFAULT_MATH),
            CUSOLVER_STATUS_SUCCESS);
  std::vector<float> a(16, 1.0f);
  int info = 0, lwork = 0;
  EXPECT_EQ(cusolverDnSpotrf(solver, CUBLAS_FILL_MODE_LOWER, -1, a.data(), 4,
                             a.data(), 16, &info),
            CUSOLVER_STATUS_INVALID_VALUE);
  EXPECT_EQ(cusolverDnSpotrf(solver, CUBLAS_FILL_MODE_LOWER, 4, a.data(), 3,
                             a.data(), 16, &info),
            CUSOLVER_STATUS_INVALID_VALUE);
  EXPECT_EQ(cusolverDnSpotrf_bufferSize(solver, CUBLAS_FILL_MODE_FULL, 4,
                                        a.data(), 4, &lwork),
            CUSOLVER_STATUS_INVALID_VALUE);
  EXPECT_EQ(cusolverDnSpotrf(nullptr, CUBLAS_FILL_MODE_LOWER, 4, a.data(), 4,
                             a.data(), 16, &info),
            CUSOLVER_STATUS_NOT_INITIALIZED);
  EXPECT_EQ(cusolverDnDestroy(nullptr), CUSOLVER_STATUS_NOT_INITIALIZED);
}

} // namespace
