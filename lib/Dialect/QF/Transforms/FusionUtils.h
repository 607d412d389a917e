//===- FusionUtils.h - helpers shared by the qf-fuse-* passes ---*- C++ -*-===//
//
// What the neighbour-fusion passes (RMSNorm prologue, epilogue, gated MLP)
// all need to know about a qf.fused_matmul.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_LIB_DIALECT_QF_TRANSFORMS_FUSIONUTILS_H
#define QFUSE_LIB_DIALECT_QF_TRANSFORMS_FUSIONUTILS_H

#include "qfuse/Dialect/QF/IR/QFDialect.h"

#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/STLExtras.h"

namespace mlir {
namespace qf {

/// A dense f16/bf16 weight without sparsity: the matmul becomes a cuBLAS
/// step, which takes a bias and a residual but no prologue or activation.
inline bool isDenseUnquantized(WeightType w) {
  EncodingAttr enc = w.getEncoding();
  return (enc.getFormat() == ElementFormat::F16 ||
          enc.getFormat() == ElementFormat::BF16) &&
         !enc.isSparse24();
}

/// The operands and attributes of a qf.fused_matmul, to be edited and
/// rebuilt (the fusion passes create the fused op where its last operand
/// is available rather than editing the old one in place).
struct FusedMatmulParts {
  Value input, weight, up, norm, bias, residual, siluMulUp;
  FloatAttr normEps;
  EpilogueActivation activation = EpilogueActivation::None;
  TilingAttr tiling;

  static FusedMatmulParts of(FusedMatmulOp op) {
    FusedMatmulParts p;
    p.input = op.getInput();
    p.weight = op.getWeight();
    p.up = op.getUp();
    p.norm = op.getNorm();
    p.bias = op.getBias();
    p.residual = op.getResidual();
    p.siluMulUp = op.getSiluMulUp();
    p.normEps = op.getNormEpsAttr();
    p.activation = op.getActivation();
    p.tiling = op.getTilingAttr();
    return p;
  }

  FusedMatmulOp create(OpBuilder &b, Location loc, Type result) const {
    return FusedMatmulOp::create(b, loc, result, input, weight, up, norm, bias,
                                 residual, siluMulUp, normEps, activation,
                                 tiling);
  }
};

/// Makes `norm` the RMSNorm prologue of every user (each a qf.fused_matmul
/// reading it as input, which the caller checked) and erases it:
///
///   %n = qf.rms_norm %h, %g {eps = 1e-5} : ...
///   %q = qf.fused_matmul %n, %wq : ...
/// becomes
///   %q = qf.fused_matmul %h, %wq norm(%g : ...) {norm_eps = 1e-5} : ...
///
/// In place: the norm's operands dominate the norm, which dominates every
/// user.
inline void foldNormIntoReaders(RMSNormOp norm, RewriterBase &rewriter) {
  for (Operation *user : llvm::make_early_inc_range(norm->getUsers())) {
    auto matmul = cast<FusedMatmulOp>(user);
    rewriter.modifyOpInPlace(matmul, [&] {
      matmul.getInputMutable().assign(norm.getInput());
      matmul.getNormMutable().assign(norm.getGamma());
      matmul.setNormEpsAttr(norm.getEpsAttr());
    });
  }
  rewriter.eraseOp(norm);
}

} // namespace qf
} // namespace mlir

#endif // QFUSE_LIB_DIALECT_QF_TRANSFORMS_FUSIONUTILS_H
