//===- Prepare.h - from the Hessian to the upper factor of H^-1 -*- C++ -*-===//
//
// Everything GPTQ does to H before the column loop, in double:
//
//   1. dead channels: every column i with H[i][i] == 0 (an input that was 0
//      on every calibration row) gets H[i][i] = 1, and the driver sets
//      W[:, i] = 0 (it never reaches the output anyway);
//   2. act-order (optional): columns permuted by descending diag(H), ties in
//      column order (a stable sort), H permuted to P^T H P;
//   3. damping: H[i][i] += f * mean(diag(H)), f = dampFraction (0.01);
//   4. L = cholesky(H), H^-1 = L^-T L^-1, U = cholesky(H^-1, upper), so that
//      H^-1 = U^T U with U upper triangular (the GPTQ repo's `Hinv`).
//
// Retry policy: when a Cholesky fails (a pivot that is not positive and
// finite), start again from step 3 with f *= dampGrowth, at most maxRetries
// times (by default f = 0.01, 0.1, 1). When every attempt fails, or
// mean(diag(H)) is not positive and finite, the result says so (ok = false)
// and the driver falls back to round-to-nearest for the module with a
// warning.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_GPTQ_PREPARE_H
#define QFUSE_GPTQ_PREPARE_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace qfuse::gptq {

struct PrepareOptions {
  /// Damping of the first attempt, as a fraction of mean(diag(H)).
  double dampFraction = 0.01;
  /// Each retry multiplies the fraction by this.
  double dampGrowth = 10.0;
  /// Attempts after the first.
  int maxRetries = 2;
  /// Permute columns by descending diag(H).
  bool actOrder = false;
};

struct Preparation {
  /// A positive definite factor was found; false means fall back to RTN.
  bool ok = false;
  /// Columns (original order, ascending) whose H[i][i] was 0.
  std::vector<int64_t> deadChannels;
  /// permutation[c] = the original column processed at position c
  /// (the identity without act-order).
  std::vector<int64_t> permutation;
  /// The fraction of mean(diag(H)) and the value added to the diagonal in
  /// the last attempt (the successful one when ok).
  double dampFraction = 0;
  double damp = 0;
  double meanDiagonal = 0;
  /// Cholesky attempts made (1 when the first damping sufficed).
  int attempts = 0;
  /// The matrix that was factored: dead channels fixed, permuted, damped,
  /// [K, K] row-major in permuted order. Empty when ok is false.
  std::vector<double> hessian;
  /// U, upper triangular with H^-1 = U^T U, [K, K] row-major in permuted
  /// order (strict lower triangle 0). Empty when ok is false.
  std::vector<double> hinvChol;
  /// What went wrong in each failed attempt, or why none was made.
  std::string message;
};

/// Runs steps 1-4 with the retry policy on a symmetric [K, K] H (row-major).
Preparation prepareHessian(const double *h, int64_t k,
                           const PrepareOptions &options = {});

} // namespace qfuse::gptq

#endif // QFUSE_GPTQ_PREPARE_H
