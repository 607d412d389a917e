//===- QuantizeProgress.h - an interrupted quantize run, on disk -*- C++ -*-===//
//
// qfuse-quantize works layer by layer; after each layer it records, in
// OUT/.qfuse-progress/, what a later `--resume` needs to continue with the
// results the whole run would have given (docs/gptq.md, "Resuming"):
//
//   layer-00007.safetensors  layer 7's quantized modules, packed
//                            ("<module>.codes", "<module>.scales", ...)
//   manifest.json            the run's identity (RunIdentity.h), the
//                            layers done, their report entries and files
//
// The calibration activations are not recorded (hundreds of MB per layer):
// a resumed run recomputes them by running the recorded layers, rebound
// from their packed modules, over the same samples. Each file is written
// whole (AtomicFile) before the manifest names it, and the manifest is
// replaced last: it is the commit point, so a run killed at any moment
// leaves a progress directory that resumes at the last layer recorded.
// Files the manifest does not name (an interrupted write; the inputs-*
// files that earlier versions recorded) are removed, and the whole
// directory once the checkpoint is written (finish(): renamed at once,
// unlinked by a process of its own, BackgroundRemoval.h).
//
//   QuantizeProgress progress(outDir, identity, numLayers, resume);
//   for (int64_t l = 0; l < progress.layersDone(); ++l)
//     ...rebind progress.loadLayer(l, encoding), run layer l...
//   for (int64_t l = progress.layersDone(); l < numLayers; ++l) {
//     ...quantize layer l...
//     progress.recordLayer(l, modules, reportJson);
//   }
//   writeQuantizedCheckpoint(...);
//   progress.finish();
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_RUNTIME_GPTQ_QUANTIZEPROGRESS_H
#define QFUSE_RUNTIME_GPTQ_QUANTIZEPROGRESS_H

#include "qfuse/format/Encoding.h"
#include "qfuse/format/Tensor.h"
#include "qfuse/runtime/checkpoint/QuantizedCheckpoint.h"
#include "qfuse/runtime/checkpoint/Safetensors.h"
#include "qfuse/runtime/gptq/RunIdentity.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace qfuse::runtime {

class QuantizeProgress {
public:
  /// One quantized module of a layer, packed.
  struct Module {
    std::string name;
    int64_t n = 0, k = 0;
    std::shared_ptr<const format::TensorMap> packed;
  };

  /// OUT/.qfuse-progress.
  static std::string directoryFor(const std::string &outDir);

  /// The progress of a run of `identity` over `numLayers` layers into
  /// `outDir`. With `resume`, continues what the directory holds (from
  /// layer 0 if nothing) once its identity matches `identity` (else throws,
  /// listing the differences); without, throws if it holds progress.
  QuantizeProgress(std::string outDir, RunIdentity identity, int64_t numLayers,
                   bool resume);

  const std::string &directory() const { return dir_; }
  int64_t layersDone() const { return int64_t(layerFiles_.size()); }
  /// The report entry (JSON text) of each layer done.
  const std::vector<std::string> &layerReports() const { return reports_; }

  /// The quantized modules of layer `layer` (< layersDone()), in
  /// `encoding`, packed and checked.
  std::vector<QuantizedWeight> loadLayer(int64_t layer,
                                         const format::Encoding &encoding) const;

  /// Layer `layer` (= layersDone()) is complete: its modules and its report
  /// entry (JSON text). Throws naming the file on a write error, leaving the
  /// progress as it was.
  void recordLayer(int64_t layer, const std::vector<Module> &modules,
                   const std::string &reportJson);

  /// Removes the progress directory (the checkpoint is written).
  void finish();

private:
  void readManifest(const RunIdentity &identity);
  void writeManifest(const std::vector<std::string> &layerFiles,
                     const std::vector<std::string> &reports) const;
  void removeStale() const;
  std::string path(const std::string &file) const { return dir_ + "/" + file; }

  std::string dir_;
  RunIdentity identity_;
  int64_t numLayers_ = 0;
  std::vector<std::string> layerFiles_;
  std::vector<std::string> reports_;
};

} // namespace qfuse::runtime

#endif // QFUSE_RUNTIME_GPTQ_QUANTIZEPROGRESS_H
