//===- OpKernels.h - kernels for the decode-layer ops ----------*- C++ -*-===//
//
// Everything in a decoder layer besides the fused matmuls: RMSNorm, rotary,
// attention over the KV cache, silu_mul, residual add, embedding, argmax
// and sample. Each kind has its own generator file; qf-to-gpu calls `lowerDecodeOp` for
// every such op and batch size and records the launches on the op
// (docs/decode-model.md, "Launch records").
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_LIB_CONVERSION_QFTOGPU_OPS_OPKERNELS_H
#define QFUSE_LIB_CONVERSION_QFTOGPU_OPS_OPKERNELS_H

#include "MatVec/MatVecKernel.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "qfuse/Dialect/QF/IR/QFDialect.h"

namespace mlir {
namespace qf {

/// One launch of a decode-op kernel and, per kernel parameter, what the
/// runtime binds to it: `#qf.arg<operand i>`, `<result i>`, `<i32 v>` or
/// `<f32 v>` (parallel to `launch.params`).
struct OpLaunch {
  KernelLaunch launch;
  SmallVector<LaunchArgAttr> args;
};

/// What every generator needs: the kernel module and the target. Kernels
/// are named by everything that determines their code (shape, batch, eps,
/// ...) so that the layers of a model share them: a generator first looks
/// the name up in `module` and only emits the kernel when it is missing.
struct OpKernelContext {
  gpu::GPUModuleOp module;
  TargetAttr target;
  /// Whether an op (qf.attention) stores its result at a batch in the
  /// sorted column order of the act_order matmul that reads it
  /// (SortedOutput.h); null: never.
  function_ref<bool(Operation *, int64_t)> sortsOutput = nullptr;
};

/// Argument records, for the generators.
LaunchArgAttr operandArg(MLIRContext *ctx, int64_t index);
LaunchArgAttr resultArg(MLIRContext *ctx, int64_t index);
LaunchArgAttr i32Arg(MLIRContext *ctx, int64_t value);
LaunchArgAttr f32Arg(MLIRContext *ctx, double value);

/// The elementwise kernels over [rows, h] f16 (ElementwiseKernels.cpp):
/// y = lhs + rhs, or y = silu(gate) * up.
enum class Elementwise { Add, SiluMul };

/// The launch of the `kind` kernel over `rows` x `h` halves, with `args`
/// binding (lhs | gate, rhs | up, y); diagnostics go to `op`. qf.add and
/// qf.silu_mul lower through it, and so does the fallback of a silu_mul
/// fused matmul (on workspaces it names).
FailureOr<OpLaunch> emitElementwiseLaunch(Operation *op,
                                          gpu::GPUModuleOp module,
                                          Elementwise kind, int64_t rows,
                                          int64_t h,
                                          ArrayRef<LaunchArgAttr> args);

/// The launch of the RMSNorm kernel over `rows` x `h` halves with `args`
/// binding (x, gamma, y), or (x, gamma, perm, y) for the variant that
/// writes y in an act_order weight's sorted column order (NormKernel.cpp);
/// diagnostics go to `op`. qf.rms_norm lowers through it, and so does the
/// RMSNorm prologue of an act_order fused matmul (docs/act-order.md).
FailureOr<OpLaunch> emitRMSNormLaunch(Operation *op, gpu::GPUModuleOp module,
                                      int64_t rows, int64_t h, float eps,
                                      ArrayRef<LaunchArgAttr> args);

/// True for the ops `lowerDecodeOp` takes.
bool isDecodeOp(Operation *op);

/// The launches that compute `op` for `batch` rows, in order, or a
/// diagnostic on `op` naming what the generators cannot take.
FailureOr<SmallVector<OpLaunch>> lowerDecodeOp(Operation *op,
                                               OpKernelContext &context,
                                               int64_t batch);

// One per generator file (lowerDecodeOp dispatches to them).
FailureOr<SmallVector<OpLaunch>> lowerRMSNorm(RMSNormOp op,
                                              OpKernelContext &context,
                                              int64_t batch);
FailureOr<SmallVector<OpLaunch>> lowerRotary(RotaryOp op,
                                             OpKernelContext &context,
                                             int64_t batch);
FailureOr<SmallVector<OpLaunch>> lowerAttention(AttentionOp op,
                                                OpKernelContext &context,
                                                int64_t batch);
FailureOr<SmallVector<OpLaunch>> lowerSiluMul(SiluMulOp op,
                                              OpKernelContext &context,
                                              int64_t batch);
FailureOr<SmallVector<OpLaunch>> lowerAdd(AddOp op, OpKernelContext &context,
                                          int64_t batch);
FailureOr<SmallVector<OpLaunch>> lowerEmbedding(EmbeddingOp op,
                                                OpKernelContext &context,
                                                int64_t batch);
FailureOr<SmallVector<OpLaunch>> lowerArgmax(ArgmaxOp op,
                                             OpKernelContext &context,
                                             int64_t batch);
FailureOr<SmallVector<OpLaunch>> lowerSample(SampleOp op,
                                             OpKernelContext &context,
                                             int64_t batch);
FailureOr<SmallVector<OpLaunch>>
lowerGPTQBlockUpdate(GPTQBlockUpdateOp op, OpKernelContext &context,
                     int64_t batch);
FailureOr<SmallVector<OpLaunch>> lowerRowMinMax(RowMinMaxOp op,
                                                OpKernelContext &context,
                                                int64_t batch);

} // namespace qf
} // namespace mlir

#endif // QFUSE_LIB_CONVERSION_QFTOGPU_OPS_OPKERNELS_H
