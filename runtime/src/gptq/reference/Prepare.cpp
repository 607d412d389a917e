//===- Prepare.cpp - dead channels, act-order, damping, factors -----------===//

#include "qfuse/gptq/Prepare.h"

#include "Linalg.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <sstream>

namespace qfuse::gptq {

Preparation prepareHessian(const double *h, int64_t k,
                           const PrepareOptions &options) {
  Preparation prep;
  prep.permutation.resize(size_t(std::max<int64_t>(k, 0)));
  std::iota(prep.permutation.begin(), prep.permutation.end(), int64_t(0));
  if (k <= 0) {
    prep.message = "the Hessian has no columns";
    return prep;
  }

  // 1. Dead channels.
  std::vector<double> base(h, h + k * k);
  for (int64_t i = 0; i < k; ++i)
    if (base[size_t(i * k + i)] == 0.0) {
      base[size_t(i * k + i)] = 1.0;
      prep.deadChannels.push_back(i);
    }

  // 2. Act-order: descending diagonal, stable.
  if (options.actOrder) {
    std::stable_sort(prep.permutation.begin(), prep.permutation.end(),
                     [&](int64_t a, int64_t b) {
                       return base[size_t(a * k + a)] > base[size_t(b * k + b)];
                     });
    std::vector<double> permuted(size_t(k * k));
    for (int64_t i = 0; i < k; ++i)
      for (int64_t j = 0; j < k; ++j)
        permuted[size_t(i * k + j)] =
            base[size_t(prep.permutation[i] * k + prep.permutation[j])];
    base.swap(permuted);
  }

  // 3-4 with retries.
  double sum = 0;
  for (int64_t i = 0; i < k; ++i)
    sum += base[size_t(i * k + i)];
  prep.meanDiagonal = sum / double(k);
  if (!(prep.meanDiagonal > 0) || !std::isfinite(prep.meanDiagonal)) {
    std::ostringstream os;
    os << "mean(diag(H)) = " << prep.meanDiagonal
       << " is not positive and finite";
    prep.message = os.str();
    return prep;
  }

  std::ostringstream log;
  double fraction = options.dampFraction;
  for (int attempt = 0; attempt <= std::max(options.maxRetries, 0);
       ++attempt, fraction *= options.dampGrowth) {
    prep.attempts = attempt + 1;
    prep.dampFraction = fraction;
    prep.damp = fraction * prep.meanDiagonal;
    std::vector<double> damped = base;
    for (int64_t i = 0; i < k; ++i)
      damped[size_t(i * k + i)] += prep.damp;

    std::vector<double> l = damped;
    int64_t pivot = -1;
    const char *stage = "cholesky(H)";
    std::vector<double> u;
    bool factored = detail::choleskyLower(l, k, pivot);
    if (factored) {
      stage = "cholesky(H^-1)";
      factored =
          detail::choleskyUpper(detail::inverseFromCholesky(l, k), k, u, pivot);
    }
    if (factored) {
      prep.ok = true;
      prep.hessian = std::move(damped);
      prep.hinvChol = std::move(u);
      prep.message = log.str();
      return prep;
    }
    if (attempt > 0)
      log << "; ";
    log << "damping " << fraction << " x mean(diag(H)): " << stage
        << " failed at pivot " << pivot;
  }
  prep.message = log.str();
  return prep;
}

} // namespace qfuse::gptq
