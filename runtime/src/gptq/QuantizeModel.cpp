//===- QuantizeModel.cpp - GPTQ of a whole model on the GPU ---------------===//
//
// The pipeline of docs/gptq.md ("The GPU pipeline"): calibration layer by
// layer through the model's fp16 plan (LayerwiseCalibrator), the groups of
// each layer solved at once (solveLayerGroups: GptqSolver, a thread and
// stream each) from the checkpoint tensors on the device (the f16 ones the
// plan already holds, or the stored bf16/f32 bytes uploaded once), the
// quantized layer rebound in f16 in place before the next layer's
// calibration (HalfRebinder), its modules packed on worker threads meanwhile
// (BackgroundPacker), each layer recorded for --resume (QuantizeProgress, on
// a thread of its own), and the checkpoint written: the qfuse format as the
// packer finishes each module (PackedCheckpointStream), the others at the
// end (writeQuantizedCheckpoint).
//
//===----------------------------------------------------------------------===//

#include "qfuse/runtime/gptq/QuantizeModel.h"

#include "QuantizeInputs.h"
#include "QuantizeLayer.h"
#include "SerialJobs.h"

#include "qfuse/format/Encoding.h"
#include "qfuse/format/Numerics.h"
#include "qfuse/format/Packing.h"
#include "qfuse/runtime/artifact/Artifact.h"
#include "qfuse/runtime/gptq/Calibration.h"
#include "qfuse/runtime/gptq/BackgroundPacker.h"
#include "qfuse/runtime/gptq/HalfRebinder.h"
#include "qfuse/runtime/device/Cuda.h"
#include "qfuse/runtime/device/DeviceArtifact.h"
#include "qfuse/runtime/Error.h"
#include "qfuse/runtime/checkpoint/ModelCheckpoint.h"
#include "qfuse/runtime/checkpoint/QuantizedCheckpoint.h"
#include "qfuse/runtime/checkpoint/WeightSources.h"
#include "qfuse/runtime/device/Executor.h"
#include "qfuse/runtime/device/ModelLoader.h"
#include "qfuse/runtime/gptq/CalibrationSamples.h"
#include "qfuse/runtime/gptq/PackedCheckpointStream.h"
#include "qfuse/runtime/gptq/QuantizeProgress.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <csignal>
#include <cstdarg>
#include <cstdlib>
#include <cstdio>
#include <ctime>
#include <functional>
#include <set>
#include <optional>
#include <thread>

namespace qfuse::runtime {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::string utcNow() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

/// Sums over the layers this run quantized, for the report's phases.
struct Totals {
  double collect = 0, solve = 0, deviceSolve = 0, rebind = 0, propagate = 0;
};

/// What the run has quantized (resumed layers included).
struct Counts {
  size_t modules = 0;
  int fallbacks = 0;
};

/// HalfRebinder::rebind of a result the solver did not write in f16 (an RTN
/// fallback, act-order, a GPTQ artifact without values); its codes may
/// come as bytes.
void rebindOnHost(HalfRebinder &rebinder, const GptqModuleResult &r,
                  const format::Encoding &enc) {
  if (r.codeBytes.empty()) {
    rebinder.rebind(r.name, enc, r.weight, r.n, r.k);
    return;
  }
  format::Unpacked widened = r.weight;
  widened.codes.resize(r.codeBytes.size());
  for (size_t i = 0; i < r.codeBytes.size(); ++i)
    widened.codes[i] = format::codeFromByte(enc.format, r.codeBytes[i]);
  rebinder.rebind(r.name, enc, widened, r.n, r.k);
}

/// HalfRebinder::rebind of a recorded (packed) module, for a resumed run.
void rebindPacked(HalfRebinder &rebinder, const QuantizedWeight &w) {
  format::Unpacked u;
  std::string error;
  if (!format::unpack(w.encoding, *w.packed, w.n, w.k, u, error))
    throw Error("resuming: the recorded module '" + w.name + "': " + error);
  rebinder.rebind(w.name, w.encoding, u, w.n, w.k);
}

/// A layer's report entry from its groups' solves; rebinds each module in
/// f16 for the next layer's calibration and queues it for packing (its
/// packer index appended to `packed`). `line` gets " q_proj 0.12 ...".
json takeLayerResults(int64_t layer, std::vector<HessianGroup> &groups,
                      std::vector<GroupSolve> &solves,
                      const format::Encoding &enc, HalfRebinder &rebinder,
                      BackgroundPacker &packer, std::vector<size_t> &packed,
                      Counts &counts, double &deviceSeconds, std::string &line,
                      const std::function<void(const std::string &)> &warn) {
  json layerJson = {{"layer", layer}, {"groups", json::array()}};
  for (size_t gi = 0; gi < groups.size(); ++gi) {
    const HessianGroup &group = groups[gi];
    GptqSolveReport &report = solves[gi].report;
    std::vector<GptqModuleResult> &results = solves[gi].results;
    counts.fallbacks += report.fellBackToRTN ? int(results.size()) : 0;
    deviceSeconds = std::max(deviceSeconds, report.solveSeconds);
    for (const std::string &warning : report.warnings)
      warn(warning);
    json groupJson = {{"input", group.input},
                      {"k", group.hessian.columns()},
                      {"solve_ms", report.solveSeconds * 1e3},
                      {"total_ms", report.totalSeconds * 1e3},
                      {"attempts", report.attempts},
                      {"damping", report.dampFraction},
                      {"dead_channels", report.deadChannels.size()},
                      {"fell_back_to_rtn", report.fellBackToRTN},
                      {"modules", json::array()}};
    for (GptqModuleResult &r : results) {
      // Rebind the module as the next layers will see it (the solver did
      // where it could, on the device).
      if (!r.halfWritten)
        rebindOnHost(rebinder, r, enc);
      char buffer[96];
      std::snprintf(buffer, sizeof(buffer), " %s %.3g",
                    r.name.substr(r.name.rfind('.') + 1).c_str(), r.loss);
      line += buffer;
      groupJson["modules"].push_back(
          {{"name", r.name}, {"n", r.n}, {"loss", r.loss}});
      packed.push_back(packer.add({r.name, enc, r.n, r.k, std::move(r.weight),
                                   nullptr, std::move(r.codeBytes)}));
      ++counts.modules;
    }
    layerJson["groups"].push_back(groupJson);
  }
  return layerJson;
}

/// The modules and fallbacks a recorded layer's report entry counts.
void countRecorded(const json &layer, Counts &counts) {
  for (const json &group : layer.at("groups")) {
    const size_t modules = group.at("modules").size();
    counts.modules += modules;
    if (group.value("fell_back_to_rtn", false))
      counts.fallbacks += int(modules);
  }
}

/// Layer `layer`'s progress record, once its modules (each with its packer
/// index) are packed: a job for the recorder's thread, so that the layer
/// loop does not wait for the disk (at 8 x 256 tokens a Llama-3-8B layer
/// computes in 0.2 s and writes 0.14 GB).
std::function<void()>
recordWhenPacked(QuantizeProgress &progress, BackgroundPacker &packer,
                 int64_t layer,
                 std::vector<std::pair<QuantizeProgress::Module, size_t>> modules,
                 std::string report) {
  return [&progress, &packer, layer, modules = std::move(modules),
          report = std::move(report)]() mutable {
    std::vector<QuantizeProgress::Module> packed;
    for (auto &[module, index] : modules) {
      module.packed = packer.packed(index);
      packed.push_back(std::move(module));
    }
    progress.recordLayer(layer, packed, report);
  };
}

/// One layer after another: its Hessians from the stored inputs (collect),
/// its groups solved, its modules rebound in f16 and queued for packing,
/// and its quantized outputs stored for the next layer (propagate).
struct LayerQuantizer {
  LayerwiseCalibrator &calib;
  const ModelCheckpoint &checkpoint;
  Executor &executor;
  SolverPool &solvers;
  const GptqSolveOptions &solveOptions;
  bool hostWeights;
  const format::Encoding &enc;
  HalfRebinder &rebinder;
  BackgroundPacker &packer;
  Counts &counts;
  Totals &totals;
  std::function<void(int64_t, const std::string &)> warn;
  std::function<void()> progressDone;
  /// The last layer's losses, " q_proj 0.12 k_proj ...", for its line.
  std::string lossLine;

  /// Layer `l`'s report entry with its phases' seconds; `recorded` gets
  /// its modules with their packer indices (QuantizeProgress).
  json quantize(int64_t l,
                std::vector<std::pair<QuantizeProgress::Module, size_t>>
                    &recorded) {
    const auto layerStart = Clock::now();
    std::vector<HessianGroup> groups = calib.collect(l);
    const double collectSeconds = secondsSince(layerStart);
    const auto solveStart = Clock::now();
    std::vector<GroupSolve> solves = solveLayerGroups(
        l, groups, checkpoint, executor, solvers, solveOptions, hostWeights);
    const double solveSeconds = secondsSince(solveStart);
    for (const GroupSolve &solve : solves)
      for (const GptqModuleResult &r : solve.results)
        recorded.push_back({{r.name, r.n, r.k, nullptr}, 0});

    const auto rebindStart = Clock::now();
    double deviceSeconds = 0;
    lossLine.clear();
    std::vector<size_t> packed;
    json layerJson = takeLayerResults(
        l, groups, solves, enc, rebinder, packer, packed, counts,
        deviceSeconds, lossLine,
        [&](const std::string &warning) { warn(l, warning); });
    for (size_t i = 0; i < recorded.size(); ++i)
      recorded[i].second = packed[i];
    rebinder.finish();
    const double rebindSeconds = secondsSince(rebindStart);
    const auto propagateStart = Clock::now();
    calib.propagate(l);
    const double propagateSeconds = secondsSince(propagateStart);
    if (progressDone)
      progressDone();
    totals.solve += solveSeconds;
    totals.collect += collectSeconds;
    totals.rebind += rebindSeconds;
    totals.propagate += propagateSeconds;
    totals.deviceSolve += deviceSeconds;
    layerJson["seconds"] = secondsSince(layerStart);
    layerJson["collect_seconds"] = collectSeconds;
    layerJson["gptq_seconds"] = solveSeconds;
    layerJson["propagate_seconds"] = propagateSeconds;
    layerJson["rebind_seconds"] = rebindSeconds;
    layerJson["gptq_device_seconds"] = deviceSeconds;
    return layerJson;
  }
};

/// The checkpoint weights GPTQ quantizes: every linear of the plan's
/// layers (the decode artifact's others, such as lm_head, come from the
/// source checkpoint).
std::set<std::string> solvedModules(const PlanLayers &layers) {
  std::set<std::string> solved;
  for (const PlanLayer &layer : layers.layers)
    for (const LinearModule &linear : layer.linears)
      solved.insert(linear.weight);
  return solved;
}

/// Test-only: QFUSE_TEST_KILL_AFTER_LAYER=<l> kills the process (SIGKILL)
/// once layer l's progress is recorded, as an interruption would
/// (scripts/quantize-resume-check.sh). Read once per run; -1 without it.
int64_t killAfterLayer() {
  const char *env = std::getenv("QFUSE_TEST_KILL_AFTER_LAYER");
  return env && *env ? std::strtoll(env, nullptr, 10) : -1;
}

} // namespace

std::string quantizeModel(const QuantizeModelOptions &options) {
  const auto start = Clock::now();
  // Progress lines go to options.log (stdout when it is empty).
  auto say = [&](const char *fmt, ...) {
    char text[1024];
    va_list args;
    va_start(args, fmt);
    std::vsnprintf(text, sizeof(text), fmt, args);
    va_end(args);
    if (options.log)
      options.log(text);
    else
      std::fputs(text, stdout);
  };
  const CheckpointFormat outFormat = parseCheckpointFormat(options.format);
  const QuantizeArtifacts paths = resolveArtifacts(options, outFormat);
  const std::string &outDir = options.outDir;

  ModelCheckpoint checkpoint = ModelCheckpoint::open(options.modelDir);
  if (checkpoint.config().quantization != CheckpointQuantization::None)
    throw Error("'" + options.modelDir + "' is already quantized (" +
                checkpoint.config().quantMethod +
                "); GPTQ needs the fp16/bf16/f32 checkpoint");
  // Before any GPU work: an output that would be refused at the end.
  checkOutputDir(checkpoint, outDir, options.overwrite);
  // Every variant of each file is validated before the GPU is touched; the
  // device then picks the variant that runs (artifact sets, ArtifactSet.h).
  // The variants of one file share their weights' encodings.
  ArtifactSet fp16Set = ArtifactSet::load(paths.fp16);
  ArtifactSet blocksSet = ArtifactSet::load(paths.gptq);
  std::optional<ArtifactSet> decodeSet;
  if (!paths.decode.empty())
    decodeSet = ArtifactSet::load(paths.decode);
  const format::Encoding enc = gptqArtifactEncoding(blocksSet.variants()[0]);
  checkEncodingForFormat(outFormat, enc);
  if (decodeSet)
    for (const WeightSpec &w : decodeSet->variants()[0].weights)
      if (w.encodingAttr.isQuantized() && !(w.encodingAttr == enc))
        throw Error("the decode artifact '" + paths.decode + "' stores '" +
                    w.name + "' as '" + w.encoding +
                    "', the GPTQ artifact quantizes to '" +
                    format::printEncoding(enc) + "'");

  cuda::Context context(options.device);
  Artifact fp16 = takeVariantForDevice(std::move(fp16Set), context);
  Artifact blocks = takeVariantForDevice(std::move(blocksSet), context);
  std::optional<Artifact> decode;
  if (decodeSet)
    decode = takeVariantForDevice(std::move(*decodeSet), context);
  cuda::Stream stream;
  Executor executor(fp16, context);
  checkModelAgainstConfig(fp16, checkpoint);
  say("qfuse-quantize: %s -> %s (%s, %s) on %s, code for %s\n",
      options.modelDir.c_str(), outDir.c_str(),
      format::printEncoding(enc).c_str(),
      std::string(checkpointFormatName(outFormat)).c_str(),
      context.describe().c_str(), fp16.describeTarget().c_str());
  const double setupSeconds = secondsSince(start);
  LoadStats load = loadCheckpoint(executor, checkpoint);
  say("  fp16 weights bound in %.1f s\n", load.seconds);

  std::vector<std::vector<int32_t>> samples =
      calibrationSamples(options.calibration, options.seqLen,
                         checkpoint.config().vocabSize, options.seed);
  SolverPool solvers{blocks, context, enc, {}, {}};
  GptqSolveOptions solveOptions;
  solveOptions.dampFraction = options.damp;
  solveOptions.actOrder = options.actOrder;
  solveOptions.staticGroups = options.staticGroups;
  solveOptions.codesAsBytes = true;

  CalibrationOptions calibrationOptions;
  calibrationOptions.progress = options.progress;
  calibrationOptions.hessianRows = options.hessianRows;
  LayerwiseCalibrator calib(executor, stream.get(), calibrationOptions);
  const int64_t numLayers = calib.numLayers();
  QuantizeProgress progress(
      outDir,
      // The device's kind, not its ordinal: the same results on any H200.
      runIdentity(options, paths, checkpoint, enc, outFormat,
                  context.name() + ", " + context.chip()),
      numLayers, options.resume);
  const int64_t first = progress.layersDone();

  // Modules are packed on half the cores as their layer finishes, and
  // rebound in f16 for the next layer's calibration in place.
  BackgroundPacker packer(
      std::max(1u, std::thread::hardware_concurrency() / 2));
  HalfRebinder rebinder(executor);
  // The qfuse format is written as the packer finishes each module.
  std::optional<PackedCheckpointStream> output;
  if (decode)
    output.emplace(checkpoint, *decode, outDir, options.overwrite,
                   solvedModules(calib.layers()), packer);
  Counts counts;
  json layersJson = json::array();
  if (first > 0) {
    if (first < numLayers)
      say("  resuming at layer %lld of %lld from %s\n", (long long)first + 1,
          (long long)numLayers, progress.directory().c_str());
    else
      say("  resuming: all %lld layers are in %s; writing the checkpoint\n",
          (long long)numLayers, progress.directory().c_str());
    for (const std::string &report : progress.layerReports()) {
      layersJson.push_back(json::parse(report));
      countRecorded(layersJson.back(), counts);
    }
  } else if (options.resume) {
    say("  nothing to resume in %s; starting at layer 1\n",
        progress.directory().c_str());
  }

  auto t = Clock::now();
  if (first < numLayers)
    calib.begin(samples);
  // The recorded layers: their modules for the checkpoint and, before the
  // first layer left to quantize, through the calibration again with their
  // quantized weights, which gives that layer the inputs the interrupted
  // run gave it.
  for (int64_t l = 0; l < first; ++l) {
    std::vector<QuantizedWeight> modules = progress.loadLayer(l, enc);
    if (first < numLayers) {
      for (const QuantizedWeight &w : modules)
        rebindPacked(rebinder, w);
      rebinder.finish();
      calib.propagate(l);
    }
    for (QuantizedWeight &w : modules) {
      const std::string name = w.name;
      const size_t index = packer.add(std::move(w));
      if (output)
        output->add(name, index);
    }
  }
  if (options.progressDone)
    options.progressDone();
  const double captureSeconds = secondsSince(t);
  if (first < numLayers)
    say("  calibration: %lld samples, %lld tokens, chunks of %lld "
        "rows; layer inputs stored in %.1f MB (%.2f s)\n",
        (long long)calib.numSamples(), (long long)calib.tokens(),
        (long long)calib.chunkRows(), double(calib.storeBytes(first)) / 1e6,
        captureSeconds);

  detail::SerialJobs recorder;
  const int64_t killAfter = killAfterLayer();
  Totals totals;
  auto warn = [&](int64_t l, const std::string &warning) {
    say("  layer %lld: warning: %s\n", (long long)l, warning.c_str());
  };
  LayerQuantizer layers{calib,    checkpoint, executor,
                        solvers,  solveOptions, options.hostWeights,
                        enc,      rebinder,   packer,
                        counts,   totals,     warn,
                        options.progressDone, {}};
  const auto layersStart = Clock::now();
  for (int64_t l = first; l < numLayers; ++l) {
    std::vector<std::pair<QuantizeProgress::Module, size_t>> recorded;
    json layerJson = layers.quantize(l, recorded);
    const double eta = secondsSince(layersStart) / double(l + 1 - first) *
                       double(numLayers - l - 1);
    say("  layer %lld/%lld: %.2f s (collect %.2f, gptq %.2f [device %.3f], "
        "rebind %.2f, propagate %.2f), ETA %.0f s; loss%s\n",
        (long long)l + 1, (long long)numLayers,
        layerJson["seconds"].get<double>(),
        layerJson["collect_seconds"].get<double>(),
        layerJson["gptq_seconds"].get<double>(),
        layerJson["gptq_device_seconds"].get<double>(),
        layerJson["rebind_seconds"].get<double>(),
        layerJson["propagate_seconds"].get<double>(), eta,
        layers.lossLine.c_str());
    std::fflush(stdout);
    layersJson.push_back(layerJson);
    if (output)
      for (const auto &[module, index] : recorded)
        output->add(module.name, index);
    if (options.saveProgress) {
      recorder.add(recordWhenPacked(progress, packer, l, std::move(recorded),
                                    layerJson.dump()));
      if (l == killAfter) {
        recorder.wait();
        std::raise(SIGKILL);
      }
    }
  }
  recorder.wait();

  const double layersSeconds = secondsSince(layersStart);
  say("  writing %zu quantized modules (%s) to %s\n", counts.modules,
      std::string(checkpointFormatName(outFormat)).c_str(), outDir.c_str());
  t = Clock::now();
  packer.wait();
  const double packWaitSeconds = secondsSince(t);
  const auto streamStart = Clock::now();
  if (output)
    output->wait();
  const double streamWaitSeconds = secondsSince(streamStart);
  const std::vector<QuantizedWeight> quantized = packer.finish();
  CheckpointWriteSeconds written;
  if (output) {
    const auto commitStart = Clock::now();
    output->commit();
    written.files = secondsSince(commitStart);
  } else {
    writeQuantizedCheckpoint(checkpoint, quantized, outFormat, outDir,
                             nullptr, options.overwrite, &written);
  }
  try {
    progress.finish();
  } catch (const Error &e) { // the checkpoint is written either way
    say("  warning: %s\n", e.what());
  }
  const double writeSeconds = secondsSince(t);
  const double total = secondsSince(start);
  say("qfuse-quantize: %zu modules in %lld layers, %d fell back to "
      "round-to-nearest; GPTQ %.2f s, written in %.2f s, %.1f s in "
      "all -> %s\n",
      quantized.size(), (long long)numLayers, counts.fallbacks, totals.solve,
      writeSeconds, total, outDir.c_str());
  json doc = {{"tool", "qfuse-quantize"},
              {"command", options.command},
              {"date", utcNow()},
              {"device", context.describe()},
              {"encoding", format::printEncoding(enc)},
              {"format", std::string(checkpointFormatName(outFormat))},
              {"samples", calib.numSamples()},
              {"tokens", calib.tokens()},
              {"modules", quantized.size()},
              {"fell_back_to_rtn", counts.fallbacks},
              {"gptq_seconds", totals.solve},
              {"seconds", total},
              {"weights", options.hostWeights ? "host f32" : "device"},
              // Layers 0..resumed_layers-1 came from an interrupted run's
              // progress (their entries are that run's).
              {"resumed_layers", first},
              // Wall time of each phase of this run; the layers' parts are
              // sums over the layers ("gptq_device" is the device time of
              // the slowest group of each layer, a profile, not wall time).
              {"phases",
               {{"setup", setupSeconds},
                {"load", load.seconds},
                {"calibration_capture", captureSeconds},
                {"layers", layersSeconds},
                {"layers_collect", totals.collect},
                {"layers_gptq", totals.solve},
                {"layers_gptq_device", totals.deviceSolve},
                {"layers_rebind", totals.rebind},
                {"layers_propagate", totals.propagate},
                {"write", writeSeconds},
                {"write_pack_wait", packWaitSeconds},
                {"write_stream_wait", streamWaitSeconds},
                {"write_build", written.build},
                {"write_files", written.files}}},
              {"layers", layersJson}};
  return doc.dump(2);
}

} // namespace qfuse::runtime
