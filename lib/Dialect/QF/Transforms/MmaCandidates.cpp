//===- MmaCandidates.cpp - the mma.sync tilings selection weighs ----------===//
//
// The mma.sync tilings the tuning sweeps measure and the time model is
// fitted on, kept where the kernel can take them (warps, shared memory, K
// steps, group size, clusters on sm_90 only), each with its predicted time:
// qf::selectTiling (CostModel.cpp) picks the fastest, listTilingCandidates
// (TilingCandidates.cpp) lists them for the tuner.
//
//===----------------------------------------------------------------------===//

#include "CostModelInternal.h"

#include "qfuse/Conversion/DecodeFamily.h"
#include "qfuse/format/MmaLayout.h"

#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::qf;
using namespace mlir::qf::costmodel;

namespace {
/// One mma.sync tiling candidate: (block_n, split_k, block_k, stages,
/// cluster_k); block_m is chosen apart.
struct MmaCandidate {
  int64_t blockN, splitK, blockK, stages, clusterK;
};

/// The tilings the tuning sweeps measure (bench/tune.py's candidates) and
/// the time model is fitted on: up to batch 32 block_k 64 or 128 with
/// clusters of 2 or 4 for the wider blocks; past it block_k 64, narrower
/// splits and clusters of 2.
SmallVector<MmaCandidate> mmaCandidates(int64_t m) {
  SmallVector<MmaCandidate> out;
  if (m <= 32) {
    for (auto [bn, s] : {std::pair<int64_t, int64_t>{128, 1}, {128, 2},
                         {64, 2}, {64, 4}, {32, 4}, {32, 8}})
      for (auto [bk, st] :
           {std::pair<int64_t, int64_t>{64, 3}, {64, 4}, {128, 3}})
        out.push_back({bn, s, bk, st, 1});
    for (auto [bn, s] :
         {std::pair<int64_t, int64_t>{128, 1}, {128, 2}, {64, 2}, {64, 4}})
      for (auto [bk, st] : {std::pair<int64_t, int64_t>{64, 4}, {128, 3}})
        for (int64_t c : {2, 4})
          out.push_back({bn, s, bk, st, c});
    return out;
  }
  for (auto [bn, s] : {std::pair<int64_t, int64_t>{128, 1}, {64, 1}, {64, 2},
                       {32, 2}, {32, 4}})
    for (int64_t st : {3, 4})
      for (int64_t c : {1, 2})
        out.push_back({bn, s, 64, st, c});
  return out;
}

/// mma.sp past 16 rows: the tilings its own sweep measured (block_k 64, 4
/// stages, block_n 32-128 in 4-16 warps; bench/results/2026-12-06-s44,
/// sparse-blockm-*): its fastest at M = 32 and 64 were all among them, and
/// the dense list's clusters of 4 and block_k 128 were up to 1.8x slower
/// there (clusters of 2; block_n 128 only without, kSparseClusterMaxBlockN).
SmallVector<MmaCandidate> sparseMmaCandidates() {
  SmallVector<MmaCandidate> out;
  for (auto [bn, s] : {std::pair<int64_t, int64_t>{32, 4}, {64, 2}, {64, 4},
                       {128, 1}, {128, 2}, {128, 4}})
    for (int64_t c : {1, 2})
      out.push_back({bn, s, 64, 4, c});
  return out;
}

/// block_m candidates for `m` rows, those the sweeps measured: the batch
/// rounded up to 16 (at most 64), and 16 up to 32 rows (two m blocks
/// streaming one weight tile through L2), 32 past 32 rows and 128 from
/// 128. At 33-64 rows two 32-row blocks decode each weight tile twice but
/// put twice the warps on the SMs; the time model weighs the two.
SmallVector<int64_t> mmaBlockMs(int64_t m) {
  SmallVector<int64_t> out{std::min<int64_t>(64, llvm::alignTo(m, 16))};
  if (m > 16 && m <= 32)
    out.push_back(16);
  if (m > 32)
    out.push_back(32);
  if (m >= 128)
    out.push_back(128);
  return out;
}

/// The most K slices (split_k x cluster_k) of an mma.sp candidate.
constexpr int64_t kMaxSparseKSlices = 8;
/// The widest mma.sp block that runs in a cluster: the time model ranks
/// block_n 128 in clusters first at every batch where the sweeps and the
/// zoo measured it slower than without (docs/cost-model.md).
constexpr int64_t kSparseClusterMaxBlockN = 64;

} // namespace


void costmodel::forEachMmaCandidate(
    int64_t m, WeightType type, const TilingTarget &target, bool gated,
    llvm::function_ref<void(const MmaLaunchShape &, const MmaTimePrediction &)>
        fn) {
  // silu_mul: block_n counts gate rows; each n warp has an up twin.
  const int64_t members = gated ? 2 : 1;
  // Blocks cover whole 32-row tiles (rows past N are padding, not stored),
  // a last block may reach past them, and K steps may end past K
  // (zero-filled): no block size needs to divide the shape.
  int64_t n = qfuse::format::mmaPaddedN(type.getN() / members),
          k = type.getK();
  EncodingAttr enc = type.getEncoding();
  int64_t group = enc.isPerChannel() || !enc.isQuantized() ? 0
                                                           : enc.getGroupSize();
  int64_t bits = enc.getCodeBits();
  int64_t scaleBytes = enc.isQuantized() ? getTypeBytes(enc.getScaleType()) : 0;
  int64_t zeroBits = enc.getZeroPoint() == ZeroPointKind::Int     ? bits
                     : enc.getZeroPoint() == ZeroPointKind::Float ? 8 * scaleBytes
                                                                  : 0;
  // 2:4 rows are copied in whole steps (TensorCorePlan.cpp).
  const bool sparse = enc.isSparse24();
  auto blockKFits = [&](int64_t bk) {
    return ((bk == 64 && !sparse) || k % bk == 0) &&
           (group == 0 || group % bk == 0 || (bk % group == 0 && group % 16 == 0));
  };
  MmaTimeTarget timeTarget{target.smCount, double(target.bandwidthGbps)};
  const SmallVector<MmaCandidate> candidates =
      sparse && m > 16 ? sparseMmaCandidates() : mmaCandidates(m);
  for (int64_t bm : mmaBlockMs(m)) {
    // mma.sp at block_m = 128 needs 255 registers and spills on sm_80
    // (ptxas, 2:4 f16): 2:4 takes two blocks of 64 instead.
    if (sparse && bm > 64)
      continue;
    for (MmaCandidate c : candidates) {
      int64_t warps = c.blockN / 32 * c.splitK * members;
      if (warps > 16 || !blockKFits(c.blockK) ||
          int64_t(llvm::divideCeil(k, c.blockK)) < c.splitK * c.clusterK ||
          (c.clusterK > 1 && (target.smVersion < 90 || gated)))
        continue;
      // mma.sp in at most 8 K slices, and block_n 128 without a cluster:
      // the time model ranks both first where they measured slower, and no
      // fit of its mma.sp term has fixed that yet (docs/cost-model.md).
      if (sparse && (c.splitK * c.clusterK > kMaxSparseKSlices ||
                     (c.clusterK > 1 && c.blockN > kSparseClusterMaxBlockN)))
        continue;
      int64_t shared =
          getMmaSharedBytes(type, gated, bm, c.blockN, c.blockK, c.splitK,
                            c.stages, c.clusterK);
      if (shared > target.maxSharedPerBlock)
        continue;
      MmaLaunchShape launch{m,        n,       k,         bm,
                            c.blockN, c.blockK, c.splitK, c.stages,
                            c.clusterK};
      launch.members = members;
      launch.codeBits = bits;
      launch.decode = getDecodeFamily(enc.getFormat());
      launch.groupSize = group;
      launch.scaleBytes = scaleBytes;
      launch.zeroBits = zeroBits;
      launch.sparse24 = sparse;
      launch.sharedBytes = shared;
      fn(launch, predictMmaTime(launch, timeTarget));
    }
  }
}

TilingAttr costmodel::getMmaTiling(MLIRContext *ctx,
                                   const MmaLaunchShape &launch) {
  return TilingAttr::get(ctx, KernelKind::MMA, launch.blockM, launch.blockN,
                         launch.blockK, /*threadsPerRow=*/kWarpLanes,
                         /*vecBytes=*/16, /*kUnroll=*/1, launch.splitK,
                         launch.stages, launch.clusterK);
}
