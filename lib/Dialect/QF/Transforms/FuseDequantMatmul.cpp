//===- FuseDequantMatmul.cpp - qf.matmul on packed weights -> fused
//---------===//
//
// Turns matmuls on packed weights (directly or through qf.dequantize) into
// qf.fused_matmul so that no dense weight is ever materialized, and says why
// wherever a matmul stays.
//
//===----------------------------------------------------------------------===//

#include "qfuse/Dialect/QF/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "qf-fuse-dequant-matmul"

namespace mlir {
namespace qf {
#define GEN_PASS_DEF_QFFUSEDEQUANTMATMUL
#include "qfuse/Dialect/QF/Transforms/Passes.h.inc"
} // namespace qf
} // namespace mlir

using namespace mlir;
using namespace mlir::qf;

namespace {

/// A truncf that rounds to nearest even with no fast-math flags.
bool isPlainTruncF(arith::TruncFOp trunc) {
  arith::FastMathFlagsAttr fastmath = trunc.getFastmathAttr();
  return !trunc.getRoundingmodeAttr() &&
         (!fastmath || fastmath.getValue() == arith::FastMathFlags::none);
}

/// The packed weight a matmul can consume directly, or the reason it cannot.
///
///   qf.matmul %x, %w            (%w : !qf.weight<...>)      -> %w
///   qf.matmul %x, (qf.dequantize %w -> tensor<NxKxT>)       -> %w
///   qf.matmul %x, (arith.truncf (qf.dequantize %w -> f32))  -> %w
///   qf.matmul %x, %dense        (block argument, tensor_ref) -> reason
FailureOr<TypedValue<WeightType>> getFusableWeight(MatmulOp op,
                                                   std::string &reason) {
  Value weight = op.getWeight();
  if (auto packed = dyn_cast<TypedValue<WeightType>>(weight))
    return packed;
  Type activationType = op.getInput().getType().getElementType();
  if (auto dequant = weight.getDefiningOp<DequantizeOp>()) {
    // The verifier of qf.matmul makes this equal; kept for robustness.
    Type dequantType = dequant.getType().getElementType();
    if (dequantType != activationType) {
      llvm::raw_string_ostream(reason)
          << "dequantize produces " << dequantType
          << " but the activations are " << activationType;
      return failure();
    }
    return dequant.getWeight();
  }

  // Look through element type conversions for a dequantize that the
  // canonical folds could not absorb (a rounding mode, a widening).
  Value source = weight;
  SmallVector<Operation *> casts;
  while (Operation *def = source.getDefiningOp()) {
    if (!isa<arith::TruncFOp, arith::ExtFOp>(def))
      break;
    casts.push_back(def);
    source = def->getOperand(0);
  }
  llvm::raw_string_ostream os(reason);
  if (auto dequant = source.getDefiningOp<DequantizeOp>()) {
    // Dequantize computes in f32 and rounds once, so f32 followed by a plain
    // rounding to the activation type is a dequantize to that type.
    auto trunc = dyn_cast<arith::TruncFOp>(casts.front());
    if (casts.size() == 1 && trunc && isPlainTruncF(trunc) &&
        dequant.getType().getElementType().isF32())
      return dequant.getWeight();
    os << "dequantize element type " << dequant.getType().getElementType()
       << " differs from the activations' " << activationType
       << " (converted by '" << casts.front()->getName()
       << "', which does not fold into the dequantize)";
    return failure();
  }
  os << "dense weight is not produced by qf.dequantize (";
  if (Operation *def = weight.getDefiningOp())
    os << "it comes from '" << def->getName() << "'";
  else
    os << "it is a block argument";
  os << "); it stays a dense matmul";
  return failure();
}

/// A matmul on a packed weight, directly or through a dequantize with the
/// activations' element type, becomes a fused matmul that decodes on chip:
///
///   %d = qf.dequantize %w : !qf.weight<NxK, #e> -> tensor<NxKxf16>
///   %y = qf.matmul %x, %d : tensor<MxKxf16>, tensor<NxKxf16> ->
///   tensor<MxNxf16>
/// becomes
///   %y = qf.fused_matmul %x, %w : tensor<MxKxf16>, !qf.weight<NxK, #e>
///          -> tensor<MxNxf16>
/// and the dequantize is erased once it has no users left.
struct FuseMatmulOnPackedWeight : public OpRewritePattern<MatmulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MatmulOp op,
                                PatternRewriter &rewriter) const override {
    std::string reason;
    FailureOr<TypedValue<WeightType>> weight = getFusableWeight(op, reason);
    if (failed(weight))
      return rewriter.notifyMatchFailure(op, reason);
    Operation *dense = op.getWeight().getDefiningOp();
    rewriter.replaceOpWithNewOp<FusedMatmulOp>(
        op, op.getType(), op.getInput(), *weight, /*up=*/Value(),
        /*norm=*/Value(),
        /*bias=*/Value(), /*residual=*/Value(), /*silu_mul_up=*/Value(),
        /*norm_eps=*/FloatAttr(),
        EpilogueActivation::None, /*tiling=*/TilingAttr());
    // Erase the dequantize (and a rounding after it) once nothing else
    // needs the dense weight.
    while (dense && isa<DequantizeOp, arith::TruncFOp>(dense) &&
           dense->use_empty()) {
      Operation *source = dense->getOperand(0).getDefiningOp();
      rewriter.eraseOp(dense);
      dense = source;
    }
    return success();
  }
};

struct QFFuseDequantMatmulPass
    : public qf::impl::QFFuseDequantMatmulBase<QFFuseDequantMatmulPass> {
  using Base::Base;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateFuseDequantMatmulPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns)))) {
      LLVM_DEBUG(llvm::dbgs() << "greedy rewrite did not converge\n");
    }
    if (reportUnfused)
      report();
  }

  /// Remarks, once per op after the rewrite: matmuls left unfused, and
  /// dequantizes that still materialize a dense weight.
  void report() {
    getOperation()->walk([&](Operation *op) {
      if (auto matmul = dyn_cast<MatmulOp>(op)) {
        std::string reason;
        if (failed(getFusableWeight(matmul, reason)))
          matmul.emitRemark() << "matmul not fused: " << reason;
      } else if (auto dequant = dyn_cast<DequantizeOp>(op)) {
        if (dequant->use_empty())
          return;
        InFlightDiagnostic diag = dequant.emitRemark();
        diag << "dequantize still materializes the dense weight for its "
                "users: ";
        llvm::interleaveComma(dequant->getUsers(), diag, [&](Operation *user) {
          diag << "'" << user->getName() << "'";
        });
      }
    });
  }
};

} // namespace

void qf::populateFuseDequantMatmulPatterns(RewritePatternSet &patterns) {
  patterns.add<FuseMatmulOnPackedWeight>(patterns.getContext());
  // A dequantize to f32 rounded by a plain truncf dequantizes to the
  // activation type directly (for its other users).
  DequantizeOp::getCanonicalizationPatterns(patterns, patterns.getContext());
}
