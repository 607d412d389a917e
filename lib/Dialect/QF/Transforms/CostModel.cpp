//===- CostModel.cpp - bytes, time and tiling of fused matmuls ------------===//
//
// The byte accounting behind qf-roofline and qf.predicted_us, and the rules
// qf-select-tiling applies (the matvec's tiling is MatvecSelection.cpp's,
// the mma.sync candidates it weighs MmaCandidates.cpp's, the tuning
// candidates TilingCandidates.cpp's).
// Decode matmuls are memory-bound, so the model is about bytes and about
// keeping enough loads in flight to reach the bandwidth: enough warps, each
// with whole 16-byte loads to issue.
//
//===----------------------------------------------------------------------===//

#include "qfuse/Dialect/QF/Transforms/CostModel.h"
#include "qfuse/Dialect/QF/Transforms/MmaTimeModel.h"

#include "CostModelInternal.h"

#include "qfuse/Conversion/DecodeFamily.h"
#include "qfuse/Conversion/TensorCoreStage.h"
#include "qfuse/Conversion/TensorCoreSupport.h"
#include "qfuse/format/MmaLayout.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::qf;
using namespace mlir::qf::costmodel;

//===----------------------------------------------------------------------===//
// Bytes
//===----------------------------------------------------------------------===//

int64_t qf::getTypeBytes(Type type) {
  return llvm::divideCeil(type.getIntOrFloatBitWidth(), 8);
}

int64_t qf::getStoredCodesPerRow(WeightType type) {
  return type.getEncoding().isSparse24() ? type.getK() / 2 : type.getK();
}

int64_t qf::getPackedRowBytes(WeightType type) {
  return getStoredCodesPerRow(type) * type.getEncoding().getCodeBits() / 8;
}

TrafficBytes qf::getWeightTraffic(WeightType type) {
  EncodingAttr enc = type.getEncoding();
  int64_t n = type.getN(), k = type.getK();
  TrafficBytes bytes;
  bytes.codes = n * getPackedRowBytes(type);
  if (enc.isQuantized()) {
    int64_t groups = enc.getNumGroups(k);
    int64_t scaleBytes = getTypeBytes(enc.getScaleType());
    bytes.scales = n * groups * scaleBytes;
    if (enc.getGlobalScale())
      bytes.scales += 4; // one f32 per tensor
    if (enc.getZeroPoint() == ZeroPointKind::Int)
      bytes.zeros = llvm::divideCeil(n * groups * enc.getCodeBits(), 8);
    else if (enc.getZeroPoint() == ZeroPointKind::Float)
      bytes.zeros = n * groups * scaleBytes;
    if (enc.getActOrder())
      bytes.metadata += k * 4; // g_idx, int32 per input column
  }
  // A 2-bit position per kept code: 4 bits per 4 logical elements.
  if (enc.isSparse24())
    bytes.metadata += n * k / 8;
  if (enc.getFormat() == ElementFormat::Codebook) {
    Type tableType =
        enc.getTable()
            ? cast<ShapedType>(enc.getTable().getType()).getElementType()
            : enc.getTableType();
    bytes.metadata +=
        (int64_t(1) << enc.getCodeBits()) * getTypeBytes(tableType);
  }
  return bytes;
}

int64_t qf::getPlannedM(RankedTensorType input, int64_t batch) {
  int64_t m = input.getDimSize(0);
  return ShapedType::isDynamic(m) ? batch : m;
}

int64_t qf::getFusedMatmulWeightRows(FusedMatmulOp op) {
  return op.getWeight().getType().getN() * (op.getUp() ? 2 : 1);
}

TrafficBytes qf::getFusedMatmulTraffic(FusedMatmulOp op, int64_t m) {
  WeightType w = op.getWeight().getType();
  TrafficBytes bytes = getWeightTraffic(w);
  if (op.getUp()) {
    // silu_mul: the up projection has the gate's type, so the same bytes.
    TrafficBytes up = getWeightTraffic(op.getUp().getType());
    bytes.codes += up.codes;
    bytes.scales += up.scales;
    bytes.zeros += up.zeros;
    bytes.metadata += up.metadata;
  }
  int64_t elt = getTypeBytes(op.getInput().getType().getElementType());
  int64_t nOut = w.getN();
  bytes.activations = m * w.getK() * elt;
  bytes.outputs = m * nOut * elt;
  if (op.getResidual())
    bytes.residual = m * nOut * elt;
  if (op.getBias())
    bytes.bias = w.getN() * elt;
  if (op.getNorm())
    bytes.norm = w.getK() * elt;
  return bytes;
}

int64_t qf::getFusedMatmulFlops(FusedMatmulOp op, int64_t m) {
  return 2 * m * getFusedMatmulWeightRows(op) *
         op.getWeight().getType().getK();
}

double qf::predictTimeUs(int64_t bytes, double bandwidthGbps) {
  // GB/s = 1e3 bytes per microsecond.
  return static_cast<double>(bytes) / (bandwidthGbps * 1e3) + kLaunchOverheadUs;
}

namespace {
/// Output rows of one tensor-core warp (docs/tensor-core.md).
constexpr int64_t kMmaWarpRows = 32;
/// K slices (split_k x cluster_k) of the fastest tensor-core tilings at
/// small M; 16 measured slower (docs/tensor-core.md).
constexpr int64_t kMmaFastestKSlices = 8;
/// Warps an SM should get from the tensor-core kernel at small M before it
/// runs 4-bit tables from M = 3.
constexpr int64_t kMinMmaWarpsPerSM = 4;
} // namespace

int64_t qf::tensorCoreMinMFor(WeightType type, const TilingTarget &target) {
  if (target.tensorCoreMinM > 0)
    return target.tensorCoreMinM;
  const bool large =
      type.getN() * type.getK() >= target.tensorCoreSmallBatchMinWeights;
  if (getDecodeFamily(type.getEncoding().getFormat()) != DecodeFamily::Table)
    return large ? 3 : 5;
  if (!large)
    return kMatvecMaxM;
  // On 4-bit tables (NF4, FP4) the tensor-core kernel beat the matvec at
  // M = 3-4 wherever the matvec has fewer rows than 4 a warp fill the GPU
  // with, and the tensor-core kernel enough 32-row warp tiles to give each
  // SM 4 warps in 8 K slices (docs/defaults.md). A matvec of 4 rows a warp
  // shares each activation load over more rows and kept pace; on fewer
  // tiles the matvec, splitting K, won. Other codebook widths were not
  // measured.
  // (A gated weight's 2N rows: its gate warps each have an up twin.)
  const int64_t n = type.getN();
  const int64_t mmaWarps =
      llvm::divideCeil(n, kMmaWarpRows) * kMmaFastestKSlices;
  const bool mmaFills = mmaWarps >= kMinMmaWarpsPerSM * target.smCount;
  return type.getEncoding().getCodeBits() == 4 &&
                 !matvecFillsWithRows(n, 4, target) && mmaFills
             ? 3
             : 5;
}

TilingTarget qf::getTilingTarget(TargetAttr chip, int64_t tensorCoreMinM,
                                 int64_t dequantGemmMinM, int64_t smCount) {
  TilingTarget target;
  target.smCount = smCount > 0 ? smCount : chip.getSmCount();
  target.smVersion = chip.getSmVersion();
  target.bandwidthGbps = chip.getBandwidthGbps();
  target.archSpecific = chip.isArchSpecific();
  target.tensorCoreMinM = tensorCoreMinM;
  target.maxSharedPerBlock = chip.getMaxSharedPerBlock();
  target.dequantGemmMinM = dequantGemmMinM;
  return target;
}

//===----------------------------------------------------------------------===//
// Selection
//===----------------------------------------------------------------------===//

namespace {
/// Predictions this close (relative) are a tie: memory-bound candidates
/// differ only in their L2 term, far below the model's error.
constexpr double kPredictionTie = 0.01;

/// The tensor-core tiling for `m` rows (TensorCoreKernel.cpp's contract):
/// of the candidates the kernel can take (forEachMmaCandidate), the one the
/// time model (MmaTimeModel.h) predicts fastest; among those that tie with
/// it, the one whose blocks' work is the least (the most margin under the
/// memory time; docs/cost-model.md).
TilingAttr selectMma(int64_t m, WeightType type, const TilingTarget &target,
                     bool gated, llvm::raw_string_ostream &why) {
  SmallVector<std::pair<MmaLaunchShape, MmaTimePrediction>> candidates;
  double fastestUs = 0;
  forEachMmaCandidate(
      m, type, target, gated,
      [&](const MmaLaunchShape &launch, const MmaTimePrediction &predicted) {
        candidates.push_back({launch, predicted});
        if (fastestUs == 0 || predicted.us < fastestUs)
          fastestUs = predicted.us;
      });
  MmaLaunchShape best{};
  double bestUs = 0, bestComputeUs = 0;
  const double tie = target.mmaTieBreak ? kPredictionTie : 0;
  for (const auto &[launch, predicted] : candidates)
    if (predicted.us <= fastestUs * (1 + tie) &&
        (bestUs == 0 || (target.mmaTieBreak &&
                         predicted.computeUs < bestComputeUs)))
      best = launch, bestUs = predicted.us, bestComputeUs = predicted.computeUs;
  if (bestUs == 0) { // nothing fits: the smallest block, one stage short
    int64_t n = qfuse::format::mmaPaddedN(type.getN() / (gated ? 2 : 1));
    best = MmaLaunchShape{m, n, type.getK(), 16, 32, 64, 1, 2, 1};
  }
  why << "mma: " << best.blockM << "x" << best.blockN << " blocks, block_k "
      << best.blockK << ", split_k " << best.splitK << ", cluster_k "
      << best.clusterK << ", " << best.stages << " stages: "
      << llvm::formatv("{0:F1}", bestUs) << " us predicted";
  return getMmaTiling(type.getContext(), best);
}

} // namespace

int64_t costmodel::wgmmaSharedBytes(const TensorCoreStage &stage,
                                    int64_t blockM, int64_t split,
                                    int64_t stages, int64_t cluster,
                                    int64_t members) {
  return tensorCoreSharedBytes(stage, stages, split, 4 * members * split,
                               cluster, members, /*groupWarps=*/4 * members,
                               blockM, /*tableBytes=*/0);
}

namespace {
/// The wgmma tiling (sm_90a) for `m` rows, or null where mma.sync stays the
/// better kernel: wgmma from M = 128 on weights of target.wgmmaMinRows rows and
/// more, and from M = 512 on smaller ones (docs/defaults.md). A block is one
/// warpgroup (128 rows) per k group. block_m = 128 where that gives 64 blocks
/// and more, else 64 for twice the blocks. Then K is
/// cut until there are about two warpgroups per SM: across a cluster when the
/// blocks fill at most half the SMs (more blocks, more SMs: q at M = 128, 15.7
/// us with 2 k groups x 2 cluster blocks against 23.0 us with 4 k groups in one
/// block; gate's 112 blocks, 33.6 us unclustered against 42.5), then into k
/// groups of the block. Gated (silu_mul): a warpgroup each for gate and up per
/// k group, N the real rows (half of `type`'s) and no cluster (gate and up meet
/// in the block); selectGatedWgmma says from which M and which tiling.
TilingAttr selectWgmma(int64_t m, WeightType type, const TilingTarget &target,
                       bool gated, llvm::raw_string_ostream &why) {
  int64_t n = qfuse::format::mmaPaddedN(gated ? type.getN() / 2 : type.getN()),
          k = type.getK();
  const int64_t members = gated ? 2 : 1;
  if (!gated && (m < 128 || (m < 512 && n < target.wgmmaMinRows)))
    return {};
  if (gated && (m < kGatedWgmmaMinM || n * k < kGatedWgmmaMinWeights))
    return {};
  if (type.getEncoding().isSparse24()) {
    why << "no wgmma (2:4 runs mma.sp); ";
    return {};
  }
  EncodingAttr enc = type.getEncoding();
  int64_t group =
      enc.isPerChannel() || !enc.isQuantized() ? 0 : enc.getGroupSize();
  if (group != 0 && group % 64 != 0 && 64 % group != 0)
    return {};
  int64_t rowBlocks = llvm::divideCeil(n, 128);
  // Each block of rows decodes the whole weight: block_m 128 halves that
  // work wherever its blocks still number 64 (about half of a Hopper's SMs).
  int64_t blockM = llvm::divideCeil(m, 128) * rowBlocks >= 64 ? 128 : 64;
  // Gated below M = 128: block_m 64 in two k groups (512 threads, 64
  // accumulators a lane) was within 6% of the best gated tiling at M = 64
  // on the training shapes. From 128 one k group, which a producer
  // warpgroup feeds (TensorCoreProducer.cpp): 1.01-1.44x the pair at 128
  // and 256 (docs/defaults.md).
  const bool gatedPair = gated && m < 128;
  if (gatedPair)
    blockM = 64;
  int64_t blocks = llvm::divideCeil(m, blockM) * rowBlocks;
  int64_t steps = llvm::divideCeil(k, 64);
  int64_t groupsPerStep = group == 0 ? 1 : std::max<int64_t>(1, 64 / group);
  TensorCoreStage stage = getTensorCoreStage(
      blockM, 64, enc.getCodeBits(), groupsPerStep,
      enc.getZeroPoint() != ZeroPointKind::None);
  int64_t cluster =
      !gated && 2 * blocks <= target.smCount && steps >= 8 ? 2 : 1;
  constexpr int64_t kBudget = kWgmmaSharedBudget;
  auto sharedBytes = [&](int64_t s, int64_t stages) {
    return wgmmaSharedBytes(stage, blockM, s, stages, cluster, members);
  };
  int64_t split = 1;
  auto fits = [&](int64_t s) {
    return steps >= 4 * s * cluster && sharedBytes(s, 3) <= kBudget;
  };
  if (!gated && blocks * cluster < 2 * target.smCount && fits(2))
    split = 2;
  if (gatedPair && fits(2))
    split = 2;
  if (cluster == 2 && k >= 8192 && fits(4)) // long K: more slices
    split = 4;
  if (sharedBytes(split, 3) > kBudget)
    return {};
  // Four k groups are best fed from three stages (down_proj at M = 128:
  // 38.9 vs 44.0 us), fewer from four.
  int64_t stages = split < 4 && sharedBytes(split, 4) <= kBudget ? 4 : 3;
  why << "wgmma: " << blocks * cluster << " block(s) of " << blockM
      << "x128, split_k " << split << ", cluster_k " << cluster << ", "
      << stages << " stages";
  return TilingAttr::get(type.getContext(), KernelKind::WGMMA, blockM,
                         /*blockN=*/128, /*blockK=*/64,
                         /*threadsPerRow=*/kWarpLanes, /*vecBytes=*/16,
                         /*kUnroll=*/1, split, stages, cluster);
}
} // namespace

TilingAttr qf::selectTiling(int64_t m, WeightType type,
                            const TilingTarget &target, std::string *why,
                            bool *fallback, bool gated, bool *refused) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (fallback)
    *fallback = false;
  TilingAttr tiling;
  std::optional<std::string> refusal =
      tensorCoreRefusesEncoding(type.getEncoding(), target.smVersion);
  // A gated weight's tiles split the real N, not the 2N rows of `type`.
  if (!refusal)
    refusal = tensorCoreRefusesShape(type.getEncoding(),
                                     gated ? type.getN() / 2 : type.getN(),
                                     type.getK());
  // A positive tensorCoreMinM holds from the size bound up; 0 is the
  // measured crossover of the weight's size and decode family.
  const int64_t tensorCoreMinM = tensorCoreMinMFor(type, target);
  const bool smallWeight = m < kMatvecMaxM &&
                           type.getN() * type.getK() <
                               target.tensorCoreSmallBatchMinWeights;
  const bool small = target.tensorCoreMinM > 0 && smallWeight;
  // act_order runs either kernel as a plain weight on permuted activations
  // (docs/act-order.md), so it takes plain's crossover; only the fallback
  // below tells it apart.
  const bool actOrder = type.getEncoding().getActOrder();
  // 2:4 runs mma.sp from batch 2 (batch 3 below the small-weight bound):
  // on the H200 its matvec is 1.4-2x slower at batches 2-8 on weights from
  // 16M elements, and only the smallest weights keep it at batch 2
  // (docs/defaults.md). A tensor-core crossover past kMatvecMaxM keeps the
  // matvec for 2:4 too.
  const bool sparse = type.getEncoding().isSparse24();
  const bool sparseMatvec = m == 1 || (smallWeight && m == 2) ||
                            target.tensorCoreMinM > kMatvecMaxM;
  bool wantMatvec =
      m <= kMatvecMaxM &&
      (sparse ? (sparseMatvec || refusal)
              : (m < tensorCoreMinM || small || refusal));
  if (std::optional<std::string> matvecRefusal =
          matvecRefusesEncoding(type.getEncoding(), target.smVersion);
      wantMatvec && matvecRefusal) {
    os << "no matvec (" << *matvecRefusal << "); ";
    wantMatvec = false;
  }
  if (wantMatvec) {
    if (m >= tensorCoreMinM)
      os << "no mma ("
         << (refusal ? *refusal : std::string("a weight this small")) << "); ";
    tiling = selectMatvec(m, type, target, os);
    if (!tiling) {
      if (fallback)
        *fallback = true;
      os << "; ";
    }
  }
  auto dequantGemm = [&]() {
    return TilingAttr::get(type.getContext(), KernelKind::DequantGemm,
                           /*blockM=*/1, /*blockN=*/1, /*blockK=*/0,
                           /*threadsPerRow=*/kWarpLanes, /*vecBytes=*/16,
                           /*kUnroll=*/1, /*splitK=*/1, /*stages=*/1,
                           /*clusterK=*/1);
  };
  if (refused)
    *refused = false;
  if (!tiling && refusal) {
    // Neither fused kernel takes it: dequantize + cuBLAS (docs/fallback.md).
    os << "dequant_gemm: the tensor-core kernel cannot take it (" << *refusal
       << ")";
    tiling = dequantGemm();
    if (refused)
      *refused = true;
  }
  // Large batches: cuBLAS on a dequantized copy beats mma.sync (measured;
  // wgmma on sm_90a keeps its batches, which 2:4 does not run on).
  // Not act_order: the dequantize kernel scatters its columns by perm, and
  // the tensor-core kernel on permuted activations is faster there.
  if (!tiling && (!target.archSpecific || sparse) && !actOrder &&
      target.dequantGemmMinM > 0 && m >= target.dequantGemmMinM) {
    os << "dequant_gemm: from M = " << target.dequantGemmMinM
       << " dequantize + cuBLAS beats the mma.sync kernel";
    tiling = dequantGemm();
  }
  if (!tiling && target.archSpecific)
    tiling = selectWgmma(m, type, target, gated, os);
  if (!tiling)
    tiling = selectMma(m, type, target, gated, os);
  if (why)
    *why += text;
  return tiling;
}

int64_t qf::getMmaSharedBytes(WeightType type, bool gated, int64_t blockM,
                              int64_t blockN, int64_t blockK, int64_t splitK,
                              int64_t stages, int64_t clusterK) {
  const int64_t members = gated ? 2 : 1;
  EncodingAttr enc = type.getEncoding();
  int64_t group = enc.isPerChannel() || !enc.isQuantized() ? 0
                                                           : enc.getGroupSize();
  bool zeros = enc.getZeroPoint() != ZeroPointKind::None;
  bool table = usesSharedCodeTable(enc);
  int64_t bits = enc.getCodeBits();
  int64_t warps = blockN / 32 * splitK * members;
  int64_t groupsPerStep = group == 0 ? 1 : std::max<int64_t>(1, blockK / group);
  TensorCoreStage stage = getTensorCoreStage(blockM, blockK, bits,
                                             groupsPerStep, zeros,
                                             enc.isSparse24());
  return tensorCoreSharedBytes(stage, stages, splitK, warps, clusterK,
                               members, blockN / 32 * members, blockM,
                               table ? codeTableBytes(bits) : 0);
}

std::optional<std::string> qf::getTilingRefusal(TilingAttr tiling,
                                                WeightType type, bool gated,
                                                const TilingTarget &target) {
  EncodingAttr enc = type.getEncoding();
  const std::string chip = "sm_" + std::to_string(target.smVersion) +
                           (target.archSpecific ? "a" : "");
  switch (tiling.getKernel()) {
  case KernelKind::MatVec:
    return matvecRefusesEncoding(enc, target.smVersion);
  case KernelKind::WGMMA:
    if (!target.archSpecific)
      return "wgmma runs on sm_90a only; target is " + chip;
    if (enc.isSparse24())
      return std::string("2:4 weights run mma.sp, not wgmma");
    return tensorCoreRefusesEncoding(enc, target.smVersion);
  case KernelKind::MMA: {
    if (std::optional<std::string> refusal =
            tensorCoreRefusesEncoding(enc, target.smVersion))
      return refusal;
    if (tiling.getClusterK() > 1 && target.smVersion < 90)
      return "cluster_k = " + std::to_string(tiling.getClusterK()) +
             " needs thread-block clusters (sm_90); target is " + chip;
    if (enc.isSparse24() && type.getK() % tiling.getBlockK() != 0)
      return "2:4 rows are copied in whole block_k steps; block_k = " +
             std::to_string(tiling.getBlockK()) + " does not divide K = " +
             std::to_string(type.getK());
    int64_t shared = getMmaSharedBytes(
        type, gated, tiling.getBlockM(), tiling.getBlockN(),
        tiling.getBlockK(), tiling.getSplitK(), tiling.getStages(),
        tiling.getClusterK());
    if (shared > target.maxSharedPerBlock)
      return "the block needs " + std::to_string(shared) +
             " bytes of shared memory, more than " +
             std::to_string(target.maxSharedPerBlock) + " on " + chip;
    return std::nullopt;
  }
  default:
    return std::nullopt;
  }
}
