//===- CuBlasGemmTest.cpp - the stand-in cuBLAS gemms against references -===//
//
// cublasGemmEx over every type combination cuBLAS lists for the compute
// types qfuse uses, all transpose combinations, odd sizes with leading
// dimensions past the rows (the gap holds NaN), beta = 0 over a NaN C,
// and Sgemm / Hgemm / strided batches. The reference sums in double in k
// order; the tolerance is half a unit in the last place of C's type
// (roundingBound), integers exact.
//
//===----------------------------------------------------------------------===//
#include "SimBlasTestUtil.h"

#include <gtest/gtest.h>

#include <string>

using namespace qfuse::sim::test;

namespace {

struct Combo {
  cudaDataType a, c;
  cublasComputeType_t compute;
};

/// The bytes of alpha / beta in the compute type's scale type.
std::vector<uint8_t> scale(cublasComputeType_t compute, double v) {
  std::vector<uint8_t> out(8);
  if (compute == CUBLAS_COMPUTE_16F) {
    const uint16_t h = qfuse::sim::halfFromDouble(float(v));
    std::memcpy(out.data(), &h, 2);
  } else if (compute == CUBLAS_COMPUTE_32I) {
    const int32_t i = int32_t(v);
    std::memcpy(out.data(), &i, 4);
  } else if (compute == CUBLAS_COMPUTE_64F) {
    std::memcpy(out.data(), &v, 8);
  } else {
    const float f = float(v);
    std::memcpy(out.data(), &f, 4);
  }
  return out;
}

/// Runs one GemmEx of m x n x k and checks every element of C.
void checkGemm(const Combo &combo, cublasOperation_t ta, cublasOperation_t tb,
               int m, int n, int k, double alpha, double beta, Rng &rng) {
  SCOPED_TRACE("A/B type " + std::to_string(combo.a) + ", C type " +
               std::to_string(combo.c) + ", compute " +
               std::to_string(combo.compute) + ", op " + std::to_string(ta) +
               std::to_string(tb) + ", beta " + std::to_string(beta));
  const bool tA = ta != CUBLAS_OP_N, tB = tb != CUBLAS_OP_N;
  Matrix a(combo.a, tA ? k : m, tA ? m : k, (tA ? k : m) + 3);
  Matrix b(combo.a, tB ? n : k, tB ? k : n, (tB ? n : k) + 2);
  Matrix c(combo.c, m, n, m + 5);
  a.fillRandom(rng);
  b.fillRandom(rng);
  if (beta != 0.0)
    c.fillRandom(rng); // else C stays NaN: beta = 0 must not read it
  const Matrix before = c;
  const auto alphaBytes = scale(combo.compute, alpha);
  const auto betaBytes = scale(combo.compute, beta);
  Handle handle;
  ASSERT_EQ(cublasGemmEx(handle, ta, tb, m, n, k, alphaBytes.data(), a.data(),
                         combo.a, int(a.ld), b.data(), combo.a, int(b.ld),
                         betaBytes.data(), c.data(), combo.c, int(c.ld),
                         combo.compute, CUBLAS_GEMM_DEFAULT),
            CUBLAS_STATUS_SUCCESS);
  int failures = 0;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      double sum = 0.0;
      for (int p = 0; p < k; ++p)
        sum += (tA ? a.at(p, i) : a.at(i, p)) * (tB ? b.at(j, p) : b.at(p, j));
      double expected = alpha * sum;
      if (beta != 0.0)
        expected += beta * before.at(i, j);
      const double got = c.at(i, j);
      if (!(std::fabs(got - expected) <= roundingBound(combo.c, expected)) &&
          ++failures <= 5)
        ADD_FAILURE() << "C(" << i << ", " << j << ") = " << got
                      << ", expected " << expected;
    }
  // Rows past m (the leading-dimension gap) are never written.
  for (int j = 0; j < n; ++j)
    for (int64_t i = m; i < c.ld; ++i)
      ASSERT_EQ(std::memcmp(&c.bytes[(i + j * c.ld) * bytesOf(combo.c)],
                            &before.bytes[(i + j * c.ld) * bytesOf(combo.c)],
                            bytesOf(combo.c)),
                0);
  EXPECT_EQ(failures, 0);
}

const Combo kCombos[] = {
    {CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F},
    {CUDA_R_16F, CUDA_R_32F, CUBLAS_COMPUTE_32F},
    {CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F},
    {CUDA_R_16BF, CUDA_R_32F, CUBLAS_COMPUTE_32F},
    {CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F},
    {CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_16F},
    {CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32},
    {CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_16F},
    {CUDA_R_8I, CUDA_R_32F, CUBLAS_COMPUTE_32F},
    {CUDA_R_8I, CUDA_R_32I, CUBLAS_COMPUTE_32I},
    {CUDA_R_64F, CUDA_R_64F, CUBLAS_COMPUTE_64F},
};

TEST(CuBlasGemmEx, EveryCombinationAndTranspose) {
  Rng rng;
  const cublasOperation_t ops[][2] = {{CUBLAS_OP_N, CUBLAS_OP_N},
                                      {CUBLAS_OP_T, CUBLAS_OP_N},
                                      {CUBLAS_OP_N, CUBLAS_OP_T},
                                      {CUBLAS_OP_C, CUBLAS_OP_T}};
  for (const Combo &combo : kCombos)
    for (const auto &op : ops) {
      const bool integer = combo.compute == CUBLAS_COMPUTE_32I;
      checkGemm(combo, op[0], op[1], 37, 19, 53, integer ? 3 : 0.5, 0.0, rng);
      checkGemm(combo, op[0], op[1], 37, 19, 53, integer ? -2 : 1.5,
                integer ? 3 : 0.75, rng);
    }
}

TEST(CuBlasGemmEx, LargeThreadedTilesAndEdges) {
  Rng rng;
  // Several 64 x 64 tiles and 256-deep k chunks, with ragged edges.
  checkGemm(kCombos[1], CUBLAS_OP_T, CUBLAS_OP_N, 203, 70, 611, 1.0, 0.0, rng);
  checkGemm(kCombos[2], CUBLAS_OP_N, CUBLAS_OP_T, 130, 67, 300, 1.0, 1.0, rng);
  // The shapes qfuse uses: a widening [count, 1] x [1, 1] and k = 1.
  checkGemm(kCombos[3], CUBLAS_OP_N, CUBLAS_OP_N, 1000, 1, 1, 1.0, 0.0, rng);
}

TEST(CuBlasGemmEx, UnsupportedCombinationsAndBadArguments) {
  Handle handle;
  float one = 1.0f, zero = 0.0f;
  std::vector<float> buffer(64, 1.0f);
  auto call = [&](cudaDataType a, cudaDataType c, cublasComputeType_t compute,
                  int m, int lda, cublasOperation_t ta = CUBLAS_OP_N) {
    return cublasGemmEx(handle, ta, CUBLAS_OP_N, m, 2, 2, &one, buffer.data(),
                        a, lda, buffer.data(), a, 2, &zero, buffer.data(), c, 4,
                        compute, CUBLAS_GEMM_DEFAULT);
  };
  EXPECT_EQ(call(CUDA_R_16F, CUDA_R_16BF, CUBLAS_COMPUTE_32F, 2, 2),
            CUBLAS_STATUS_NOT_SUPPORTED);
  EXPECT_EQ(call(CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F_FAST_16F, 2, 2),
            CUBLAS_STATUS_NOT_SUPPORTED);
  EXPECT_EQ(call(CUDA_R_32F, CUDA_R_16F, CUBLAS_COMPUTE_32F, 2, 2),
            CUBLAS_STATUS_NOT_SUPPORTED);
  EXPECT_EQ(call(CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, -1, 2),
            CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_EQ(call(CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, 3, 2),
            CUBLAS_STATUS_INVALID_VALUE); // lda < m
  EXPECT_EQ(call(CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, 3, 2,
                 CUBLAS_OP_T), // op(A) = T: lda >= k = 2 is enough
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(
      call(CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, 2, 2, CUBLAS_OP_CONJG),
      CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_EQ(cublasGemmEx(nullptr, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &one,
                         buffer.data(), CUDA_R_32F, 2, buffer.data(),
                         CUDA_R_32F, 2, &zero, buffer.data(), CUDA_R_32F, 2,
                         CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
            CUBLAS_STATUS_NOT_INITIALIZED);
  EXPECT_EQ(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &one,
                        buffer.data(), 2, buffer.data(), 1, &zero,
                        buffer.data(), 2),
            CUBLAS_STATUS_INVALID_VALUE); // ldb < k
}

TEST(CuBlasGemm, SgemmHgemmAndStridedBatches) {
  Rng rng;
  Handle handle;
  const int m = 21, n = 13, k = 17, batches = 3;
  Matrix a(CUDA_R_32F, k, m * batches, k), b(CUDA_R_32F, k, n * batches, k);
  Matrix c(CUDA_R_32F, m, n * batches, m);
  a.fillRandom(rng);
  b.fillRandom(rng);
  const float alpha = 2.0f, beta = 0.0f;
  // Batch i: A_i = columns [i m, (i + 1) m) read transposed, same for B.
  ASSERT_EQ(cublasSgemmStridedBatched(
                handle, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &alpha,
                static_cast<float *>(a.data()), k, int64_t(k) * m,
                static_cast<float *>(b.data()), k, int64_t(k) * n, &beta,
                static_cast<float *>(c.data()), m, int64_t(m) * n, batches),
            CUBLAS_STATUS_SUCCESS);
  for (int batch = 0; batch < batches; ++batch)
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) {
        double sum = 0.0;
        for (int p = 0; p < k; ++p)
          sum += a.at(p, batch * m + i) * b.at(p, batch * n + j);
        const double got = c.at(i, batch * n + j);
        ASSERT_NEAR(got, 2 * sum, roundingBound(CUDA_R_32F, 2 * sum));
      }
  // Hgemm: f16 in and out, half scales.
  Matrix ha(CUDA_R_16F, m, k, m), hb(CUDA_R_16F, n, k, n),
      hc(CUDA_R_16F, m, n, m);
  ha.fillRandom(rng);
  hb.fillRandom(rng);
  hc.fillRandom(rng);
  const Matrix before = hc;
  const uint16_t halfOne = 0x3c00, halfMinusHalf = 0xb800;
  ASSERT_EQ(cublasHgemm(handle, CUBLAS_OP_N, CUBLAS_OP_T, m, n, k,
                        reinterpret_cast<const __half *>(&halfOne),
                        static_cast<const __half *>(ha.data()), m,
                        static_cast<const __half *>(hb.data()), n,
                        reinterpret_cast<const __half *>(&halfMinusHalf),
                        static_cast<__half *>(hc.data()), m),
            CUBLAS_STATUS_SUCCESS);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      double expected = -0.5 * before.at(i, j);
      for (int p = 0; p < k; ++p)
        expected += ha.at(i, p) * hb.at(j, p);
      ASSERT_NEAR(hc.at(i, j), expected, roundingBound(CUDA_R_16F, expected));
    }
}

TEST(CuBlasGemm, AlphaZeroReadsNeitherAnorB) {
  Handle handle;
  std::vector<float> nan(16, std::numeric_limits<float>::quiet_NaN());
  std::vector<float> c = {1, 2, 3, 4};
  const float zero = 0.0f, two = 2.0f;
  ASSERT_EQ(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 3, &zero,
                        nan.data(), 2, nan.data(), 3, &two, c.data(), 2),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(c, (std::vector<float>{2, 4, 6, 8}));
  // k = 0 with beta = 0: C is zeroed, its NaNs unread.
  std::vector<float> nanC(4, std::numeric_limits<float>::quiet_NaN());
  ASSERT_EQ(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 0, &two,
                        nan.data(), 2, nan.data(), 1, &zero, nanC.data(), 2),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(nanC, std::vector<float>(4, 0.0f));
}

} // namespace
