//===- GptqTestUtil.h - synthetic layers for the GPTQ tests ----*- C++ -*-===//
//
// Correlated calibration inputs (x = z A with a random mixing A and uneven
// channel scales, as LLM activations are), weights, and the output error
// ||X (W - W')^T|| / ||X W^T|| that GPTQ minimizes.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_UNITTESTS_GPTQ_GPTQTESTUTIL_H
#define QFUSE_UNITTESTS_GPTQ_GPTQTESTUTIL_H

#include "qfuse/format/Packing.h"
#include "qfuse/format/Reference.h"
#include "qfuse/gptq/Hessian.h"

#include "TestUtil.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace qfuse::gptq::test {

/// A mixing of K channels: x = z * A * diag(s) for z ~ N(0, I), with A
/// [K, K] Gaussian (a Marchenko-Pastur spread of covariance eigenvalues) and
/// channel scales s = exp(N(0, 0.5)).
struct Mixing {
  int64_t k = 0;
  std::vector<float> a;      // [K, K]
  std::vector<float> scales; // [K]

  Mixing(int64_t k, std::mt19937 &rng)
      : k(k), a(size_t(k * k)), scales(size_t(k)) {
    std::normal_distribution<float> normal(0.0f, 1.0f);
    const float norm = 1.0f / std::sqrt(float(k));
    for (float &v : a)
      v = normal(rng) * norm;
    std::normal_distribution<float> logScale(0.0f, 0.5f);
    for (float &s : scales)
      s = std::exp(logScale(rng));
  }

  /// `rows` fresh input rows, [rows, K].
  std::vector<float> sample(int64_t rows, std::mt19937 &rng) const {
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> z(size_t(rows * k)), x(size_t(rows * k), 0.0f);
    for (float &v : z)
      v = normal(rng);
    std::vector<double> row(static_cast<size_t>(k));
    for (int64_t r = 0; r < rows; ++r) {
      std::fill(row.begin(), row.end(), 0.0);
      for (int64_t p = 0; p < k; ++p) {
        const double zp = z[size_t(r * k + p)];
        const float *ap = a.data() + p * k;
        for (int64_t i = 0; i < k; ++i)
          row[size_t(i)] += zp * ap[i];
      }
      for (int64_t i = 0; i < k; ++i)
        x[size_t(r * k + i)] = float(row[size_t(i)]) * scales[size_t(i)];
    }
    return x;
  }
};

inline std::vector<double> hessianOf(const std::vector<float> &x, int64_t k) {
  HessianAccumulator acc(k);
  acc.add(x.data(), int64_t(x.size()) / k);
  return acc.matrix();
}

/// The dense weight an Unpacked stands for (fails the test on error).
inline std::vector<float> dequantized(const format::Encoding &enc,
                                      const format::Unpacked &u, int64_t n,
                                      int64_t k) {
  std::vector<float> w;
  std::string error;
  EXPECT_TRUE(format::dequantize(enc, u, n, k, w, error)) << error;
  return w;
}

/// ||X Wq^T - X W^T|| / ||X W^T|| over the rows of x.
inline double outputError(const std::vector<float> &x,
                          const std::vector<float> &w,
                          const std::vector<float> &wq, int64_t n, int64_t k) {
  const int64_t m = int64_t(x.size()) / k;
  return format::relativeError(
      format::referenceMatmul(x.data(), wq.data(), m, n, k),
      format::referenceMatmul(x.data(), w.data(), m, n, k));
}

/// 1/2 sum_r d_r H d_r^T with d = w - wq (double), H row-major [K, K].
inline double quadraticLoss(const std::vector<float> &w,
                            const std::vector<float> &wq,
                            const std::vector<double> &h, int64_t n,
                            int64_t k) {
  double total = 0;
  std::vector<double> d(static_cast<size_t>(k));
  for (int64_t r = 0; r < n; ++r) {
    for (int64_t i = 0; i < k; ++i)
      d[size_t(i)] = double(w[size_t(r * k + i)]) - wq[size_t(r * k + i)];
    for (int64_t i = 0; i < k; ++i) {
      double s = 0;
      for (int64_t j = 0; j < k; ++j)
        s += h[size_t(i * k + j)] * d[size_t(j)];
      total += 0.5 * d[size_t(i)] * s;
    }
  }
  return total;
}

/// The identity [K, K].
inline std::vector<double> identity(int64_t k) {
  std::vector<double> h(size_t(k * k), 0.0);
  for (int64_t i = 0; i < k; ++i)
    h[size_t(i * k + i)] = 1.0;
  return h;
}

} // namespace qfuse::gptq::test

#endif // QFUSE_UNITTESTS_GPTQ_GPTQTESTUTIL_H
