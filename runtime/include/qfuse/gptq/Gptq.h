//===- Gptq.h - GPTQ (Frantar et al., Algorithm 1) in plain C++ -*- C++ -*-===//
//
// Quantizes a dense [N, K] weight (N outputs, K inputs, Hugging Face's
// [out, in]) onto an encoding's grid, given the Hessian of its inputs
// (Hessian.h), and returns what format::quantizeRTN returns: a
// format::Unpacked that format::pack writes into the packed components.
//
//   HessianAccumulator acc(k);  acc.add(x, rows);             // calibration
//   GptqResult r;
//   if (!quantizeGPTQ(w, n, k, acc.matrix().data(), enc, {}, r, error)) ...
//   format::pack(enc, r.weight, n, k, components, error);
//
// Steps (docs/gptq.md has the whole algorithm and the policies):
//   prepareHessian (Prepare.h): dead channels, act-order, damping, the upper
//   factor U of H^-1, retried with more damping; RTN fallback on failure.
//   Group parameters: per channel and static groups fitted up front on the
//   (dead-channel-zeroed) weights in their original column order; otherwise
//   at each group's first column on the updated weights.
//   Blocks of blockSize columns: quantizeBlock, then lazyUpdate (Block.h).
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_GPTQ_GPTQ_H
#define QFUSE_GPTQ_GPTQ_H

#include "qfuse/format/Encoding.h"
#include "qfuse/format/Packing.h"
#include "qfuse/gptq/Prepare.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace qfuse::gptq {

struct GptqOptions {
  /// Columns per block of the lazy update (the GPU kernel's tile width).
  int64_t blockSize = 128;
  /// Damping and its retries (PrepareOptions::actOrder is ignored: use
  /// actOrder below).
  PrepareOptions prepare;
  /// Process columns by descending diag(H).
  bool actOrder = false;
  /// Fit every group's parameters up front on the original weights (the
  /// GPTQ repo's static_groups). Without it, act-order permutes the groups
  /// too, and the encoding must have act_order to store g_idx.
  bool staticGroups = false;
  /// Codebook with a named table: its 2^bits values.
  const float *table = nullptr;
  /// When no damping makes H positive definite: round to nearest (true) or
  /// fail (false).
  bool fallbackToRTN = true;
};

/// What happened, for logs and tests.
struct GptqReport {
  /// The Hessian could not be factored: the weight is quantizeRTN's.
  bool fellBackToRTN = false;
  /// Human-readable warnings (the fallback, dead channels).
  std::vector<std::string> warnings;
  /// Columns whose H[i][i] was 0; their weights were set to 0.
  std::vector<int64_t> deadChannels;
  /// Damping that succeeded (the last one tried under fallback).
  double dampFraction = 0;
  double damp = 0;
  int attempts = 0;
  /// permutation[c] = the original column quantized at position c.
  std::vector<int64_t> permutation;
  bool actOrder = false;
  bool staticGroups = false;
  int64_t blockSize = 0;

  /// One line: "gptq: 1 attempt, damping 0.01 x mean(diag(H)), 2 dead
  /// channels, act-order" or "gptq: fell back to RTN (...)".
  std::string summary() const;
};

struct GptqResult {
  /// The quantized weight, as quantizeRTN produces it (codes in original
  /// column order, scales, zeros, NVFP4 global scale, g_idx when the
  /// encoding has act_order, a named table's values).
  format::Unpacked weight;
  /// sum over rows of rowLoss: GPTQ's estimate of 1/2 sum_r (w_r - q_r) H
  /// (w_r - q_r)^T with the damped H. NaN after an RTN fallback.
  double loss = 0;
  /// [N] per row: sum over columns of 0.5 e^2 (Block.h).
  std::vector<double> rowLoss;
  GptqReport report;
};

/// GPTQ of the row-major [N, K] weight `w` with the symmetric row-major
/// [K, K] Hessian `hessian` onto `enc` (dense and quantized). Fails, with a
/// message, on an invalid encoding or shape, a grid the options cannot use
/// (dynamic groups that neither divide nor are a multiple of the block
/// size, dynamic act-order groups without act_order in the encoding), a
/// scale that does not fit its type, or an unfactorable H when
/// fallbackToRTN is off.
bool quantizeGPTQ(const float *w, int64_t n, int64_t k, const double *hessian,
                  const format::Encoding &enc, const GptqOptions &options,
                  GptqResult &result, std::string &error);

/// The same from a preparation made elsewhere (prepareHessian on another
/// Hessian, or a factor imported from the GPU to compare the rest of the
/// pipeline): `prep.permutation` decides the column order (act-order when
/// it is not the identity, whatever options.actOrder says) and
/// `prep.hinvChol` is U; a preparation that is not ok falls back to RTN
/// like the overload above.
bool quantizeGPTQ(const float *w, int64_t n, int64_t k, const Preparation &prep,
                  const format::Encoding &enc, const GptqOptions &options,
                  GptqResult &result, std::string &error);

} // namespace qfuse::gptq

#endif // QFUSE_GPTQ_GPTQ_H
