//===- TilingCandidates.cpp - the tilings a tuning sweep measures ---------===//
//
// listTilingCandidates: for one weight type and batch, the tilings of every
// kernel family the tuning mode measures (qfuse-compile --list-tilings,
// bench/tune.py), the cost model's default first. It enumerates what the
// selection in CostModel.cpp chooses from, through the helpers the two share
// (CostModelInternal.h).
//
//===----------------------------------------------------------------------===//

#include "qfuse/Dialect/QF/Transforms/CostModel.h"

#include "CostModelInternal.h"

#include "qfuse/Conversion/TensorCoreStage.h"
#include "qfuse/Conversion/TensorCoreSupport.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::qf;
using namespace mlir::qf::costmodel;

namespace {
/// The matvec tilings the sweeps measure, (block_n, k_unroll, split_k), in
/// their order: 2-4 rows and 64 B in flight, then 128 B, then split 2 and
/// split 4 (docs/defaults.md).
constexpr int64_t kMatvecSweep[][3] = {
    {8, 2, 1},  {16, 1, 1}, {4, 2, 2}, {2, 2, 4}, {8, 4, 1},
    {16, 2, 1}, {32, 1, 1}, {8, 1, 2}, {8, 2, 2}, {16, 1, 2},
    {4, 4, 2},  {4, 2, 4},  {4, 1, 4}};
/// Codes one lane of a matvec keeps in flight at most (the generator's
/// budget: rows x k_unroll x vec_bytes).
constexpr int64_t kMatvecMaxBytesInFlight = 128;
/// From this M the dequantize + cuBLAS fallback is measured too (below it
/// the fused kernels win by far; the default switches at kDequantGemmMinM).
constexpr int64_t kDequantGemmListMinM = 64;

SmallVector<TilingCandidate>
listMatvec(int64_t m, WeightType type, const TilingTarget &target, bool gated) {
  SmallVector<TilingCandidate> out;
  EncodingAttr enc = type.getEncoding();
  std::optional<int64_t> vec = getMatvecVecBytes(type);
  if (m > kMatvecMaxM || !vec || matvecRefusesEncoding(enc, target.smVersion))
    return out;
  int64_t rowBytes = getPackedRowBytes(type);
  for (const auto &[blockN, unroll, split] : kMatvecSweep) {
    int64_t warps = getMatvecWarpsPerBlock(split);
    int64_t rowGroups = warps / split;
    if (rowBytes % (split * *vec) != 0 || blockN % rowGroups != 0)
      continue;
    int64_t rows = blockN / rowGroups;
    if (rows * m > 32 || unroll * rows * *vec > kMatvecMaxBytesInFlight ||
        (gated && rows % 2 != 0))
      continue;
    out.push_back({TilingAttr::get(type.getContext(), KernelKind::MatVec, m,
                                   blockN, /*blockK=*/0, kWarpLanes, *vec,
                                   unroll, split, /*stages=*/1,
                                   /*clusterK=*/1)});
  }
  return out;
}

SmallVector<TilingCandidate> listMma(int64_t m, WeightType type,
                                     const TilingTarget &target, bool gated) {
  SmallVector<TilingCandidate> out;
  if (m < tensorCoreMinMFor(type, target))
    return out;
  forEachMmaCandidate(
      m, type, target, gated,
      [&](const MmaLaunchShape &launch, const MmaTimePrediction &predicted) {
        out.push_back({getMmaTiling(type.getContext(), launch), predicted.us});
      });
  // Stable: equal predictions keep selectMma's order (its first is its pick).
  llvm::stable_sort(out,
                    [](const TilingCandidate &a, const TilingCandidate &b) {
                      return a.predictedUs < b.predictedUs;
                    });
  return out;
}

SmallVector<TilingCandidate> listWgmma(int64_t m, WeightType type,
                                       const TilingTarget &target, bool gated) {
  SmallVector<TilingCandidate> out;
  if (!target.archSpecific || m <= kMatvecMaxM ||
      type.getEncoding().isSparse24())
    return out;
  EncodingAttr enc = type.getEncoding();
  int64_t group =
      enc.isPerChannel() || !enc.isQuantized() ? 0 : enc.getGroupSize();
  if (group != 0 && group % 64 != 0 && 64 % group != 0)
    return out;
  int64_t steps = llvm::divideCeil(type.getK(), 64);
  int64_t groupsPerStep = group == 0 ? 1 : std::max<int64_t>(1, 64 / group);
  SmallVector<int64_t> blockMs;
  if (m >= 64)
    blockMs = {64, 128};
  else
    blockMs = {int64_t(llvm::alignTo(m, 16))};
  for (int64_t blockM : blockMs) {
    TensorCoreStage stage =
        getTensorCoreStage(blockM, 64, enc.getCodeBits(), groupsPerStep,
                           enc.getZeroPoint() != ZeroPointKind::None);
    for (int64_t split : {1, 2, 4})
      for (int64_t stages : {3, 4})
        for (int64_t cluster : {1, 2}) {
          // silu_mul: gate and up meet in the block (no cluster), and a
          // warpgroup each per k group (at most two k groups).
          if (gated && (cluster > 1 || split > 2))
            continue;
          if (steps < split * cluster ||
              wgmmaSharedBytes(stage, blockM, split, stages, cluster,
                               gated ? 2 : 1) > kWgmmaSharedBudget)
            continue;
          out.push_back({TilingAttr::get(
              type.getContext(), KernelKind::WGMMA, blockM, /*blockN=*/128,
              /*blockK=*/64, kWarpLanes, /*vecBytes=*/16, /*kUnroll=*/1, split,
              stages, cluster)});
        }
  }
  return out;
}
} // namespace

SmallVector<TilingCandidate>
qf::listTilingCandidates(int64_t m, WeightType type, const TilingTarget &target,
                         bool gated, int64_t topK) {
  TilingAttr chosen = selectTiling(m, type, target, /*why=*/nullptr,
                                   /*fallback=*/nullptr, gated);
  EncodingAttr enc = type.getEncoding();
  std::optional<std::string> refusal =
      tensorCoreRefusesEncoding(enc, target.smVersion);
  if (!refusal)
    refusal = tensorCoreRefusesShape(enc, gated ? type.getN() / 2 : type.getN(),
                                     type.getK());

  SmallVector<SmallVector<TilingCandidate>> families;
  families.push_back(listMatvec(m, type, target, gated));
  if (!refusal) {
    families.push_back(listMma(m, type, target, gated));
    families.push_back(listWgmma(m, type, target, gated));
  }
  if (m > kMatvecMaxM && (m >= kDequantGemmListMinM || refusal))
    families.push_back({{TilingAttr::get(
        type.getContext(), KernelKind::DequantGemm, /*blockM=*/1,
        /*blockN=*/1, /*blockK=*/0, kWarpLanes, /*vecBytes=*/16,
        /*kUnroll=*/1, /*splitK=*/1, /*stages=*/1, /*clusterK=*/1)}});

  // The default leads its family (the families without a time model keep
  // the sweep's order behind it), then each family is cut to topK.
  bool listed = false;
  for (SmallVector<TilingCandidate> &family : families) {
    auto it = llvm::find_if(
        family, [&](const TilingCandidate &c) { return c.tiling == chosen; });
    if (it == family.end())
      continue;
    it->isDefault = listed = true;
    std::rotate(family.begin(), it, it + 1);
  }
  if (topK > 0)
    for (SmallVector<TilingCandidate> &family : families)
      if (int64_t(family.size()) > topK)
        family.resize(topK);

  SmallVector<TilingCandidate> out;
  if (!listed)
    out.push_back({chosen, 0, /*isDefault=*/true});
  // The default's family first, so that it heads the list.
  llvm::stable_sort(families, [](const auto &a, const auto &b) {
    bool aDefault = !a.empty() && a.front().isDefault;
    bool bDefault = !b.empty() && b.front().isDefault;
    return aDefault && !bDefault;
  });
  for (size_t rank = 0;; ++rank) {
    bool any = false;
    for (const SmallVector<TilingCandidate> &family : families)
      if (rank < family.size()) {
        out.push_back(family[rank]);
        any = true;
      }
    if (!any)
      break;
  }
  return out;
}
