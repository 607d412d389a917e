//===- TensorCoreStage.h - one stage of the mma kernel's pipeline -*- C++ -*-===//
//
// The shared-memory bytes of one cp.async pipeline stage of the tensor-core
// kernel (lib/Conversion/QFToGPU/TensorCoreKernel.cpp, which lays the
// stages out in this order), defined once for the kernel and for the cost
// model that must predict whether a tiling fits (qf-select-tiling).
// Header-only: the cost model's library does not link the conversion.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_CONVERSION_TENSORCORESTAGE_H
#define QFUSE_CONVERSION_TENSORCORESTAGE_H

#include <cstdint>

namespace mlir {
namespace qf {

struct TensorCoreStage {
  int64_t activations; ///< per k group: block_m x block_k f16, swizzled
  int64_t codes;       ///< per warp: block_k / 32 fragment tiles of 32 x 32
                       ///< (2:4: the 32 rows' kept codes, then metadata)
  int64_t scales;      ///< per warp: a 128-byte word slot per scale group
  int64_t zeros;       ///< per warp: the same for zero points, or 0

  /// The stage of a block of `kGroups` k groups and `warps` warps.
  int64_t bytes(int64_t kGroups, int64_t warps) const {
    return kGroups * activations + warps * (codes + scales + zeros);
  }
};

/// Shared memory (reusing the drained pipeline) for `slots` sets of
/// accumulators handed between warps after the K loop: the split-K
/// partials of k groups 1.., a block's sum for its cluster, the gate sums
/// of silu_mul. Each is `groupWarps` warps of block_m f32 per lane.
inline int64_t tensorCoreHandOverBytes(int64_t slots, int64_t groupWarps,
                                       int64_t blockM) {
  return slots * groupWarps * blockM * 32 * 4;
}

/// The stage of a block_m x block_k step over `codeBits`-bit codes (2, 3,
/// 4, 8 or, 2:4 f16, 16) with `groupsPerStep` scale groups in it and, with
/// `zeroPoints`, a zero point (integer or float) per group. Under 2:4
/// (`sparse24`) a warp's 32 rows hold block_k / 2 kept codes each and
/// block_k / 8 bytes of 2-bit positions.
inline TensorCoreStage getTensorCoreStage(int64_t blockM, int64_t blockK,
                                          int64_t codeBits,
                                          int64_t groupsPerStep,
                                          bool zeroPoints,
                                          bool sparse24 = false) {
  TensorCoreStage stage;
  stage.activations = blockM * blockK * 2;
  stage.codes = sparse24 ? 32 * (blockK / 2 * codeBits / 8 + blockK / 8)
                         : blockK / 32 * (32 * 32 * codeBits / 8);
  stage.scales = groupsPerStep * 128;
  stage.zeros = zeroPoints ? groupsPerStep * 128 : 0;
  return stage;
}

/// Shared bytes of the code table of `bits`-bit codes: up to 4 bits one
/// copy per bank (value c at word 32 c + lane, so a warp's lookups never
/// conflict); 8-bit codes one copy of the 256 values, a word each (32
/// copies would take 32 KB of the pipeline's shared memory).
inline int64_t codeTableBytes(int64_t bits) {
  return bits <= 4 ? (int64_t(1) << bits) * 32 * 4 : 256 * 4;
}

/// Sets of accumulators handed over after the K loop: the split-K partials
/// of k groups 1.., the sums cluster ranks 1.. send to rank 0, the gate
/// sums of silu_mul (a second member).
inline int64_t tensorCoreHandOverSlots(int64_t kGroups, int64_t clusterK,
                                       int64_t members) {
  int64_t slots = kGroups - 1;
  slots = clusterK - 1 > slots ? clusterK - 1 : slots;
  return members - 1 > slots ? members - 1 : slots;
}

/// Dynamic shared memory of a tensor-core block: `stages` pipeline stages
/// of `kGroups` k groups and `warps` warps, or (reusing them) the
/// hand-over slots of `groupWarps` warps when larger, then the code table
/// (`tableBytes`, 0 without one).
inline int64_t tensorCoreSharedBytes(const TensorCoreStage &stage,
                                     int64_t stages, int64_t kGroups,
                                     int64_t warps, int64_t clusterK,
                                     int64_t members, int64_t groupWarps,
                                     int64_t blockM, int64_t tableBytes) {
  int64_t pipeline = stages * stage.bytes(kGroups, warps);
  int64_t partials = tensorCoreHandOverBytes(
      tensorCoreHandOverSlots(kGroups, clusterK, members), groupWarps, blockM);
  return (pipeline > partials ? pipeline : partials) + tableBytes;
}

} // namespace qf
} // namespace mlir

#endif // QFUSE_CONVERSION_TENSORCORESTAGE_H
