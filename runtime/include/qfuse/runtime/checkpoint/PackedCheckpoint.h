//===- PackedCheckpoint.h - the qfuse-packed directory, streamed -*- C++ -*-===//
//
// The qfuse-packed checkpoint of an artifact (QuantizedCheckpoint.h). Every
// tensor it holds follows from the artifact, so the whole directory is
// planned before any tensor is made:
//
//   model.safetensors, in file order
//     per artifact weight (once per checkpoint name, in artifact order):
//       <weight>.<component>  the row-major components of its encoding
//                             (Packing.h), in TensorMap order (by name)
//     per artifact tensor:
//       <tensor>              in the artifact's dtype and shape
//     metadata                format = pt, qfuse.packed, and
//                             qfuse.encoding.<weight> per weight
//   config.json               the source's, as it is
//
// PackedCheckpointWriter lays model.safetensors out from the plan, reserves
// it and writes each weight when it is ready, from any thread: the GPTQ
// pipeline as its packer finishes each module, while the layers still run;
// the rest (weights GPTQ leaves alone, such as lm_head, quantized with
// round-to-nearest; the dense tensors) made from the source checkpoint.
//
//   PackedCheckpointWriter out(source, artifact, outDir, overwrite);
//   out.writeWeight("model.layers.0.mlp.up_proj", components); // any thread
//   out.writeFromSource(/*except=*/{"model.layers.0.mlp.up_proj", ...});
//   out.commit(); // throws naming every tensor never written
//
// writeQuantizedCheckpoint writes its qfuse-packed output through this
// writer too, so both write one layout.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_RUNTIME_CHECKPOINT_PACKEDCHECKPOINT_H
#define QFUSE_RUNTIME_CHECKPOINT_PACKEDCHECKPOINT_H

#include "qfuse/format/Tensor.h"
#include "qfuse/runtime/artifact/Artifact.h"
#include "qfuse/runtime/checkpoint/ModelCheckpoint.h"
#include "qfuse/runtime/checkpoint/QuantizedCheckpoint.h"
#include "qfuse/runtime/checkpoint/Safetensors.h"
#include "qfuse/runtime/checkpoint/StreamingSafetensorsWriter.h"
#include "qfuse/runtime/checkpoint/WeightSources.h"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace qfuse::runtime {

/// Everything the qfuse-packed directory of an artifact holds (above).
struct PackedCheckpointPlan {
  /// The artifact weights written, once per checkpoint name, in file order.
  std::vector<const WeightSpec *> weights;
  /// model.safetensors' tensors in file order (offsets unset) and metadata.
  std::vector<TensorInfo> tensors;
  std::map<std::string, std::string> metadata;
  /// config.json's bytes.
  std::string config;
};

/// The plan of `artifact`'s qfuse-packed directory from `source`.
PackedCheckpointPlan planPackedCheckpoint(const ModelCheckpoint &source,
                                          const Artifact &artifact);

/// Throws unless `weight` may stand for its artifact weight in a
/// qfuse-packed checkpoint: `artifact` has it, in `weight`'s encoding and
/// [n, k].
void checkPackedWeight(const Artifact &artifact, const QuantizedWeight &weight);

class PackedCheckpointWriter {
public:
  /// Plans `artifact`'s directory from `source`, checks `outDir`
  /// (checkOutputDir), creates it and starts its model.safetensors under a
  /// temporary name, reserved and with its header written (temporaries of
  /// a killed writer there are removed first).
  PackedCheckpointWriter(const ModelCheckpoint &source,
                         const Artifact &artifact, std::string outDir,
                         bool overwrite);

  const PackedCheckpointPlan &plan() const { return plan_; }

  /// Writes the row-major components of checkpoint weight `name` (thread-
  /// safe). Throws naming the weight when the plan does not hold it, it was
  /// written already, or `components` are not its encoding's at its [n, k]
  /// (format::checkComponents).
  void writeWeight(const std::string &name,
                   const format::TensorMap &components);

  /// Makes every weight not in `except` (checkpointWeight: round-to-nearest
  /// or converted) and every dense tensor (checkpointTensor) from the source
  /// and writes them, as parallel jobs. Dense weights into a quantized
  /// encoding are rounded by `device` where given and it takes them.
  void writeFromSource(const std::set<std::string> &except,
                       const DenseQuantizer *device = nullptr);

  /// Throws naming every tensor not written yet; else writes config.json
  /// and renames both files into place (config.json first).
  void commit();

private:
  const ModelCheckpoint &source_;
  const Artifact &artifact_;
  std::string outDir_;
  bool overwrite_;
  PackedCheckpointPlan plan_;
  StreamingSafetensorsWriter model_;
};

} // namespace qfuse::runtime

#endif // QFUSE_RUNTIME_CHECKPOINT_PACKEDCHECKPOINT_H
