//===- PlanLayers.h - A model plan split into decoder layers ----*- C++ -*-===//
//
// Layer-wise calibration (GPTQ, docs/gptq.md) runs a compiled model one
// decoder layer at a time. This file finds the layers in a plan, on the CPU:
//
//   prologue   steps before layer 0 (the embedding)
//   layer l    the steps that touch "model.layers.<l>." weights, tensors or
//              state buffers, plus the steps between them
//   epilogue   the final norm, lm_head and argmax
//
// and, per layer, what running it alone needs: the buffers it reads that an
// earlier step produced (its inputs), the plan inputs it reads (positions),
// its state buffers (KV caches), and its gemm steps grouped by the x buffer
// they read (q/k/v share the normed hidden states, gate/up the post-attention
// ones: one Hessian per group).
//
// Buffers are SSA values (docs/decode-model.md): a non-state buffer's first
// appearance in the plan is the step that produces it; a later appearance is
// a read. A step that touches no name of any layer (a residual add, a
// memset) joins the group before it when it reads a buffer that group
// produced, else the group after it.
//
//   PlanLayers layers = analyzePlanLayers(artifact, 8);
//   layers.layers[0].inputs          // {"value8"}: the embedding's output
//   layers.layers[0].groups[0]       // x "value9": q_proj, k_proj, v_proj
//
// Whatever a layer-at-a-time run cannot reproduce is a qfuse::Error naming
// the step: a layer split into two ranges, layers out of order, a step that
// touches two layers, a model-wide tensor between layers, or a layer that
// reads a buffer produced before the previous layer.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_RUNTIME_ARTIFACT_PLANLAYERS_H
#define QFUSE_RUNTIME_ARTIFACT_PLANLAYERS_H

#include "qfuse/runtime/artifact/Artifact.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace qfuse::runtime {

/// Steps [first, last) of a plan.
struct StepRange {
  size_t first = 0;
  size_t last = 0;
  size_t size() const { return last - first; }
  bool empty() const { return first == last; }
  bool contains(size_t step) const { return step >= first && step < last; }
};

/// A `gemm` step: the linear module `weight` (Hugging Face's name, e.g.
/// "model.layers.0.self_attn.q_proj") reading buffer `x`.
struct LinearModule {
  size_t step = 0;
  std::string weight;
  std::string x;
};

/// The linear modules that read one buffer: they share a Hessian.
struct SharedInput {
  std::string x;
  /// Plan order; modules.front().step is where the group starts.
  std::vector<LinearModule> modules;
};

struct PlanLayer {
  int64_t index = 0;
  StepRange steps;
  /// Non-state buffers the layer reads that a step before it produced, in
  /// the order the layer first reads them. Running the layer alone means
  /// restoring exactly these.
  std::vector<std::string> inputs;
  /// Plan inputs (the artifact's non-state `inputs`: input_ids, positions)
  /// the layer reads, in first-read order.
  std::vector<std::string> planInputs;
  /// State buffers (KV caches) the layer touches, in first-use order.
  std::vector<std::string> stateBuffers;
  /// Every gemm step of the layer, in plan order.
  std::vector<LinearModule> linears;
  /// The linears grouped by x, groups in the order they start.
  std::vector<SharedInput> groups;
};

struct PlanLayers {
  int64_t batch = 0;
  StepRange prologue;
  std::vector<PlanLayer> layers;
  StepRange epilogue;
};

/// l when `name` starts with "model.layers.<l>." (decimal, no sign).
std::optional<int64_t> layerOfName(std::string_view name);

/// Splits the plan for `batch` (see the file comment). Throws qfuse::Error
/// naming the artifact, the plan and the step when the plan has no layers or
/// cannot be run one layer at a time.
PlanLayers analyzePlanLayers(const Artifact &artifact, int64_t batch);

} // namespace qfuse::runtime

#endif // QFUSE_RUNTIME_ARTIFACT_PLANLAYERS_H
