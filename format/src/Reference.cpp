//===- Reference.cpp - plain C++ references for kernels -------------------===//

#include "qfuse/format/Reference.h"

#include "qfuse/format/Numerics.h"

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

std::vector<float> referenceRMSNorm(const float *x, const float *gamma,
                                    int64_t m, int64_t k, double eps) {
  std::vector<float> y(size_t(m * k));
  for (int64_t i = 0; i < m; ++i) {
    double sum = 0;
    for (int64_t p = 0; p < k; ++p)
      sum += double(x[i * k + p]) * double(x[i * k + p]);
    double scale = 1.0 / std::sqrt(sum / double(k) + eps);
    for (int64_t p = 0; p < k; ++p)
      y[i * k + p] = halfToFloat(floatToHalf(
          float(double(x[i * k + p]) * scale * double(gamma[p]))));
  }
  return y;
}

std::vector<float> referenceGatedMatmul(const float *x, const float *gate,
                                        const float *up, int64_t m, int64_t n,
                                        int64_t k) {
  std::vector<float> y(size_t(m * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double g = 0, u = 0;
      for (int64_t p = 0; p < k; ++p) {
        g += double(x[i * k + p]) * double(gate[j * k + p]);
        u += double(x[i * k + p]) * double(up[j * k + p]);
      }
      y[i * n + j] = float(g / (1.0 + std::exp(-g)) * u);
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
