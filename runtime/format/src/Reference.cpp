//===- Reference.cpp - plain C++ references for kernels -------------------===//

#include "qfuse/format/Reference.h"

#include <cmath>
#include <limits>

namespace qfuse::format {

std::vector<float> referenceMatmul(const float *x, const float *w, int64_t m,
                                   int64_t n, int64_t k) {
  std::vector<float> y(size_t(m * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0;
      for (int64_t p = 0; p < k; ++p)
        sum += double(x[i * k + p]) * double(w[j * k + p]);
      y[i * n + j] = float(sum);
    }
  return y;
}

double relativeError(const std::vector<float> &out,
                     const std::vector<float> &ref) {
  if (out.size() != ref.size())
    return std::numeric_limits<double>::infinity();
  double diff = 0, norm = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    if (std::isnan(out[i]))
      return std::numeric_limits<double>::infinity();
    double d = double(out[i]) - double(ref[i]);
    diff += d * d;
    norm += double(ref[i]) * double(ref[i]);
  }
  return norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
}

} // namespace qfuse::format
