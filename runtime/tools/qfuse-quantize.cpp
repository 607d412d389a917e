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
//===----------------------------------------------------------------------===//

#include "ToolCommon.h"

#include "qfuse/format/Encoding.h"
#include "qfuse/format/Numerics.h"
#include "qfuse/format/Packing.h"
#include "qfuse/runtime/Artifact.h"
#include "qfuse/runtime/Calibration.h"
#include "qfuse/runtime/Cuda.h"
#include "qfuse/runtime/Error.h"
#include "qfuse/runtime/Executor.h"
#include "qfuse/runtime/GptqSolver.h"
#include "qfuse/runtime/ModelCheckpoint.h"
#include "qfuse/runtime/ModelLoader.h"
#include "qfuse/runtime/ModelWeights.h"
#include "qfuse/runtime/QuantizedCheckpoint.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <thread>
#include <unistd.h>

using namespace qfuse;
using namespace qfuse::runtime;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::vector<std::vector<int32_t>>
calibrationSamples(const std::string &spec, int64_t seqLen, int64_t vocab,
                   uint64_t seed) {
  std::vector<std::vector<int32_t>> samples;
  if (spec.rfind("random:", 0) == 0) {
    int64_t count = 0;
    try {
      count = std::stoll(spec.substr(7));
    } catch (const std::exception &) {
    }
    if (count <= 0)
      throw Error("--calibration '" + spec +
                  "': expected random:N with N a positive integer");
    if (vocab <= 0)
      throw Error("--calibration random:N needs vocab_size in config.json");
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<int32_t> token(0, int32_t(vocab - 1));
    samples.resize(size_t(count));
    for (auto &s : samples) {
      s.resize(size_t(seqLen));
      for (int32_t &t : s)
        t = token(rng);
    }
    return samples;
  }
  std::ifstream in(spec);
  if (!in)
    throw Error("--calibration '" + spec +
                "': no such file (expected random:N or a JSON file of token "
                "id lists)");
  json doc;
  try {
    in >> doc;
  } catch (const json::exception &e) {
    throw Error("--calibration '" + spec + "': not JSON: " + e.what());
  }
  if (!doc.is_array() || doc.empty())
    throw Error("--calibration '" + spec +
                "': expected a non-empty JSON array of token id lists");
  for (size_t i = 0; i < doc.size(); ++i) {
    const json &seq = doc[i];
    if (!seq.is_array() || seq.empty())
      throw Error("--calibration '" + spec + "': sample " + std::to_string(i) +
                  " is not a non-empty list of token ids");
    std::vector<int32_t> ids;
    for (const json &t : seq) {
      if (!t.is_number_integer() || t.get<int64_t>() < 0 ||
          (vocab > 0 && t.get<int64_t>() >= vocab))
        throw Error("--calibration '" + spec + "': sample " +
                    std::to_string(i) + " has a token id outside [0, " +
                    std::to_string(vocab) + ")");
      ids.push_back(t.get<int32_t>());
    }
    if (int64_t(ids.size()) > seqLen)
      ids.resize(size_t(seqLen)); // at most --seq-len tokens per sample
    samples.push_back(std::move(ids));
  }
  return samples;
}

/// The module's checkpoint weight as f32 [n, k].
std::vector<float> weightF32(const ModelCheckpoint &checkpoint,
                             const std::string &module, int64_t &n,
                             int64_t &k) {
  const std::string name = module + ".weight";
  TensorView view = checkpoint.view(name);
  if (view.info->shape.size() != 2)
    throw Error("'" + name + "' is not a matrix");
  n = view.info->shape[0];
  k = view.info->shape[1];
  std::vector<uint8_t> bytes =
      convertDense(view.info->dtype, view.data, uint64_t(n * k), DType::F32,
                   name);
  std::vector<float> w(size_t(n * k));
  std::memcpy(w.data(), bytes.data(), w.size() * 4);
  return w;
}

class ProgressBar {
public:
  explicit ProgressBar(int64_t layers) : layers_(layers), tty_(isatty(2)) {}
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
      std::fprintf(stderr, "\r  layer %lld/%lld %-9s [%s] %lld/%lld samples",
                   (long long)p.layer + 1, (long long)layers_,
                   calibrationPhaseName(p.phase), bar.c_str(),
                   (long long)p.sample, (long long)p.samples);
    std::fflush(stderr);
  }
  void clear() {
    if (tty_)
      std::fprintf(stderr, "\r%80s\r", "");
  }

private:
  int64_t layers_;
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
  bool actOrder = false, staticGroups = false, overwrite = false;
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
  app.add_flag("--act-order", actOrder, "columns by descending diag(H)");
  app.add_flag("--static-groups", staticGroups,
               "fit group scales up front on the original weights");
  app.add_flag("--overwrite", overwrite, "replace an existing output");
  app.add_option("--seed", seed, "seed of random calibration samples")
      ->default_val(seed);
  app.add_option("--device", device, "CUDA device ordinal")->default_val(0);
  app.add_option("--json", jsonPath, "write the per-layer report as JSON");
  CLI11_PARSE(app, argc, argv);

  const auto start = Clock::now();
  try {
    if (fp16Artifact.empty())
      fp16Artifact = (fs::path(modelDir) / "qfuse-fp16-calib.qfa").string();
    if (gptqArtifact.empty())
      gptqArtifact =
          (fs::path(modelDir) / ("qfuse-gptq-" + encodingName + ".qfa"))
              .string();
    if (decodeArtifact.empty())
      decodeArtifact =
          (fs::path(modelDir) / ("qfuse-" + encodingName + ".qfa")).string();
    const CheckpointFormat outFormat = parseCheckpointFormat(formatName);
    const std::string config = (fs::path(modelDir) / "config.json").string();
    auto requireArtifact = [&](const std::string &path, const std::string &how) {
      if (!fs::exists(path))
        throw Error("no artifact '" + path + "'; make it on the compiler "
                    "machine with: " + how);
    };
    requireArtifact(fp16Artifact,
                    "python3 -m qfuse compile --config " + config +
                        " --encoding fp16 --batch-sizes 1," +
                        std::to_string(std::min<int64_t>(seqLen, 512)) +
                        " -o " + fp16Artifact);
    requireArtifact(gptqArtifact, "python3 -m qfuse compile-gptq --config " +
                                      config + " --encoding " + encodingName +
                                      " -o " + gptqArtifact);
    if (outFormat == CheckpointFormat::QfusePacked)
      requireArtifact(decodeArtifact, "python3 -m qfuse compile --config " +
                                          config + " --encoding " +
                                          encodingName + " -o " +
                                          decodeArtifact);

    ModelCheckpoint checkpoint = ModelCheckpoint::open(modelDir);
    if (checkpoint.config().quantization != CheckpointQuantization::None)
      throw Error("'" + modelDir + "' is already quantized (" +
                  checkpoint.config().quantMethod +
                  "); GPTQ needs the fp16/bf16/f32 checkpoint");
    Artifact fp16 = Artifact::load(fp16Artifact);
    Artifact blocks = Artifact::load(gptqArtifact);
    std::optional<Artifact> decode;
    if (outFormat == CheckpointFormat::QfusePacked)
      decode = Artifact::load(decodeArtifact);
    const format::Encoding enc = gptqArtifactEncoding(blocks);
    checkEncodingForFormat(outFormat, enc);
    if (decode)
      for (const WeightSpec &w : decode->weights)
        if (w.encodingAttr.isQuantized() && !(w.encodingAttr == enc))
          throw Error("the decode artifact '" + decodeArtifact +
                      "' stores '" + w.name + "' as '" + w.encoding +
                      "', the GPTQ artifact quantizes to '" +
                      format::printEncoding(enc) + "'");

    cuda::Context context(device);
    cuda::Stream stream;
    Executor executor(fp16, context);
    checkModelAgainstConfig(fp16, checkpoint);
    std::printf("qfuse-quantize: %s -> %s (%s, %s) on %s\n", modelDir.c_str(),
                outDir.c_str(), format::printEncoding(enc).c_str(),
                std::string(checkpointFormatName(outFormat)).c_str(),
                context.describe().c_str());
    LoadStats load = loadCheckpoint(executor, checkpoint);
    std::printf("  fp16 weights bound in %.1f s\n", load.seconds);

    std::vector<std::vector<int32_t>> samples = calibrationSamples(
        calibration, seqLen, checkpoint.config().vocabSize, seed);
    // One solver and stream per group of a layer (q/k/v, o, gate/up, down),
    // made on first use and kept for every layer.
    std::vector<std::unique_ptr<GptqSolver>> solvers;
    std::vector<std::unique_ptr<cuda::Stream>> streams;
    GptqSolveOptions solveOptions;
    solveOptions.dampFraction = damp;
    solveOptions.actOrder = actOrder;
    solveOptions.staticGroups = staticGroups;

    CalibrationOptions calibrationOptions;
    ProgressBar bar(fp16.model.numLayers);
    calibrationOptions.progress = [&](const CalibrationProgress &p) {
      bar.update(p);
    };
    LayerwiseCalibrator calib(executor, stream.get(), calibrationOptions);
    auto t = Clock::now();
    calib.begin(samples);
    bar.clear();
    std::printf("  calibration: %lld samples, %lld tokens, chunks of %lld "
                "rows; layer inputs stored in %.1f MB (%.2f s)\n",
                (long long)calib.numSamples(), (long long)calib.tokens(),
                (long long)calib.chunkRows(),
                double(calib.storeBytes(0)) / 1e6, secondsSince(t));

    std::vector<QuantizedWeight> quantized;
    json layersJson = json::array();
    int fallbacks = 0;
    double solveTotal = 0;
    for (int64_t l = 0; l < calib.numLayers(); ++l) {
      const auto layerStart = Clock::now();
      std::vector<HessianGroup> groups = calib.collect(l);
      const double collectSeconds = secondsSince(layerStart);
      json layerJson = {{"layer", l}, {"groups", json::array()}};
      std::string line;
      double layerSolve = 0;
      // The groups of a layer are independent once their Hessians exist:
      // each is solved on its own thread, stream and solver, so that one
      // group's host work (weights in, codes out) overlaps another's device
      // work. Rebinding the quantized weights waits for all of them.
      const auto solveStart = Clock::now();
      struct GroupWork {
        std::vector<std::vector<float>> weights;
        std::vector<GptqModuleInput> inputs;
        std::vector<GptqModuleResult> results;
        GptqSolveReport report;
        std::string error;
      };
      std::vector<GroupWork> work(groups.size());
      while (solvers.size() < groups.size()) {
        solvers.push_back(std::make_unique<GptqSolver>(blocks, context, enc));
        streams.push_back(std::make_unique<cuda::Stream>());
      }
      std::vector<std::thread> threads;
      for (size_t gi = 0; gi < groups.size(); ++gi)
        threads.emplace_back([&, gi] {
          GroupWork &job = work[gi];
          HessianGroup &group = groups[gi];
          try {
            context.makeCurrent();
            const int64_t k = group.hessian.columns();
            for (const std::string &module : group.modules) {
              int64_t n = 0, kk = 0;
              job.weights.push_back(weightF32(checkpoint, module, n, kk));
              if (kk != k)
                throw Error("'" + module + ".weight' has " +
                            std::to_string(kk) + " inputs, its Hessian " +
                            std::to_string(k));
              job.inputs.push_back({module, job.weights.back().data(), n});
            }
            job.results = solvers[gi]->solve(
                job.inputs, group.hessian.matrix().ptr(), k, solveOptions,
                streams[gi]->get(), job.report);
          } catch (const std::exception &e) {
            job.error = e.what();
          }
        });
      for (std::thread &thread : threads)
        thread.join();
      for (size_t gi = 0; gi < groups.size(); ++gi)
        if (!work[gi].error.empty())
          throw Error("layer " + std::to_string(l) + ", " +
                      groups[gi].input + ": " + work[gi].error);
      layerSolve = secondsSince(solveStart);
      for (size_t gi = 0; gi < groups.size(); ++gi) {
        HessianGroup &group = groups[gi];
        GptqSolveReport &report = work[gi].report;
        std::vector<GptqModuleResult> &results = work[gi].results;
        const int64_t k = group.hessian.columns();
        fallbacks += report.fellBackToRTN ? int(results.size()) : 0;
        for (const std::string &warning : report.warnings)
          std::printf("  layer %lld: warning: %s\n", (long long)l,
                      warning.c_str());
        json groupJson = {{"input", group.input},
                          {"k", k},
                          {"solve_ms", report.solveSeconds * 1e3},
                          {"total_ms", report.totalSeconds * 1e3},
                          {"attempts", report.attempts},
                          {"damping", report.dampFraction},
                          {"dead_channels", report.deadChannels.size()},
                          {"fell_back_to_rtn", report.fellBackToRTN},
                          {"modules", json::array()}};
        for (GptqModuleResult &r : results) {
          // Rebind the module as the next layers will see it.
          std::vector<float> deq;
          std::string error;
          if (!format::dequantize(enc, r.weight, r.n, r.k, deq, error))
            throw Error("dequantizing '" + r.name + "': " + error);
          std::vector<uint16_t> half(deq.size());
          for (size_t i = 0; i < deq.size(); ++i)
            half[i] = format::floatToHalf(deq[i]);
          executor.bindWeightComponent(r.name, format::kCodes, half.data(),
                                       half.size() * 2);
          const std::string shortName = r.name.substr(r.name.rfind('.') + 1);
          char buffer[96];
          std::snprintf(buffer, sizeof(buffer), " %s %.3g", shortName.c_str(),
                        r.loss);
          line += buffer;
          groupJson["modules"].push_back(
              {{"name", r.name}, {"n", r.n}, {"loss", r.loss}});
          quantized.push_back({r.name, enc, r.n, r.k, std::move(r.weight)});
        }
        layerJson["groups"].push_back(groupJson);
      }
      const auto propagateStart = Clock::now();
      calib.propagate(l);
      const double propagateSeconds = secondsSince(propagateStart);
      bar.clear();
      solveTotal += layerSolve;
      const double layerSeconds = secondsSince(layerStart);
      std::printf("  layer %lld/%lld: %.2f s (collect %.2f, gptq %.2f, "
                  "propagate %.2f); loss%s\n",
                  (long long)l + 1, (long long)calib.numLayers(), layerSeconds,
                  collectSeconds, layerSolve, propagateSeconds, line.c_str());
      std::fflush(stdout);
      layerJson["seconds"] = layerSeconds;
      layerJson["collect_seconds"] = collectSeconds;
      layerJson["gptq_seconds"] = layerSolve;
      layerJson["propagate_seconds"] = propagateSeconds;
      layersJson.push_back(layerJson);
    }

    t = Clock::now();
    writeQuantizedCheckpoint(checkpoint, quantized, outFormat, outDir,
                             decode ? &*decode : nullptr, overwrite);
    const double writeSeconds = secondsSince(t);
    const double total = secondsSince(start);
    std::printf("qfuse-quantize: %zu modules in %lld layers, %d fell back to "
                "round-to-nearest; GPTQ %.2f s, written in %.2f s, %.1f s in "
                "all -> %s\n",
                quantized.size(), (long long)calib.numLayers(), fallbacks,
                solveTotal, writeSeconds, total, outDir.c_str());
    if (!jsonPath.empty()) {
      json doc = {{"tool", "qfuse-quantize"},
                  {"command", tools::commandLine(argc, argv)},
                  {"date", tools::utcNow()},
                  {"device", context.describe()},
                  {"encoding", format::printEncoding(enc)},
                  {"format", std::string(checkpointFormatName(outFormat))},
                  {"samples", calib.numSamples()},
                  {"tokens", calib.tokens()},
                  {"modules", quantized.size()},
                  {"fell_back_to_rtn", fallbacks},
                  {"gptq_seconds", solveTotal},
                  {"seconds", total},
                  {"layers", layersJson}};
      std::ofstream(jsonPath) << doc.dump(2) << "\n";
    }
  } catch (const Error &e) {
    std::cerr << "\nqfuse-quantize: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
