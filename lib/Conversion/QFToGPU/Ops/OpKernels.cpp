//===- OpKernels.cpp - dispatch to the decode-op generators -----------------===//

#include "Ops/OpKernels.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::qf;

LaunchArgAttr qf::operandArg(MLIRContext *ctx, int64_t index) {
  return LaunchArgAttr::get(ctx, LaunchArgKind::Operand, index);
}

LaunchArgAttr qf::resultArg(MLIRContext *ctx, int64_t index) {
  return LaunchArgAttr::get(ctx, LaunchArgKind::Result, index);
}

LaunchArgAttr qf::i32Arg(MLIRContext *ctx, int64_t value) {
  return LaunchArgAttr::get(ctx, LaunchArgKind::I32, value);
}

LaunchArgAttr qf::f32Arg(MLIRContext *ctx, double value) {
  return LaunchArgAttr::get(ctx, static_cast<float>(value));
}

bool qf::isDecodeOp(Operation *op) {
  return isa<RMSNormOp, RotaryOp, AttentionOp, SiluMulOp, AddOp, EmbeddingOp,
             ArgmaxOp, SampleOp, GPTQBlockUpdateOp, RowMinMaxOp>(op);
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
      .Case([&](RowMinMaxOp o) { return lowerRowMinMax(o, context, batch); })
      .Default([](Operation *other) -> FailureOr<SmallVector<OpLaunch>> {
        return other->emitOpError("has no GPU kernel generator"), failure();
      });
}
