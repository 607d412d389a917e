//===- Reference.h - plain C++ references for kernels ----------*- C++ -*-===//
//
// The independent numbers every kernel is compared against (DESIGN.md,
// Numerics): straightforward loops with double accumulation.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_FORMAT_REFERENCE_H
#define QFUSE_FORMAT_REFERENCE_H

#include <cstdint>
#include <vector>

namespace qfuse::format {

/// y[m, n] = sum_k x[m, k] * w[n, k]: activations [M, K] times the transpose
/// of a dense (e.g. dequantized) weight [N, K], row-major, accumulated in
/// double and rounded once to float.
std::vector<float> referenceMatmul(const float *x, const float *w, int64_t m,
                                   int64_t n, int64_t k);

/// A separate RMSNorm's output, the input a fused RMSNorm prologue must
/// reproduce: x[m, k] / sqrt(mean_k(x[m]^2) + eps) * gamma[k] in double,
/// rounded to f16 (the activation type the norm writes), returned as float.
std::vector<float> referenceRMSNorm(const float *x, const float *gamma,
                                    int64_t m, int64_t k, double eps);

/// The gated (SwiGLU) matmul: y[m, n] = silu(g) * u with
/// g = sum_k x[m, k] * gate[n, k] and u = sum_k x[m, k] * up[n, k], both
/// accumulated in double and combined in double (silu(g) = g / (1 + e^-g)),
/// rounded once to float. `gate` and `up` are dense [N, K] row-major.
std::vector<float> referenceGatedMatmul(const float *x, const float *gate,
                                        const float *up, int64_t m, int64_t n,
                                        int64_t k);

/// ||out - ref||_2 / ||ref||_2 in double (||out - ref|| when ref is zero);
/// infinity if the sizes differ or out holds a NaN.
double relativeError(const std::vector<float> &out,
                     const std::vector<float> &ref);

} // namespace qfuse::format

#endif // QFUSE_FORMAT_REFERENCE_H
