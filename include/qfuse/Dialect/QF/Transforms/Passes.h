//===- Passes.h - qf transformation passes ----------------------*- C++ -*-===//

#ifndef QFUSE_DIALECT_QF_TRANSFORMS_PASSES_H
#define QFUSE_DIALECT_QF_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Quant/IR/Quant.h"
#include "mlir/Pass/Pass.h"
#include "qfuse/Dialect/QF/IR/QFDialect.h"
#include "qfuse/Dialect/QF/Transforms/CostModel.h"

namespace mlir {
class RewritePatternSet;

namespace qf {

#define GEN_PASS_DECL
#include "qfuse/Dialect/QF/Transforms/Passes.h.inc"

/// Patterns of qf-fuse-dequant-matmul: qf.matmul on a packed weight, directly
/// or through qf.dequantize, becomes qf.fused_matmul (without a tiling).
void populateFuseDequantMatmulPatterns(RewritePatternSet &patterns);

/// Patterns of qf-fuse-rmsnorm-prologue: a qf.rms_norm read only by fused
/// matmuls becomes their RMSNorm prologue.
void populateFuseRMSNormProloguePatterns(RewritePatternSet &patterns);

/// Patterns of qf-fuse-act-order-norm: a qf.rms_norm read only by act_order
/// fused matmuls becomes their RMSNorm prologue, which qf-to-gpu writes in
/// the weights' sorted column order.
void populateFuseActOrderNormPatterns(RewritePatternSet &patterns);

/// Patterns of qf-fuse-act-order-silu-mul: a qf.silu_mul read only by one
/// act_order fused matmul becomes its silu_mul prologue, which qf-to-gpu
/// writes in the weight's sorted column order.
void populateFuseActOrderSiluMulPatterns(RewritePatternSet &patterns);

/// Patterns of qf-fuse-epilogue: qf.add of a fused matmul result and a
/// residual (or a row-broadcast bias) becomes its epilogue.
void populateFuseEpiloguePatterns(RewritePatternSet &patterns);

/// Patterns of qf-fuse-gated-mlp: qf.silu_mul of two fused matmuls on one
/// input becomes one fused matmul with activation = silu_mul.
void populateFuseGatedMLPPatterns(RewritePatternSet &patterns);

/// Patterns of qf-fuse-rotary-attention: qf.attention of two qf.rotary
/// results takes their inputs and the rotary parameters.
void populateFuseRotaryAttentionPatterns(RewritePatternSet &patterns);

#define GEN_PASS_REGISTRATION
#include "qfuse/Dialect/QF/Transforms/Passes.h.inc"

} // namespace qf
} // namespace mlir

#endif // QFUSE_DIALECT_QF_TRANSFORMS_PASSES_H
