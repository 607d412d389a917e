//===- LoadStages.cpp - Weights in the order a run reads them ------------===//

#include "qfuse/runtime/artifact/LoadStages.h"

#include <set>

namespace qfuse::runtime {

std::vector<LoadStage> layerLoadStages(const Artifact &artifact,
                                       const PlanLayers &layers) {
  std::vector<LoadStage> stages(layers.layers.size() + 2);
  std::set<std::string> weights, tensors; // in a stage already
  auto weight = [&](LoadStage &stage, const std::string &name) {
    const WeightSpec *spec = artifact.findWeight(name);
    if (spec && weights.insert(spec->checkpointName()).second)
      stage.weights.push_back(spec->checkpointName());
  };
  auto tensor = [&](LoadStage &stage, const std::string &name) {
    if (tensors.insert(name).second)
      stage.tensors.push_back(name);
  };
  // What Executor::runSteps requires bound for steps [first, last).
  auto read = [&](LoadStage &stage, const Plan &plan, StepRange steps) {
    for (size_t s = steps.first; s < steps.last; ++s) {
      const Step &step = plan.steps[s];
      for (const Arg &arg : step.args)
        if (arg.kind == Arg::Kind::Weight)
          weight(stage, arg.name);
        else if (arg.kind == Arg::Kind::Tensor)
          tensor(stage, arg.name);
      for (const std::string &guarded : step.guard.weights)
        weight(stage, guarded);
      if (step.kind == Step::Kind::Gemm && !step.gemm.weight.empty())
        weight(stage, step.gemm.weight);
      if (step.kind == Step::Kind::Gemm && !step.gemm.bias.empty())
        tensor(stage, step.gemm.bias);
    }
  };
  const Plan &layered = artifact.plan(layers.batch);
  read(stages[0], layered, layers.prologue);
  for (size_t l = 0; l < layers.layers.size(); ++l)
    read(stages[1 + l], layered, layers.layers[l].steps);
  // The rest: everything every plan reads that no earlier stage holds.
  for (const Plan &plan : artifact.plans)
    read(stages.back(), plan, {0, plan.steps.size()});
  return stages;
}

} // namespace qfuse::runtime
