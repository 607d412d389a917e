//===- SelectTiling.cpp - a kernel and tile shape per fused matmul
//-----------===//
//
// Gives each qf.fused_matmul a #qf.tiling from the cost model (CostModel.cpp)
// or from a tuning database measured on the GPU, and records the predicted
// time as `qf.predicted_us`. With `batch-sizes`, a dynamic-M op whose tiling
// is the matvec also gets a tiling per batch past the matvec's range
// (`qf.batch_tilings`), so that every compiled batch runs its best kernel.
//
//===----------------------------------------------------------------------===//

#include "qfuse/Dialect/QF/Transforms/Passes.h"

#include "qfuse/Dialect/QF/IR/KnownTargets.h"

#include "qfuse/Dialect/QF/Transforms/CostModel.h"
#include "qfuse/Dialect/QF/Transforms/TuningDatabase.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/Debug.h"

#include <cmath>

#define DEBUG_TYPE "qf-select-tiling"

namespace mlir {
namespace qf {
#define GEN_PASS_DEF_QFSELECTTILING
#include "qfuse/Dialect/QF/Transforms/Passes.h.inc"
} // namespace qf
} // namespace mlir

using namespace mlir;
using namespace mlir::qf;

namespace {

/// Name of the discardable attribute holding the predicted time.
constexpr StringLiteral kPredictedUsAttr = "qf.predicted_us";
/// Name of the discardable attribute holding the per-batch tilings.
constexpr StringLiteral kBatchTilingsAttr = "qf.batch_tilings";

/// Checks a tiling taken from the database against the matvec contract, so
/// that a stale entry fails here rather than in the kernel generator.
LogicalResult verifyDatabaseTiling(FusedMatmulOp op, TilingAttr tiling,
                                   int64_t m, StringRef path) {
  if (tiling.getKernel() != KernelKind::MatVec)
    return success();
  WeightType w = op.getWeight().getType();
  int64_t rowBytes = getPackedRowBytes(w);
  auto emitError = [&]() {
    InFlightDiagnostic diag = op.emitOpError();
    diag << "tuning database '" << path << "' gives " << tiling
         << " for M = " << m << ", N = " << w.getN() << ", K = " << w.getK()
         << ", but ";
    return diag;
  };
  if (m > kMatvecMaxM)
    return emitError() << "matvec takes M <= " << kMatvecMaxM;
  if (rowBytes % tiling.getVecBytes() != 0)
    return emitError() << "vec_bytes must divide a row's " << rowBytes
                       << " packed bytes";
  int64_t split = tiling.getSplitK();
  if (!llvm::is_contained({1, 2, 4, 8}, split) ||
      rowBytes % (split * tiling.getVecBytes()) != 0)
    return emitError() << "split_k must be 1, 2, 4 or 8 and cut a row into "
                          "whole vec_bytes loads";
  if ((tiling.getBlockN() * split) % getMatvecWarpsPerBlock(split) != 0)
    return emitError() << "block_n * split_k must be a multiple of the "
                       << getMatvecWarpsPerBlock(split) << " warps per block";
  if (tiling.getThreadsPerRow() != 32)
    return emitError() << "matvec needs threads_per_row = 32";
  if (op.getUp() && getMatvecRowsPerWarp(tiling) % 2 != 0)
    return emitError() << "a silu_mul matmul needs an even number of rows "
                          "per warp (each output's gate and up rows)";
  return success();
}

/// The first `qf.fused_matmul` of `op`'s qf.group in its block (the one
/// qf-to-gpu launches for all), or null when `op` is in none.
FusedMatmulOp getGroupLeader(FusedMatmulOp op) {
  Attribute group = op->getAttr("qf.group");
  if (!group)
    return {};
  for (auto other : op->getBlock()->getOps<FusedMatmulOp>())
    if (other->getAttr("qf.group") == group)
      return other;
  return {};
}

/// The weight rows of every `qf.fused_matmul` of `leader`'s qf.group: the
/// rows of the one launch qf-to-gpu makes for them, which each member's
/// choice weighs.
int64_t getGroupRows(FusedMatmulOp leader) {
  Attribute group = leader->getAttr("qf.group");
  int64_t rows = 0;
  for (auto other : leader->getBlock()->getOps<FusedMatmulOp>())
    if (other->getAttr("qf.group") == group)
      rows += other.getWeight().getType().getN();
  return rows;
}

/// A plain f16 matmul on a dense f16 weight: qf-to-gpu makes it a cuBLAS
/// gemm step as stored, whatever its tiling says.
bool isCublasStep(FusedMatmulOp op) {
  EncodingAttr enc = op.getWeight().getType().getEncoding();
  return enc.getFormat() == ElementFormat::F16 && !enc.isSparse24() &&
         !enc.isQuantized() &&
         op.getInput().getType().getElementType().isF16() && !op.getNorm() &&
         op.getActivation() == EpilogueActivation::None;
}

struct QFSelectTilingPass
    : public qf::impl::QFSelectTilingBase<QFSelectTilingPass> {
  using Base::Base;

  /// The #qf.target of the `chip` option.
  TargetAttr chipTarget;
  /// (op, M) pairs already told that they run the fallback.
  llvm::DenseSet<std::pair<Operation *, int64_t>> remarked;

  void runOnOperation() override {
    if (llvm::any_of(batchSizes, [](int64_t b) { return b <= 0; })) {
      emitError(getOperation()->getLoc())
          << "qf-select-tiling: batch-sizes must be positive";
      return signalPassFailure();
    }
    chipTarget = getKnownTarget(&getContext(), chip);
    if (!chipTarget) {
      emitError(getOperation()->getLoc())
          << "qf-select-tiling: unknown chip '" << chip << "'; expected "
          << knownTargetNames();
      return signalPassFailure();
    }
    if (smCount < 0 || bandwidthGbps <= 0.0 || batch <= 0) {
      emitError(getOperation()->getLoc())
          << "qf-select-tiling needs non-negative sm-count (0: the chip's), "
             "positive bandwidth-gbps and batch, got "
          << static_cast<int64_t>(smCount) << ", "
          << static_cast<double>(bandwidthGbps) << ", "
          << static_cast<int64_t>(batch);
      return signalPassFailure();
    }

    std::optional<TuningDatabase> db;
    if (!tuningDb.empty()) {
      std::string error;
      FailureOr<TuningDatabase> loaded =
          TuningDatabase::load(tuningDb, &getContext(), error);
      if (failed(loaded)) {
        emitError(getOperation()->getLoc()) << error;
        return signalPassFailure();
      }
      db = std::move(*loaded);
      LLVM_DEBUG(llvm::dbgs() << "tuning database '" << tuningDb
                              << "': " << db->size() << " entries\n");
    }

    if (tensorCoreMinM < 0) {
      emitError(getOperation()->getLoc())
          << "qf-select-tiling: tensor-core-min-m must not be negative, got "
          << static_cast<int64_t>(tensorCoreMinM);
      return signalPassFailure();
    }
    TilingTarget target =
        getTilingTarget(chipTarget, tensorCoreMinM, dequantGemmMinM, smCount);
    if (tensorCoreSmallMinWeights < 0) {
      emitError(getOperation()->getLoc())
          << "qf-select-tiling: tensor-core-small-min-weights must not be "
             "negative, got "
          << static_cast<int64_t>(tensorCoreSmallMinWeights);
      return signalPassFailure();
    }
    target.tensorCoreSmallBatchMinWeights = tensorCoreSmallMinWeights;
    if (wgmmaMinRows < 0) {
      emitError(getOperation()->getLoc())
          << "qf-select-tiling: wgmma-min-rows must not be negative, got "
          << static_cast<int64_t>(wgmmaMinRows);
      return signalPassFailure();
    }
    target.wgmmaMinRows = wgmmaMinRows;
    target.mmaTieBreak = mmaTieBreak;
    bool failedAny = false;
    getOperation()->walk([&](FusedMatmulOp op) {
      if (op.getTilingAttr())
        return;
      failedAny |= failed(selectFor(op, target, db ? &*db : nullptr));
    });
    if (failedAny)
      signalPassFailure();
  }

  /// The tiling of `op` (over `w`, 2N rows when gated) for `m` rows: the
  /// tuning database's entry when it has one, else the cost model's.
  FailureOr<TilingAttr> chooseFor(FusedMatmulOp op, WeightType w, int64_t m,
                                  TilingTarget target,
                                  const TuningDatabase *db) {
    // The members of a qf.group run as one launch of the first member's
    // kernel (qf-to-gpu): each follows the first's choice of kernel.
    std::optional<KernelKind> forced;
    FusedMatmulOp first = getGroupLeader(op);
    if (first)
      target.launchRows = getGroupRows(first);
    if (first && first != op) {
      FailureOr<TilingAttr> leader =
          chooseFor(first, first.getWeight().getType(), m, target, db);
      if (failed(leader))
        return failure();
      forced = leader->getKernel();
    }
    // Only the tensor-core kernel reads bf16 activations: such ops take it
    // at every batch where it takes the weight (what it refuses falls back
    // to the matvec, which qf-to-gpu refuses with the reason; the CPU
    // reference lowers either).
    if (op.getInput().getType().getElementType().isBF16())
      forced = KernelKind::MMA;
    // Only the matvec fuses an RMSNorm prologue: up to batch 8 such ops stay
    // on it whatever the crossover. An act_order weight's runs as a launch
    // of its own (hasPermutedNorm), which any kernel reads.
    if (op.getNorm() && !op.hasPermutedNorm())
      forced = KernelKind::MatVec;
    if (forced == KernelKind::MatVec) {
      target.tensorCoreMinM = kMatvecMaxM + 1;
    } else if (forced && isTensorCoreKernel(*forced)) {
      target.tensorCoreMinM = 1;
      target.tensorCoreSmallBatchMinWeights = 0;
    }
    if (db) {
      TilingAttr tiling = db->lookup(m, w.getN(), w.getK(), w.getEncoding(),
                                     chipTarget.isArchSpecific());
      if (tiling && m <= kMatvecMaxM && forced &&
          isTensorCoreKernel(tiling.getKernel()) !=
              isTensorCoreKernel(*forced))
        tiling = {}; // the entry's kernel cannot fuse this op or its group
      // The database was measured on one GPU; an artifact for another chip
      // (a variant of an artifact set, say sm_80) takes only the entries its
      // chip can run, and the cost model's tiling for the rest.
      if (tiling)
        if (std::optional<std::string> refusal = getTilingRefusal(
                tiling, w, static_cast<bool>(op.getUp()), target)) {
          LLVM_DEBUG(llvm::dbgs() << "M = " << m << " " << w << ": "
                                  << tiling << " from the tuning database "
                                  << "skipped: " << *refusal << "\n");
          tiling = {};
        }
      if (tiling) {
        if (failed(verifyDatabaseTiling(op, tiling, m, tuningDb)))
          return failure();
        LLVM_DEBUG(llvm::dbgs() << "M = " << m << " " << w << ": " << tiling
                                << " from the tuning database\n");
        return tiling;
      }
    }
    std::string why;
    bool fallback = false, refused = false;
    TilingAttr tiling = selectTiling(m, w, target, &why, &fallback,
                                     /*gated=*/static_cast<bool>(op.getUp()),
                                     &refused);
    // The matvec reads f16 only: bf16 activations on a weight the
    // tensor-core kernel refuses go to the fallback, which reads both; so
    // do 2:4 weights, whose mma.sp kernel reads f16 too.
    bool bf16 = op.getInput().getType().getElementType().isBF16();
    bool sparseMma = isTensorCoreKernel(tiling.getKernel()) &&
                     w.getEncoding().isSparse24();
    if (bf16 && (tiling.getKernel() == KernelKind::MatVec || sparseMma)) {
      why = (sparseMma ? "the mma.sp kernel reads f16 activations only; "
                       : "the matvec reads f16 activations only, and ") +
            why;
      refused = true;
      tiling = TilingAttr::get(op.getContext(), KernelKind::DequantGemm, 1, 1,
                               0, 32, 16, 1, 1, 1, 1);
    }
    // The fallback's silu_mul kernel reads f16 only: a gated bf16 matmul
    // keeps the tensor-core kernel where cuBLAS would be chosen for speed.
    if (bf16 && op.getUp() && !refused &&
        tiling.getKernel() == KernelKind::DequantGemm) {
      TilingTarget fused = target;
      fused.dequantGemmMinM = 0;
      why += "; not dequant_gemm (its silu_mul kernel reads f16 only): ";
      tiling = selectTiling(m, w, fused, &why, &fallback, /*gated=*/true,
                            &refused);
    }
    LLVM_DEBUG(llvm::dbgs() << "M = " << m << " " << w << ": " << tiling
                            << " (" << why << ")\n");
    // Told where it is a limit of the fused kernels, not a choice for speed.
    if (refused && !isCublasStep(op) && remarked.insert({op, m}).second)
      op.emitRemark() << "M = " << m
                      << " runs the dequantize + cuBLAS fallback (" << why
                      << ")";
    if (fallback)
      op.emitRemark() << "M = " << m
                      << " would use the matvec kernel, but a weight row of "
                      << getPackedRowBytes(w)
                      << " packed bytes is not a multiple of 4; using "
                      << tiling;
    return tiling;
  }

  LogicalResult selectFor(FusedMatmulOp op, const TilingTarget &target,
                          const TuningDatabase *db) {
    WeightType w = op.getWeight().getType();
    // A gated matmul streams the gate and up rows of its outputs together:
    // its tiling is that of one weight of 2N rows (block_n counts the rows
    // of both weights, as the matvec generator reads it).
    if (op.getUp())
      w = WeightType::get(op.getContext(), 2 * w.getN(), w.getK(),
                          w.getEncoding(), w.getLayout());
    RankedTensorType input = op.getInput().getType();
    int64_t m = getPlannedM(input, batch);
    FailureOr<TilingAttr> tiling = chooseFor(op, w, m, target, db);
    if (failed(tiling))
      return failure();
    op.setTilingAttr(*tiling);
    if (failed(selectPerBatch(op, w, *tiling, target, db)))
      return failure();

    // Rounded to the nanosecond so that the attribute stays readable.
    double us =
        predictTimeUs(getFusedMatmulTraffic(op, m).total(), bandwidthGbps);
    us = std::round(us * 1000.0) / 1000.0;
    op->setAttr(kPredictedUsAttr,
                FloatAttr::get(Float64Type::get(&getContext()), us));
    return success();
  }

  /// Records a tiling for each of `batch-sizes` whose best kernel differs
  /// from the op's `tiling` (chosen for the planned batch), when M is
  /// dynamic:
  ///
  ///   %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<matvec, ...>}
  ///     : tensor<?x4096xf16>, ...
  /// with batch-sizes=1,16,128 gets
  ///   qf.batch_tilings = [#qf.batch_tiling<batch = 16, tiling = #qf.tiling<mma, ...>>,
  ///                       #qf.batch_tiling<batch = 128, tiling = ...>]
  ///
  /// Each batch's tiling is chosen for that batch (the tuning database's or
  /// the cost model's), so b16 and b128 may get different mma tiles. The
  /// matvec batches share the planned batch's matvec tiling: its generator
  /// specializes every batch anyway, and the smallest batch's tuning is the
  /// one that matters there.
  LogicalResult selectPerBatch(FusedMatmulOp op, WeightType w,
                               TilingAttr tiling, const TilingTarget &target,
                               const TuningDatabase *db) {
    if (!op.getInput().getType().isDynamicDim(0))
      return success();
    SmallVector<int64_t> batches(batchSizes.begin(), batchSizes.end());
    llvm::sort(batches);
    batches.erase(llvm::unique(batches), batches.end());
    Builder b(op.getContext());
    SmallVector<Attribute> entries;
    for (int64_t m : batches) {
      FailureOr<TilingAttr> own = chooseFor(op, w, m, target, db);
      if (failed(own))
        return failure();
      if (*own == tiling || (own->getKernel() == KernelKind::MatVec &&
                             tiling.getKernel() == KernelKind::MatVec))
        continue;
      entries.push_back(
          BatchTilingAttr::get(op.getContext(), m, *own, LayoutAttr()));
    }
    if (!entries.empty())
      op->setAttr(kBatchTilingsAttr, b.getArrayAttr(entries));
    return success();
  }
};

} // namespace
