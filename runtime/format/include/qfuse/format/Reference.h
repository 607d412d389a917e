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

/// ||out - ref||_2 / ||ref||_2 in double (||out - ref|| when ref is zero);
/// infinity if the sizes differ or out holds a NaN.
double relativeError(const std::vector<float> &out,
                     const std::vector<float> &ref);

} // namespace qfuse::format

#endif // QFUSE_FORMAT_REFERENCE_H
