//===- LoadStages.h - Weights in the order a run reads them --*- C++ -*-===//
//
// A layer-at-a-time run (GPTQ calibration) reads the prologue's weights
// first, then layer 0's, layer 1's, ...; the final norm and lm_head only a
// whole-plan run reads. BackgroundLoad uploads a model in this order so the
// run waits for one layer at a time, not for the whole model. CPU only.
//
//   stage 0        what the prologue's steps read (the embedding)
//   stage 1 + l    what layer l's steps read
//   last stage     whatever any plan reads besides (final norm, lm_head)
//
// "Read" is what Executor::runSteps requires bound for a step: its weight
// and tensor arguments, the perms its guard names, a gemm's weight and
// bias. A weight is named by its checkpoint tensor
// (WeightSpec::checkpointName: every layout packed from it binds at once),
// and a name read in two stages loads in the first.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_RUNTIME_ARTIFACT_LOADSTAGES_H
#define QFUSE_RUNTIME_ARTIFACT_LOADSTAGES_H

#include "qfuse/runtime/artifact/Artifact.h"
#include "qfuse/runtime/artifact/PlanLayers.h"

#include <string>
#include <vector>

namespace qfuse::runtime {

/// What one stage binds: checkpoint tensors of weights and dense tensors,
/// each in the order the stage's steps first read them.
struct LoadStage {
  std::vector<std::string> weights;
  std::vector<std::string> tensors;
};

/// The stages of `artifact` for a layer-at-a-time run of `layers`
/// (analyzePlanLayers of the same artifact): layers.layers.size() + 2.
std::vector<LoadStage> layerLoadStages(const Artifact &artifact,
                                       const PlanLayers &layers);

} // namespace qfuse::runtime

#endif // QFUSE_RUNTIME_ARTIFACT_LOADSTAGES_H
