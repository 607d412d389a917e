//===- FusionUtils.h - helpers shared by the qf-fuse-* passes ---*- C++ -*-===//
//
// What the neighbour-fusion passes (RMSNorm prologue, epilogue, gated MLP)
// all need to know about a qf.fused_matmul.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_LIB_DIALECT_QF_TRANSFORMS_FUSIONUTILS_H
#define QFUSE_LIB_DIALECT_QF_TRANSFORMS_FUSIONUTILS_H

#include "qfuse/Dialect/QF/IR/QFDialect.h"

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
  Value input, weight, up, norm, bias, residual;
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
    p.normEps = op.getNormEpsAttr();
    p.activation = op.getActivation();
    p.tiling = op.getTilingAttr();
    return p;
  }

  FusedMatmulOp create(OpBuilder &b, Location loc, Type result) const {
    return FusedMatmulOp::create(b, loc, result, input, weight, up, norm, bias,
                                 residual, normEps, activation, tiling);
  }
};

} // namespace qf
} // namespace mlir

#endif // QFUSE_LIB_DIALECT_QF_TRANSFORMS_FUSIONUTILS_H
