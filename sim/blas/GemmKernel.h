//===- GemmKernel.h - the host GEMM behind every stand-in cuBLAS gemm -----===//
//
// C = alpha op(A) op(B) + beta C, column-major, for any mix of the element
// types cuBLAS takes. Products are summed in double, in k order, and each
// C element is rounded once to its type: an oracle at least as precise
// as any cuBLAS compute type. beta = 0 never reads C; alpha = 0 (or
// k = 0) never reads A or B.
//
//===----------------------------------------------------------------------===//
#ifndef QFUSE_SIM_BLAS_GEMMKERNEL_H
#define QFUSE_SIM_BLAS_GEMMKERNEL_H

#include <cstdint>

namespace qfuse::sim {

enum class Element { F16, BF16, F32, F64, I8, I32 };

/// A matrix as stored (column-major, leading dimension `ld`) and whether
/// the product reads it transposed.
struct Operand {
  const void *data = nullptr;
  Element type = Element::F32;
  int64_t ld = 1;
  bool transposed = false;
};

struct GemmArgs {
  int64_t m = 0, n = 0, k = 0;
  Operand a, b;
  void *c = nullptr;
  Element cType = Element::F32;
  int64_t ldc = 1;
  double alpha = 1.0, beta = 0.0;
};

void gemm(const GemmArgs &args);

} // namespace qfuse::sim

#endif // QFUSE_SIM_BLAS_GEMMKERNEL_H
