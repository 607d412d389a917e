//===- FuseGatedMLP.cpp - silu(gate) * up -> one gated fused matmul ---------===//
//
// Fuses a SwiGLU MLP's gate and up projections and their qf.silu_mul into
// one qf.fused_matmul (activation = silu_mul) that reads the two weights
// side by side, so one kernel produces silu(gate . x) * (up . x) directly.
// act_order gate and up fuse under the contract that their perms are equal
// (GPTQ desc_act: one Hessian per input); qf-to-gpu guards the kernel with
// it and adds a fallback for perms that differ (docs/act-order.md).
//
//===----------------------------------------------------------------------===//

#include "qfuse/Dialect/QF/Transforms/Passes.h"

#include "FusionUtils.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "qf-fuse-gated-mlp"

namespace mlir {
namespace qf {
#define GEN_PASS_DEF_QFFUSEGATEDMLP
#include "qfuse/Dialect/QF/Transforms/Passes.h.inc"
} // namespace qf
} // namespace mlir

using namespace mlir;
using namespace mlir::qf;

namespace {

/// Why one projection of the pair cannot be the gate or up half, or "".
std::string checkProjection(Value v, StringRef role) {
  std::string reason;
  llvm::raw_string_ostream os(reason);
  auto matmul = v.getDefiningOp<FusedMatmulOp>();
  if (!matmul) {
    os << "the " << role << " operand is not a qf.fused_matmul result";
    return reason;
  }
  WeightType w = matmul.getWeight().getType();
  if (!v.hasOneUse())
    os << "the " << role << " projection has other users";
  else if (matmul.getBias() || matmul.getResidual())
    os << "the " << role << " projection has a "
       << (matmul.getBias() ? "bias" : "residual")
       << ", which the gated form cannot apply before the activation";
  else if (matmul.getActivation() != EpilogueActivation::None)
    os << "the " << role << " projection already has an activation";
  else if (matmul.getTilingAttr())
    os << "the " << role << " projection already has a tiling (run "
       << "qf-fuse-gated-mlp before qf-select-tiling)";
  else if (isDenseUnquantized(w))
    os << "the " << role << " projection has a dense "
       << w.getEncoding()
       << " weight: it runs as a cuBLAS step, which has no epilogue "
          "activation";
  else if (w.getEncoding().getActOrder() &&
           !matmul.getInput().getType().getElementType().isF16())
    os << "the " << role
       << " projection is act_order on bf16 activations: where gate's and "
          "up's perms differ at load time the fallback runs, whose silu_mul "
          "kernel reads f16 only";
  return reason;
}

/// The gate and up matmuls of `op`, or the reason they do not fuse.
FailureOr<std::pair<FusedMatmulOp, FusedMatmulOp>>
matchGatedMLP(SiluMulOp op, std::string &reason) {
  reason = checkProjection(op.getGate(), "gate");
  if (reason.empty())
    reason = checkProjection(op.getUp(), "up");
  if (!reason.empty())
    return failure();
  auto gate = op.getGate().getDefiningOp<FusedMatmulOp>();
  auto up = op.getUp().getDefiningOp<FusedMatmulOp>();
  llvm::raw_string_ostream os(reason);
  if (gate == up)
    os << "gate and up are the same matmul";
  else if (gate.getInput() != up.getInput())
    os << "gate and up read different inputs";
  else if (gate.getWeight().getType() != up.getWeight().getType())
    os << "gate weight " << gate.getWeight().getType()
       << " and up weight " << up.getWeight().getType()
       << " differ in shape, encoding or layout";
  else if (gate.getNorm() != up.getNorm() ||
           gate.getNormEpsAttr() != up.getNormEpsAttr())
    os << "gate and up have different RMSNorm prologues";
  if (!reason.empty())
    return failure();
  return std::make_pair(gate, up);
}

/// silu(gate) * up over two fused matmuls of one input:
///
///   %g = qf.fused_matmul %x, %wg : ... -> tensor<MxNxf16>
///   %u = qf.fused_matmul %x, %wu : ... -> tensor<MxNxf16>
///   %a = qf.silu_mul %g, %u : tensor<MxNxf16>
/// becomes
///   %a = qf.fused_matmul %x, %wg up(%wu : !qf.weight<NxK, #e>)
///          {activation = #qf<activation silu_mul>} : ... -> tensor<MxNxf16>
struct FuseSiluMulOfProjections : public OpRewritePattern<SiluMulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SiluMulOp op,
                                PatternRewriter &rewriter) const override {
    std::string reason;
    auto match = matchGatedMLP(op, reason);
    if (failed(match))
      return rewriter.notifyMatchFailure(op, reason);
    auto [gate, up] = *match;
    FusedMatmulParts parts = FusedMatmulParts::of(gate);
    parts.up = up.getWeight();
    parts.activation = EpilogueActivation::SiluMul;
    // At the silu_mul, both weights are available (they dominate their
    // matmuls, which dominate it).
    rewriter.setInsertionPoint(op);
    FusedMatmulOp fused =
        parts.create(rewriter, gate.getLoc(), op.getType());
    rewriter.replaceOp(op, fused.getResult());
    rewriter.eraseOp(gate);
    rewriter.eraseOp(up);
    return success();
  }
};

struct QFFuseGatedMLPPass
    : public qf::impl::QFFuseGatedMLPBase<QFFuseGatedMLPPass> {
  using Base::Base;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateFuseGatedMLPPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      LLVM_DEBUG(llvm::dbgs() << "greedy rewrite did not converge\n");
    if (!reportUnfused)
      return;
    getOperation()->walk([](SiluMulOp op) {
      std::string reason;
      if (failed(matchGatedMLP(op, reason)))
        op.emitRemark() << "silu_mul not fused with its projections: "
                        << reason;
    });
  }
};

} // namespace

void qf::populateFuseGatedMLPPatterns(RewritePatternSet &patterns) {
  patterns.add<FuseSiluMulOfProjections>(patterns.getContext());
}
