//===- FuseActOrderNorm.cpp - qf.rms_norm -> act_order matmul prologues ---===//
//
// Folds a qf.rms_norm into the act_order fused matmuls that read it, so that
// qf-to-gpu writes the normalized rows straight in the weights' sorted
// column order and no permute launch runs (docs/act-order.md).
//
//===----------------------------------------------------------------------===//

#include "qfuse/Dialect/QF/Transforms/Passes.h"

#include "FusionUtils.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "qf-fuse-act-order-norm"

namespace mlir {
namespace qf {
#define GEN_PASS_DEF_QFFUSEACTORDERNORM
#include "qfuse/Dialect/QF/Transforms/Passes.h.inc"
} // namespace qf
} // namespace mlir

using namespace mlir;
using namespace mlir::qf;

namespace {

/// Whether some user of `norm` is an act_order fused matmul: the norms the
/// pass is about (and remarks on).
bool feedsActOrder(RMSNormOp norm) {
  return llvm::any_of(norm->getUsers(), [](Operation *user) {
    auto matmul = dyn_cast<FusedMatmulOp>(user);
    return matmul &&
           matmul.getWeight().getType().getEncoding().getActOrder();
  });
}

/// Whether every user of `norm` is an act_order fused matmul that can take
/// it as a prologue; otherwise the reason, naming the first that cannot.
LogicalResult canFuse(RMSNormOp norm, std::string &reason) {
  llvm::raw_string_ostream os(reason);
  if (!norm.getInput().getType().getElementType().isF16()) {
    os << "the permuted norm kernel reads f16 activations only";
    return failure();
  }
  if (norm->use_empty()) {
    os << "the norm has no users";
    return failure();
  }
  for (OpOperand &use : norm->getUses()) {
    auto matmul = dyn_cast<FusedMatmulOp>(use.getOwner());
    if (!matmul || use.getOperandNumber() !=
                       matmul.getInputMutable().getOperandNumber()) {
      os << "its result is also read by '" << use.getOwner()->getName()
         << "' other than as a fused matmul's input, so the norm would run "
            "anyway";
      return failure();
    }
    if (!matmul.getWeight().getType().getEncoding().getActOrder()) {
      os << "a qf.fused_matmul reading it has a weight without act_order, "
            "which reads it unpermuted";
      return failure();
    }
    if (matmul.getNorm()) {
      os << "a qf.fused_matmul reading it already has an RMSNorm prologue";
      return failure();
    }
  }
  return success();
}

/// A norm read only by act_order matmuls becomes their prologue:
///
///   %n = qf.rms_norm %h, %g {eps = 1e-5} : ...
///   %q = qf.fused_matmul %n, %wq {qf.group = 0} : ...   // act_order
///   %k = qf.fused_matmul %n, %wk {qf.group = 0} : ...
/// becomes
///   %q = qf.fused_matmul %h, %wq norm(%g : ...) {norm_eps = 1e-5, ...} : ...
///   %k = qf.fused_matmul %h, %wk norm(%g : ...) {norm_eps = 1e-5, ...} : ...
struct FoldNormIntoActOrderMatmuls : public OpRewritePattern<RMSNormOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(RMSNormOp norm,
                                PatternRewriter &rewriter) const override {
    std::string reason;
    if (failed(canFuse(norm, reason)))
      return rewriter.notifyMatchFailure(norm, reason);
    foldNormIntoReaders(norm, rewriter);
    return success();
  }
};

struct QFFuseActOrderNormPass
    : public qf::impl::QFFuseActOrderNormBase<QFFuseActOrderNormPass> {
  using Base::Base;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateFuseActOrderNormPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      LLVM_DEBUG(llvm::dbgs() << "greedy rewrite did not converge\n");
    if (!reportUnfused)
      return;
    getOperation()->walk([](RMSNormOp norm) {
      std::string reason;
      if (feedsActOrder(norm) && failed(canFuse(norm, reason)))
        norm.emitRemark() << "rms_norm not folded into its act_order "
                             "matmuls: "
                          << reason;
    });
  }
};

} // namespace

void qf::populateFuseActOrderNormPatterns(RewritePatternSet &patterns) {
  patterns.add<FoldNormIntoActOrderMatmuls>(patterns.getContext());
}
