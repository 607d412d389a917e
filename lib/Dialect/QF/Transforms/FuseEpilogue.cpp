//===- FuseEpilogue.cpp - residual and bias adds -> matmul epilogues --------===//
//
// The one place where a qf.add after a fused matmul becomes the matmul's
// residual or bias epilogue, so that the add's launch and the matmul
// result's round trip through memory disappear.
//
//===----------------------------------------------------------------------===//

#include "qfuse/Dialect/QF/Transforms/Passes.h"

#include "FusionUtils.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "qf-fuse-epilogue"

namespace mlir {
namespace qf {
#define GEN_PASS_DEF_QFFUSEEPILOGUE
#include "qfuse/Dialect/QF/Transforms/Passes.h.inc"
} // namespace qf
} // namespace mlir

using namespace mlir;
using namespace mlir::qf;

namespace {

/// The [N] vector that `v` broadcasts along the rows (dimension 0), or null.
///   %b2 = linalg.broadcast ins(%b : tensor<N>) outs(%e : tensor<MxN>)
///           dimensions = [0]
Value getBroadcastBias(Value v) {
  auto bcast = v.getDefiningOp<linalg::BroadcastOp>();
  if (!bcast || bcast.getDimensions() != ArrayRef<int64_t>{0})
    return {};
  Value input = bcast.getInput();
  auto type = dyn_cast<RankedTensorType>(input.getType());
  return type && type.getRank() == 1 ? input : Value();
}

/// How `add` can be folded into the fused matmul producing `operand`.
struct EpilogueMatch {
  FusedMatmulOp matmul;
  Value residual; ///< set for a residual epilogue
  Value bias;     ///< set for a bias epilogue
};

/// Whether `add`'s operand `index` is a fused matmul result that can take
/// the other operand as its epilogue; otherwise the reason.
FailureOr<EpilogueMatch> matchOperand(AddOp add, unsigned index,
                                      std::string &reason) {
  llvm::raw_string_ostream os(reason);
  Value result = add->getOperand(index);
  Value other = add->getOperand(1 - index);
  auto matmul = result.getDefiningOp<FusedMatmulOp>();
  if (!matmul) {
    os << "operand " << index << " is not a qf.fused_matmul result";
    return failure();
  }
  if (!result.hasOneUse()) {
    os << "the qf.fused_matmul result has other users, which need it "
          "without the add";
    return failure();
  }
  if (Value bias = getBroadcastBias(other)) {
    // The bias comes before the activation and the residual.
    if (matmul.getBias() || matmul.getResidual() ||
        matmul.getActivation() != EpilogueActivation::None) {
      os << "the qf.fused_matmul already has "
         << (matmul.getBias()       ? "a bias"
             : matmul.getResidual() ? "a residual"
                                    : "an activation")
         << ", which a bias would have to precede";
      return failure();
    }
    if (cast<RankedTensorType>(bias.getType()).getElementType() !=
        add.getType().getElementType()) {
      os << "the broadcast bias has element type "
         << cast<RankedTensorType>(bias.getType()).getElementType()
         << ", not the activations'";
      return failure();
    }
    return EpilogueMatch{matmul, Value(), bias};
  }
  if (matmul.getResidual()) {
    os << "the qf.fused_matmul already has a residual";
    return failure();
  }
  return EpilogueMatch{matmul, other, Value()};
}

/// Both operand orders (qf.add is commutative), the first that fits.
FailureOr<EpilogueMatch> matchAdd(AddOp add, std::string &reason) {
  std::string first, second;
  FailureOr<EpilogueMatch> match = matchOperand(add, 1, first);
  if (succeeded(match))
    return match;
  match = matchOperand(add, 0, second);
  if (succeeded(match))
    return match;
  reason = "rhs: " + first + "; lhs: " + second;
  return failure();
}

/// A residual or bias add after a fused matmul becomes its epilogue:
///
///   %o = qf.fused_matmul %a, %w : ...
///   %h1 = qf.add %h, %o : tensor<MxNxf16>
/// becomes
///   %h1 = qf.fused_matmul %a, %w residual(%h : tensor<MxNxf16>) : ...
/// and with %b2 = linalg.broadcast ins(%b : tensor<N>) ... dimensions = [0],
///   %y = qf.add %o, %b2   ->   %y = qf.fused_matmul %a, %w bias(%b : ...)
/// The fused op is created at the add, where both operands are available.
struct FoldAddIntoEpilogue : public OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AddOp add,
                                PatternRewriter &rewriter) const override {
    std::string reason;
    FailureOr<EpilogueMatch> match = matchAdd(add, reason);
    if (failed(match))
      return rewriter.notifyMatchFailure(add, reason);
    FusedMatmulOp matmul = match->matmul;
    FusedMatmulParts parts = FusedMatmulParts::of(matmul);
    if (match->residual)
      parts.residual = match->residual;
    else
      parts.bias = match->bias;
    rewriter.setInsertionPoint(add);
    FusedMatmulOp fused = parts.create(rewriter, matmul.getLoc(), add.getType());
    // Keep discardable attributes (qf.predicted_us, ...) of the matmul.
    for (NamedAttribute attr : matmul->getDiscardableAttrs())
      fused->setAttr(attr.getName(), attr.getValue());
    rewriter.replaceOp(add, fused.getResult());
    rewriter.eraseOp(matmul);
    return success();
  }
};

struct QFFuseEpiloguePass
    : public qf::impl::QFFuseEpilogueBase<QFFuseEpiloguePass> {
  using Base::Base;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateFuseEpiloguePatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      LLVM_DEBUG(llvm::dbgs() << "greedy rewrite did not converge\n");
    if (!reportUnfused)
      return;
    // Only adds that touch a fused matmul are worth a remark.
    getOperation()->walk([](AddOp add) {
      if (!add.getLhs().getDefiningOp<FusedMatmulOp>() &&
          !add.getRhs().getDefiningOp<FusedMatmulOp>())
        return;
      std::string reason;
      if (failed(matchAdd(add, reason)))
        add.emitRemark() << "add not fused into a matmul epilogue: " << reason;
    });
  }
};

} // namespace

void qf::populateFuseEpiloguePatterns(RewritePatternSet &patterns) {
  patterns.add<FoldAddIntoEpilogue>(patterns.getContext());
}
