//===- CheckSteps.h - plan steps as checkPlan reads them --------*- C++ -*-===//
//
// Private to runtime/src/tooling. The half of checkPlan (Check.h) that reads
// the plan and touches no device: which steps are matmuls, their operands,
// why the check leaves one unchecked, where a matmul's activations come
// from, and which steps may write a buffer. Check.cpp runs the plan and
// compares.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_RUNTIME_TOOLING_CHECKSTEPS_H
#define QFUSE_RUNTIME_TOOLING_CHECKSTEPS_H

#include "qfuse/runtime/artifact/Artifact.h"

#include <optional>
#include <set>
#include <string>
#include <vector>

namespace qfuse::runtime::check {

/// The launch's operands when it is a matmul: x, the fused RMSNorm
/// prologue's gamma tensor (`norm`) when present, and per output the
/// weight, y, the silu_mul epilogue's up projection (`up_*` components)
/// and the bias ([N], a tensor or a buffer) and residual ([M, N] buffer)
/// its epilogue adds. A grouped launch (qf-fuse-shared-input) has one output
/// per member; member i > 0 binds `<name>.<i>`. A gated kernel feeding an
/// act_order matmul binds that matmul's weight as `y_order` (its inv_perm):
/// it stores output column n at inv_perm[n] (docs/artifact.md).
struct MatmulLaunch {
  struct Output {
    std::string weight, y, upWeight, yOrderWeight, bias, residual;
    bool biasIsTensor = false;
  };
  std::string x, norm;
  std::vector<Output> outputs;
  /// Why the check does not compare this matmul (a weight buffer nothing
  /// fills); empty when it does.
  std::string skip;
};

/// Step `s` of `plan` as a matmul: false when it is none (a norm, permute,
/// dequantize or attention launch, a memset). Otherwise `out` holds its
/// operands, and `out.skip` says why the check cannot take it, if so.
bool asMatmul(const Artifact &artifact, const Plan &plan, size_t s,
              MatmulLaunch &out);

/// The qf.dequantize launch that last wrote `buffer` before step `before`
/// of `plan`, or nullptr.
const Step *lastDequantizeInto(const Artifact &artifact, const Plan &plan,
                               size_t before, const std::string &buffer);

/// The activations behind a matmul's input: `x`, normalized with `gamma`
/// (a tensor, or a buffer) when that is set, or silu(x) * `up` when that
/// is; all read by step `reader` (the matmul, or the launch before it that
/// prepares its input).
struct InputSource {
  std::string x, gamma, up;
  bool gammaIsTensor = false;
  size_t reader = 0;
};

/// The activations behind `buffer`, read by step `matmul`: the input of
/// the qf.permute_columns, qf.rms_norm or qf.silu_mul launch (an act_order
/// matmul's prologue, docs/act-order.md) that wrote `buffer`, or `buffer`
/// itself. A matmul on permuted activations and an act_order weight in
/// sorted column order computes x W^T with the activations as given (the
/// permutations cancel), so the reference reads them unpermuted.
InputSource inputSource(const Artifact &artifact, const Plan &plan,
                        size_t matmul, const std::string &buffer);

/// Every buffer a step writes as far as its parameter names tell: outputs
/// are the parameters named y / out (y.<i> for grouped members) or xp (the
/// permute kernels', also a gated fallback's product in its reader's sorted
/// order), gemm outputs, memset targets and the weight buffers
/// qf.dequantize launches fill. checkPlan poisons these and draws fresh
/// activations for the rest.
std::set<std::string> writtenBuffers(const Artifact &artifact,
                                     const Plan &plan);

/// The first step from `from` on that may write `buffer`, or nullopt. A
/// launch may write every buffer it binds to a parameter other than the
/// activations a matmul or its prologue reads (x, gate, up, gamma,
/// residual): names cannot tell every other kernel's inputs from its
/// outputs, so those count as written. When none may, the buffer holds
/// after the run what step `from` read.
std::optional<size_t> firstWriterFrom(const Artifact &artifact,
                                      const Plan &plan, size_t from,
                                      const std::string &buffer);

/// Why matmul `mm` (step `matmul`) cannot be compared after the run: a
/// later step may write one of its outputs again (a buffer two launches
/// share); empty when none may.
std::string outputRewritten(const Artifact &artifact, const Plan &plan,
                            size_t matmul, const MatmulLaunch &mm);

} // namespace qfuse::runtime::check

#endif // QFUSE_RUNTIME_TOOLING_CHECKSTEPS_H
