//===- Hessian.h - H = 2/n sum x x^T from calibration rows -----*- C++ -*-===//
//
// The Hessian of the layer-wise objective ||W X^T - Q X^T||^2 / n with
// respect to one row of W: H = (2 / n) * sum over the n calibration rows x
// (the layer's inputs, [n, K]) of x x^T, a symmetric [K, K] matrix.
//
// Accumulated batch by batch with the running-count update of the reference
// implementations (GPTQ repo, LLM Compressor): after a batch of m rows,
//
//   H <- H * (n / (n + m)) + (2 / (n + m)) * S,   S = sum_{x in batch} x x^T
//   n <- n + m
//
// so H is always the Hessian of the rows seen so far. This reference keeps H
// and S in double (each S[i][j] is a sequential sum over the batch's rows in
// order, the products formed in double from the f32 inputs); the GPU
// accumulates in f32 with a cuBLAS GEMM, which the preparation step (in
// double) and the whole-layer tolerances absorb.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_GPTQ_HESSIAN_H
#define QFUSE_GPTQ_HESSIAN_H

#include <cstddef>
#include <cstdint>
#include <vector>

namespace qfuse::gptq {

class HessianAccumulator {
public:
  /// An empty accumulator (n = 0, H = 0) for K input columns.
  explicit HessianAccumulator(int64_t k);

  /// Adds `rows` calibration rows, x row-major [rows, K] in f32.
  void add(const float *x, int64_t rows);

  int64_t columns() const { return k; }
  /// n, the rows added so far.
  int64_t samples() const { return n; }
  /// H, row-major [K, K], both triangles filled (all 0 before any row).
  const std::vector<double> &matrix() const { return h; }

private:
  int64_t k;
  int64_t n = 0;
  std::vector<double> h;
};

} // namespace qfuse::gptq

#endif // QFUSE_GPTQ_HESSIAN_H
