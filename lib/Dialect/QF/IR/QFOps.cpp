//===- QFOps.cpp - qf op verifiers and canonicalizations ---------------------===//

#include "qfuse/Dialect/QF/IR/QFDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"
#include "qfuse/format/Sampling.h"

using namespace mlir;
using namespace mlir::qf;

#define GET_OP_CLASSES
#include "qfuse/Dialect/QF/IR/QFOps.cpp.inc"

namespace {
/// True when two extents agree or either is dynamic (the batch M).
bool compatibleDim(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
}

std::string dimStr(int64_t d) {
  return ShapedType::isDynamic(d) ? std::string("?") : std::to_string(d);
}

/// Checks a result/operand of shape [M, cols] against the expected extents.
LogicalResult verifyMatrix(Operation *op, StringRef what, RankedTensorType type,
                           int64_t rows, int64_t cols) {
  if (!compatibleDim(type.getDimSize(0), rows) ||
      !compatibleDim(type.getDimSize(1), cols))
    return op->emitOpError() << what << " must be [" << dimStr(rows) << ", "
                             << dimStr(cols) << "], got " << type;
  return success();
}

LogicalResult verifyVector(Operation *op, StringRef what, RankedTensorType type,
                           int64_t size) {
  if (!compatibleDim(type.getDimSize(0), size))
    return op->emitOpError() << what << " must have " << dimStr(size)
                             << " elements, got " << type;
  return success();
}
} // namespace

//===----------------------------------------------------------------------===//
// Weights
//===----------------------------------------------------------------------===//

LogicalResult WeightRefOp::verify() {
  if (getName().empty())
    return emitOpError("needs a non-empty weight name");
  return success();
}

LogicalResult TensorRefOp::verify() {
  if (getName().empty())
    return emitOpError("needs a non-empty tensor name");
  return success();
}

LogicalResult DequantizeOp::verify() {
  WeightType w = getWeight().getType();
  return verifyMatrix(*this, "result", getResult().getType(), w.getN(),
                      w.getK());
}

LogicalResult QuantizeOp::verify() {
  WeightType w = getResult().getType();
  return verifyMatrix(*this, "input", getInput().getType(), w.getN(),
                      w.getK());
}

namespace {
/// A dequantize whose f32 result is only rounded to f16/bf16 dequantizes to
/// that type directly: the op already computes in f32 and rounds once.
///
///   %d = qf.dequantize %w : !qf.weight<...> -> tensor<NxKxf32>
///   %h = arith.truncf %d : tensor<NxKxf32> to tensor<NxKxf16>
/// becomes
///   %h = qf.dequantize %w : !qf.weight<...> -> tensor<NxKxf16>
struct FoldTruncOfDequantize : public OpRewritePattern<arith::TruncFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::TruncFOp trunc,
                                PatternRewriter &rewriter) const override {
    auto dequant = trunc.getIn().getDefiningOp<DequantizeOp>();
    if (!dequant)
      return rewriter.notifyMatchFailure(trunc, "input is not qf.dequantize");
    // `fastmath` is optional on arith.truncf: absent means none.
    if (trunc.getRoundingmodeAttr() ||
        trunc.getFastmath().value_or(arith::FastMathFlags::none) !=
            arith::FastMathFlags::none)
      return rewriter.notifyMatchFailure(trunc, "non-default rounding/fastmath");
    Type elt = getElementTypeOrSelf(trunc.getType());
    if (!elt.isF16() && !elt.isBF16())
      return rewriter.notifyMatchFailure(
          trunc, "qf.dequantize produces only f16, bf16 or f32");
    rewriter.replaceOpWithNewOp<DequantizeOp>(trunc, trunc.getType(),
                                              dequant.getWeight());
    return success();
  }
};
} // namespace

void DequantizeOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                               MLIRContext *context) {
  results.add<FoldTruncOfDequantize>(context);
}

//===----------------------------------------------------------------------===//
// Matmul
//===----------------------------------------------------------------------===//

LogicalResult MatmulOp::verify() {
  RankedTensorType x = getInput().getType();
  RankedTensorType y = getResult().getType();
  int64_t n, k;
  if (auto w = dyn_cast<WeightType>(getWeight().getType())) {
    n = w.getN();
    k = w.getK();
  } else {
    auto dense = cast<RankedTensorType>(getWeight().getType());
    if (!dense.hasStaticShape())
      return emitOpError() << "dense weight must have a static [N, K] shape, "
                              "got "
                           << dense;
    if (dense.getElementType() != x.getElementType())
      return emitOpError() << "dense weight element type "
                           << dense.getElementType()
                           << " must match the activations' "
                           << x.getElementType();
    n = dense.getDimSize(0);
    k = dense.getDimSize(1);
  }
  if (failed(verifyMatrix(*this, "input", x, x.getDimSize(0), k)))
    return failure();
  if (y.getElementType() != x.getElementType())
    return emitOpError() << "result element type " << y.getElementType()
                         << " must match the activations' "
                         << x.getElementType();
  return verifyMatrix(*this, "result", y, x.getDimSize(0), n);
}

namespace {
/// A matmul on a dequantized weight is a matmul on the packed weight: the
/// semantics are the same by definition, and the packed form is what the
/// fusion passes and kernels consume.
///
///   %d = qf.dequantize %w : !qf.weight<NxK, #e> -> tensor<NxKxf16>
///   %y = qf.matmul %x, %d : tensor<MxKxf16>, tensor<NxKxf16> -> ...
/// becomes
///   %y = qf.matmul %x, %w : tensor<MxKxf16>, !qf.weight<NxK, #e> -> ...
struct MatmulOfDequantize : public OpRewritePattern<MatmulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MatmulOp op,
                                PatternRewriter &rewriter) const override {
    auto dequant = op.getWeight().getDefiningOp<DequantizeOp>();
    if (!dequant)
      return rewriter.notifyMatchFailure(op, "weight is not qf.dequantize");
    if (dequant.getType().getElementType() !=
        op.getInput().getType().getElementType())
      return rewriter.notifyMatchFailure(
          op, "dequantized type differs from the activations'");
    rewriter.modifyOpInPlace(
        op, [&] { op.getWeightMutable().assign(dequant.getWeight()); });
    return success();
  }
};
} // namespace

void MatmulOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                           MLIRContext *context) {
  results.add<MatmulOfDequantize>(context);
}

LogicalResult FusedMatmulOp::verify() {
  RankedTensorType x = getInput().getType();
  RankedTensorType y = getResult().getType();
  WeightType w = getWeight().getType();
  Type elt = x.getElementType();
  if (failed(verifyMatrix(*this, "input", x, x.getDimSize(0), w.getK())))
    return failure();
  if (y.getElementType() != elt)
    return emitOpError() << "result element type " << y.getElementType()
                         << " must match the activations' " << elt;
  if (getNorm()) {
    if (failed(verifyVector(*this, "norm weight", getNorm().getType(),
                            w.getK())))
      return failure();
    if (getNorm().getType().getElementType() != elt)
      return emitOpError("norm weight element type must match the activations");
    if (!getNormEps())
      return emitOpError("RMSNorm prologue needs 'norm_eps'");
    if (!(getNormEps()->convertToFloat() > 0.0f))
      return emitOpError("norm_eps must be positive");
  } else if (getNormEps()) {
    return emitOpError("'norm_eps' given without a norm prologue");
  }
  if (getBias()) {
    if (failed(verifyVector(*this, "bias", getBias().getType(), w.getN())))
      return failure();
    if (getBias().getType().getElementType() != elt)
      return emitOpError("bias element type must match the activations");
  }
  if (getActivation() == EpilogueActivation::SiluMul) {
    if (!getUp())
      return emitOpError("silu_mul needs the up projection as 'up(...)' "
                         "beside the gate weight");
    if (getUp().getType() != w)
      return emitOpError() << "up weight type " << getUp().getType()
                           << " must match the gate weight type " << w;
    if (getBias())
      return emitOpError("bias cannot be combined with silu_mul: the gate "
                         "and up projections would each need their own");
  } else if (getUp()) {
    return emitOpError("'up(...)' is only meaningful with activation = "
                       "silu_mul");
  }
  if (getSiluMulUp()) {
    // No kernel fuses the product: it is the launch that writes an
    // act_order weight's permuted input (docs/act-order.md), on no other.
    if (!w.getEncoding().getActOrder())
      return emitOpError() << "a silu_mul prologue needs an act_order "
                              "weight, got "
                           << w.getEncoding();
    if (getSiluMulUp().getType() != x)
      return emitOpError() << "silu_mul prologue's up type "
                           << getSiluMulUp().getType()
                           << " must match the input type " << x;
    if (getNorm())
      return emitOpError("a silu_mul prologue cannot be combined with an "
                         "RMSNorm prologue: the input is one or the other");
  }
  if (failed(verifyMatrix(*this, "result", y, x.getDimSize(0), w.getN())))
    return failure();
  if (getResidual() && getResidual().getType() != y)
    return emitOpError() << "residual type " << getResidual().getType()
                         << " must match the result type " << y;
  return success();
}

//===----------------------------------------------------------------------===//
// GPTQ
//===----------------------------------------------------------------------===//

LogicalResult RowMinMaxOp::verify() {
  RankedTensorType w = getWeights().getType();
  // Rows may be dynamic (one kernel per plan batch) or a static tile the
  // runtime moves over the rows; the kernel loops over the columns, so they
  // must be known.
  if (w.isDynamicDim(1))
    return emitOpError() << "weights must have a static column count, got "
                         << w;
  if (w.getDimSize(1) == 0)
    return emitOpError() << "weights must have at least one column, got " << w;
  return verifyMatrix(*this, "min_max", getMinMax().getType(),
                      w.getDimSize(0), 2);
}

LogicalResult GPTQBlockUpdateOp::verify() {
  RankedTensorType w = getWeights().getType();
  // Rows may be dynamic (the plan's batch: one kernel per row count); the
  // columns are the block, which the kernel keeps in registers.
  if (w.isDynamicDim(1))
    return emitOpError() << "weight block must have a static column count, got "
                         << w;
  int64_t rows = w.getDimSize(0), cols = w.getDimSize(1);
  EncodingAttr grid = getGrid();
  if (!grid.isQuantized() || grid.isSparse24())
    return emitOpError() << "grid must be a dense quantized encoding, got "
                         << grid;
  if (failed(verifyMatrix(*this, "hinv_chol", getHinvChol().getType(), cols,
                          cols)) ||
      failed(verifyMatrix(*this, "codes", getCodes().getType(), rows, cols)) ||
      failed(verifyMatrix(*this, "error", getError().getType(), rows, cols)))
    return failure();
  if (grid.getCodeBits() > 8)
    return emitOpError("codes wider than 8 bits do not fit the i8 results");
  if (getValues() && failed(verifyMatrix(*this, "values",
                                         getValues().getType(), rows, cols)))
    return failure();
  bool hasZeros = grid.getZeroPoint() != ZeroPointKind::None;
  // The I64Attr getter is unsigned: read the offset back as signed.
  int64_t columnOffset = static_cast<int64_t>(getColumnOffset());
  if (columnOffset < 0)
    return emitOpError() << "column_offset must be non-negative, got "
                         << columnOffset;

  // NVFP4: the tensor-wide scale is an operand, one per row (the rows of
  // several modules, each with its own), in both modes.
  if (grid.getGlobalScale() && !getGlobalScale())
    return emitOpError() << "grid " << grid
                         << " has a global scale: pass 'global_scale(...)', "
                            "one f32 per row";
  if (!grid.getGlobalScale() && getGlobalScale())
    return emitOpError() << "'global_scale(...)' belongs to NVFP4 grids "
                            "(global_scale in the encoding), not to "
                         << grid;
  if (getGlobalScale() &&
      !compatibleDim(getGlobalScale().getType().getDimSize(0), rows))
    return emitOpError() << "global_scale must be [" << dimStr(rows)
                         << "] (one per row), got "
                         << getGlobalScale().getType();

  if (getScales()) {
    // Static mode: one scale (and zero) per column, already gathered through
    // the group index, so per-channel, static groups and act-order all fit.
    if (failed(verifyMatrix(*this, "scales", getScales().getType(), rows,
                            cols)))
      return failure();
    if (hasZeros != static_cast<bool>(getZeros()))
      return emitOpError() << (hasZeros ? "grid has zero points: pass "
                                          "'zeros(...)' with the scales"
                                        : "grid has no zero points, but "
                                          "'zeros(...)' was given");
    if (getZeros() &&
        failed(verifyMatrix(*this, "zeros", getZeros().getType(), rows, cols)))
      return failure();
    if (!getGroupParams().empty())
      return emitOpError("with static scales the op returns only codes and "
                         "error");
    return success();
  }

  // Dynamic mode: group parameters computed inside the block.
  if (getZeros())
    return emitOpError("'zeros(...)' needs 'scales(...)'");
  if (grid.isPerChannel())
    return emitOpError("per-channel scales come from the whole row: pass them "
                       "as 'scales(...)'");
  int64_t group = grid.getGroupSize();
  if (cols % group != 0 || columnOffset % group != 0)
    return emitOpError() << "a block computing its own scales must hold whole "
                            "groups: "
                         << cols << " columns at offset " << columnOffset
                         << " with group " << group;
  size_t expected = hasZeros ? 2 : 1;
  if (getGroupParams().size() != expected)
    return emitOpError() << "expected " << expected
                         << " group parameter result(s) (scales"
                         << (hasZeros ? ", zeros" : "") << "), got "
                         << getGroupParams().size();
  for (Value v : getGroupParams())
    if (failed(verifyMatrix(*this, "group parameters",
                            cast<RankedTensorType>(v.getType()), rows,
                            cols / group)))
      return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// Decode-layer ops
//===----------------------------------------------------------------------===//

LogicalResult RMSNormOp::verify() {
  RankedTensorType x = getInput().getType();
  if (getResult().getType() != x)
    return emitOpError("result type must match the input type");
  if (getGamma().getType().getElementType() != x.getElementType())
    return emitOpError("gamma element type must match the input");
  if (!(getEps().convertToFloat() > 0.0f))
    return emitOpError("eps must be positive");
  return verifyVector(*this, "gamma", getGamma().getType(), x.getDimSize(1));
}

LogicalResult RotaryOp::verify() {
  RankedTensorType x = getInput().getType();
  if (getResult().getType() != x)
    return emitOpError("result type must match the input type");
  int64_t headDim = getHeadDim();
  if (headDim <= 0 || headDim % 2 != 0)
    return emitOpError() << "head_dim must be positive and even, got "
                         << headDim;
  if (!ShapedType::isDynamic(x.getDimSize(1)) && x.getDimSize(1) % headDim)
    return emitOpError() << "row width " << x.getDimSize(1)
                         << " is not a whole number of heads of " << headDim;
  if (!(getTheta().convertToDouble() > 0.0))
    return emitOpError("theta must be positive");
  int scaling = (getScalingFactor() ? 1 : 0) + (getLowFreqFactor() ? 1 : 0) +
                (getHighFreqFactor() ? 1 : 0) +
                (getOriginalMaxPosition() ? 1 : 0);
  if (scaling != 0 && scaling != 4)
    return emitOpError("llama3 rope scaling needs all of scaling_factor, "
                       "low_freq_factor, high_freq_factor and "
                       "original_max_position");
  return verifyVector(*this, "positions", getPositions().getType(),
                      x.getDimSize(0));
}

LogicalResult AttentionOp::verify() {
  int64_t heads = getNumHeads(), kvHeads = getNumKvHeads(), d = getHeadDim();
  if (heads <= 0 || kvHeads <= 0 || d <= 0)
    return emitOpError("num_heads, num_kv_heads and head_dim must be positive");
  if (heads % kvHeads != 0)
    return emitOpError() << "num_heads = " << heads
                         << " must be a multiple of num_kv_heads = " << kvHeads;
  RankedTensorType q = getQuery().getType();
  int64_t m = q.getDimSize(0);
  RankedTensorType cache = getKeyCache().getType();
  if (getValueCache().getType() != cache)
    return emitOpError("key and value caches must have the same type");
  if (getKeyCacheOut().getType() != cache ||
      getValueCacheOut().getType() != cache)
    return emitOpError("updated caches must have the caches' type");
  Type elt = q.getElementType();
  for (Value v : {getKey(), getValue(), getKeyCache(), getResult()})
    if (cast<RankedTensorType>(v.getType()).getElementType() != elt)
      return emitOpError("all activations and caches must share one element "
                         "type");
  if (failed(verifyMatrix(*this, "query", q, m, heads * d)) ||
      failed(verifyMatrix(*this, "key", getKey().getType(), m, kvHeads * d)) ||
      failed(
          verifyMatrix(*this, "value", getValue().getType(), m, kvHeads * d)) ||
      failed(verifyMatrix(*this, "caches", cache, cache.getDimSize(0),
                          kvHeads * d)) ||
      failed(verifyMatrix(*this, "result", getResult().getType(), m,
                          heads * d)))
    return failure();
  int scaling = (getScalingFactor() ? 1 : 0) + (getLowFreqFactor() ? 1 : 0) +
                (getHighFreqFactor() ? 1 : 0) +
                (getOriginalMaxPosition() ? 1 : 0);
  if (scaling != 0 && !getRopeTheta())
    return emitOpError("llama3 rope scaling attributes need rope_theta (they "
                       "rescale the rotary that rope_theta enables)");
  if (getRopeTheta()) {
    if (!(getRopeTheta()->convertToDouble() > 0.0))
      return emitOpError("rope_theta must be positive");
    if (d % 2 != 0)
      return emitOpError() << "rotary needs an even head_dim, got " << d;
    if (scaling != 0 && scaling != 4)
      return emitOpError("llama3 rope scaling needs all of scaling_factor, "
                         "low_freq_factor, high_freq_factor and "
                         "original_max_position");
  }
  return verifyVector(*this, "positions", getPositions().getType(), m);
}

LogicalResult EmbeddingOp::verify() {
  RankedTensorType table = getTable().getType();
  RankedTensorType y = getResult().getType();
  if (y.getElementType() != table.getElementType())
    return emitOpError("result element type must match the table");
  if (failed(verifyVector(*this, "ids", getIds().getType(), y.getDimSize(0))))
    return failure();
  return verifyMatrix(*this, "result", y, y.getDimSize(0),
                      table.getDimSize(1));
}

LogicalResult ArgmaxOp::verify() {
  return verifyVector(*this, "result", getResult().getType(),
                      getInput().getType().getDimSize(0));
}

/// A per-row operand of qf.sample: [1, cols] (shared) or [rows, cols].
static LogicalResult verifySampleRows(Operation *op, StringRef what,
                                      RankedTensorType type, int64_t rows,
                                      int64_t cols) {
  int64_t r = type.getDimSize(0), c = type.getDimSize(1);
  if ((r == 1 || compatibleDim(r, rows)) && !ShapedType::isDynamic(c) &&
      c == cols)
    return success();
  return op->emitOpError() << what << " must be [1, " << cols << "] or ["
                           << dimStr(rows) << ", " << cols << "], got "
                           << type;
}

LogicalResult SampleOp::verify() {
  RankedTensorType logits = getLogits().getType();
  int64_t rows = logits.getDimSize(0), vocab = logits.getDimSize(1);
  if (ShapedType::isDynamic(vocab))
    return emitOpError() << "needs a static vocabulary (the logits' last "
                            "extent), got "
                         << logits;
  if (failed(verifySampleRows(*this, "params", getParams().getType(), rows,
                              qfuse::format::sampling::kParamSlots)) ||
      failed(verifySampleRows(*this, "penalty_mask",
                              getPenaltyMask().getType(), rows, vocab)) ||
      failed(verifyVector(*this, "counters", getCounters().getType(), rows)))
    return failure();
  return verifyVector(*this, "result", getResult().getType(), rows);
}
