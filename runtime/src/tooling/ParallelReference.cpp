//===- ParallelReference.cpp - the reference matmul on all cores ----------===//

#include "qfuse/runtime/tooling/ParallelReference.h"

#include "ParallelRows.h"

#include "qfuse/format/Reference.h"

#include <algorithm>

namespace qfuse::runtime {

std::vector<float> referenceOnAllCores(const float *x, const float *w,
                                       const float *up, int64_t m, int64_t n,
                                       int64_t k) {
  std::vector<float> y(static_cast<size_t>(m * n));
  detail::parallelRows(n, [&](int64_t first, int64_t last) {
    const int64_t rows = last - first;
    std::vector<float> part =
        up ? format::referenceGatedMatmul(x, w + first * k, up + first * k,
                                          m, rows, k)
           : format::referenceMatmul(x, w + first * k, m, rows, k);
    for (int64_t i = 0; i < m; ++i)
      std::copy(part.begin() + i * rows, part.begin() + (i + 1) * rows,
                y.begin() + i * n + first);
  });
  return y;
}

} // namespace qfuse::runtime
