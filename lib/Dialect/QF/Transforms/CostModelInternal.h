//===- CostModelInternal.h - shared by selection and listing -*- C++ -*-===//
//
// Private to lib/Dialect/QF/Transforms: the candidate enumeration
// (MmaCandidates.cpp) and launch arithmetic that qf::selectTiling
// (CostModel.cpp) chooses from and qf::listTilingCandidates
// (TilingCandidates.cpp) lists for the tuner, so that both see the same
// candidates.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_LIB_DIALECT_QF_TRANSFORMS_COSTMODELINTERNAL_H
#define QFUSE_LIB_DIALECT_QF_TRANSFORMS_COSTMODELINTERNAL_H

#include "qfuse/Conversion/TensorCoreStage.h"
#include "qfuse/Dialect/QF/Transforms/CostModel.h"
#include "qfuse/Dialect/QF/Transforms/MmaTimeModel.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::qf::costmodel {

/// Lanes of a warp; each loads `vec_bytes` per row per iteration.
inline constexpr int64_t kWarpLanes = 32;

/// The shared memory a wgmma block may use.
inline constexpr int64_t kWgmmaSharedBudget = 200 * 1024;

/// Gate/up (silu_mul) on wgmma from this batch on, for weights of at
/// least kGatedWgmmaMinWeights elements each (gate's N x K): measured on
/// the training gate/up shapes (bench/results/2026-12-03-h200-s22, gw/),
/// 14336 x 4096 ran 50 us against mma.sync's 70 at M = 64 and 95 against
/// 116 at M = 128, 20480 x 5120 tied at 64 and won from 96, and 5632 x
/// 2048 (11.5M) stayed faster or tied on mma.sync through M = 256; at
/// M = 32 mma.sync won on all three.
inline constexpr int64_t kGatedWgmmaMinM = 64;
inline constexpr int64_t kGatedWgmmaMinWeights = 32 * 1024 * 1024;

/// Calls `fn(launch, its prediction)` for every mma.sync candidate of `m`
/// rows times `type` that the kernel can take (warps, shared memory, K
/// steps, group size, clusters on sm_90 only), in the order of the block_m
/// candidates times the swept (block_n, split_k, block_k, stages, cluster_k).
void forEachMmaCandidate(
    int64_t m, WeightType type, const TilingTarget &target, bool gated,
    llvm::function_ref<void(const MmaLaunchShape &, const MmaTimePrediction &)>
        fn);

/// The matvec tiling for `m` rows (1..8), or null when no `vec_bytes`
/// divides the packed row (MatvecSelection.cpp); `why` says what it
/// weighed.
TilingAttr selectMatvec(int64_t m, WeightType type, const TilingTarget &target,
                        llvm::raw_string_ostream &why);

/// The #qf.tiling of an mma.sync launch.
TilingAttr getMmaTiling(MLIRContext *ctx, const MmaLaunchShape &launch);

/// Shared memory of a wgmma block of `blockM` rows with `members`
/// warpgroups per k group (2 under silu_mul): the pipeline, or (reusing
/// it) the sums the other k groups, cluster blocks and gate warps hand over
/// (TensorCorePlan's layout).
int64_t wgmmaSharedBytes(const TensorCoreStage &stage, int64_t blockM,
                         int64_t split, int64_t stages, int64_t cluster,
                         int64_t members);

} // namespace mlir::qf::costmodel

#endif // QFUSE_LIB_DIALECT_QF_TRANSFORMS_COSTMODELINTERNAL_H
