//===- PlanLayers.cpp - A model plan split into decoder layers ------------===//

#include "qfuse/runtime/artifact/PlanLayers.h"

#include "qfuse/runtime/Error.h"

#include <algorithm>
#include <map>
#include <set>

namespace qfuse::runtime {
namespace {

constexpr std::string_view kLayerPrefix = "model.layers.";

/// Groups: the prologue, layers 0..L-1, then the epilogue.
constexpr int64_t kPrologue = -1;
constexpr int64_t kEpilogue = INT64_MAX;

/// What one step touches, by role.
struct StepUse {
  /// Weight, tensor and state-buffer names: what places a step in a layer.
  std::vector<std::string> names;
  /// Non-state buffers (plan inputs included), in argument order.
  std::vector<std::string> buffers;
  /// The subset of `buffers` the step reads (every other one it writes).
  std::vector<std::string> reads;
  std::vector<std::string> state;
};

std::string describeStep(const Plan &plan, size_t s) {
  const Step &step = plan.steps[s];
  std::string text = "step " + std::to_string(s) + " (";
  switch (step.kind) {
  case Step::Kind::Launch:
    text += "launch " + step.target;
    break;
  case Step::Kind::Memset:
    text += "memset " + step.target;
    break;
  case Step::Kind::Gemm:
    text += "gemm " + step.target;
    break;
  }
  return text + ")";
}

std::string groupName(int64_t group) {
  if (group == kPrologue)
    return "the prologue";
  if (group == kEpilogue)
    return "the epilogue";
  return "layer " + std::to_string(group);
}

class Analyzer {
public:
  Analyzer(const Artifact &artifact, int64_t batch)
      : artifact_(artifact), plan_(artifact.plan(batch)) {}

  PlanLayers run();

private:
  [[noreturn]] void fail(const std::string &what) const {
    throw Error("artifact '" + artifact_.source + "', plan for batch " +
                std::to_string(plan_.batch) + ": " + what);
  }
  bool isState(const std::string &buffer) const {
    const BufferSpec *spec = artifact_.findBuffer(buffer);
    return spec && spec->state;
  }
  /// A workspace holds a value within one layer (a dequantized weight
  /// between its launch and its gemm): it neither places a step nor links
  /// layers.
  bool isWorkspace(const std::string &buffer) const {
    const BufferSpec *spec = artifact_.findBuffer(buffer);
    return spec && spec->workspace;
  }
  void collectUses();
  void tagSteps();
  void assignUntagged();
  PlanLayer describeLayer(int64_t index, StepRange range) const;

  const Artifact &artifact_;
  const Plan &plan_;
  std::set<std::string> planInputs_;
  std::vector<StepUse> uses_;
  /// The step that first names each non-state buffer (not plan inputs).
  std::map<std::string, size_t> producer_;
  /// Per step: its group, or nullopt until assigned.
  std::vector<std::optional<int64_t>> group_;
  int64_t numLayers_ = 0;
};

void Analyzer::collectUses() {
  for (const std::string &input : artifact_.inputs)
    if (!isState(input))
      planInputs_.insert(input);
  uses_.resize(plan_.steps.size());
  for (size_t s = 0; s < plan_.steps.size(); ++s) {
    const Step &step = plan_.steps[s];
    StepUse &use = uses_[s];
    // `read` is false for operands a step only writes (gemm y, memset).
    auto buffer = [&](const std::string &name, bool read) {
      if (name.empty() || isWorkspace(name))
        return;
      if (isState(name)) {
        use.names.push_back(name);
        use.state.push_back(name);
        return;
      }
      use.buffers.push_back(name);
      const bool earlier = planInputs_.count(name) || producer_.count(name);
      if (read && earlier)
        use.reads.push_back(name);
    };
    switch (step.kind) {
    case Step::Kind::Launch:
      for (const Arg &arg : step.args) {
        if (arg.kind == Arg::Kind::Buffer)
          buffer(arg.name, /*read=*/true);
        else if (arg.kind == Arg::Kind::Weight || arg.kind == Arg::Kind::Tensor)
          use.names.push_back(arg.name);
      }
      break;
    case Step::Kind::Memset:
      buffer(step.target, /*read=*/false);
      break;
    case Step::Kind::Gemm:
      if (!step.gemm.weight.empty())
        use.names.push_back(step.gemm.weight);
      buffer(step.gemm.weightBuffer, /*read=*/true);
      if (!step.gemm.bias.empty())
        use.names.push_back(step.gemm.bias);
      buffer(step.gemm.x, /*read=*/true);
      buffer(step.gemm.residual, /*read=*/true);
      buffer(step.gemm.y, /*read=*/false);
      break;
    }
    // Producers are recorded after the step's own reads are classified: a
    // buffer a step names for the first time is one it produces.
    for (const std::string &name : use.buffers)
      if (!planInputs_.count(name))
        producer_.emplace(name, s);
  }
}

void Analyzer::tagSteps() {
  group_.assign(plan_.steps.size(), std::nullopt);
  int64_t current = kPrologue;
  size_t currentStart = 0; // first step of the current group
  std::optional<size_t> epilogueStart;
  std::string epilogueName;
  for (size_t s = 0; s < plan_.steps.size(); ++s) {
    const StepUse &use = uses_[s];
    if (use.names.empty())
      continue; // untagged: assignUntagged decides
    std::optional<int64_t> layer;
    std::string layerName, otherName;
    for (const std::string &name : use.names) {
      std::optional<int64_t> l = layerOfName(name);
      if (!l) {
        otherName = name;
        continue;
      }
      if (layer && *layer != *l)
        fail(describeStep(plan_, s) + " touches two layers ('" + layerName +
             "' and '" + name + "'); calibration runs one layer at a time");
      layer = l;
      layerName = name;
    }
    if (!layer) {
      // A model-wide step (embedding, final norm, lm_head).
      if (current == kPrologue)
        group_[s] = kPrologue;
      else {
        if (!epilogueStart) {
          epilogueStart = s;
          epilogueName = otherName;
        }
        current = kEpilogue;
        group_[s] = kEpilogue;
      }
      continue;
    }
    if (current == kEpilogue)
      fail(describeStep(plan_, s) + " touches layer " + std::to_string(*layer) +
           " ('" + layerName + "') after " +
           describeStep(plan_, *epilogueStart) + ", which touches no layer ('" +
           epilogueName + "') and follows layer " +
           std::to_string(numLayers_ - 1) +
           ": model-wide steps between layers cannot run one layer at a time");
    if (*layer != current) {
      const int64_t expected = current == kPrologue ? 0 : current + 1;
      if (*layer < current)
        fail(describeStep(plan_, s) + " touches layer " +
             std::to_string(*layer) + " ('" + layerName + "'), but layer " +
             std::to_string(*layer) + " ended before step " +
             std::to_string(currentStart) +
             ": a layer must be one contiguous range of steps");
      if (*layer != expected)
        fail(describeStep(plan_, s) + " starts layer " +
             std::to_string(*layer) + " ('" + layerName + "') where layer " +
             std::to_string(expected) +
             " was expected: layers must run in order from 0");
      current = *layer;
      currentStart = s;
      numLayers_ = current + 1;
    }
    group_[s] = current;
  }
  if (numLayers_ == 0)
    fail("no step touches a \"model.layers.<l>.\" weight, tensor or state "
         "buffer: not a decoder model that can be calibrated layer by layer");
}

void Analyzer::assignUntagged() {
  const size_t n = plan_.steps.size();
  size_t s = 0;
  while (s < n) {
    if (group_[s]) {
      ++s;
      continue;
    }
    // A run [s, end) of untagged steps between groups `before` and `after`.
    size_t end = s;
    while (end < n && !group_[end])
      ++end;
    const int64_t before = s == 0 ? kPrologue : *group_[s - 1];
    const std::optional<int64_t> after =
        end < n ? group_[end] : std::optional<int64_t>();
    bool joinBefore = true;
    for (size_t t = s; t < end; ++t) {
      if (after && *after != before && joinBefore) {
        // Stays with `before` while it consumes what `before` produced (a
        // residual add after down_proj); a memset or anything else starts
        // `after` (a split-K zero fill before its matvec).
        joinBefore = false;
        for (const std::string &read : uses_[t].reads) {
          auto it = producer_.find(read);
          if (it != producer_.end() && group_[it->second] &&
              *group_[it->second] == before) {
            joinBefore = true;
            break;
          }
        }
      }
      group_[t] = joinBefore ? before : *after;
    }
    s = end;
  }
}

PlanLayer Analyzer::describeLayer(int64_t index, StepRange range) const {
  PlanLayer layer;
  layer.index = index;
  layer.steps = range;
  const int64_t previous = index == 0 ? kPrologue : index - 1;
  auto addOnce = [](std::vector<std::string> &list, const std::string &name) {
    if (std::find(list.begin(), list.end(), name) == list.end())
      list.push_back(name);
  };
  for (size_t s = range.first; s < range.last; ++s) {
    const StepUse &use = uses_[s];
    for (const std::string &name : use.state)
      addOnce(layer.stateBuffers, name);
    for (const std::string &read : use.reads) {
      if (planInputs_.count(read)) {
        addOnce(layer.planInputs, read);
        continue;
      }
      const size_t from = producer_.at(read);
      if (range.contains(from))
        continue;
      const int64_t group = *group_[from];
      if (group != previous)
        fail(describeStep(plan_, s) + " in layer " + std::to_string(index) +
             " reads buffer '" + read + "', produced by " +
             describeStep(plan_, from) + " in " + groupName(group) +
             "; a layer may read only its own buffers and those of " +
             groupName(previous) + " (calibration keeps one layer's inputs)");
      addOnce(layer.inputs, read);
    }
    const Step &step = plan_.steps[s];
    // Linears are the gemms on a dense weight of the checkpoint (what
    // calibration quantizes), not those on a dequantized one.
    if (step.kind != Step::Kind::Gemm || step.gemm.weight.empty())
      continue;
    LinearModule linear{s, step.gemm.weight, step.gemm.x};
    layer.linears.push_back(linear);
    auto group =
        std::find_if(layer.groups.begin(), layer.groups.end(),
                     [&](const SharedInput &g) { return g.x == step.gemm.x; });
    if (group == layer.groups.end())
      layer.groups.push_back({step.gemm.x, {linear}});
    else
      group->modules.push_back(linear);
  }
  return layer;
}

PlanLayers Analyzer::run() {
  collectUses();
  tagSteps();
  assignUntagged();

  PlanLayers out;
  out.batch = plan_.batch;
  const size_t n = plan_.steps.size();
  // Groups are non-decreasing along the plan (tagSteps checks the tagged
  // steps, assignUntagged fills runs with a neighbour), so each is a range.
  auto rangeOf = [&](int64_t group) {
    StepRange range;
    size_t s = 0;
    while (s < n && *group_[s] < group)
      ++s;
    range.first = range.last = s;
    while (range.last < n && *group_[range.last] == group)
      ++range.last;
    return range;
  };
  out.prologue = rangeOf(kPrologue);
  for (int64_t l = 0; l < numLayers_; ++l)
    out.layers.push_back(describeLayer(l, rangeOf(l)));
  out.epilogue = rangeOf(kEpilogue);
  if (artifact_.model.present && artifact_.model.numLayers > 0 &&
      artifact_.model.numLayers != numLayers_)
    fail("the plan has steps for " + std::to_string(numLayers_) +
         " layers, but \"model\" says num_layers = " +
         std::to_string(artifact_.model.numLayers));
  return out;
}

} // namespace

std::optional<int64_t> layerOfName(std::string_view name) {
  if (name.substr(0, kLayerPrefix.size()) != kLayerPrefix)
    return std::nullopt;
  size_t at = kLayerPrefix.size();
  int64_t value = 0;
  size_t digits = 0;
  while (at < name.size() && name[at] >= '0' && name[at] <= '9') {
    if (value > (INT64_MAX - 9) / 10)
      return std::nullopt;
    value = value * 10 + (name[at] - '0');
    ++at;
    ++digits;
  }
  if (digits == 0 || at >= name.size() || name[at] != '.')
    return std::nullopt;
  return value;
}

PlanLayers analyzePlanLayers(const Artifact &artifact, int64_t batch) {
  return Analyzer(artifact, batch).run();
}

} // namespace qfuse::runtime
