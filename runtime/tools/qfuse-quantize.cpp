//===- qfuse-quantize.cpp - GPTQ of a whole model on the GPU --------------===//
//
//   qfuse-quantize --model DIR --encoding int4-g128 --calibration random:128
//                  --out OUT [--format qfuse|compressed-tensors|auto-gptq]
//
// Layer by layer (docs/gptq.md, "The pipeline"): the calibration tokens run
// through the model's own fp16 artifact (DIR/qfuse-fp16-calib.qfa) up to
// layer l, whose earlier layers are already quantized; each group of modules
// sharing an input gets one Hessian (LayerwiseCalibrator) and is quantized
// by the GPU solver with the block kernels of DIR/qfuse-gptq-<encoding>.qfa
// (GptqSolver); layer l is then rebound with its quantized weights
// (dequantized to f16) and run again to make layer l+1's inputs. lm_head
// and the embeddings are not GPTQ'd: the qfuse-packed output rounds lm_head
// to nearest as the decode runtime would.
//
// Artifacts come from the compiler machine:
//   python3 -m qfuse compile --config DIR/config.json --encoding fp16
//       --batch-sizes 1,512 -o DIR/qfuse-fp16-calib.qfa
//   python3 -m qfuse compile-gptq --config DIR/config.json
//       --encoding int4-g128 -o DIR/qfuse-gptq-int4-g128.qfa
//   (python3 -m qfuse quantize does both, then runs this tool.)
// The qfuse-packed output also needs the decode artifact DIR/qfuse-<E>.qfa
// (it holds exactly what that artifact binds).
//
// Calibration: `random:N` (N sequences of --seq-len uniform token ids,
// seeded) or a JSON file [[ids...], ...]. Prints a line per layer (time,
// loss per module, fallbacks) and a summary; --json writes them.
//
// After each layer the run records its progress in OUT/.qfuse-progress; an
// interrupted run (killed, out of memory, a full disk) continues with
// --resume and gives the checkpoint the whole run would have.
//
//===----------------------------------------------------------------------===//

#include "ToolCommon.h"

#include "qfuse/runtime/gptq/Calibration.h"
#include "qfuse/runtime/AtomicFile.h"
#include "qfuse/runtime/Error.h"
#include "qfuse/runtime/gptq/QuantizeModel.h"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <unistd.h>

using namespace qfuse;
using namespace qfuse::runtime;

namespace {

/// A bar on stderr while a calibration pass runs (only on a terminal).
class ProgressBar {
public:
  ProgressBar() : tty_(isatty(2)) {}
  void update(const CalibrationProgress &p) {
    if (!tty_)
      return;
    const int width = 30;
    const int filled = int(width * p.sample / std::max<int64_t>(p.samples, 1));
    std::string bar(size_t(filled), '#');
    bar.resize(size_t(width), '.');
    if (p.layer < 0)
      std::fprintf(stderr, "\r  %-9s [%s] %lld/%lld samples", "capture",
                   bar.c_str(), (long long)p.sample, (long long)p.samples);
    else
      std::fprintf(stderr, "\r  layer %lld %-9s [%s] %lld/%lld samples",
                   (long long)p.layer + 1,
                   calibrationPhaseName(p.phase), bar.c_str(),
                   (long long)p.sample, (long long)p.samples);
    std::fflush(stderr);
  }
  void clear() {
    if (tty_)
      std::fprintf(stderr, "\r%80s\r", "");
  }

private:
  bool tty_;
};

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"qfuse-quantize: GPTQ of a Hugging Face model on the GPU, "
               "calibrated layer by layer through the model's own forward"};
  std::string modelDir, encodingName, calibration, outDir,
      formatName = "qfuse", fp16Artifact, gptqArtifact, decodeArtifact,
      jsonPath;
  int64_t seqLen = 512;
  double damp = 0.01;
  int64_t hessianRows = QuantizeModelOptions().hessianRows;
  bool actOrder = false, staticGroups = false, overwrite = false,
       hostWeights = false, resume = false, noProgress = false;
  uint64_t seed = 0;
  int device = 0;
  app.add_option("--model", modelDir, "Hugging Face checkpoint directory")
      ->required()
      ->check(CLI::ExistingDirectory);
  app.add_option("--encoding", encodingName,
                 "the encoding name the artifacts were compiled for "
                 "(int4-g128, uint4-g128-asym, int8, ...)")
      ->required();
  app.add_option("--calibration", calibration,
                 "random:N, or a JSON file [[token ids...], ...]")
      ->required();
  app.add_option("--out", outDir, "output directory")->required();
  app.add_option("--format", formatName,
                 "qfuse (packed, for qfuse-run), compressed-tensors or "
                 "auto-gptq")
      ->default_val(formatName);
  app.add_option("--seq-len", seqLen,
                 "tokens per calibration sample (random:N; files are cut "
                 "to it)")
      ->default_val(seqLen);
  app.add_option("--fp16-artifact", fp16Artifact,
                 "the fp16 model artifact for calibration (default "
                 "DIR/qfuse-fp16-calib.qfa)");
  app.add_option("--gptq-artifact", gptqArtifact,
                 "the GPTQ block kernels (default DIR/qfuse-gptq-<E>.qfa)");
  app.add_option("--decode-artifact", decodeArtifact,
                 "--format qfuse: the decode artifact the output is for "
                 "(default DIR/qfuse-<E>.qfa)");
  app.add_option("--damp", damp, "dampening, fraction of mean(diag(H))")
      ->default_val(damp);
  app.add_option("--hessian-rows", hessianRows,
                 "calibration rows staged per Hessian update (at least one "
                 "chunk; more rows, fewer passes over the f32 sums)")
      ->default_val(hessianRows)
      ->check(CLI::PositiveNumber);
  app.add_flag("--act-order", actOrder, "columns by descending diag(H)");
  app.add_flag("--static-groups", staticGroups,
               "fit group scales up front on the original weights");
  app.add_flag("--overwrite", overwrite, "replace an existing output");
  app.add_flag("--resume", resume,
               "continue an interrupted run from OUT/.qfuse-progress (the "
               "same inputs; the results are those of an uninterrupted run)");
  app.add_flag("--no-progress", noProgress,
               "do not record each layer's progress (no --resume later)");
  app.add_flag("--host-weights", hostWeights,
               "convert the weights to f32 on the host, and permute them "
               "(act-order) and lay out static parameters there, as the "
               "earlier pipeline did (for comparison; the codes are "
               "identical)");
  app.add_option("--seed", seed, "seed of random calibration samples")
      ->default_val(seed);
  app.add_option("--device", device, "CUDA device ordinal")->default_val(0);
  app.add_option("--json", jsonPath, "write the per-layer report as JSON");
  CLI11_PARSE(app, argc, argv);

  QuantizeModelOptions options;
  options.modelDir = modelDir;
  options.encoding = encodingName;
  options.calibration = calibration;
  options.outDir = outDir;
  options.format = formatName;
  options.seqLen = seqLen;
  options.fp16Artifact = fp16Artifact;
  options.gptqArtifact = gptqArtifact;
  options.decodeArtifact = decodeArtifact;
  options.damp = damp;
  options.hessianRows = hessianRows;
  options.actOrder = actOrder;
  options.staticGroups = staticGroups;
  options.overwrite = overwrite;
  options.resume = resume;
  options.saveProgress = !noProgress;
  options.hostWeights = hostWeights;
  options.seed = seed;
  options.device = device;
  options.command = tools::commandLine(argc, argv);
  options.processExitsAfter = true;
  ProgressBar bar;
  options.log = [](const std::string &line) {
    std::fputs(line.c_str(), stdout);
    std::fflush(stdout);
  };
  options.progress = [&](const CalibrationProgress &p) { bar.update(p); };
  options.progressDone = [&] { bar.clear(); };
  try {
    const std::string report = quantizeModel(options);
    if (!jsonPath.empty())
      writeFileAtomically(jsonPath, report + "\n");
  } catch (const std::exception &e) {
    bar.clear();
    std::cerr << "qfuse-quantize: error: " << errorText(e) << "\n";
    return 1;
  }
  // Without the destructors and exit handlers of the run (see
  // processExitsAfter): the output is complete and flushed.
  std::cout.flush();
  std::fflush(nullptr);
  std::_Exit(0);
}
