//===- HessianTest.cpp - H accumulation and its preparation ---------------===//
//
// HessianAccumulator against (2/n) X^T X computed directly, in any batching;
// prepareHessian: U^T U is the inverse of the damped H, dead channels, the
// act-order permutation, the retry policy and the failure report.
//
//===----------------------------------------------------------------------===//

#include "qfuse/gptq/Hessian.h"
#include "qfuse/gptq/Prepare.h"

#include "GptqTestUtil.h"

#include <algorithm>
#include <cmath>

using namespace qfuse;
using namespace qfuse::gptq;
using format::test::SeededTest;

namespace {

using GptqHessianTest = SeededTest;

/// max |a - b| / max |b|.
double maxRelativeDiff(const std::vector<double> &a,
                       const std::vector<double> &b) {
  double diff = 0, scale = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    diff = std::max(diff, std::fabs(a[i] - b[i]));
    scale = std::max(scale, std::fabs(b[i]));
  }
  return diff / scale;
}

TEST_F(GptqHessianTest, RunningUpdateIsTwoOverNSumXXt) {
  const int64_t k = 48, rows = 300;
  std::vector<float> x = normal(size_t(rows * k));
  std::vector<double> direct(size_t(k * k), 0.0);
  for (int64_t i = 0; i < k; ++i)
    for (int64_t j = 0; j < k; ++j) {
      double s = 0;
      for (int64_t r = 0; r < rows; ++r)
        s += double(x[size_t(r * k + i)]) * x[size_t(r * k + j)];
      direct[size_t(i * k + j)] = 2.0 * s / double(rows);
    }

  HessianAccumulator once(k), batched(k);
  EXPECT_EQ(once.samples(), 0);
  once.add(x.data(), rows);
  for (int64_t r = 0; r < rows;) { // uneven batches, one of a single row
    int64_t m = std::min<int64_t>(rows - r, r == 0 ? 1 : uniformInt(1, 90));
    batched.add(x.data() + r * k, m);
    r += m;
  }
  EXPECT_EQ(once.samples(), rows);
  EXPECT_EQ(batched.samples(), rows);
  EXPECT_LT(maxRelativeDiff(once.matrix(), direct), 1e-14);
  EXPECT_LT(maxRelativeDiff(batched.matrix(), direct), 1e-13);
  for (int64_t i = 0; i < k; ++i) // exactly symmetric
    for (int64_t j = 0; j < i; ++j)
      ASSERT_EQ(batched.matrix()[size_t(i * k + j)],
                batched.matrix()[size_t(j * k + i)]);
}

TEST_F(GptqHessianTest, UpperFactorInvertsTheDampedHessian) {
  const int64_t k = 96;
  test::Mixing mixing(k, rng);
  std::vector<double> h = test::hessianOf(mixing.sample(400, rng), k);
  Preparation prep = prepareHessian(h.data(), k);
  ASSERT_TRUE(prep.ok) << prep.message;
  EXPECT_EQ(prep.attempts, 1);
  EXPECT_DOUBLE_EQ(prep.dampFraction, 0.01);
  double mean = 0;
  for (int64_t i = 0; i < k; ++i)
    mean += h[size_t(i * k + i)] / double(k);
  EXPECT_NEAR(prep.damp, 0.01 * mean, 1e-12 * mean);
  EXPECT_TRUE(prep.deadChannels.empty());

  // U upper triangular and (U^T U) H_damped = I.
  const std::vector<double> &u = prep.hinvChol;
  for (int64_t i = 0; i < k; ++i) {
    EXPECT_GT(u[size_t(i * k + i)], 0.0);
    for (int64_t j = 0; j < i; ++j)
      ASSERT_EQ(u[size_t(i * k + j)], 0.0);
  }
  double worst = 0;
  for (int64_t i = 0; i < k; ++i)
    for (int64_t j = 0; j < k; ++j) {
      double s = 0;
      for (int64_t p = 0; p < k; ++p) {
        double hinv = 0; // (U^T U)[i][p]
        for (int64_t q = 0; q <= std::min(i, p); ++q)
          hinv += u[size_t(q * k + i)] * u[size_t(q * k + p)];
        s += hinv * prep.hessian[size_t(p * k + j)];
      }
      worst = std::max(worst, std::fabs(s - (i == j ? 1.0 : 0.0)));
    }
  EXPECT_LT(worst, 1e-9);
}

TEST_F(GptqHessianTest, DeadChannelsAndActOrder) {
  const int64_t k = 64;
  test::Mixing mixing(k, rng);
  std::vector<float> x = mixing.sample(200, rng);
  const std::vector<int64_t> dead = {0, 17, 63};
  for (int64_t r = 0; r < 200; ++r)
    for (int64_t col : dead)
      x[size_t(r * k + col)] = 0.0f;
  std::vector<double> h = test::hessianOf(x, k);

  PrepareOptions options;
  options.actOrder = true;
  Preparation prep = prepareHessian(h.data(), k, options);
  ASSERT_TRUE(prep.ok) << prep.message;
  EXPECT_EQ(prep.deadChannels, dead);

  // A permutation by descending diagonal (dead channels count as 1), ties
  // in column order, and the factored H is the permuted one.
  std::vector<double> diag(static_cast<size_t>(k));
  for (int64_t i = 0; i < k; ++i)
    diag[size_t(i)] = h[size_t(i * k + i)] == 0 ? 1.0 : h[size_t(i * k + i)];
  std::vector<int64_t> sorted = prep.permutation;
  std::sort(sorted.begin(), sorted.end());
  for (int64_t i = 0; i < k; ++i)
    ASSERT_EQ(sorted[size_t(i)], i);
  for (int64_t c = 1; c < k; ++c) {
    double a = diag[size_t(prep.permutation[size_t(c - 1)])];
    double b = diag[size_t(prep.permutation[size_t(c)])];
    ASSERT_TRUE(a > b || (a == b && prep.permutation[size_t(c - 1)] <
                                        prep.permutation[size_t(c)]))
        << "position " << c;
  }
  for (int64_t i = 0; i < k; ++i)
    for (int64_t j = 0; j < k; ++j) {
      int64_t pi = prep.permutation[size_t(i)],
              pj = prep.permutation[size_t(j)];
      double expected =
          pi == pj ? diag[size_t(pi)] + prep.damp : h[size_t(pi * k + pj)];
      ASSERT_EQ(prep.hessian[size_t(i * k + j)], expected);
    }
}

TEST_F(GptqHessianTest, FewerTokensThanColumnsNeedOnlyDamping) {
  const int64_t k = 128;
  test::Mixing mixing(k, rng);
  std::vector<double> h = test::hessianOf(mixing.sample(20, rng), k); // rank 20
  Preparation prep = prepareHessian(h.data(), k);
  EXPECT_TRUE(prep.ok) << prep.message;
  EXPECT_EQ(prep.attempts, 1);
}

/// I with the 2x2 block [[1, c], [c, 1]] at (3, 4): eigenvalue 1 - c.
std::vector<double> indefinite(int64_t k, double c) {
  std::vector<double> h = test::identity(k);
  h[size_t(3 * k + 4)] = h[size_t(4 * k + 3)] = c;
  return h;
}

TEST_F(GptqHessianTest, RetriesWithMoreDamping) {
  const int64_t k = 16;
  // Eigenvalue -0.05, mean diagonal 1: 0.01 fails, 0.1 succeeds.
  std::vector<double> h = indefinite(k, 1.05);
  Preparation prep = prepareHessian(h.data(), k);
  ASSERT_TRUE(prep.ok) << prep.message;
  EXPECT_EQ(prep.attempts, 2);
  EXPECT_DOUBLE_EQ(prep.dampFraction, 0.1);
  EXPECT_NE(prep.message.find("damping 0.01"), std::string::npos)
      << prep.message;
}

TEST_F(GptqHessianTest, ReportsFailureAfterTheLastRetry) {
  const int64_t k = 16;
  std::vector<double> h = indefinite(k, 3.0); // eigenvalue -2
  Preparation prep = prepareHessian(h.data(), k);
  EXPECT_FALSE(prep.ok);
  EXPECT_EQ(prep.attempts, 3);
  EXPECT_DOUBLE_EQ(prep.dampFraction, 1.0);
  EXPECT_TRUE(prep.hinvChol.empty());
  EXPECT_NE(prep.message.find("cholesky(H) failed at pivot 4"),
            std::string::npos)
      << prep.message;

  PrepareOptions noRetry;
  noRetry.maxRetries = 0;
  prep = prepareHessian(indefinite(k, 1.05).data(), k, noRetry);
  EXPECT_FALSE(prep.ok);
  EXPECT_EQ(prep.attempts, 1);

  std::vector<double> negative = test::identity(k);
  for (int64_t i = 0; i < k; ++i)
    negative[size_t(i * k + i)] = -1.0;
  prep = prepareHessian(negative.data(), k);
  EXPECT_FALSE(prep.ok);
  EXPECT_EQ(prep.attempts, 0);
  EXPECT_NE(prep.message.find("mean(diag(H)) = -1"), std::string::npos)
      << prep.message;
}

} // namespace
