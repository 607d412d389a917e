//===- Check.h - compiled plans against the C++ reference ------*- C++ -*-===//
//
// Correctness of a compiled artifact on the GPU (DESIGN.md, Numerics): fresh
// random weights quantized with round-to-nearest into each weight's
// encoding, fresh random activations, outputs poisoned (NaN) before the run,
// and every launch's output compared with format::referenceMatmul (double
// accumulation, on all cores: ParallelReference.h) on the dequantized
// weights.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_RUNTIME_TOOLING_CHECK_H
#define QFUSE_RUNTIME_TOOLING_CHECK_H

#include "qfuse/format/Tensor.h"
#include "qfuse/runtime/checkpoint/WeightSources.h"
#include "qfuse/runtime/device/Executor.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace qfuse::runtime::check {

/// ||y - ref|| / ||ref|| above which a launch fails. The kernels multiply
/// f16 activations by exactly decoded f16 weights, sum up to 32 products in
/// f16 and everything else in f32, and round the output to f16: measured
/// errors are ~1e-3; 1e-2 leaves room without hiding a wrong index (which
/// gives errors near 1).
constexpr double kRelativeTolerance = 1e-2;

/// Weights drawn as N(0, 1) * 0.02 and quantized with round-to-nearest into
/// each weight's encoding (the weights on the host's cores, one each),
/// bound to the executor (repacked to its layout). Returns the row-major
/// components, the reference's source of truth.
std::map<std::string, format::TensorMap>
bindRandomWeights(Executor &executor, uint64_t seed,
                  RandomPerms perms = RandomPerms::PerInput);

struct LaunchCheck {
  std::string kernel;
  std::string weight;
  int64_t m = 0, n = 0, k = 0; ///< m is 0 for a dequantize check
  double relativeError = 0;
  bool unwritten = false; ///< an output element kept its NaN poison
  bool passed = false;
  /// A qf.dequantize launch's [N, K] output, compared elementwise with
  /// format::dequantize rounded to its dtype: `mismatches` elements differ
  /// (passed only at 0).
  bool dequantize = false;
  int64_t mismatches = 0;
};

/// A matmul launch checkPlan does not check, and why.
struct SkippedLaunch {
  std::string kernel;  ///< "cublas gemm" for a gemm step
  std::string weights; ///< the weights it multiplies by, ", "-separated
  int64_t m = 0;
  size_t step = 0;    ///< its index among the steps that run
  std::string reason; ///< "its input 'b' ...", "its output 'y' ..."
};

/// What checkPlan compared, and the matmul launches it could not.
struct PlanCheck {
  std::vector<LaunchCheck> launches;
  std::vector<SkippedLaunch> skipped;
};

/// Runs the plan for `batch` once on random activations and checks every
/// launch of the form y = x * W^T against the reference: fused launches and
/// gemm steps, a gemm on a weight buffer as the matmul of the weight the
/// latest qf.dequantize launch before it wrote there. Then each weight
/// buffer against the last weight dequantized into it (exactly). `weights`
/// holds the row-major components by checkpoint tensor (WeightSpec::source),
/// as bindRandomWeights returns them.
///
/// A matmul whose input another launch wrote (behind a separate RMSNorm
/// launch, say) is compared on that input as the run left it, when no
/// later step may write it again and it is neither all zeros nor holds
/// NaN; the launch that wrote it is not checked. Bias and residual
/// epilogues are added to the reference (the bias tensors drawn afresh and
/// bound, like RMSNorm gammas; a residual as the launch read it). Every
/// matmul launch it cannot compare (inputs it cannot know, an output a
/// later step writes again) is listed in `skipped` with the reason:
/// callers decide whether a plan with no launch checked passes.
PlanCheck checkPlan(Executor &executor, int64_t batch, CUstream stream,
                    const std::map<std::string, format::TensorMap> &weights,
                    uint64_t seed);

} // namespace qfuse::runtime::check

#endif // QFUSE_RUNTIME_TOOLING_CHECK_H
