//===- FuseActOrderSiluMul.cpp - qf.silu_mul -> act_order matmul prologue -===//
//
// Folds a qf.silu_mul into the act_order fused matmul that reads it
// (down_proj), so that qf-to-gpu writes the product straight in the
// weight's sorted column order and no permute launch runs
// (docs/act-order.md).
//
//===----------------------------------------------------------------------===//

#include "qfuse/Dialect/QF/Transforms/Passes.h"

#include "FusionUtils.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "qf-fuse-act-order-silu-mul"

namespace mlir {
namespace qf {
#define GEN_PASS_DEF_QFFUSEACTORDERSILUMUL
#include "qfuse/Dialect/QF/Transforms/Passes.h.inc"
} // namespace qf
} // namespace mlir

using namespace mlir;
using namespace mlir::qf;

namespace {

/// Whether some user of `op` is an act_order fused matmul: the silu_muls
/// the pass is about (and remarks on).
bool feedsActOrder(SiluMulOp op) {
  return llvm::any_of(op->getUsers(), [](Operation *user) {
    auto matmul = dyn_cast<FusedMatmulOp>(user);
    return matmul &&
           matmul.getWeight().getType().getEncoding().getActOrder();
  });
}

/// The one act_order fused matmul that reads `op` as its input and can
/// take it as a prologue; otherwise null, with the reason.
FusedMatmulOp soleActOrderReader(SiluMulOp op, std::string &reason) {
  llvm::raw_string_ostream os(reason);
  if (!op.getType().getElementType().isF16()) {
    os << "the permuted silu_mul kernel reads f16 activations only";
    return {};
  }
  if (!op->hasOneUse()) {
    os << "it has " << (op->use_empty() ? "no" : "more than one")
       << " user, and the fold needs exactly one (the product would be "
          "written anyway)";
    return {};
  }
  OpOperand &use = *op->getUses().begin();
  auto matmul = dyn_cast<FusedMatmulOp>(use.getOwner());
  if (!matmul ||
      use.getOperandNumber() != matmul.getInputMutable().getOperandNumber()) {
    os << "its result is read by '" << use.getOwner()->getName()
       << "' other than as a fused matmul's input";
    return {};
  }
  if (!matmul.getWeight().getType().getEncoding().getActOrder()) {
    os << "the qf.fused_matmul reading it has a weight without act_order, "
          "which reads it unpermuted";
    return {};
  }
  if (matmul.getNorm() || matmul.hasSiluMulPrologue()) {
    os << "the qf.fused_matmul reading it already has a prologue";
    return {};
  }
  return matmul;
}

/// A silu_mul read only by one act_order matmul becomes its prologue:
///
///   %a = qf.silu_mul %g, %u : tensor<?x14336xf16>
///   %y = qf.fused_matmul %a, %wd : ...                  // act_order
/// becomes
///   %y = qf.fused_matmul %g, %wd silu_mul(%u : tensor<?x14336xf16>) : ...
///
/// In place: %g and %u dominate the silu_mul, which dominates the matmul.
struct FoldSiluMulIntoActOrderMatmul : public OpRewritePattern<SiluMulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SiluMulOp op,
                                PatternRewriter &rewriter) const override {
    std::string reason;
    FusedMatmulOp matmul = soleActOrderReader(op, reason);
    if (!matmul)
      return rewriter.notifyMatchFailure(op, reason);
    rewriter.modifyOpInPlace(matmul, [&] {
      matmul.getInputMutable().assign(op.getGate());
      matmul.getSiluMulUpMutable().assign(op.getUp());
    });
    rewriter.eraseOp(op);
    return success();
  }
};

struct QFFuseActOrderSiluMulPass
    : public qf::impl::QFFuseActOrderSiluMulBase<QFFuseActOrderSiluMulPass> {
  using Base::Base;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateFuseActOrderSiluMulPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      LLVM_DEBUG(llvm::dbgs() << "greedy rewrite did not converge\n");
    if (!reportUnfused)
      return;
    getOperation()->walk([](SiluMulOp op) {
      std::string reason;
      if (feedsActOrder(op) && !soleActOrderReader(op, reason))
        op.emitRemark() << "silu_mul not folded into its act_order "
                           "matmul: "
                        << reason;
    });
  }
};

} // namespace

void qf::populateFuseActOrderSiluMulPatterns(RewritePatternSet &patterns) {
  patterns.add<FoldSiluMulIntoActOrderMatmul>(patterns.getContext());
}
