//===- CostModel.h - bytes, time and tiling of fused matmuls ----*- C++ -*-===//
//
// What a fused matmul must move and how long that takes (shared by
// qf-select-tiling and qf-roofline), and the rules that pick its kernel and
// tile shape. The matvec rules are the contract the GPU code generator
// implements; the helpers that read a matvec tiling back live here too.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_DIALECT_QF_TRANSFORMS_COSTMODEL_H
#define QFUSE_DIALECT_QF_TRANSFORMS_COSTMODEL_H

#include "qfuse/Dialect/QF/IR/QFDialect.h"

#include <optional>
#include <string>

namespace mlir {
namespace qf {

/// Largest M the matvec kernel takes; larger batches use mma.
constexpr int64_t kMatvecMaxM = 8;
/// Smallest M that runs the tensor-core kernel when it takes the weight
/// (TensorCoreSupport.h); smaller batches, and weights it refuses up to
/// kMatvecMaxM, run the matvec. 0 (the default): the measured crossover of
/// the weight's size and decode family (tensorCoreMinMFor). A positive
/// value applies to every weight of at least kTensorCoreSmallBatchMinWeights
/// elements; smaller ones keep the matvec below kMatvecMaxM. The bound
/// lies between the training weights that behave as small (4.2M: the
/// matvec wins to M = 4) and as large (12.8M: the tensor-core kernel wins
/// from M = 2 or 3; docs/defaults.md).
constexpr int64_t kTensorCoreMinM = 0;
constexpr int64_t kTensorCoreSmallBatchMinWeights = 8 * 1024 * 1024;
/// From this M the dequantize + cuBLAS fallback runs instead of the
/// mma.sync kernel: writing the weight once in f16 costs less than the
/// kernel's shortfall against cuBLAS there (H200, docs/fallback.md). 0
/// keeps the fallback to weights no fused kernel takes.
constexpr int64_t kDequantGemmMinM = 512;
/// sm_90a: weights of at least this many rows run the wgmma kernel from
/// M = 128 (all weights from M = 512). Measured on the training shapes
/// (docs/defaults.md): wgmma wins at 3584 rows and more, mma.sync at 1536
/// and fewer.
constexpr int64_t kWgmmaMinRows = 2048;
/// Fixed cost of one kernel launch in the predicted time.
constexpr double kLaunchOverheadUs = 3.0;
/// Bytes of fp16 per weight element, the baseline of the roofline report.
constexpr double kFP16BytesPerElement = 2.0;

/// The bytes a fused matmul must move at least, by kind.
struct TrafficBytes {
  // The packed weight.
  int64_t codes = 0;    ///< Packed codes (the kept half under 2:4).
  int64_t scales = 0;   ///< Group/channel scales and the NVFP4 global scale.
  int64_t zeros = 0;    ///< Zero points (packed like the codes, or floats).
  int64_t metadata = 0; ///< g_idx, 2:4 positions, codebook tables.
  // Activations.
  int64_t activations = 0; ///< The input rows, [M, K].
  int64_t outputs = 0;     ///< The result, [M, N_out].
  int64_t residual = 0;    ///< The residual operand, [M, N_out].
  int64_t bias = 0;        ///< The bias, [N].
  int64_t norm = 0;        ///< The RMSNorm weight, [K].

  int64_t weightBytes() const { return codes + scales + zeros + metadata; }
  int64_t total() const {
    return weightBytes() + activations + outputs + residual + bias + norm;
  }
};

/// Bytes of one element of a float type (f16: 2, f8E4M3FN: 1, ...).
int64_t getTypeBytes(Type type);

/// Codes stored per weight row: K, or the kept K / 2 under 2:4.
int64_t getStoredCodesPerRow(WeightType type);

/// Packed bytes of one weight row (the verifier guarantees a whole number).
int64_t getPackedRowBytes(WeightType type);

/// The bytes of the packed weight alone (codes, scales, zeros, metadata).
TrafficBytes getWeightTraffic(WeightType type);

/// The M a matmul is planned for: its static M, or `batch` when dynamic.
int64_t getPlannedM(RankedTensorType input, int64_t batch);

/// Everything `op` must move with M = `m` rows of activations.
TrafficBytes getFusedMatmulTraffic(FusedMatmulOp op, int64_t m);

/// Weight rows `op` reads: N, or 2N for silu_mul (gate and up rows).
int64_t getFusedMatmulWeightRows(FusedMatmulOp op);

/// FLOPs of `op` with M = `m`: 2 * M * rows * K (weight rows, logical K).
int64_t getFusedMatmulFlops(FusedMatmulOp op, int64_t m);

/// Memory time of `bytes` at `bandwidthGbps` plus the launch cost, in us.
double predictTimeUs(int64_t bytes, double bandwidthGbps);

//===----------------------------------------------------------------------===//
// Tiling selection
//===----------------------------------------------------------------------===//

/// The GPU the tiling is chosen for.
struct TilingTarget {
  int64_t smCount = 132;
  int64_t smVersion = 90;
  /// DRAM bandwidth the time model scales to.
  int64_t bandwidthGbps = 4800;
  /// sm_90a: the wgmma kernel is available (selectTiling takes it for
  /// prefill-sized batches, where it was measured faster).
  bool archSpecific = false;
  /// From this M up the tensor-core kernel runs where it can (0: the
  /// measured crossover, tensorCoreMinMFor); set past kMatvecMaxM for
  /// an op only the matvec fuses (an RMSNorm prologue).
  int64_t tensorCoreMinM = kTensorCoreMinM;
  /// Below kMatvecMaxM, the fewest weight elements (N x K) for which it does
  /// from a positive tensorCoreMinM; with 0, where the large weights'
  /// crossover starts.
  int64_t tensorCoreSmallBatchMinWeights = kTensorCoreSmallBatchMinWeights;
  /// Shared memory one block may use (opted in): what an act_order matvec
  /// holds its activations in.
  int64_t maxSharedPerBlock = 227 * 1024;
  /// From this M (when positive) the fallback replaces mma.sync.
  int64_t dequantGemmMinM = kDequantGemmMinM;
  /// sm_90a, batches 128-511: the fewest rows that run wgmma.
  int64_t wgmmaMinRows = kWgmmaMinRows;
  /// Predictions within 1% of the fastest mma.sync tiling are a tie, broken
  /// toward the least blocks' work (false, the default until it is timed on
  /// the zoo: the first of them).
  bool mmaTieBreak = false;
  /// Rows of the launch the weight runs in when that is more than its own:
  /// a qf.group's members run as one launch of all their rows (0: its own
  /// N).
  int64_t launchRows = 0;
};

/// The batch from which the tensor-core kernel runs `type`: a positive
/// target.tensorCoreMinM, else the crossover measured on the training shapes
/// (docs/defaults.md, bench/crossover): integer and fp8 codes from M = 3 on
/// weights of at least tensorCoreSmallBatchMinWeights elements and from
/// M = 5 below; table codes (NF4, FP4, codebooks), whose tensor-core decode
/// costs more, from M = kMatvecMaxM on small weights, and on large ones from
/// M = 5, or M = 3 for 4-bit tables where 4 rows a warp do not fill the GPU
/// (matvecFillsWithRows) and N has 32-row tiles for 4 warps an SM in 8 K
/// slices.
int64_t tensorCoreMinMFor(WeightType type, const TilingTarget &target);

/// The TilingTarget of `chip` (#qf.target: SM count, compute capability,
/// bandwidth, wgmma availability, shared memory per block) with the batch
/// thresholds given; `smCount`, when positive, replaces the chip's.
TilingTarget getTilingTarget(TargetAttr chip, int64_t tensorCoreMinM,
                             int64_t dequantGemmMinM, int64_t smCount = 0);

/// `vec_bytes` of a matvec over `type`: the largest of 16, 8, 4 that divides
/// a row's packed bytes, or nullopt when none does (no matvec possible).
std::optional<int64_t> getMatvecVecBytes(WeightType type);

/// Warps of one matvec block: 4, or 8 when split_k = 8.
int64_t getMatvecWarpsPerBlock(int64_t splitK);

/// Rows one warp of a matvec handles at once: block_n * split_k / warps.
int64_t getMatvecRowsPerWarp(TilingAttr tiling);

/// Warps a matvec over `n` rows launches: ceil(n / block_n) * warps/block.
int64_t getMatvecGridWarps(TilingAttr tiling, int64_t n);

/// Warps a matvec over `n` rows launches with `rowsPerWarp` rows a warp and
/// K split `splitK` ways.
int64_t getMatvecCandidateWarps(int64_t n, int64_t rowsPerWarp,
                                int64_t splitK);

/// Whether a matvec over `n` rows, `rowsPerWarp` rows a warp and K unsplit,
/// reaches the warps a GPU of target.smCount SMs should hold.
bool matvecFillsWithRows(int64_t n, int64_t rowsPerWarp,
                         const TilingTarget &target);

/// Chooses the kernel and tile shape for `m` activation rows times `type`.
/// Appends a one-line account of the choice to `why` when given; sets
/// `fallback` when M asked for matvec but the row bytes ruled it out.
/// `gated`: `type` is the 2N rows of a silu_mul matmul's gate and up
/// weights, which the matvec streams as one weight and the tensor-core
/// kernel as N rows with an up-twin warp per n warp.
/// `refused` is set when the dequantize + cuBLAS fallback is chosen because
/// no fused kernel takes the weight (not for speed).
TilingAttr selectTiling(int64_t m, WeightType type, const TilingTarget &target,
                        std::string *why = nullptr, bool *fallback = nullptr,
                        bool gated = false, bool *refused = nullptr);

/// Dynamic shared memory of an mma.sync block over `type` (`gated`: the 2N
/// rows of a silu_mul matmul) with these tile sizes: what selectMma checks
/// against the target's limit, as the generator computes it.
int64_t getMmaSharedBytes(WeightType type, bool gated, int64_t blockM,
                          int64_t blockN, int64_t blockK, int64_t splitK,
                          int64_t stages, int64_t clusterK);

/// Why `tiling` over `type` cannot run on `target`, or nullopt: a tuning
/// database's entry (measured on one GPU) checked before an artifact for
/// another chip takes it. The kernel must take the encoding there (fp8 needs
/// sm_89), cluster_k needs sm_90, wgmma sm_90a, and an mma.sync block must
/// fit the chip's shared memory.
std::optional<std::string> getTilingRefusal(TilingAttr tiling, WeightType type,
                                            bool gated,
                                            const TilingTarget &target);

//===----------------------------------------------------------------------===//
// Tuning candidates
//===----------------------------------------------------------------------===//

/// One tiling the tuning mode measures for a shape (`qfuse-compile
/// --list-tilings`, `python3 -m qfuse tune`, bench/tune.py).
struct TilingCandidate {
  TilingAttr tiling;
  /// The mma time model's prediction (MmaTimeModel.h) in microseconds; 0
  /// for the kernel families without a time model (matvec, wgmma,
  /// dequant_gemm).
  double predictedUs = 0;
  /// The tiling selectTiling picks: what a compile without a tuning
  /// database runs.
  bool isDefault = false;
};

/// The candidate tilings of `m` rows times `type` (the 2N rows of gate and
/// up when `gated`, as selectTiling takes them): the one definition of the
/// space the tuning sweeps measure. Per kernel family that takes the shape:
///   - matvec (m <= 8): the sweep's (block_n, k_unroll, split_k) that the
///     generator's contract allows (whole vec_bytes loads per split, block_n
///     a multiple of the row groups, at most 32 row x batch accumulators
///     and 128 bytes of codes in flight per lane);
///   - mma (m >= target.tensorCoreMinM, where the tensor-core kernel takes
///     the weight): selectMma's candidates (block_m from the batch, the
///     (block_n, split_k, block_k, stages, cluster_k) the time model is
///     fitted on) that fit, ranked by the time model;
///   - wgmma (sm_90a, m > 8): block_m 64 and 128 from m = 64, else m
///     rounded up to 16; split_k 1, 2, 4; 3 or 4 stages; cluster_k 1 or 2
///     (gated: split_k 1 or 2, no cluster), within the shared-memory
///     budget of selectWgmma;
///   - dequant_gemm (m >= 64, or where no fused kernel takes the weight).
/// Families without a time model keep the rule's pick first, then the
/// sweep's order. Each family keeps its first `topK` (0: all). The result
/// starts with the default (isDefault: selectTiling's pick, added when no
/// family lists it), then the families' candidates interleaved by rank:
/// each family's best, then each one's second, ...
SmallVector<TilingCandidate> listTilingCandidates(int64_t m, WeightType type,
                                                  const TilingTarget &target,
                                                  bool gated, int64_t topK);

} // namespace qf
} // namespace mlir

#endif // QFUSE_DIALECT_QF_TRANSFORMS_COSTMODEL_H
