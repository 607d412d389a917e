//===- OpKernels.cpp - dispatch to the decode-op generators -----------------===//

#include "Ops/OpKernels.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::qf;

static DictionaryAttr singleEntry(MLIRContext *ctx, StringRef key,
                                  Attribute value) {
  return DictionaryAttr::get(
      ctx, {NamedAttribute(StringAttr::get(ctx, key), value)});
}

DictionaryAttr qf::operandArg(MLIRContext *ctx, int64_t index) {
  return singleEntry(ctx, "operand",
                     IntegerAttr::get(IntegerType::get(ctx, 64), index));
}

DictionaryAttr qf::resultArg(MLIRContext *ctx, int64_t index) {
  return singleEntry(ctx, "result",
                     IntegerAttr::get(IntegerType::get(ctx, 64), index));
}

DictionaryAttr qf::i32Arg(MLIRContext *ctx, int64_t value) {
  return singleEntry(ctx, "i32",
                     IntegerAttr::get(IntegerType::get(ctx, 32), value));
}

DictionaryAttr qf::f32Arg(MLIRContext *ctx, double value) {
  return singleEntry(ctx, "f32", FloatAttr::get(Float32Type::get(ctx), value));
}

bool qf::isDecodeOp(Operation *op) {
  return isa<RMSNormOp, RotaryOp, AttentionOp, SiluMulOp, AddOp, EmbeddingOp,
             ArgmaxOp, SampleOp, GPTQBlockUpdateOp>(op);
}

FailureOr<SmallVector<OpLaunch>>
qf::lowerDecodeOp(Operation *op, OpKernelContext &context, int64_t batch) {
  return llvm::TypeSwitch<Operation *, FailureOr<SmallVector<OpLaunch>>>(op)
      .Case([&](RMSNormOp o) { return lowerRMSNorm(o, context, batch); })
      .Case([&](RotaryOp o) { return lowerRotary(o, context, batch); })
      .Case([&](AttentionOp o) { return lowerAttention(o, context, batch); })
      .Case([&](SiluMulOp o) { return lowerSiluMul(o, context, batch); })
      .Case([&](AddOp o) { return lowerAdd(o, context, batch); })
      .Case([&](EmbeddingOp o) { return lowerEmbedding(o, context, batch); })
      .Case([&](ArgmaxOp o) { return lowerArgmax(o, context, batch); })
      .Case([&](SampleOp o) { return lowerSample(o, context, batch); })
      .Case([&](GPTQBlockUpdateOp o) {
        return lowerGPTQBlockUpdate(o, context, batch);
      })
      .Default([](Operation *other) -> FailureOr<SmallVector<OpLaunch>> {
        return other->emitOpError("has no GPU kernel generator"), failure();
      });
}
