//===- ParallelReferenceTest.cpp - the check's reference on all cores -----===//
//
// referenceOnAllCores must give the serial reference's values exactly.
//
//===----------------------------------------------------------------------===//

#include "qfuse/runtime/tooling/ParallelReference.h"

#include "qfuse/format/Reference.h"

#include <gtest/gtest.h>

#include <random>

namespace {

TEST(ParallelReference, EqualsTheSerialReference) {
  std::mt19937 rng(11);
  std::normal_distribution<float> normal;
  // 257 rows split unevenly across the workers; K not a multiple of 8.
  const int64_t m = 3, n = 257, k = 100;
  std::vector<float> x(m * k), w(n * k), up(n * k);
  for (auto *v : {&x, &w, &up})
    for (float &f : *v)
      f = normal(rng);
  using qfuse::runtime::referenceOnAllCores;
  EXPECT_EQ(referenceOnAllCores(x.data(), w.data(), nullptr, m, n, k),
            qfuse::format::referenceMatmul(x.data(), w.data(), m, n, k));
  EXPECT_EQ(referenceOnAllCores(x.data(), w.data(), up.data(), m, n, k),
            qfuse::format::referenceGatedMatmul(x.data(), w.data(), up.data(),
                                                m, n, k));
  // A single row: one worker.
  EXPECT_EQ(referenceOnAllCores(x.data(), w.data(), nullptr, m, 1, k),
            qfuse::format::referenceMatmul(x.data(), w.data(), m, 1, k));
}

} // namespace
