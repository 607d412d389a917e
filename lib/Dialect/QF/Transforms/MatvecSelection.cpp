//===- MatvecSelection.cpp - the matvec's tiling --------------------------===//
//
// The matvec's geometry (rows a warp, K split, grid warps) and the tiling
// qf-select-tiling gives it below the tensor-core crossover: enough warps
// to keep loads in flight (4 blocks of 4 warps an SM), each with whole
// 16-byte loads to issue, and a grid the resident blocks hold in one wave
// where that is the choice between 2 and 4 rows a warp.
//
//===----------------------------------------------------------------------===//

#include "CostModelInternal.h"

#include "qfuse/Conversion/MatVecOccupancy.h"

#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::qf;
using namespace mlir::qf::costmodel;

namespace {
/// Resident warps per SM the grid should provide: 4 blocks of 4 warps.
constexpr int64_t kTargetWarpsPerSM = 4 * 4;
/// Loads in flight per lane at most.
constexpr int64_t kMaxKUnroll = 4;

/// "Reaches ~target": within 1/16 of it.
bool reachesTarget(int64_t have, int64_t target) {
  return have * 16 >= target * 15;
}
} // namespace

std::optional<int64_t> qf::getMatvecVecBytes(WeightType type) {
  int64_t rowBytes = getPackedRowBytes(type);
  for (int64_t vec : {16, 8, 4})
    if (rowBytes % vec == 0)
      return vec;
  return std::nullopt;
}

int64_t qf::getMatvecWarpsPerBlock(int64_t splitK) {
  return splitK == 8 ? 8 : 4;
}

int64_t qf::getMatvecRowsPerWarp(TilingAttr tiling) {
  return tiling.getBlockN() * tiling.getSplitK() /
         getMatvecWarpsPerBlock(tiling.getSplitK());
}

int64_t qf::getMatvecCandidateWarps(int64_t n, int64_t rowsPerWarp,
                                    int64_t splitK) {
  int64_t warpsPerBlock = getMatvecWarpsPerBlock(splitK);
  int64_t blockN = rowsPerWarp * warpsPerBlock / splitK;
  return llvm::divideCeil(n, blockN) * warpsPerBlock;
}

bool qf::matvecFillsWithRows(int64_t n, int64_t rowsPerWarp,
                             const TilingTarget &target) {
  return reachesTarget(getMatvecCandidateWarps(n, rowsPerWarp, /*splitK=*/1),
                       kTargetWarpsPerSM * target.smCount);
}

int64_t qf::getMatvecGridWarps(TilingAttr tiling, int64_t n) {
  return llvm::divideCeil(n, tiling.getBlockN()) *
         getMatvecWarpsPerBlock(tiling.getSplitK());
}

TilingAttr costmodel::selectMatvec(int64_t m, WeightType type,
                                   const TilingTarget &target,
                                   llvm::raw_string_ostream &why) {
  MLIRContext *ctx = type.getContext();
  int64_t n = type.getN();
  int64_t rowBytes = getPackedRowBytes(type);
  std::optional<int64_t> vec = getMatvecVecBytes(type);
  if (!vec) {
    why << "no vec_bytes of 16, 8, 4 divides a row of " << rowBytes
        << " packed bytes";
    return {};
  }
  int64_t iterBytes = kWarpLanes * *vec;

  // (rows per warp, split_k) candidates in order of preference: 2 to 4 rows
  // per warp share the activations; big N takes 4 rows, mid-size N 2 rows,
  // small N 2 rows split 4 ways along K. 2:4 with 4-bit codes keeps 4 rows
  // and splits K in two where N is short of the target: with each row's
  // kept activations selected by its own metadata, 2 rows a warp were among
  // its slowest tilings; 2:4 f16 keeps the dense rule (docs/defaults.md).
  static constexpr std::pair<int64_t, int64_t> kDenseCandidates[] = {
      {4, 1}, {2, 1}, {2, 2}, {4, 2}, {2, 4}};
  static constexpr std::pair<int64_t, int64_t> kSparseCandidates[] = {
      {4, 1}, {4, 2}};
  llvm::ArrayRef<std::pair<int64_t, int64_t>> candidates =
      type.getEncoding().isSparse24() && type.getEncoding().getCodeBits() <= 4
          ? llvm::ArrayRef(kSparseCandidates)
          : llvm::ArrayRef(kDenseCandidates);
  int64_t targetWarps = kTargetWarpsPerSM * target.smCount;
  // A split must cut rows into whole lane loads and keep at least a quarter
  // of the lanes busy (short rows: measured faster than no split).
  auto splitFits = [&](int64_t s) {
    return s == 1 ||
           (rowBytes % (s * *vec) == 0 && rowBytes / s >= iterBytes / 4);
  };

  int64_t bestRows = 0, bestSplit = 0, bestWarps = -1;
  bool reached = false;
  for (auto [rows, s] : candidates) {
    if (!splitFits(s))
      continue;
    int64_t warps = getMatvecCandidateWarps(n, rows, s);
    // Nothing reaches the target (tiny N): the last candidate that fits,
    // the one with the most warps.
    bestRows = rows, bestSplit = s, bestWarps = warps;
    if (reachesTarget(warps, targetWarps)) {
      reached = true;
      break;
    }
  }

  // Four 16-byte loads in flight per lane (rows x k_unroll); the generator
  // accepts up to 128 bytes, which only the tuning database asks for.
  auto unrollFor = [&](int64_t rows, int64_t split) {
    int64_t iterations = llvm::divideCeil(rowBytes / split, iterBytes);
    return std::max<int64_t>(
        1, std::min({kMaxKUnroll / rows, iterations,
                     std::max<int64_t>(1, 64 / (rows * *vec))}));
  };
  // Whether the resident blocks (MatVecOccupancy.h) hold the whole grid, of
  // every row the launch runs, in one wave.
  int64_t launchRows = std::max(n, target.launchRows);
  auto fitsOneWave = [&](int64_t rows, int64_t split) {
    int64_t warps = getMatvecWarpsPerBlock(split);
    int64_t blocks = llvm::divideCeil(launchRows, rows * warps / split);
    MatVecOccupancyShape shape{rows, m, unrollFor(rows, split), *vec, warps};
    return blocks <=
           getMatVecResidentBlocks(shape, blocks, target.smCount) *
               target.smCount;
  };
  // At M <= 2, 4-bit codes at 2 rows a warp whose grid runs in a second,
  // partial wave take 4 rows a warp with the same split where one wave
  // holds that grid (docs/defaults.md, "Matvec waves").
  bool oneWave = m <= 2 && type.getEncoding().getCodeBits() == 4 &&
                 bestRows == 2 && !fitsOneWave(2, bestSplit) &&
                 fitsOneWave(4, bestSplit);
  if (oneWave)
    bestRows = 4;

  int64_t warpsPerBlock = getMatvecWarpsPerBlock(bestSplit);
  int64_t blockN = bestRows * warpsPerBlock / bestSplit;
  int64_t sliceBytes = rowBytes / bestSplit;
  int64_t iterations = llvm::divideCeil(sliceBytes, iterBytes);
  int64_t kUnroll = unrollFor(bestRows, bestSplit);
  why << "matvec: row " << rowBytes << " B, vec_bytes " << *vec << ", "
      << bestRows << " row(s)/warp, split_k " << bestSplit << " (slice "
      << sliceBytes << " B, " << iterations << " iteration(s)/lane), "
      << bestWarps << " warps vs target " << targetWarps
      << (reached ? "" : " (not reachable)")
      << (oneWave ? "; 4 rows a warp: one wave" : "");
  return TilingAttr::get(ctx, KernelKind::MatVec, /*blockM=*/m, blockN,
                         /*blockK=*/0, /*threadsPerRow=*/kWarpLanes, *vec,
                         kUnroll, bestSplit, /*stages=*/1, /*clusterK=*/1);
}
