//===- ReferenceTest.cpp - referenceMatmul and relativeError --------------===//

#include "qfuse/format/Packing.h"
#include "qfuse/format/Reference.h"

#include "TestUtil.h"

#include <cmath>

using namespace qfuse::format;
using qfuse::format::test::enc;
using qfuse::format::test::SeededTest;

namespace {

class ReferenceTest : public SeededTest {};

TEST_F(ReferenceTest, MatmulMatchesNaiveLoop) {
  const int64_t m = uniformInt(1, 9), n = uniformInt(1, 33),
                k = uniformInt(1, 300);
  std::vector<float> x = normal(size_t(m * k)), w = normal(size_t(n * k));
  std::vector<float> y = referenceMatmul(x.data(), w.data(), m, n, k);
  ASSERT_EQ(y.size(), size_t(m * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      // Naive: long double, the other loop order (k outermost per element is
      // the same sum; this checks indexing, the double sum the precision).
      long double sum = 0;
      for (int64_t p = k - 1; p >= 0; --p)
        sum += (long double)x[i * k + p] * w[j * k + p];
      EXPECT_NEAR(y[i * n + j], double(sum), 1e-6 * (1 + std::fabs(double(sum))))
          << "(" << i << ", " << j << ")";
    }
}

TEST_F(ReferenceTest, MatmulAccumulatesInDouble) {
  // 1 + many tiny terms: a float accumulator would lose every one of them.
  const int64_t k = 4097;
  std::vector<float> x(k, 1.0f), w(k, 1e-8f);
  w[0] = 1.0f;
  std::vector<float> y = referenceMatmul(x.data(), w.data(), 1, 1, k);
  EXPECT_EQ(y[0], float(1.0 + 4096 * double(1e-8f)));
}

TEST_F(ReferenceTest, RelativeError) {
  EXPECT_EQ(relativeError({1, 2, 2}, {1, 2, 2}), 0.0);
  EXPECT_DOUBLE_EQ(relativeError({3, 4}, {0, 0}), 5.0);
  EXPECT_DOUBLE_EQ(relativeError({1, 0}, {2, 0}), 0.5);
  EXPECT_TRUE(std::isinf(relativeError({1}, {1, 2})));
  EXPECT_TRUE(std::isinf(relativeError({NAN}, {1})));
}

TEST_F(ReferenceTest, QuantizedMatmulIsCloseToDense) {
  // The end-to-end use: y = x W'^T with W' = dequantize(quantizeRTN(W)).
  const int64_t m = 4, n = 64, k = 512;
  std::vector<float> x = normal(size_t(m * k)), w = normal(size_t(n * k), 0.05f);
  const std::pair<const char *, double> cases[] = {
      {"int8, per_channel, scale = f16", 0.01},
      {"int4, group = 128, scale = f16", 0.15},
      {"nf4, group = 64, scale = f32", 0.15},
  };
  for (const auto &[text, tolerance] : cases) {
    Encoding e = enc(text);
    TensorMap c;
    std::vector<float> wq;
    std::string error;
    ASSERT_TRUE(quantizeRTN(e, w.data(), n, k, c, error)) << error;
    ASSERT_TRUE(dequantize(e, c, n, k, wq, error)) << error;
    double rel = relativeError(referenceMatmul(x.data(), wq.data(), m, n, k),
                               referenceMatmul(x.data(), w.data(), m, n, k));
    EXPECT_LT(rel, tolerance) << text;
    EXPECT_GT(rel, 0.0) << text;
  }
}

} // namespace
