//===- RopeCommon.h - rotary position embedding, shared ---------*- C++ -*-===//
//
// The one definition of the rotary math the GPU kernels use: inv_freq (with
// Llama 3 scaling) as a compile-time f64 table, and the angle's range
// reduction before sin.approx / cos.approx (RotaryKernel.cpp's file comment
// says why). qf.rotary's kernel and the rotary form of qf.attention both
// call these, so that a fused rotary rounds exactly as the separate one.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_LIB_CONVERSION_QFTOGPU_OPS_ROPECOMMON_H
#define QFUSE_LIB_CONVERSION_QFTOGPU_OPS_ROPECOMMON_H

#include "Common/KernelEmitter.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "qfuse/Dialect/QF/IR/QFDialect.h"

#include <optional>
#include <string>
#include <utility>

namespace mlir {
namespace qf {

/// What determines a rotary: head_dim, theta and the Llama 3 scaling
/// (all four scaling fields or none, as the op verifiers require).
struct RopeParams {
  int64_t headDim = 0;
  double theta = 0.0;
  std::optional<double> scalingFactor, lowFreqFactor, highFreqFactor;
  std::optional<int64_t> originalMaxPosition;
};
RopeParams ropeParams(RotaryOp op);
/// std::nullopt when the attention has no `rope_theta` (no rotary).
std::optional<RopeParams> ropeParams(AttentionOp op);

/// Fails with a diagnostic on `op` when the kernels cannot compute the
/// table (Llama 3 smoothing needs high_freq_factor > low_freq_factor).
LogicalResult checkRope(Operation *op, const RopeParams &p);

/// theta and the scaling as they appear in kernel and table names
/// (`t500000_llama3_f8_lo1_hi4_o8192`).
std::string ropeKey(const RopeParams &p);

/// The constant f64 table of the head_dim / 2 inv_freq values, created once
/// per module (`qf_rope_inv_freq_d<d>_<key>`, shared by every kernel of
/// the same parameters).
LLVM::GlobalOp ropeTable(ImplicitLocOpBuilder &b, gpu::GPUModuleOp module,
                         const RopeParams &p);

/// inv_freq[i0 .. i0 + count) as f64 values (16-byte pair loads when count
/// is even; i0 must then be even).
SmallVector<Value> loadInvFreq(KernelEmitter &e, LLVM::GlobalOp table,
                               Value i0, int64_t count);

/// (sin a, cos a) in f32 for a = position * freq, both f64: the angle is
/// reduced to [-pi, pi] in f64, then rounded for sin.approx / cos.approx.
std::pair<Value, Value> ropeSinCos(KernelEmitter &e, Value position,
                                   Value freq);

/// The rotate-half pair, in the operation order both kernels use:
/// first  = x1 cos - x2 sin, second = x2 cos + x1 sin (f32, unrounded).
Value rotateFirst(KernelEmitter &e, Value x1, Value x2, Value sin, Value cos);
Value rotateSecond(KernelEmitter &e, Value x1, Value x2, Value sin, Value cos);

} // namespace qf
} // namespace mlir

#endif // QFUSE_LIB_CONVERSION_QFTOGPU_OPS_ROPECOMMON_H
