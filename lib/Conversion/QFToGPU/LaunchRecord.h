//===- LaunchRecord.h - the qf.launches entry of a launch ----- -*- C++ -*-===//
//
// qf-to-gpu records on each op how the runtime launches its kernels
// (`qf.launches`, #qf.launch): the kernel in gpu.module @qf_kernels, its
// grid, block and shared memory, and how its parameters are bound.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_LIB_CONVERSION_QFTOGPU_LAUNCHRECORD_H
#define QFUSE_LIB_CONVERSION_QFTOGPU_LAUNCHRECORD_H

#include "Common/MatmulSpec.h"

#include "mlir/IR/Builders.h"

namespace mlir {
namespace qf {

/// The gpu.module holding every generated kernel.
constexpr StringLiteral kKernelModuleName = "qf_kernels";

/// What a `qf.launches` entry says beyond its kernel (#qf.launch).
struct LaunchExtras {
  /// One argument record per parameter (decode ops, the fallback's
  /// elementwise launches); empty where parameters are bound by name.
  ArrayRef<LaunchArgAttr> args;
  /// The weight layout the kernel reads, where not the operand's.
  LayoutAttr layout;
  /// The kernel reads the act_order permute's output.
  bool permutedInput = false;
  /// A fallback or input step ("dequantize", "silu_mul", "add", "permute",
  /// "rms_norm", "silu_mul_prologue"), the
  /// qf.group member it serves and, for "dequantize", its weight.
  StringRef step;
  int64_t member = 0;
  StringRef weight;
};

/// The `qf.launches` entry of one launch (docs/decode-model.md).
LaunchAttr launchRecord(OpBuilder &b, const KernelLaunch &launch, int64_t batch,
                        const LaunchExtras &extras = {});

} // namespace qf
} // namespace mlir

#endif // QFUSE_LIB_CONVERSION_QFTOGPU_LAUNCHRECORD_H
