//===- FuseRMSNormPrologue.cpp - qf.rms_norm -> matmul prologues ------------===//
//
// Folds a qf.rms_norm into the fused matmuls that read it, so that each
// matmul normalizes its input rows as it loads them and the norm's launch
// disappears.
//
//===----------------------------------------------------------------------===//

#include "qfuse/Dialect/QF/Transforms/Passes.h"

#include "FusionUtils.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "qf-fuse-rmsnorm-prologue"

namespace mlir {
namespace qf {
#define GEN_PASS_DEF_QFFUSERMSNORMPROLOGUE
#include "qfuse/Dialect/QF/Transforms/Passes.h.inc"
} // namespace qf
} // namespace mlir

using namespace mlir;
using namespace mlir::qf;

namespace {

/// Whether every user of `norm` can take it as a prologue; otherwise the
/// reason, naming the first user that cannot.
LogicalResult canFuse(RMSNormOp norm, std::string &reason) {
  llvm::raw_string_ostream os(reason);
  if (norm->use_empty()) {
    os << "the norm has no users";
    return failure();
  }
  for (OpOperand &use : norm->getUses()) {
    Operation *user = use.getOwner();
    auto matmul = dyn_cast<FusedMatmulOp>(user);
    if (!matmul) {
      os << "its result is also used by '" << user->getName()
         << "', so the norm would run anyway";
      return failure();
    }
    if (use.getOperandNumber() !=
        matmul.getInputMutable().getOperandNumber()) {
      os << "a qf.fused_matmul uses the normalized value as an operand "
            "other than its input";
      return failure();
    }
    if (matmul.getNorm()) {
      os << "a qf.fused_matmul reading it already has an RMSNorm prologue";
      return failure();
    }
    if (isDenseUnquantized(matmul.getWeight().getType())) {
      os << "a qf.fused_matmul reading it has a dense "
         << matmul.getWeight().getType().getEncoding()
         << " weight: it runs as a cuBLAS step, which has no prologue";
      return failure();
    }
  }
  return success();
}

/// A norm read only by fused matmuls becomes their prologue:
///
///   %n = qf.rms_norm %h, %g {eps = 1e-5} : ...
///   %q = qf.fused_matmul %n, %wq : ...
///   %k = qf.fused_matmul %n, %wk : ...
/// becomes
///   %q = qf.fused_matmul %h, %wq norm(%g : ...) {norm_eps = 1e-5} : ...
///   %k = qf.fused_matmul %h, %wk norm(%g : ...) {norm_eps = 1e-5} : ...
struct FoldRMSNormIntoMatmuls : public OpRewritePattern<RMSNormOp> {
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

struct QFFuseRMSNormProloguePass
    : public qf::impl::QFFuseRMSNormPrologueBase<QFFuseRMSNormProloguePass> {
  using Base::Base;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateFuseRMSNormProloguePatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      LLVM_DEBUG(llvm::dbgs() << "greedy rewrite did not converge\n");
    if (!reportUnfused)
      return;
    getOperation()->walk([](RMSNormOp norm) {
      std::string reason;
      if (failed(canFuse(norm, reason)))
        norm.emitRemark() << "rms_norm not fused into a matmul prologue: "
                          << reason;
    });
  }
};

} // namespace

void qf::populateFuseRMSNormProloguePatterns(RewritePatternSet &patterns) {
  patterns.add<FoldRMSNormIntoMatmuls>(patterns.getContext());
}
