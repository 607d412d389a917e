//===- FuseRotaryAttention.cpp - qf.rotary -> qf.attention ------------------===//
//
// Folds the rotaries of query and key into the qf.attention that reads
// them, so that the GPU lowering emits one launch for rotary, cache write
// and attention (AttentionKernel.cpp, "Rotary form").
//
//===----------------------------------------------------------------------===//

#include "qfuse/Dialect/QF/Transforms/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "qf-fuse-rotary-attention"

namespace mlir {
namespace qf {
#define GEN_PASS_DEF_QFFUSEROTARYATTENTION
#include "qfuse/Dialect/QF/Transforms/Passes.h.inc"
} // namespace qf
} // namespace mlir

using namespace mlir;
using namespace mlir::qf;

namespace {

/// The rotary parameters as one comparable tuple.
auto rotaryParams(RotaryOp r) {
  return std::make_tuple(r.getTheta(), r.getScalingFactor(),
                         r.getLowFreqFactor(), r.getHighFreqFactor(),
                         r.getOriginalMaxPosition());
}

/// Checks one operand (`what`: "query" or "key") of `attention`; returns
/// its rotary, or null with the reason.
RotaryOp matchRotary(AttentionOp attention, Value operand, StringRef what,
                     llvm::raw_ostream &os) {
  auto rotary = operand.getDefiningOp<RotaryOp>();
  if (!rotary) {
    os << "the " << what << " is not a qf.rotary result";
    return nullptr;
  }
  if (!rotary->hasOneUse()) {
    os << "the " << what
       << " rotary's result has other users, so the rotary would run anyway";
    return nullptr;
  }
  if (rotary.getPositions() != attention.getPositions()) {
    os << "the " << what
       << " rotary reads other positions than the attention";
    return nullptr;
  }
  if (static_cast<int64_t>(rotary.getHeadDim()) !=
      static_cast<int64_t>(attention.getHeadDim())) {
    os << "the " << what << " rotary has head_dim = " << rotary.getHeadDim()
       << ", the attention head_dim = " << attention.getHeadDim();
    return nullptr;
  }
  return rotary;
}

/// The query and key rotaries of `attention` when both can be folded;
/// otherwise failure and the reason.
FailureOr<std::pair<RotaryOp, RotaryOp>> canFuse(AttentionOp attention,
                                                 std::string &reason) {
  llvm::raw_string_ostream os(reason);
  if (attention.getRopeTheta()) {
    os << "it already rotates query and key";
    return failure();
  }
  RotaryOp q = matchRotary(attention, attention.getQuery(), "query", os);
  if (!q)
    return failure();
  RotaryOp k = matchRotary(attention, attention.getKey(), "key", os);
  if (!k)
    return failure();
  if (rotaryParams(q) != rotaryParams(k)) {
    os << "the query and key rotaries have different theta or scaling";
    return failure();
  }
  return std::make_pair(q, k);
}

/// Both rotaries fold into the attention:
///
///   %qr = qf.rotary %q, %pos {head_dim = 64, theta = 1.0e+04}
///   %kr = qf.rotary %k, %pos {head_dim = 64, theta = 1.0e+04}
///   %o, %kc1, %vc1 = qf.attention %qr, %kr, %v, %kc, %vc, %pos {...}
/// becomes
///   %o, %kc1, %vc1 = qf.attention %q, %k, %v, %kc, %vc, %pos
///                      {..., rope_theta = 1.0e+04}
struct FoldRotariesIntoAttention : public OpRewritePattern<AttentionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AttentionOp attention,
                                PatternRewriter &rewriter) const override {
    std::string reason;
    FailureOr<std::pair<RotaryOp, RotaryOp>> rotaries =
        canFuse(attention, reason);
    if (failed(rotaries))
      return rewriter.notifyMatchFailure(attention, reason);
    auto [q, k] = *rotaries;
    // Updated in place: each rotary's input dominates the rotary, which
    // dominates the attention.
    rewriter.modifyOpInPlace(attention, [&] {
      attention.getQueryMutable().assign(q.getInput());
      attention.getKeyMutable().assign(k.getInput());
      attention.setRopeThetaAttr(q.getThetaAttr());
      attention.setScalingFactorAttr(q.getScalingFactorAttr());
      attention.setLowFreqFactorAttr(q.getLowFreqFactorAttr());
      attention.setHighFreqFactorAttr(q.getHighFreqFactorAttr());
      attention.setOriginalMaxPositionAttr(q.getOriginalMaxPositionAttr());
    });
    rewriter.eraseOp(q);
    rewriter.eraseOp(k);
    return success();
  }
};

struct QFFuseRotaryAttentionPass
    : public qf::impl::QFFuseRotaryAttentionBase<QFFuseRotaryAttentionPass> {
  using Base::Base;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateFuseRotaryAttentionPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      LLVM_DEBUG(llvm::dbgs() << "greedy rewrite did not converge\n");
    if (!reportUnfused)
      return;
    getOperation()->walk([](AttentionOp attention) {
      if (attention.getRopeTheta())
        return;
      std::string reason;
      if (failed(canFuse(attention, reason)))
        attention.emitRemark()
            << "attention not fused with its rotaries: " << reason;
    });
  }
};

} // namespace

void qf::populateFuseRotaryAttentionPatterns(RewritePatternSet &patterns) {
  patterns.add<FoldRotariesIntoAttention>(patterns.getContext());
}
