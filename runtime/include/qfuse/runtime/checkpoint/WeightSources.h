//===- WeightSources.h - Artifact weights from a checkpoint -----*- C++ -*-===//
//
// What the executor binds for one artifact weight or dense tensor, made on
// the CPU (thread-safe: the loader runs these on many threads at once):
//
//   weight 'model.layers.0.self_attn.q_proj' (the artifact's encoding)
//     <- q_proj.weight   F16/BF16/F32 [N, K]: round-to-nearest into the
//                        encoding (format::quantizeRTN, the one quantizer)
//     <- q_proj.qweight, .qzeros, .scales, .g_idx        (AutoGPTQ v1)
//     <- q_proj.weight_packed, .weight_scale, ...        (compressed-tensors)
//        converted by the checkpoint importers; the converted encoding must be the
//        artifact's (act_order, zero points and scale type included)
//   tensor 'model.norm.weight' (the artifact's dtype)
//     <- model.norm.weight  F16/BF16/F32, same shape, converted by value
//
// The weight `lm_head` (and a tensor `lm_head.weight`) falls back to
// `model.embed_tokens.weight` when the checkpoint has no lm_head and its
// config ties the embeddings (or does not say: transformers' default).
//
// The results are row-major components (Packing.h) that Executor::bindWeight
// checks and repacks to the artifact's layout. Where the checkpoint stores
// them as they are (qfuse-packed; f16/bf16 into the same unquantized
// encoding), storedWeight and storedTensor view the mapped bytes instead of
// copying them.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_RUNTIME_CHECKPOINT_WEIGHTSOURCES_H
#define QFUSE_RUNTIME_CHECKPOINT_WEIGHTSOURCES_H

#include "qfuse/format/Tensor.h"
#include "qfuse/runtime/artifact/Artifact.h"
#include "qfuse/runtime/artifact/WeightLayouts.h"
#include "qfuse/runtime/checkpoint/ModelCheckpoint.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace qfuse::runtime {

/// Quantizes a dense row-major [n, k] checkpoint tensor (`dtype`, mapped
/// bytes at `data`) into `enc`'s row-major components, as
/// format::quantizeRTN would; returns false to leave it to the host's
/// quantizeRTN (the device path: DeviceQuantizer, docs/quantize-at-load.md).
using DenseQuantizer = std::function<bool(
    const format::Encoding &enc, DType dtype, const uint8_t *data,
    int64_t n, int64_t k, format::TensorMap &components)>;

/// The row-major components of `weight` from `checkpoint`. A dense weight
/// into a quantized encoding is quantized by `device` where given and it
/// takes it, else on the host.
format::TensorMap checkpointWeight(const ModelCheckpoint &checkpoint,
                                   const WeightSpec &weight,
                                   const DenseQuantizer *device = nullptr);

/// checkpointWeight's components viewed in `checkpoint`'s mapped files
/// (valid while it is open) where they are the stored bytes: a qfuse-packed
/// weight, or an f16 (bf16) tensor without NaN into the unquantized f16
/// (bf16) encoding (DenseAsStored.h). std::nullopt where checkpointWeight
/// converts; throws what checkpointWeight would for a missing tensor, a
/// wrong shape or another packed encoding. `scanThreads`: the NaN scan's
/// threads (0: every core).
std::optional<RowMajorViews> storedWeight(const ModelCheckpoint &checkpoint,
                                          const WeightSpec &weight,
                                          unsigned scanThreads = 0);

/// Writes the qfuse-packed form of `checkpoint` for `artifact` into the
/// directory `outDir`: every artifact weight as checkpointWeight makes it
/// (quantized with round-to-nearest, or converted from AutoGPTQ /
/// compressed-tensors) and every artifact tensor in the artifact's dtype, so
/// that loading `outDir` later skips quantization. writeQuantizedCheckpoint
/// (QuantizedCheckpoint.h) with no precomputed weights, overwriting what
/// `outDir` holds.
void writePackedCheckpoint(const Artifact &artifact,
                           const ModelCheckpoint &checkpoint,
                           const std::string &outDir);

/// The bytes of dense `tensor` from `checkpoint`, in the artifact's dtype.
/// Conversions between F16, BF16 and F32 round to nearest (even); a finite
/// value that overflows the target type is an error naming the tensor.
std::vector<uint8_t> checkpointTensor(const ModelCheckpoint &checkpoint,
                                      const TensorSpec &tensor);

/// Elements [first, first + count) of checkpointTensor's bytes, written at
/// their place in `out` (which holds the whole tensor): the same bytes, so
/// that parts converted on several threads make the tensor checkpointTensor
/// makes. Only where it converts between F16, BF16 and F32 (throws else:
/// storedTensor views the other tensors).
void checkpointTensorPart(const ModelCheckpoint &checkpoint,
                          const TensorSpec &tensor, uint64_t first,
                          uint64_t count, uint8_t *out);
/// Whether checkpointTensorPart makes `tensor` (false also where reading
/// it fails: checkpointTensor reports that).
bool convertsInParts(const ModelCheckpoint &checkpoint,
                     const TensorSpec &tensor);

/// checkpointTensor's bytes viewed in the mapped file when the stored dtype
/// is the artifact's; std::nullopt where checkpointTensor converts.
std::optional<TensorView> storedTensor(const ModelCheckpoint &checkpoint,
                                       const TensorSpec &tensor);

/// Converts little-endian F16/BF16/F32 elements to `to` (F16, BF16 or
/// F32); `what` names the tensor in errors.
std::vector<uint8_t> convertDense(DType from, const uint8_t *data,
                                  uint64_t count, DType to,
                                  const std::string &what);

/// How random act_order weights get their column order.
enum class RandomPerms {
  /// One shuffle per K: weights that read one input share their perm, as
  /// GPTQ's desc_act gives them (one Hessian per input), so act_order
  /// groups run their fused kernel (PermGuards.h).
  PerInput,
  /// A shuffle of each weight's own: act_order groups run their fallback.
  PerWeight,
};

/// Random weights for benchmarks and tests: N(0, 1) * 0.02 quantized with
/// round-to-nearest into the weight's encoding (act_order: a shuffled
/// k / group g_idx, per `perms`; a named codebook table: evenly spaced
/// values), so the codes are real data, never zeros. Deterministic in
/// `seed`.
format::TensorMap randomWeight(const WeightSpec &weight, uint64_t seed,
                               RandomPerms perms = RandomPerms::PerInput);

/// A random dense tensor: 1 + N(0, 0.02) for norm weights (names ending in
/// "norm.weight"), N(0, 0.02) otherwise, in the tensor's float dtype.
std::vector<uint8_t> randomTensor(const TensorSpec &tensor, uint64_t seed);

/// Checks the artifact's "model" object against the checkpoint's config:
/// vocab_size, hidden_size, num_layers, num_heads and num_kv_heads must agree
/// where both give them; throws naming the field and both values.
void checkModelAgainstConfig(const Artifact &artifact,
                             const ModelCheckpoint &checkpoint);

/// Fills `out` with N(0, 1) * scale on all cores (an lm_head has half a
/// billion elements). Deterministic in `seed`.
void fillNormal(std::vector<float> &out, float scale, uint64_t seed);

} // namespace qfuse::runtime

#endif // QFUSE_RUNTIME_CHECKPOINT_WEIGHTSOURCES_H
