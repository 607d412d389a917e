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
// end (writeQuantizedCheckpoint). quantizeModel runs it as the phases of
// ModelQuantizer: setup (the inputs checked first, QuantizeInputs.h), load,
// calibration start (and the replay of a resumed run's layers), the layer
// loop (LayerQuantizer, QuantizeLayer.h), the load's end, the write and the
// report. The load overlaps the layers (Fp16Load, QuantizeLoad.h).
//
//===----------------------------------------------------------------------===//

#include "qfuse/runtime/gptq/QuantizeModel.h"

#include "PackingKernels.h"
#include "QuantizeInputs.h"
#include "QuantizeLayer.h"
#include "QuantizeLoad.h"
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
#include "qfuse/runtime/device/PinnedBytesPool.h"
#include "qfuse/runtime/gptq/CalibrationSamples.h"
#include "qfuse/runtime/gptq/PackedCheckpointStream.h"
#include "qfuse/runtime/gptq/QuantizeProgress.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdarg>
#include <cstdlib>
#include <cstdio>
#include <ctime>
#include <functional>
#include <memory>
#include <set>
#include <optional>
#include <thread>

#include <unistd.h>

namespace qfuse::runtime {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

std::string utcNow() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

/// HalfRebinder::rebind of a recorded (packed) module, for a resumed run.
void rebindPacked(HalfRebinder &rebinder, const QuantizedWeight &w) {
  format::Unpacked u;
  std::string error;
  if (!format::unpack(w.encoding, *w.packed, w.n, w.k, u, error))
    throw Error("resuming: the recorded module '" + w.name + "': " + error);
  rebinder.rebind(w.name, w.encoding, u, w.n, w.k);
}

/// The modules and fallbacks a recorded layer's report entry counts.
void countRecorded(const json &layer, QuantizedCounts &counts) {
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

/// Page-locked bytes for the codes' downloads: a few layers of a large
/// model's codes, at most an eighth of the host's memory.
size_t codeDownloadCapacity() {
  const long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGESIZE);
  const size_t physical =
      pages > 0 && pageSize > 0 ? size_t(pages) * size_t(pageSize) : 0;
  return std::min<size_t>(size_t(4) << 30, physical / 8);
}

/// Test-only: QFUSE_TEST_KILL_AFTER_LAYER=<l> kills the process (SIGKILL)
/// once layer l's progress is recorded, as an interruption would
/// (scripts/quantize-resume-check.sh). Read once per run; -1 without it.
int64_t killAfterLayer() {
  const char *env = std::getenv("QFUSE_TEST_KILL_AFTER_LAYER");
  return env && *env ? std::strtoll(env, nullptr, 10) : -1;
}

/// The variant of `set` for `context`'s device, if there is a set.
std::optional<Artifact> takeVariantForDevice(std::optional<ArtifactSet> &set,
                                             const cuda::Context &context) {
  if (!set)
    return std::nullopt;
  return takeVariantForDevice(std::move(*set), context);
}

/// `calibration` checked against the checkpoint's config.json, before
/// anything is started from it.
Artifact checkedAgainst(Artifact calibration,
                        const ModelCheckpoint &checkpoint) {
  checkModelAgainstConfig(calibration, checkpoint);
  return calibration;
}

/// The solvers and what they solve with. Made before the calibration's
/// executor: their warm-up (SolverWarmUp) needs only the context, the two
/// artifacts and the checkpoint, and starts as soon as they exist, so that
/// it runs beside the rest of the setup as well as the load.
struct Solving {
  Solving(const QuantizeModelOptions &run, const CheckedInputs &in,
          const cuda::Context &context, const Artifact &blocks,
          const Artifact &calibration);

  SolverPool pool;
  PinnedBytesPool codeDownloads;
  std::string packedOn;
  std::unique_ptr<DeviceGather> packing; // null: packed on the host
  std::string widenedOn;
  std::unique_ptr<DeviceWiden> widen; // null: widened by cuBLAS
  GptqSolveOptions options;
  SolverWarmUp warmUp; // its thread reads the members above
  // The weights GPTQ leaves alone, rounded (made after the warm-up starts).
  std::unique_ptr<QuantizeAtLoad> rounding;
  // A bf16 checkpoint's modules rounded to f16 on the device (null: on the
  // host); where, "" for other checkpoints.
  std::unique_ptr<DeviceHalfRound> halfRound;
  std::string halfRoundOn;
};

Solving::Solving(const QuantizeModelOptions &run, const CheckedInputs &in,
                 const cuda::Context &context, const Artifact &blocks,
                 const Artifact &calibration)
    : pool{blocks, context, in.enc, {}, {}},
      codeDownloads(codeDownloadCapacity()),
      packing(gptqPackingKernels(run, context, packedOn)),
      widen(gptqWidenKernels(run, context, widenedOn)) {
  options.dampFraction = run.damp;
  options.actOrder = run.actOrder;
  options.staticGroups = run.staticGroups;
  options.hostPrepare = run.hostWeights;
  options.codesAsBytes = true;
  options.codeDownloads = &codeDownloads;
  options.gather = packing.get();
  options.widen = widen.get();
  if (const char *pack = std::getenv("QFUSE_PACK"))
    options.checkGather = std::string(pack) == "check";
  if (!run.hostWeights)
    warmUp.start(pool, calibration, in.checkpoint, options);
  rounding = gptqRoundingKernels(run, context);
  halfRound = gptqHalfRoundKernel(run, context, calibration, in.checkpoint,
                                  halfRoundOn);
}

/// One run of quantizeModel, a method per phase, called in this order.
/// The members are declared in the order the phases make them, so that a
/// run stopped by an error is taken down in the reverse order (the output
/// stream before the packer it reads, the executor before the context).
class ModelQuantizer {
public:
  /// Setup: the inputs checked (checkInputs), the device context, each
  /// artifact's variant for it, the solvers (their warm-up started) and
  /// the executor of the fp16 plan.
  explicit ModelQuantizer(const QuantizeModelOptions &options);
  /// The checkpoint's fp16 weights: bound to the executor (serial), or
  /// their background load started (Fp16Load::bindLayer binds each
  /// layer's).
  void load();
  /// The samples, the solvers, the calibrator, the progress (--resume),
  /// the packer, the rebinder and the streamed output; then the
  /// calibration up to the first layer left to quantize.
  void startCalibration();
  /// The layers left, one after another (LayerQuantizer), each recorded
  /// for --resume on a thread of its own.
  void quantizeLayers();
  /// The background load's last weights bound and its threads ended.
  void finishLoad();
  /// The checkpoint in place and the progress removed.
  void write();
  /// The closing line, and the report (the JSON of --json).
  std::string report() const;

private:
  /// A progress line to options.log (stdout when it is empty).
  void say(const char *fmt, ...) const __attribute__((format(printf, 2, 3)));
  /// The layers an interrupted run recorded: their modules for the
  /// checkpoint and, before the first layer left to quantize, through the
  /// calibration again with their quantized weights, which gives that layer
  /// the inputs the interrupted run gave it.
  void replayRecordedLayers();
  /// Waits for the solvers' warm-up, once (before the first solve, or after
  /// the loop when no layer was left to solve).
  void finishWarmUp();

  const QuantizeModelOptions &options_;
  const Clock::time_point start_ = Clock::now();
  CheckedInputs in_;
  cuda::Context context_;
  Artifact fp16_, blocks_;
  Solving solving_; // warmed up on a thread meanwhile
  std::optional<Artifact> decode_;
  cuda::Stream stream_;
  Executor executor_;
  double setupSeconds_ = 0;
  Fp16Load load_;
  // startCalibration: made after the load, in the order of the messages
  // and errors of a run.
  std::vector<std::vector<int32_t>> samples_;
  std::optional<LayerwiseCalibrator> calib_;
  int64_t numLayers_ = 0;
  std::optional<QuantizeProgress> progress_;
  int64_t first_ = 0; // the first layer left to quantize
  std::optional<BackgroundPacker> packer_;
  std::optional<HalfRebinder> rebinder_;
  std::optional<PackedCheckpointStream> output_;
  QuantizedCounts counts_;
  json layersJson_ = json::array();
  double captureSeconds_ = 0, warmWaitSeconds_ = 0;
  bool warmUpFinished_ = false;
  // quantizeLayers
  LayerTotals totals_;
  double layersSeconds_ = 0;
  // write
  std::vector<QuantizedWeight> quantized_;
  CheckpointWriteSeconds written_;
  double packWaitSeconds_ = 0, streamWaitSeconds_ = 0, writeSeconds_ = 0,
         packFinishSeconds_ = 0, progressFinishSeconds_ = 0;
};

ModelQuantizer::ModelQuantizer(const QuantizeModelOptions &options)
    : options_(options), in_(checkInputs(options)), context_(options.device),
      fp16_(checkedAgainst(takeVariantForDevice(std::move(in_.fp16), context_),
                           in_.checkpoint)),
      blocks_(takeVariantForDevice(std::move(in_.blocks), context_)),
      solving_(options, in_, context_, blocks_, fp16_),
      decode_(takeVariantForDevice(in_.decode, context_)),
      executor_(fp16_, context_) {
  say("qfuse-quantize: %s -> %s (%s, %s) on %s, code for %s\n",
      options_.modelDir.c_str(), options_.outDir.c_str(),
      format::printEncoding(in_.enc).c_str(),
      std::string(checkpointFormatName(in_.format)).c_str(),
      context_.describe().c_str(), fp16_.describeTarget().c_str());
  setupSeconds_ = secondsSince(start_);
}

void ModelQuantizer::say(const char *fmt, ...) const {
  char text[1024];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(text, sizeof(text), fmt, args);
  va_end(args);
  if (options_.log)
    options_.log(text);
  else
    std::fputs(text, stdout);
}

void ModelQuantizer::load() {
  say("  codes packed on %s\n", solving_.packedOn.c_str());
  say("  weights widened to f32 by %s\n", solving_.widenedOn.c_str());
  if (!solving_.halfRoundOn.empty())
    say("  bf16 weights rounded to f16 on %s\n",
        solving_.halfRoundOn.c_str());
  load_.start(executor_, context_, fp16_, in_.checkpoint,
              [this](const char *text) { say("%s", text); },
              solving_.halfRound.get());
}

void ModelQuantizer::finishLoad() { load_.finish(); }

void ModelQuantizer::startCalibration() {
  samples_ =
      calibrationSamples(options_.calibration, options_.seqLen,
                         in_.checkpoint.config().vocabSize, options_.seed);
  CalibrationOptions calibrationOptions;
  calibrationOptions.progress = options_.progress;
  calibrationOptions.hessianRows = options_.hessianRows;
  calib_.emplace(executor_, stream_.get(), calibrationOptions);
  numLayers_ = calib_->numLayers();
  progress_.emplace(
      options_.outDir,
      // The device's kind, not its ordinal: the same results on any H200.
      runIdentity(options_, in_.paths, in_.checkpoint, in_.enc, in_.format,
                  context_.name() + ", " + context_.chip()),
      numLayers_, options_.resume);
  first_ = progress_->layersDone();

  // Modules are packed on half the cores as their layer finishes, and
  // rebound in f16 for the next layer's calibration in place.
  packer_.emplace(std::max(1u, std::thread::hardware_concurrency() / 2));
  rebinder_.emplace(executor_);
  // The qfuse format is written as the packer finishes each module.
  if (decode_)
    output_.emplace(in_.checkpoint, *decode_, options_.outDir,
                    options_.overwrite, solvedModules(calib_->layers()),
                    *packer_, solving_.rounding->hook());
  if (first_ > 0) {
    if (first_ < numLayers_)
      say("  resuming at layer %lld of %lld from %s\n", (long long)first_ + 1,
          (long long)numLayers_, progress_->directory().c_str());
    else
      say("  resuming: all %lld layers are in %s; writing the checkpoint\n",
          (long long)numLayers_, progress_->directory().c_str());
    for (const std::string &report : progress_->layerReports()) {
      layersJson_.push_back(json::parse(report));
      countRecorded(layersJson_.back(), counts_);
    }
  } else if (options_.resume) {
    say("  nothing to resume in %s; starting at layer 1\n",
        progress_->directory().c_str());
  }

  const auto start = Clock::now();
  if (first_ < numLayers_) {
    load_.bindPrologue(); // the embedding
    calib_->begin(samples_);
  }
  replayRecordedLayers();
  if (options_.progressDone)
    options_.progressDone();
  captureSeconds_ = secondsSince(start);
  if (first_ < numLayers_)
    say("  calibration: %lld samples, %lld tokens, chunks of %lld "
        "rows; layer inputs stored in %.1f MB (%.2f s)\n",
        (long long)calib_->numSamples(), (long long)calib_->tokens(),
        (long long)calib_->chunkRows(),
        double(calib_->storeBytes(first_)) / 1e6, captureSeconds_);
}

void ModelQuantizer::replayRecordedLayers() {
  for (int64_t l = 0; l < first_; ++l) {
    std::vector<QuantizedWeight> modules = progress_->loadLayer(l, in_.enc);
    if (first_ < numLayers_) {
      // Its fp16 upload first: the recorded weights are written over it.
      load_.bindLayer(l);
      for (const QuantizedWeight &w : modules)
        rebindPacked(*rebinder_, w);
      rebinder_->finish();
      calib_->propagate(l);
    }
    for (QuantizedWeight &w : modules) {
      const std::string name = w.name;
      const size_t index = packer_->add(std::move(w));
      if (output_)
        output_->add(name, index);
    }
  }
}

void ModelQuantizer::finishWarmUp() {
  if (warmUpFinished_)
    return;
  warmUpFinished_ = true;
  const auto warmStart = Clock::now();
  const std::string warmError = solving_.warmUp.finish();
  warmWaitSeconds_ = secondsSince(warmStart);
  if (!warmError.empty())
    say("  note: the solvers' warm-up failed (%s); the first layer makes "
        "them ready\n",
        warmError.c_str());
}

void ModelQuantizer::quantizeLayers() {
  detail::SerialJobs recorder;
  const int64_t killAfter = killAfterLayer();
  auto warn = [this](int64_t l, const std::string &warning) {
    say("  layer %lld: warning: %s\n", (long long)l, warning.c_str());
  };
  LayerQuantizer layers{*calib_,
                        in_.checkpoint,
                        executor_,
                        solving_.pool,
                        solving_.options,
                        options_.hostWeights,
                        in_.enc,
                        *rebinder_,
                        *packer_,
                        counts_,
                        totals_,
                        warn,
                        options_.progressDone,
                        [this] { finishWarmUp(); },
                        {},
                        [this](const std::string &module) {
                          return load_.takeStored(module);
                        }};
  const auto layersStart = Clock::now();
  for (int64_t l = first_; l < numLayers_; ++l) {
    std::vector<std::pair<QuantizeProgress::Module, size_t>> recorded;
    load_.bindLayer(l);
    json layerJson = layers.quantize(l, recorded);
    const double eta = secondsSince(layersStart) / double(l + 1 - first_) *
                       double(numLayers_ - l - 1);
    say("  layer %lld/%lld: %.2f s (collect %.2f, gptq %.2f [device %.3f], "
        "rebind %.2f, propagate %.2f), ETA %.0f s; loss%s\n",
        (long long)l + 1, (long long)numLayers_,
        layerJson["seconds"].get<double>(),
        layerJson["collect_seconds"].get<double>(),
        layerJson["gptq_seconds"].get<double>(),
        layerJson["gptq_device_seconds"].get<double>(),
        layerJson["rebind_seconds"].get<double>(),
        layerJson["propagate_seconds"].get<double>(), eta,
        layers.lossLine.c_str());
    std::fflush(stdout);
    layersJson_.push_back(layerJson);
    if (output_)
      for (const auto &[module, index] : recorded)
        output_->add(module.name, index);
    if (options_.saveProgress) {
      recorder.add(recordWhenPacked(*progress_, *packer_, l,
                                    std::move(recorded), layerJson.dump()));
      if (l == killAfter) {
        recorder.wait();
        std::raise(SIGKILL);
      }
    }
  }
  recorder.wait();
  finishWarmUp(); // no layer solved (all resumed): its thread ends here
  layersSeconds_ = secondsSince(layersStart);
}

void ModelQuantizer::write() {
  say("  writing %zu quantized modules (%s) to %s\n", counts_.modules,
      std::string(checkpointFormatName(in_.format)).c_str(),
      options_.outDir.c_str());
  const auto start = Clock::now();
  packer_->wait();
  packWaitSeconds_ = secondsSince(start);
  const auto streamStart = Clock::now();
  if (output_) {
    output_->wait();
    say("  weights GPTQ leaves alone: %s\n",
        solving_.rounding->summary().c_str());
  }
  streamWaitSeconds_ = secondsSince(streamStart);
  const auto finishStart = Clock::now();
  quantized_ = packer_->finish();
  packFinishSeconds_ = secondsSince(finishStart);
  if (output_) {
    const auto commitStart = Clock::now();
    output_->commit();
    written_.files = secondsSince(commitStart);
  } else {
    writeQuantizedCheckpoint(in_.checkpoint, quantized_, in_.format,
                             options_.outDir, nullptr, options_.overwrite,
                             &written_);
  }
  const auto progressStart = Clock::now();
  try {
    progress_->finish();
  } catch (const Error &e) { // the checkpoint is written either way
    say("  warning: %s\n", e.what());
  }
  progressFinishSeconds_ = secondsSince(progressStart);
  writeSeconds_ = secondsSince(start);
}

std::string ModelQuantizer::report() const {
  const double total = secondsSince(start_);
  say("qfuse-quantize: %zu modules in %lld layers, %d fell back to "
      "round-to-nearest; GPTQ %.2f s, written in %.2f s, %.1f s in "
      "all -> %s\n",
      quantized_.size(), (long long)numLayers_, counts_.fallbacks,
      totals_.solve, writeSeconds_, total, options_.outDir.c_str());
  json doc = {{"tool", "qfuse-quantize"},
              {"command", options_.command},
              {"date", utcNow()},
              {"device", context_.describe()},
              {"encoding", format::printEncoding(in_.enc)},
              {"format", std::string(checkpointFormatName(in_.format))},
              {"samples", calib_->numSamples()},
              {"tokens", calib_->tokens()},
              {"modules", quantized_.size()},
              {"fell_back_to_rtn", counts_.fallbacks},
              {"gptq_seconds", totals_.solve},
              {"seconds", total},
              {"weights", options_.hostWeights ? "host f32" : "device"},
              {"source_weights_rounded", solving_.rounding->summary()},
              {"codes_packed_on", !solving_.packing ? "host"
                                  : solving_.options.checkGather
                                      ? "device, checked"
                                      : "device"},
              // Layers 0..resumed_layers-1 came from an interrupted run's
              // progress (their entries are that run's).
              {"resumed_layers", first_},
              // Whether the fp16 weights loaded beside the layers
              // (QFUSE_LOAD_OVERLAP=0: before them).
              {"load_overlapped", load_.overlapped},
              // bf16 modules the solver read from the load's buffers (their
              // f16 rounded on the device; 0: on the host).
              {"modules_rounded_on_device", load_.roundedOnDevice},
              // Wall time of each phase of this run; the layers' parts are
              // sums over the layers ("gptq_device" is the device time of
              // the slowest group of each layer, a profile, not wall time).
              {"phases",
               {{"setup", setupSeconds_},
                // The load's wall time, overlapped or not; how long
                // until the first layer's weights were bound, and how
                // long the run waited for weights in all (with the
                // overlap: calibration and the layers waiting on uploads).
                {"load", load_.stats.seconds},
                {"load_first_layer", load_.firstLayerSeconds},
                // When the stages were on the device, waited for or not.
                {"load_prologue_ready", load_.prologueReadySeconds},
                {"load_first_layer_ready", load_.firstLayerReadySeconds},
                {"load_wait", load_.waitSeconds},
                {"calibration_capture", captureSeconds_},
                {"solver_warm_up_wait", warmWaitSeconds_},
                {"layers", layersSeconds_},
                {"layers_collect", totals_.collect},
                {"layers_gptq", totals_.solve},
                {"layers_gptq_device", totals_.deviceSolve},
                {"layers_rebind", totals_.rebind},
                {"layers_propagate", totals_.propagate},
                {"write", writeSeconds_},
                {"write_pack_wait", packWaitSeconds_},
                {"write_stream_wait", streamWaitSeconds_},
                {"write_build", written_.build},
                {"write_files", written_.files},
                {"write_pack_finish", packFinishSeconds_},
                {"write_progress_removed", progressFinishSeconds_}}},
              {"layers", layersJson_}};
  return doc.dump(2);
}

} // namespace

std::string quantizeModel(const QuantizeModelOptions &options) {
  auto run = std::make_unique<ModelQuantizer>(options);
  run->load();
  run->startCalibration();
  run->quantizeLayers();
  run->finishLoad();
  run->write();
  std::string report = run->report();
  if (options.processExitsAfter)
    (void)run.release(); // the checkpoint is complete; the exit frees the rest
  return report;
}

} // namespace qfuse::runtime
