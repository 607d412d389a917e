//===- MatmulInput.cpp - launches that prepare a fused matmul's input -----===//
//
// The permute of an act_order matmul's activations, and the RMSNorm and
// silu_mul prologues that qf-to-gpu runs as launches of their own: in the
// weight's sorted column order for the fused kernel, in checkpoint order
// for the fallback (docs/act-order.md, docs/fallback.md).
//
//===----------------------------------------------------------------------===//

#include "MatmulInput.h"

#include "LaunchRecord.h"
#include "Ops/OpKernelCommon.h"
#include "Ops/OpKernels.h"
#include "Ops/PermuteKernel.h"

using namespace mlir;
using namespace mlir::qf;

namespace {

LaunchArgAttr scratchArg(MLIRContext *ctx, StringRef name) {
  return LaunchArgAttr::get(ctx, LaunchArgKind::Scratch, name);
}

LaunchArgAttr activationsArg(MLIRContext *ctx) {
  return LaunchArgAttr::get(ctx, LaunchArgKind::Activations, "input");
}

LaunchArgAttr permArg(MLIRContext *ctx) {
  return LaunchArgAttr::get(ctx, LaunchArgKind::Component, "perm");
}

/// Operand `operand` of `op`, bound by its number.
LaunchArgAttr operandOf(FusedMatmulOp op, OpOperand &operand) {
  return LaunchArgAttr::get(op.getContext(), LaunchArgKind::Operand,
                            operand.getOperandNumber());
}

/// The record of a launch that prepares the op's input (step `step`,
/// member 0, the weight read in `layout`).
Attribute prologueRecord(const OpLaunch &launch, LayoutAttr layout,
                         int64_t batch, StringRef step) {
  LaunchExtras extras;
  extras.args = launch.args;
  extras.layout = layout;
  extras.step = step;
  extras.member = 0;
  OpBuilder b(layout.getContext());
  return launchRecord(b, launch.launch, batch, extras);
}

/// The op's RMSNorm prologue as a launch of its own (step "rms_norm"):
/// with `permuted`, gathering x and gamma through the weight's perm into
/// scratch `permuted`; otherwise in checkpoint order into scratch `normed`.
LogicalResult recordNorm(FusedMatmulOp op, LayoutAttr layout,
                         gpu::GPUModuleOp gpuModule, int64_t batch,
                         bool permuted, SmallVectorImpl<Attribute> &launches) {
  if (failed(requireF16(op, "activations of a norm launch",
                        op.getInput().getType())))
    return failure();
  MLIRContext *ctx = op.getContext();
  SmallVector<LaunchArgAttr> args = {activationsArg(ctx),
                                     operandOf(op, op.getNormMutable()[0])};
  if (permuted)
    args.push_back(permArg(ctx));
  args.push_back(scratchArg(ctx, permuted ? "permuted" : "normed"));
  FailureOr<OpLaunch> norm = emitRMSNormLaunch(
      op, gpuModule, batch, op.getWeight().getType().getK(),
      op.getNormEps()->convertToFloat(), args);
  if (failed(norm))
    return failure();
  launches.push_back(prologueRecord(*norm, layout, batch, "rms_norm"));
  return success();
}

/// The op's silu_mul prologue as a launch of its own (step
/// "silu_mul_prologue"): with `permuted`, xp[m, j] = silu(input[m, perm[j]])
/// * up[m, perm[j]] into scratch `permuted`; otherwise the elementwise
/// kernel into scratch `activated`. Both write the same f16 products.
LogicalResult recordSiluMul(FusedMatmulOp op, LayoutAttr layout,
                            gpu::GPUModuleOp gpuModule, int64_t batch,
                            bool permuted,
                            SmallVectorImpl<Attribute> &launches) {
  if (failed(requireF16(op, "activations of a silu_mul launch",
                        op.getInput().getType())))
    return failure();
  MLIRContext *ctx = op.getContext();
  int64_t k = op.getWeight().getType().getK();
  SmallVector<LaunchArgAttr> args = {
      activationsArg(ctx), operandOf(op, op.getSiluMulUpMutable()[0])};
  FailureOr<OpLaunch> launch;
  if (permuted) {
    args.append({permArg(ctx), scratchArg(ctx, "permuted")});
    launch = emitPermuteSiluMulLaunch(op, gpuModule, batch, k, args);
  } else {
    args.push_back(scratchArg(ctx, "activated"));
    launch = emitElementwiseLaunch(op, gpuModule, Elementwise::SiluMul, batch,
                                   k, args);
  }
  if (failed(launch))
    return failure();
  launches.push_back(
      prologueRecord(*launch, layout, batch, "silu_mul_prologue"));
  return success();
}

} // namespace

LogicalResult qf::recordPermutedInput(FusedMatmulOp op, LayoutAttr layout,
                                      gpu::GPUModuleOp gpuModule,
                                      int64_t batch, int64_t stagedMaxK,
                                      SmallVectorImpl<Attribute> &launches) {
  if (op.getNorm())
    return recordNorm(op, layout, gpuModule, batch, /*permuted=*/true,
                      launches);
  if (op.hasSiluMulPrologue())
    return recordSiluMul(op, layout, gpuModule, batch, /*permuted=*/true,
                         launches);
  MLIRContext *ctx = op.getContext();
  FailureOr<OpLaunch> permute = emitPermuteLaunch(
      op, gpuModule, batch, op.getWeight().getType().getK(),
      {activationsArg(ctx), permArg(ctx), scratchArg(ctx, "permuted")},
      stagedMaxK);
  if (failed(permute))
    return failure();
  launches.push_back(prologueRecord(*permute, layout, batch, "permute"));
  return success();
}

LogicalResult qf::recordFallbackInput(FusedMatmulOp op, LayoutAttr layout,
                                      gpu::GPUModuleOp gpuModule,
                                      int64_t batch,
                                      SmallVectorImpl<Attribute> &launches) {
  if (op.getNorm())
    return recordNorm(op, layout, gpuModule, batch, /*permuted=*/false,
                      launches);
  if (op.hasSiluMulPrologue())
    return recordSiluMul(op, layout, gpuModule, batch, /*permuted=*/false,
                         launches);
  return success();
}
