//===- Ops.h - The decoder's operations, one function each ------*- C++ -*-===//
//
// The mathematical definition of every qf op a decode step uses, in double,
// without rounding (the decoder rounds at op boundaries; ReferenceDecoder.h).
// Exposed so tests can check each against hand-computed values.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_REFERENCE_OPS_H
#define QFUSE_REFERENCE_OPS_H

#include "qfuse/reference/ModelConfig.h"
#include "qfuse/reference/ModelWeights.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace qfuse::reference {

/// x / sqrt(mean(x^2) + eps) * gamma.
std::vector<double> rmsNorm(const std::vector<double> &x,
                            const std::vector<float> &gamma, double eps);

/// y[n] = sum_k x[k] * W[n, k] (+ bias[n]), accumulated in double.
std::vector<double> linear(const std::vector<double> &x,
                           const LinearWeights &w);

/// The rotary frequencies inv_freq[i] = theta^(-2i / headDim), i < headDim/2,
/// rescaled as transformers' _compute_llama3_parameters when `llama3` is
/// given: wavelength 2 pi / f above original / low_freq_factor divides f by
/// factor, below original / high_freq_factor keeps it, and in between
/// interpolates with s = (original / wavelength - low) / (high - low):
/// f' = (1 - s) f / factor + s f.
std::vector<double> ropeInvFreq(int64_t headDim, double theta,
                                const std::optional<Llama3RopeScaling> &llama3);

/// Rotate-half rotary embedding of `heads` heads of `headDim` values, in
/// place, at `position`: with a = position * invFreq[i], j = i + headDim/2,
///   x'[i] = x[i] cos a - x[j] sin a,   x'[j] = x[j] cos a + x[i] sin a.
void applyRotary(std::vector<double> &x, int64_t heads, int64_t headDim,
                 int64_t position, const std::vector<double> &invFreq);

/// Causal GQA attention of one query row over `positions` cached rows:
/// `keys` and `values` are [positions, kvHeads * headDim]. Query head h
/// reads kv head h / (heads / kvHeads); scores q.k / sqrt(headDim), softmax
/// over the positions (max-subtracted), output sum_p softmax_p v_p.
/// Returns [heads * headDim].
std::vector<double> attention(const std::vector<double> &q,
                              const std::vector<double> &keys,
                              const std::vector<double> &values,
                              int64_t positions, int64_t heads, int64_t kvHeads,
                              int64_t headDim);

/// silu(gate) * up = gate / (1 + exp(-gate)) * up, elementwise.
std::vector<double> siluMul(const std::vector<double> &gate,
                            const std::vector<double> &up);

/// The lowest index of a largest value (NaNs are never largest); -1 when
/// `values` is empty.
int64_t argmax(const std::vector<double> &values);

} // namespace qfuse::reference

#endif // QFUSE_REFERENCE_OPS_H
