//===- CuBlasSimTest.cpp - the stand-in cuBLAS helpers, level 1-3 routines ===//
//
// Handles and status names, f16 / bf16 conversions against decoders
// written from the formats' definitions, level-1 routines with negative
// increments, Sger, Sgeam (in place too) and Strsm in all eight side /
// fill / operation combinations. References are naive double loops;
// tolerances are stated where they are used.
//
//===----------------------------------------------------------------------===//
#include "SimBlasTestUtil.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

using namespace qfuse::sim::test;
using qfuse::sim::bf16FromDouble;
using qfuse::sim::halfFromDouble;
using qfuse::sim::halfToFloat;

namespace {

const float kNaN = std::numeric_limits<float>::quiet_NaN();

TEST(CuBlasHandle, StreamWorkspaceModesAndNames) {
  EXPECT_EQ(cublasCreate(nullptr), CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_EQ(cublasDestroy(nullptr), CUBLAS_STATUS_NOT_INITIALIZED);
  EXPECT_EQ(cublasSetStream(nullptr, nullptr), CUBLAS_STATUS_NOT_INITIALIZED);
  Handle handle;
  ASSERT_NE(handle.h, nullptr);
  auto *stream = reinterpret_cast<cudaStream_t>(uintptr_t(0x1234));
  EXPECT_EQ(cublasSetStream(handle, stream), CUBLAS_STATUS_SUCCESS);
  cudaStream_t got = nullptr;
  EXPECT_EQ(cublasGetStream(handle, &got), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(got, stream);
  alignas(256) static char workspace[1024];
  EXPECT_EQ(cublasSetWorkspace(handle, workspace, sizeof(workspace)),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(cublasSetWorkspace(handle, workspace + 16, 512),
            CUBLAS_STATUS_INVALID_VALUE); // cuBLAS wants 256-byte alignment
  cublasPointerMode_t mode;
  EXPECT_EQ(cublasSetPointerMode(handle, CUBLAS_POINTER_MODE_DEVICE),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(cublasGetPointerMode(handle, &mode), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(mode, CUBLAS_POINTER_MODE_DEVICE);
  cublasMath_t math;
  EXPECT_EQ(cublasGetMathMode(handle, &math), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(math, CUBLAS_DEFAULT_MATH);
  EXPECT_EQ(cublasSetMathMode(handle, CUBLAS_FP32_EMULATED_BF16X9_MATH),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(cublasGetMathMode(handle, &math), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(math, CUBLAS_FP32_EMULATED_BF16X9_MATH);
  EXPECT_EQ(cublasSetMathMode(handle, cublasMath_t(5)),
            CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_STREQ(cublasGetStatusName(CUBLAS_STATUS_SUCCESS),
               "CUBLAS_STATUS_SUCCESS");
  EXPECT_STREQ(cublasGetStatusName(CUBLAS_STATUS_INVALID_VALUE),
               "CUBLAS_STATUS_INVALID_VALUE");
  EXPECT_STREQ(cublasGetStatusName(CUBLAS_STATUS_NOT_SUPPORTED),
               "CUBLAS_STATUS_NOT_SUPPORTED");
  EXPECT_STREQ(cublasGetStatusString(CUBLAS_STATUS_NOT_INITIALIZED),
               "the library was not initialized");
}

TEST(CuBlasHalfFloat, DecodesEveryPattern) {
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    const double expected = referenceHalf(uint16_t(bits));
    const float got = halfToFloat(uint16_t(bits));
    if (std::isnan(expected))
      ASSERT_TRUE(std::isnan(got)) << bits;
    else
      ASSERT_EQ(double(got), expected) << bits;
  }
}

/// The nearest pattern of a 16-bit format to x, ties to the even pattern,
/// found from the decoder alone (positive finite patterns are ordered).
template <typename Decode>
uint16_t nearestPattern(double x, uint16_t maxFinite, uint16_t inf,
                        Decode decode) {
  const uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  const double ax = std::fabs(x);
  const double overflow =
      decode(maxFinite) + (decode(maxFinite) - decode(maxFinite - 1)) / 2;
  if (ax >= overflow)
    return sign | inf;
  uint16_t lo = 0, hi = maxFinite; // largest pattern <= ax
  while (lo < hi) {
    const uint16_t mid = uint16_t((lo + hi + 1) / 2);
    decode(mid) <= ax ? lo = mid : hi = mid - 1;
  }
  if (lo == maxFinite || decode(lo) == ax)
    return sign | lo;
  const double down = ax - decode(lo), up = decode(lo + 1) - ax;
  return sign | ((down < up || (down == up && !(lo & 1))) ? lo : lo + 1);
}

TEST(CuBlasHalfFloat, EncodesToNearestEven) {
  Rng rng;
  std::vector<float> values = {0.0f,           -0.0f,          65504.0f,
                               65519.99f,      65520.0f,       1e-8f,
                               2.9802322e-08f, 5.9604645e-08f, 6.1035156e-05f,
                               1.0009766f,     1.00048828125f, 1.00146484375f,
                               3.0e38f,        1e-40f};
  for (int i = 0; i < 20000; ++i) {
    const double magnitude = std::ldexp(rng.value(), int(rng.gen() % 60) - 30);
    values.push_back(float(magnitude));
  }
  for (float v : values) {
    EXPECT_EQ(halfFromDouble(v), nearestPattern(v, 0x7bff, 0x7c00, referenceHalf))
        << v;
    EXPECT_EQ(bf16FromDouble(v), nearestPattern(v, 0x7f7f, 0x7f80, referenceBf16))
        << v;
  }
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(halfFromDouble(inf), 0x7c00);
  EXPECT_EQ(halfFromDouble(-inf), 0xfc00);
  EXPECT_EQ(bf16FromDouble(-inf), 0xff80);
  EXPECT_TRUE(std::isnan(referenceHalf(halfFromDouble(kNaN))));
  EXPECT_TRUE(std::isnan(referenceBf16(bf16FromDouble(kNaN))));
  // A double just above a half tie must round up, not to the even side.
  EXPECT_EQ(qfuse::sim::halfFromDouble(1.00048828125 + 1e-12), 0x3c01);
  EXPECT_EQ(qfuse::sim::halfFromDouble(1.00048828125), 0x3c00);
}

TEST(CuBlasLevel1, CopyAxpyDotIsamaxWithIncrements) {
  Handle handle;
  std::vector<float> x = {1, 2, 3, 4, 5, 6};
  std::vector<float> y(6, 0.0f);
  // A negative increment walks from the far end: a reversal.
  ASSERT_EQ(cublasScopy(handle, 6, x.data(), 1, y.data(), -1),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(y, (std::vector<float>{6, 5, 4, 3, 2, 1}));
  std::vector<float> strided(6, 0.0f);
  ASSERT_EQ(cublasScopy(handle, 3, x.data(), 2, strided.data(), 2),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(strided, (std::vector<float>{1, 0, 3, 0, 5, 0}));
  // y[0], y[3] += 0.5 * (x[2], x[0]) (incx = -2 reads x from x[2] down).
  std::vector<float> z = {10, 11, 12, 13};
  const float half = 0.5f;
  ASSERT_EQ(cublasSaxpy(handle, 2, &half, x.data(), -2, z.data(), 3),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(z, (std::vector<float>{11.5f, 11, 12, 13.5f}));
  float dot = 0.0f;
  ASSERT_EQ(cublasSdot(handle, 3, x.data(), 1, x.data(), -2, &dot),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(dot, 1 * 5 + 2 * 3 + 3 * 1);
  // Device pointer mode: the result is written through the pointer too.
  ASSERT_EQ(cublasSetPointerMode(handle, CUBLAS_POINTER_MODE_DEVICE),
            CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(cublasSdot(handle, 6, x.data(), 1, x.data(), 1, &dot),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(dot, 91.0f);
  ASSERT_EQ(cublasSetPointerMode(handle, CUBLAS_POINTER_MODE_HOST),
            CUBLAS_STATUS_SUCCESS);
  std::vector<float> w = {1, -7, 3, 7, -7, 5, 2};
  int index = -1;
  ASSERT_EQ(cublasIsamax(handle, 6, w.data(), 1, &index),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(index, 2); // 1-based, the first of equal magnitudes
  ASSERT_EQ(cublasIsamax(handle, 3, w.data() + 2, 2, &index),
            CUBLAS_STATUS_SUCCESS); // 3, -7, 2
  EXPECT_EQ(index, 2);
  ASSERT_EQ(cublasIsamax(handle, 0, w.data(), 1, &index),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(index, 0);
  EXPECT_EQ(cublasIsamax(nullptr, 6, w.data(), 1, &index),
            CUBLAS_STATUS_NOT_INITIALIZED);
}

TEST(CuBlasLevel2, SgerWithIncrementsAndPadding) {
  Handle handle;
  Rng rng;
  const int m = 7, n = 5, lda = 9;
  Matrix a(CUDA_R_32F, m, n, lda);
  a.fillRandom(rng);
  const Matrix before = a;
  std::vector<float> x(2 * m), y(n);
  for (float &v : x)
    v = float(rng.value());
  for (float &v : y)
    v = float(rng.value());
  const float alpha = -1.5f;
  ASSERT_EQ(cublasSger(handle, m, n, &alpha, x.data(), -2, y.data(), -1,
                       static_cast<float *>(a.data()), lda),
            CUBLAS_STATUS_SUCCESS);
  for (int j = 0; j < n; ++j) {
    for (int i = 0; i < m; ++i) {
      // Negative increments: x_i at x[2 (m - 1 - i)], y_j at y[n - 1 - j].
      const double expected = before.at(i, j) + alpha *
                                                    double(x[2 * (m - 1 - i)]) *
                                                    double(y[n - 1 - j]);
      EXPECT_NEAR(a.at(i, j), expected, roundingBound(CUDA_R_32F, expected));
    }
    EXPECT_TRUE(std::isnan(a.at(m, j))); // the padding is untouched
  }
  EXPECT_EQ(cublasSger(handle, m, n, &alpha, x.data(), 0, y.data(), 1,
                       static_cast<float *>(a.data()), lda),
            CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_EQ(cublasSger(handle, m, n, &alpha, x.data(), 1, y.data(), 1,
                       static_cast<float *>(a.data()), m - 1),
            CUBLAS_STATUS_INVALID_VALUE);
}

/// Element (i, j) of op(M).
double opAt(const Matrix &mat, bool t, int i, int j) {
  return t ? mat.at(j, i) : mat.at(i, j);
}

TEST(CuBlasGeam, AllTransposesInPlaceAndUnreadTerms) {
  Handle handle;
  Rng rng;
  const int m = 11, n = 6;
  const float alpha = 1.25f, beta = -0.5f, zero = 0.0f, one = 1.0f;
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb) {
      Matrix a(CUDA_R_32F, ta ? n : m, ta ? m : n, (ta ? n : m) + 1);
      Matrix b(CUDA_R_32F, tb ? n : m, tb ? m : n, (tb ? n : m) + 2);
      Matrix c(CUDA_R_32F, m, n, m + 3);
      a.fillRandom(rng);
      b.fillRandom(rng);
      ASSERT_EQ(cublasSgeam(handle, ta ? CUBLAS_OP_T : CUBLAS_OP_N,
                            tb ? CUBLAS_OP_T : CUBLAS_OP_N, m, n, &alpha,
                            static_cast<float *>(a.data()), int(a.ld), &beta,
                            static_cast<float *>(b.data()), int(b.ld),
                            static_cast<float *>(c.data()), int(c.ld)),
                CUBLAS_STATUS_SUCCESS);
      for (int j = 0; j < n; ++j)
        for (int i = 0; i < m; ++i) {
          const double expected =
              alpha * opAt(a, ta, i, j) + beta * opAt(b, tb, i, j);
          ASSERT_NEAR(c.at(i, j), expected,
                      roundingBound(CUDA_R_32F, expected));
        }
    }
  // In place, C = B with op(B) = N (qfuse's mirror); beta = 0 leaves B
  // unread, so its NaNs do not matter, and -0 comes through as -0.
  Matrix a(CUDA_R_32F, 4, 3, 4), c(CUDA_R_32F, 3, 4, 3);
  a.fillRandom(rng);
  a.set(1, 2, -0.0);
  ASSERT_EQ(cublasSgeam(handle, CUBLAS_OP_T, CUBLAS_OP_N, 3, 4, &one,
                        static_cast<float *>(a.data()), 4, &zero,
                        static_cast<float *>(c.data()), 3,
                        static_cast<float *>(c.data()), 3),
            CUBLAS_STATUS_SUCCESS);
  for (int j = 0; j < 4; ++j)
    for (int i = 0; i < 3; ++i)
      ASSERT_EQ(c.at(i, j), a.at(j, i));
  EXPECT_TRUE(std::signbit(c.at(2, 1)));
  // In place, C = A: W += P.
  Matrix w(CUDA_R_32F, 5, 3, 7), p(CUDA_R_32F, 5, 3, 5);
  w.fillRandom(rng);
  p.fillRandom(rng);
  const Matrix before = w;
  ASSERT_EQ(cublasSgeam(handle, CUBLAS_OP_N, CUBLAS_OP_N, 5, 3, &one,
                        static_cast<float *>(w.data()), 7, &one,
                        static_cast<float *>(p.data()), 5,
                        static_cast<float *>(w.data()), 7),
            CUBLAS_STATUS_SUCCESS);
  for (int j = 0; j < 3; ++j)
    for (int i = 0; i < 5; ++i)
      ASSERT_EQ(w.at(i, j), float(before.at(i, j) + p.at(i, j)));
  // In place with op(A) = T, or another leading dimension, is refused,
  // as cuBLAS does.
  Matrix square(CUDA_R_32F, 5, 5, 7), other(CUDA_R_32F, 5, 5, 7);
  EXPECT_EQ(cublasSgeam(handle, CUBLAS_OP_T, CUBLAS_OP_N, 5, 5, &one,
                        static_cast<float *>(square.data()), 7, &one,
                        static_cast<float *>(other.data()), 7,
                        static_cast<float *>(square.data()), 7),
            CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_EQ(cublasSgeam(handle, CUBLAS_OP_N, CUBLAS_OP_N, 5, 5, &one,
                        static_cast<float *>(other.data()), 7, &one,
                        static_cast<float *>(square.data()), 7,
                        static_cast<float *>(square.data()), 6),
            CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_EQ(cublasSgeam(handle, CUBLAS_OP_N, CUBLAS_OP_N, 5, 3, &one,
                        static_cast<float *>(w.data()), 4, &one,
                        static_cast<float *>(p.data()), 5,
                        static_cast<float *>(c.data()), 5),
            CUBLAS_STATUS_INVALID_VALUE); // lda < m
}

} // namespace
