//===- FuzzArtifact.cpp - libFuzzer: the artifact reader and validator -----===//
//
// The input is one artifact file (docs/artifact.md). Artifact::parse, what
// qfuse_validate_artifact and qfuse_open run before any GPU work, must
// accept it or throw qfuse::Error. An accepted artifact then goes through
// what the runtime derives from it on the CPU: buffer sizes for every plan,
// the layer split of each plan (PlanLayers.h), the entries each checkpoint
// tensor binds (WeightLayouts.h) and the dequantize launches' operands;
// each must succeed or throw qfuse::Error.
//
//===----------------------------------------------------------------------===//

#include "FuzzSupport.h"

#include "qfuse/runtime/Error.h"
#include "qfuse/runtime/artifact/Artifact.h"
#include "qfuse/runtime/artifact/PlanLayers.h"
#include "qfuse/runtime/artifact/WeightLayouts.h"

using namespace qfuse::runtime;
using qfuse::fuzz::propertyFailed;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text(reinterpret_cast<const char *>(data), size);
  try {
    Artifact artifact = Artifact::parse(text, "fuzz.qfa");
    for (const Plan &plan : artifact.plans) {
      if (artifact.findPlan(plan.batch) != &plan)
        propertyFailed("findPlan(" + std::to_string(plan.batch) +
                       ") is not its plan");
      for (const BufferSpec &buffer : artifact.buffers) {
        buffer.numBytes(plan.batch);
        for (size_t d = 0; d < buffer.shape.size(); ++d)
          if (buffer.extent(d, plan.batch) < 1)
            propertyFailed("buffer '" + buffer.name + "' has an extent < 1");
      }
      for (const Step &step : plan.steps) {
        dequantizeTarget(artifact, step);
        dequantizeSource(step);
      }
      try {
        analyzePlanLayers(artifact, plan.batch);
      } catch (const qfuse::Error &) {
      }
    }
    for (const WeightSpec &weight : artifact.weights)
      weightEntriesFor(artifact, weight.checkpointName(), "fuzz");
    for (const TensorSpec &tensor : artifact.tensors)
      tensor.numBytes();
  } catch (const qfuse::Error &) {
  }
  return 0;
}
