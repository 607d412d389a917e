//===- Hessian.cpp - running H = 2/n sum x x^T ----------------------------===//

#include "qfuse/gptq/Hessian.h"

namespace qfuse::gptq {

HessianAccumulator::HessianAccumulator(int64_t k)
    : k(k), h(size_t(k > 0 ? k * k : 0), 0.0) {}

void HessianAccumulator::add(const float *x, int64_t rows) {
  if (rows <= 0 || k <= 0)
    return;
  // The batch transposed to [K, rows] in double, so that every S[i][j] is a
  // contiguous dot product over the rows, summed in row order.
  std::vector<double> xt(size_t(k * rows));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t i = 0; i < k; ++i)
      xt[size_t(i * rows + r)] = double(x[r * k + i]);

  const double total = double(n + rows);
  const double keep = double(n) / total;
  const double scale = 2.0 / total;
  for (int64_t i = 0; i < k; ++i) {
    const double *xi = xt.data() + i * rows;
    for (int64_t j = 0; j <= i; ++j) {
      const double *xj = xt.data() + j * rows;
      double s = 0;
      for (int64_t r = 0; r < rows; ++r)
        s += xi[r] * xj[r];
      double value = h[size_t(i * k + j)] * keep + scale * s;
      h[size_t(i * k + j)] = value;
      h[size_t(j * k + i)] = value;
    }
  }
  n += rows;
}

} // namespace qfuse::gptq
