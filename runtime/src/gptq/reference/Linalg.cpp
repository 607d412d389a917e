//===- Linalg.cpp - Cholesky, inverse, upper factor (double) --------------===//

#include "Linalg.h"

#include <cmath>

namespace qfuse::gptq::detail {

bool choleskyLower(std::vector<double> &a, int64_t k, int64_t &failedPivot) {
  // Row by row (Cholesky-Banachiewicz): every inner loop is a dot product of
  // two rows of L, contiguous in row-major storage.
  for (int64_t i = 0; i < k; ++i) {
    double *li = a.data() + i * k;
    for (int64_t j = 0; j <= i; ++j) {
      const double *lj = a.data() + j * k;
      double s = li[j];
      for (int64_t p = 0; p < j; ++p)
        s -= li[p] * lj[p];
      if (j < i) {
        li[j] = s / lj[j];
        continue;
      }
      if (!(s > 0) || !std::isfinite(s)) {
        failedPivot = i;
        return false;
      }
      li[i] = std::sqrt(s);
    }
    for (int64_t j = i + 1; j < k; ++j)
      li[j] = 0.0;
  }
  return true;
}

std::vector<double> inverseFromCholesky(const std::vector<double> &l,
                                        int64_t k) {
  // Column j of L^-1 solves L x = e_j (forward substitution, x_i = 0 for
  // i < j); it is stored as row j of m = (L^-1)^T.
  std::vector<double> m(size_t(k * k), 0.0);
  std::vector<double> x(static_cast<size_t>(k));
  for (int64_t j = 0; j < k; ++j) {
    for (int64_t i = j; i < k; ++i) {
      const double *li = l.data() + i * k;
      double s = i == j ? 1.0 : 0.0;
      for (int64_t p = j; p < i; ++p)
        s -= li[p] * x[p];
      x[i] = s / li[i];
    }
    for (int64_t i = j; i < k; ++i)
      m[size_t(j * k + i)] = x[i];
  }
  // A^-1[a][b] = sum_p L^-1[p][a] L^-1[p][b] = dot(m[a], m[b]) over
  // p >= max(a, b) (L^-1 is lower triangular).
  std::vector<double> inv(size_t(k * k));
  for (int64_t a = 0; a < k; ++a)
    for (int64_t b = 0; b <= a; ++b) {
      const double *ma = m.data() + a * k, *mb = m.data() + b * k;
      double s = 0;
      for (int64_t p = a; p < k; ++p)
        s += ma[p] * mb[p];
      inv[size_t(a * k + b)] = s;
      inv[size_t(b * k + a)] = s;
    }
  return inv;
}

bool choleskyUpper(const std::vector<double> &b, int64_t k,
                   std::vector<double> &u, int64_t &failedPivot) {
  std::vector<double> l = b;
  if (!choleskyLower(l, k, failedPivot))
    return false;
  u.assign(size_t(k * k), 0.0);
  for (int64_t i = 0; i < k; ++i)
    for (int64_t j = 0; j <= i; ++j)
      u[size_t(j * k + i)] = l[size_t(i * k + j)];
  return true;
}

} // namespace qfuse::gptq::detail
