//===- QuantizeModel.cpp - GPTQ of a whole model on the GPU ---------------===//
//
// The pipeline of docs/gptq.md ("The GPU pipeline"): calibration layer by
// layer through the model's fp16 plan (LayerwiseCalibrator), the groups of
// each layer solved at once (GptqSolver, a thread and stream each) from the
// checkpoint tensors on the device (the f16 ones the plan already holds, or
// the stored bf16/f32 bytes uploaded once), the quantized layer rebound in
// f16 in place before the next layer's calibration (HalfRebinder), its
// modules packed on worker threads meanwhile (BackgroundPacker), and the
// checkpoint written (writeQuantizedCheckpoint).
//
//===----------------------------------------------------------------------===//

#include "qfuse/runtime/gptq/QuantizeModel.h"

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
#include "qfuse/runtime/device/Executor.h"
#include "qfuse/runtime/gptq/GptqSolver.h"
#include "qfuse/runtime/checkpoint/ModelCheckpoint.h"
#include "qfuse/runtime/device/ModelLoader.h"
#include "qfuse/runtime/checkpoint/WeightSources.h"
#include "qfuse/runtime/checkpoint/QuantizedCheckpoint.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <thread>

namespace qfuse::runtime {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

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

/// The module's checkpoint weight on the device as stored: the f16 buffer
/// the calibration plan already reads (f16 checkpoints), or the stored
/// bf16/f32 bytes uploaded into `upload`. Other dtypes convert on the host.
GptqModuleInput deviceWeight(const ModelCheckpoint &checkpoint,
                             const Executor &executor,
                             const std::string &module, int64_t &k,
                             cuda::DeviceBuffer &upload,
                             std::vector<float> &hostFallback) {
  const std::string name = module + ".weight";
  TensorView view = checkpoint.view(name);
  if (view.info->shape.size() != 2)
    throw Error("'" + name + "' is not a matrix");
  GptqModuleInput in;
  in.name = module;
  in.n = view.info->shape[0];
  k = view.info->shape[1];
  const size_t count = size_t(in.n * k);
  const DType dtype = view.info->dtype;
  if (dtype == DType::F16) {
    const CUdeviceptr bound =
        executor.componentPointer(module, format::kCodes);
    if (bound && executor.componentBytes(module, format::kCodes) >= count * 2) {
      in.device = bound;
      in.deviceType = GptqDeviceWeight::F16;
      return in;
    }
  }
  if (dtype == DType::F16 || dtype == DType::BF16 || dtype == DType::F32) {
    const size_t bytes = count * (dtype == DType::F32 ? 4 : 2);
    if (view.size < bytes)
      throw Error("'" + name + "' holds " + std::to_string(view.size) +
                  " bytes, fewer than its shape needs");
    upload = cuda::DeviceBuffer(bytes, name + " (as stored)");
    upload.upload(view.data, bytes);
    in.device = upload.ptr();
    in.deviceType = dtype == DType::F16    ? GptqDeviceWeight::F16
                    : dtype == DType::BF16 ? GptqDeviceWeight::BF16
                                           : GptqDeviceWeight::F32;
    return in;
  }
  int64_t n = 0;
  hostFallback = weightF32(checkpoint, module, n, k);
  in.weight = hostFallback.data();
  return in;
}

std::string utcNow() {
  std::time_t now = std::time(nullptr);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return text;
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
  const std::string &modelDir = options.modelDir;
  const std::string &encodingName = options.encoding;
  const std::string &calibration = options.calibration;
  const std::string &outDir = options.outDir;
  const std::string &formatName = options.format;
  std::string fp16Artifact = options.fp16Artifact;
  std::string gptqArtifact = options.gptqArtifact;
  std::string decodeArtifact = options.decodeArtifact;
  const int64_t seqLen = options.seqLen;
  const double damp = options.damp;
  const bool actOrder = options.actOrder, staticGroups = options.staticGroups,
             overwrite = options.overwrite;
  const uint64_t seed = options.seed;
  const int device = options.device;
  if (modelDir.empty() || encodingName.empty() || calibration.empty() ||
      outDir.empty())
    throw Error("quantize: the model directory, encoding, calibration and "
                "output directory are all required");
  if (seqLen <= 0)
    throw Error("quantize: the sequence length must be positive, got " +
                std::to_string(seqLen));
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
  // Every variant of each file is validated before the GPU is touched; the
  // device then picks the variant that runs (artifact sets, ArtifactSet.h).
  // The variants of one file share their weights' encodings.
  ArtifactSet fp16Set = ArtifactSet::load(fp16Artifact);
  ArtifactSet blocksSet = ArtifactSet::load(gptqArtifact);
  std::optional<ArtifactSet> decodeSet;
  if (outFormat == CheckpointFormat::QfusePacked)
    decodeSet = ArtifactSet::load(decodeArtifact);
  const format::Encoding enc = gptqArtifactEncoding(blocksSet.variants()[0]);
  checkEncodingForFormat(outFormat, enc);
  if (decodeSet)
    for (const WeightSpec &w : decodeSet->variants()[0].weights)
      if (w.encodingAttr.isQuantized() && !(w.encodingAttr == enc))
        throw Error("the decode artifact '" + decodeArtifact +
                    "' stores '" + w.name + "' as '" + w.encoding +
                    "', the GPTQ artifact quantizes to '" +
                    format::printEncoding(enc) + "'");

  cuda::Context context(device);
  Artifact fp16 = takeVariantForDevice(std::move(fp16Set), context);
  Artifact blocks = takeVariantForDevice(std::move(blocksSet), context);
  std::optional<Artifact> decode;
  if (decodeSet)
    decode = takeVariantForDevice(std::move(*decodeSet), context);
  cuda::Stream stream;
  Executor executor(fp16, context);
  checkModelAgainstConfig(fp16, checkpoint);
  say("qfuse-quantize: %s -> %s (%s, %s) on %s, code for %s\n",
      modelDir.c_str(), outDir.c_str(), format::printEncoding(enc).c_str(),
      std::string(checkpointFormatName(outFormat)).c_str(),
      context.describe().c_str(), fp16.describeTarget().c_str());
  const double setupSeconds = secondsSince(start);
  LoadStats load = loadCheckpoint(executor, checkpoint);
  say("  fp16 weights bound in %.1f s\n", load.seconds);

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
  calibrationOptions.progress = options.progress;
  LayerwiseCalibrator calib(executor, stream.get(), calibrationOptions);
  auto t = Clock::now();
  calib.begin(samples);
  if (options.progressDone)
    options.progressDone();
  const double captureSeconds = secondsSince(t);
  say("  calibration: %lld samples, %lld tokens, chunks of %lld "
              "rows; layer inputs stored in %.1f MB (%.2f s)\n",
              (long long)calib.numSamples(), (long long)calib.tokens(),
              (long long)calib.chunkRows(),
              double(calib.storeBytes(0)) / 1e6, captureSeconds);

  // Modules are packed on half the cores as their layer finishes, and
  // rebound in f16 for the next layer's calibration in place.
  BackgroundPacker packer(
      std::max(1u, std::thread::hardware_concurrency() / 2));
  HalfRebinder rebinder(executor);
  size_t numQuantized = 0;
  json layersJson = json::array();
  int fallbacks = 0;
  double solveTotal = 0, collectTotal = 0, rebindTotal = 0,
         propagateTotal = 0, deviceSolveTotal = 0;
  const auto layersStart = Clock::now();
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
      std::vector<cuda::DeviceBuffer> uploads;
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
          // Reserved up front: inputs point into these.
          job.weights.reserve(group.modules.size());
          job.uploads.reserve(group.modules.size());
          for (const std::string &module : group.modules) {
            int64_t n = 0, kk = 0;
            job.weights.emplace_back();
            job.uploads.emplace_back();
            if (options.hostWeights) {
              job.weights.back() = weightF32(checkpoint, module, n, kk);
              job.inputs.push_back({module, job.weights.back().data(), n});
            } else {
              job.inputs.push_back(deviceWeight(checkpoint, executor, module,
                                                kk, job.uploads.back(),
                                                job.weights.back()));
            }
            if (kk != k)
              throw Error("'" + module + ".weight' has " +
                          std::to_string(kk) + " inputs, its Hessian " +
                          std::to_string(k));
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
    const auto rebindStart = Clock::now();
    double layerDeviceSolve = 0;
    for (size_t gi = 0; gi < groups.size(); ++gi) {
      HessianGroup &group = groups[gi];
      GptqSolveReport &report = work[gi].report;
      std::vector<GptqModuleResult> &results = work[gi].results;
      const int64_t k = group.hessian.columns();
      fallbacks += report.fellBackToRTN ? int(results.size()) : 0;
      layerDeviceSolve = std::max(layerDeviceSolve, report.solveSeconds);
      for (const std::string &warning : report.warnings)
        say("  layer %lld: warning: %s\n", (long long)l,
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
        rebinder.rebind(r.name, enc, r.weight, r.n, r.k);
        const std::string shortName = r.name.substr(r.name.rfind('.') + 1);
        char buffer[96];
        std::snprintf(buffer, sizeof(buffer), " %s %.3g", shortName.c_str(),
                      r.loss);
        line += buffer;
        groupJson["modules"].push_back(
            {{"name", r.name}, {"n", r.n}, {"loss", r.loss}});
        packer.add({r.name, enc, r.n, r.k, std::move(r.weight), nullptr});
        ++numQuantized;
      }
      layerJson["groups"].push_back(groupJson);
    }
    rebinder.finish();
    const double rebindSeconds = secondsSince(rebindStart);
    const auto propagateStart = Clock::now();
    calib.propagate(l);
    const double propagateSeconds = secondsSince(propagateStart);
    if (options.progressDone)
    options.progressDone();
    solveTotal += layerSolve;
    collectTotal += collectSeconds;
    rebindTotal += rebindSeconds;
    propagateTotal += propagateSeconds;
    deviceSolveTotal += layerDeviceSolve;
    const double layerSeconds = secondsSince(layerStart);
    const double eta = secondsSince(layersStart) / double(l + 1) *
                       double(calib.numLayers() - l - 1);
    say("  layer %lld/%lld: %.2f s (collect %.2f, gptq %.2f [device %.3f], "
                "rebind %.2f, propagate %.2f), ETA %.0f s; loss%s\n",
                (long long)l + 1, (long long)calib.numLayers(), layerSeconds,
                collectSeconds, layerSolve, layerDeviceSolve, rebindSeconds,
                propagateSeconds, eta, line.c_str());
    std::fflush(stdout);
    layerJson["seconds"] = layerSeconds;
    layerJson["collect_seconds"] = collectSeconds;
    layerJson["gptq_seconds"] = layerSolve;
    layerJson["propagate_seconds"] = propagateSeconds;
    layerJson["rebind_seconds"] = rebindSeconds;
    layerJson["gptq_device_seconds"] = layerDeviceSolve;
    layersJson.push_back(layerJson);
  }

  const double layersSeconds = secondsSince(layersStart);
  say("  writing %zu quantized modules (%s) to %s\n", numQuantized,
      std::string(checkpointFormatName(outFormat)).c_str(), outDir.c_str());
  t = Clock::now();
  std::vector<QuantizedWeight> quantized = packer.finish();
  const double packWaitSeconds = secondsSince(t);
  writeQuantizedCheckpoint(checkpoint, quantized, outFormat, outDir,
                           decode ? &*decode : nullptr, overwrite);
  const double writeSeconds = secondsSince(t);
  const double total = secondsSince(start);
  say("qfuse-quantize: %zu modules in %lld layers, %d fell back to "
              "round-to-nearest; GPTQ %.2f s, written in %.2f s, %.1f s in "
              "all -> %s\n",
              quantized.size(), (long long)calib.numLayers(), fallbacks,
              solveTotal, writeSeconds, total, outDir.c_str());
  json doc = {{"tool", "qfuse-quantize"},
              {"command", options.command},
              {"date", utcNow()},
              {"device", context.describe()},
              {"encoding", format::printEncoding(enc)},
              {"format", std::string(checkpointFormatName(outFormat))},
              {"samples", calib.numSamples()},
              {"tokens", calib.tokens()},
              {"modules", quantized.size()},
              {"fell_back_to_rtn", fallbacks},
              {"gptq_seconds", solveTotal},
              {"seconds", total},
              {"weights", options.hostWeights ? "host f32" : "device"},
              // Wall time of each phase; the layers' parts are sums over
              // the layers ("gptq_device" is the device time of the
              // slowest group of each layer, a profile, not wall time).
              {"phases",
               {{"setup", setupSeconds},
                {"load", load.seconds},
                {"calibration_capture", captureSeconds},
                {"layers", layersSeconds},
                {"layers_collect", collectTotal},
                {"layers_gptq", solveTotal},
                {"layers_gptq_device", deviceSolveTotal},
                {"layers_rebind", rebindTotal},
                {"layers_propagate", propagateTotal},
                {"write", writeSeconds},
                {"write_pack_wait", packWaitSeconds}}},
              {"layers", layersJson}};
  return doc.dump(2);
}

} // namespace qfuse::runtime
