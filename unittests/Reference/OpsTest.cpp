//===- OpsTest.cpp - The reference decoder's ops against hand values
//-------===//

#include "qfuse/reference/Ops.h"

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <limits>
#include <random>

namespace qfuse::reference {
namespace {

std::vector<double> randomVector(std::mt19937 &rng, size_t n) {
  std::normal_distribution<double> dist(0.0, 1.0);
  std::vector<double> v(n);
  for (double &x : v)
    x = dist(rng);
  return v;
}

double norm2(const double *x, int64_t n) {
  double s = 0;
  for (int64_t i = 0; i < n; ++i)
    s += x[i] * x[i];
  return std::sqrt(s);
}

//===----------------------------------------------------------------------===//
// Rotary
//===----------------------------------------------------------------------===//

TEST(ReferenceOps, InvFreqIsThetaToTheMinus2iOverD) {
  // theta = 10000, head_dim 8: 10000^(-0/8), ^(-2/8), ^(-4/8), ^(-6/8).
  std::vector<double> f = ropeInvFreq(8, 10000.0, std::nullopt);
  ASSERT_EQ(f.size(), 4u);
  EXPECT_DOUBLE_EQ(f[0], 1.0);
  EXPECT_DOUBLE_EQ(f[1], 0.1);
  EXPECT_DOUBLE_EQ(f[2], 0.01);
  EXPECT_DOUBLE_EQ(f[3], 0.001);
}

TEST(ReferenceOps, Llama3ScalingMatchesHandComputedInvFreq) {
  // Llama 3.1 8B: theta 5e5, head_dim 128, factor 8, low 1, high 4, original
  // 8192, so wavelengths below 2048 keep their frequency, above 8192 divide
  // it by 8, and in between interpolate. Values computed separately (Python,
  // transformers' formula in float64).
  Llama3RopeScaling s{8.0, 1.0, 4.0, 8192.0};
  std::vector<double> f = ropeInvFreq(128, 500000.0, s);
  ASSERT_EQ(f.size(), 64u);
  EXPECT_DOUBLE_EQ(f[0], 1.0);                      // wavelength 6.28: kept
  EXPECT_NEAR(f[20], 0.016560440080994446, 1e-15);  // 379: kept
  EXPECT_NEAR(f[30], 0.0013718935677611381, 1e-15); // 2948: smoothed
  EXPECT_NEAR(f[34], 0.0001785078127679964, 1e-16); // 6695: smoothed
  EXPECT_NEAR(f[63], 3.068925988914511e-07, 1e-19); // 2.6e6: divided by 8
  // The smoothed band lies between the divided and the kept frequency.
  std::vector<double> plain = ropeInvFreq(128, 500000.0, std::nullopt);
  EXPECT_GT(f[30], plain[30] / 8);
  EXPECT_LT(f[30], plain[30]);
}

TEST(ReferenceOps, RotaryAtPositionZeroIsTheIdentity) {
  std::mt19937 rng(1);
  std::vector<double> x = randomVector(rng, 3 * 16);
  std::vector<double> y = x;
  applyRotary(y, 3, 16, 0, ropeInvFreq(16, 10000.0, std::nullopt));
  EXPECT_EQ(y, x);
}

TEST(ReferenceOps, RotaryPreservesNormsAndRotatesPairsAsComplexNumbers) {
  std::mt19937 rng(2);
  const int64_t heads = 2, d = 8, pos = 37;
  std::vector<double> invFreq =
      ropeInvFreq(d, 500000.0, Llama3RopeScaling{8.0, 1.0, 4.0, 64.0});
  std::vector<double> x = randomVector(rng, heads * d);
  std::vector<double> y = x;
  applyRotary(y, heads, d, pos, invFreq);
  for (int64_t h = 0; h < heads; ++h) {
    EXPECT_NEAR(norm2(&y[h * d], d), norm2(&x[h * d], d), 1e-12);
    // Rotate-half pairs element i with i + d/2: (x_i + i x_j) e^{i a}.
    for (int64_t i = 0; i < d / 2; ++i) {
      std::complex<double> z(x[h * d + i], x[h * d + i + d / 2]);
      z *= std::polar(1.0, double(pos) * invFreq[i]);
      EXPECT_NEAR(y[h * d + i], z.real(), 1e-12);
      EXPECT_NEAR(y[h * d + i + d / 2], z.imag(), 1e-12);
    }
  }
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

TEST(ReferenceOps, AttentionOverOneCachedPositionReturnsItsValuesExactly) {
  std::mt19937 rng(3);
  const int64_t heads = 4, kvHeads = 2, d = 8;
  std::vector<double> q = randomVector(rng, heads * d);
  std::vector<double> k = randomVector(rng, kvHeads * d);
  std::vector<double> v = randomVector(rng, kvHeads * d);
  std::vector<double> out = attention(q, k, v, 1, heads, kvHeads, d);
  ASSERT_EQ(out.size(), size_t(heads * d));
  // Heads 0, 1 share kv head 0; heads 2, 3 share kv head 1.
  for (int64_t h = 0; h < heads; ++h)
    for (int64_t i = 0; i < d; ++i)
      EXPECT_EQ(out[h * d + i], v[(h / 2) * d + i]) << "head " << h;
}

TEST(ReferenceOps, AttentionWeighsPositionsBySoftmaxOfScaledScores) {
  // head_dim 2, scale 1/sqrt(2): q = (1, 0) scores k0 = (0, 0) at 0 and
  // k1 = (sqrt(2) ln 3, 0) at ln 3, so the weights are 1/4 and 3/4.
  std::vector<double> q = {1, 0};
  std::vector<double> k = {0, 0, std::sqrt(2.0) * std::log(3.0), 0};
  std::vector<double> v = {4, -8, 8, 4};
  std::vector<double> out = attention(q, k, v, 2, 1, 1, 2);
  EXPECT_NEAR(out[0], 0.25 * 4 + 0.75 * 8, 1e-12);
  EXPECT_NEAR(out[1], 0.25 * -8 + 0.75 * 4, 1e-12);
  // Causal: with one position the second key is never read.
  std::vector<double> first = attention(q, k, v, 1, 1, 1, 2);
  EXPECT_EQ(first, (std::vector<double>{4, -8}));
}

//===----------------------------------------------------------------------===//
// Norm, linear, activation, argmax
//===----------------------------------------------------------------------===//

TEST(ReferenceOps, RmsNormDividesByRootMeanSquare) {
  // mean(9, 16) = 12.5.
  std::vector<double> y = rmsNorm({3, 4}, {1.0f, 2.0f}, 0.0);
  EXPECT_NEAR(y[0], 3 / std::sqrt(12.5), 1e-15);
  EXPECT_NEAR(y[1], 8 / std::sqrt(12.5), 1e-15);
  // eps sits inside the root.
  std::vector<double> z = rmsNorm({0, 0}, {1.0f, 1.0f}, 0.25);
  EXPECT_EQ(z, (std::vector<double>{0, 0}));
  std::vector<double> w = rmsNorm({1, 1}, {1.0f, 1.0f}, 3.0);
  EXPECT_NEAR(w[0], 0.5, 1e-15);
}

TEST(ReferenceOps, LinearIsWeightTimesInputPlusBias) {
  LinearWeights w;
  w.n = 2;
  w.k = 3;
  w.weight = {1, 2, 3, -1, 0, 0.5f};
  w.bias = {10, 20};
  std::vector<double> y = linear({1, 1, 2}, w);
  EXPECT_EQ(y, (std::vector<double>{1 + 2 + 6 + 10, -1 + 0 + 1 + 20}));
  w.bias.clear();
  EXPECT_EQ(linear({1, 1, 2}, w), (std::vector<double>{9, 0}));
}

TEST(ReferenceOps, SiluMulIsGateTimesSigmoidGateTimesUp) {
  std::vector<double> y = siluMul({0, 1, -2}, {5, 2, 3});
  EXPECT_EQ(y[0], 0.0);
  EXPECT_NEAR(y[1], 2 / (1 + std::exp(-1.0)), 1e-15);
  EXPECT_NEAR(y[2], 3 * -2 / (1 + std::exp(2.0)), 1e-15);
}

TEST(ReferenceOps, ArgmaxTakesTheLowestIndexOfTies) {
  EXPECT_EQ(argmax({1, 3, 3, 2}), 1);
  EXPECT_EQ(argmax({-5}), 0);
  EXPECT_EQ(argmax({}), -1);
  double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(argmax({nan, 1, 2, nan}), 2);
}

} // namespace
} // namespace qfuse::reference
