//===- Linalg.h - the dense double factorizations GPTQ needs ---*- C++ -*-===//
//
// Plain loops over row-major [K, K] double matrices (K up to a few thousand):
// the Cholesky factor, the inverse from it, and the upper factor of the
// inverse, as torch.linalg.cholesky / cholesky_inverse / cholesky(upper)
// compute them in the GPTQ repo. Internal to qfuse_gptq (Prepare.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_GPTQ_LINALG_H
#define QFUSE_GPTQ_LINALG_H

#include <cstddef>
#include <cstdint>
#include <vector>

namespace qfuse::gptq::detail {

/// A = L L^T: overwrites the symmetric positive definite `a` with its lower
/// factor L (strict upper triangle zeroed). Fails, leaving `a` undefined, at
/// the first pivot that is not positive and finite; `failedPivot` says which.
bool choleskyLower(std::vector<double> &a, int64_t k, int64_t &failedPivot);

/// A^-1 = L^-T L^-1 from the lower factor L of A (cholesky_inverse).
std::vector<double> inverseFromCholesky(const std::vector<double> &l,
                                        int64_t k);

/// B = U^T U with U upper triangular (torch.linalg.cholesky(B, upper=True)):
/// the transpose of B's lower factor. Fails like choleskyLower.
bool choleskyUpper(const std::vector<double> &b, int64_t k,
                   std::vector<double> &u, int64_t &failedPivot);

} // namespace qfuse::gptq::detail

#endif // QFUSE_GPTQ_LINALG_H
