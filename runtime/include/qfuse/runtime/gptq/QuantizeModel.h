//===- QuantizeModel.h - GPTQ of a whole model on the GPU ------*- C++ -*-===//
//
// What `qfuse-quantize` and the C API's qfuse_quantize run (docs/gptq.md,
// "The GPU pipeline"): a Hugging Face checkpoint, calibrated layer by layer
// through its fp16 artifact, quantized by the GPU GPTQ solver with the
// compiler's block kernels, written in one of the output formats.
//
//   QuantizeModelOptions o;
//   o.modelDir = "Llama-3.2-1B"; o.encoding = "int4-g128";
//   o.calibration = "random:128"; o.outDir = "Llama-3.2-1B-gptq";
//   std::string reportJson = quantizeModel(o);
//
// Progress: after each layer the run records its quantized modules in
// OUT/.qfuse-progress (QuantizeProgress.h); an interrupted run continues
// with `resume` (the recorded layers rerun over the samples to recompute the
// next layer's inputs), with the results the whole run would have given. The directory is removed once the
// checkpoint is written. (Test-only: QFUSE_TEST_KILL_AFTER_LAYER=<l> kills
// the process once layer l is recorded; scripts/quantize-resume-check.sh.)
//
// Artifacts default to files next to the checkpoint, as python3 -m qfuse
// quantize compiles them: DIR/qfuse-fp16-calib.qfa (the model in fp16),
// DIR/qfuse-gptq-<encoding>.qfa (python3 -m qfuse compile-gptq) and, for the
// qfuse format, DIR/qfuse-<encoding>.qfa (the decode artifact the output is
// for). A missing one is an error that prints the command making it.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_RUNTIME_GPTQ_QUANTIZEMODEL_H
#define QFUSE_RUNTIME_GPTQ_QUANTIZEMODEL_H

#include "qfuse/runtime/gptq/Calibration.h"

#include <cstdint>
#include <functional>
#include <string>

namespace qfuse::runtime {

struct QuantizeModelOptions {
  std::string modelDir;
  /// The encoding name the artifacts were compiled for ("int4-g128").
  std::string encoding;
  /// "random:N" (N sequences of seqLen uniform ids, seeded) or a JSON file
  /// [[token ids...], ...] (each cut to seqLen).
  std::string calibration;
  std::string outDir;
  /// "qfuse", "compressed-tensors" or "auto-gptq".
  std::string format = "qfuse";
  int64_t seqLen = 512;
  /// Empty: the defaults next to the checkpoint (above).
  std::string fp16Artifact, gptqArtifact, decodeArtifact;
  double damp = 0.01;
  /// Calibration rows each Hessian stages before its update (at least one
  /// chunk): fewer, larger GEMMs, each rereading the f32 [K, K] sum once.
  int64_t hessianRows = CalibrationOptions().hessianRows;
  bool actOrder = false;
  bool staticGroups = false;
  /// Replace an existing output.
  bool overwrite = false;
  /// Continue the interrupted run whose progress outDir holds
  /// (QuantizeProgress.h): its inputs must be this run's, and the results
  /// are those the whole run would have given. Without progress there, a
  /// run starts at layer 0.
  bool resume = false;
  /// Record progress after each layer (what --resume continues from); off
  /// saves writing each layer's calibration activations.
  bool saveProgress = true;
  uint64_t seed = 0;
  int device = 0;
  /// Hand the solver f32 weights converted on the host (the earlier
  /// pipeline), instead of the checkpoint tensors on the device, and let it
  /// permute (act-order) and lay out static parameters on the host
  /// (GptqSolveOptions::hostPrepare): for comparing the two, whose codes
  /// must be identical.
  bool hostWeights = false;
  /// Recorded in the report ("command").
  std::string command;
  /// The process exits as soon as quantizeModel returns (qfuse-quantize):
  /// a successful run then leaves its device memory, page-locked buffers,
  /// mapped checkpoint and context to the exit instead of releasing them
  /// one by one, time the user waits for after the checkpoint is complete
  /// (docs/gptq.md). Never set it in a process that goes on (the C API,
  /// Python).
  bool processExitsAfter = false;
  /// One line per step (stdout when empty), a progress callback per sample
  /// of each calibration pass, and one when a pass is done (to clear a
  /// progress bar); each may be empty.
  std::function<void(const std::string &)> log;
  std::function<void(const CalibrationProgress &)> progress;
  std::function<void()> progressDone;
};

/// Runs the whole pipeline and returns the report as JSON text: per layer
/// its times and per group and module the GPTQ loss, damping, attempts and
/// fallbacks. Throws qfuse::Error naming the file, module or option at
/// fault.
std::string quantizeModel(const QuantizeModelOptions &options);

} // namespace qfuse::runtime

#endif // QFUSE_RUNTIME_GPTQ_QUANTIZEMODEL_H
