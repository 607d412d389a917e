//===- ChiSquare.h - Sampled frequencies against a distribution -*- C++ -*-===//
//
// The chi-square test the host and the device sampler tests share: the
// statistic of token counts against probabilities (cells expected below 5
// pooled into one) and its critical value at 1 - 1e-4.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_UNITTESTS_RUNTIME_CHISQUARE_H
#define QFUSE_UNITTESTS_RUNTIME_CHISQUARE_H

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

namespace qfuse::testing {

/// The chi-square statistic of `counts` against `p` over `draws`, pooling
/// the cells expected below 5 into one, and its degrees of freedom. A
/// token drawn with probability 0 is a test failure.
inline std::pair<double, int> chiSquare(const std::vector<int64_t> &counts,
                                        const std::vector<double> &p,
                                        int64_t draws) {
  double stat = 0, pooledExpected = 0;
  int64_t pooledCount = 0;
  int cells = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    const double expected = p[i] * draws;
    if (p[i] == 0) {
      EXPECT_EQ(counts[i], 0) << "token " << i << " has probability 0";
      continue;
    }
    if (expected < 5) {
      pooledExpected += expected;
      pooledCount += counts[i];
      continue;
    }
    stat += (counts[i] - expected) * (counts[i] - expected) / expected;
    ++cells;
  }
  if (pooledExpected > 0) {
    stat += (pooledCount - pooledExpected) * (pooledCount - pooledExpected) /
            std::max(pooledExpected, 1e-9);
    ++cells;
  }
  return {stat, cells - 1};
}

/// The chi-square quantile at 1 - 1e-4 (Wilson-Hilferty).
inline double chiSquareCritical(int dof) {
  const double z = 3.719, k = dof;
  const double c = 1 - 2 / (9 * k) + z * std::sqrt(2 / (9 * k));
  return k * c * c * c;
}

} // namespace qfuse::testing

#endif // QFUSE_UNITTESTS_RUNTIME_CHISQUARE_H
