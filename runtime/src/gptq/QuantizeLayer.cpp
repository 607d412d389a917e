//===- QuantizeLayer.cpp - one layer of the GPTQ pipeline -----------------===//

#include "QuantizeLayer.h"

#include "qfuse/format/Packing.h"
#include "qfuse/runtime/Error.h"
#include "qfuse/runtime/checkpoint/WeightSources.h"

#include <cstdio>
#include <cstring>
#include <thread>

namespace qfuse::runtime {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

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
/// the calibration plan already reads (f16 checkpoints), the stored bf16
/// bytes the load already put there (`upload` holds them on entry: a bf16
/// checkpoint's overlapped load, QuantizeLoad.h), or the stored bf16/f32
/// bytes uploaded into `upload`. Other dtypes convert on the host.
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
    if (dtype != DType::BF16 || upload.size() != bytes) {
      upload = cuda::DeviceBuffer(bytes, name + " (as stored)");
      upload.upload(view.data, bytes);
    }
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

/// The plan's f16 buffer of `module` where the solver can write the
/// quantized weight for the next layer's calibration (HalfRebinder's
/// target); 0 where the plan holds none that large.
CUdeviceptr halfTarget(const Executor &executor, const std::string &module,
                       int64_t n, int64_t k) {
  const CUdeviceptr target = executor.componentPointer(module, format::kCodes);
  return target && executor.componentBytes(module, format::kCodes) >=
                       size_t(n * k) * 2
             ? target
             : 0;
}

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

/// A layer's report entry from its groups' solves; rebinds each module in
/// f16 for the next layer's calibration and queues it for packing (its
/// packer index appended to `packed`). `line` gets " q_proj 0.12 ...".
json takeLayerResults(int64_t layer, std::vector<HessianGroup> &groups,
                      std::vector<GroupSolve> &solves,
                      const format::Encoding &enc, HalfRebinder &rebinder,
                      BackgroundPacker &packer, std::vector<size_t> &packed,
                      QuantizedCounts &counts, double &deviceSeconds,
                      std::string &line,
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
                      {"prepare_ms", report.prepareSeconds * 1e3},
                      {"finish_ms", report.finishSeconds * 1e3},
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
                                   nullptr, std::move(r.codeBytes),
                                   std::move(r.packedCodes)}));
      ++counts.modules;
    }
    layerJson["groups"].push_back(groupJson);
  }
  return layerJson;
}

} // namespace

std::vector<GroupSolve> solveLayerGroups(int64_t layer,
                                         std::vector<HessianGroup> &groups,
                                         const ModelCheckpoint &checkpoint,
                                         const Executor &executor,
                                         SolverPool &pool,
                                         const GptqSolveOptions &options,
                                         bool hostWeights,
                                         const TakeStored &takeStored) {
  struct Work {
    std::vector<std::vector<float>> weights;
    std::vector<cuda::DeviceBuffer> uploads;
    std::vector<GptqModuleInput> inputs;
    GroupSolve solve;
    std::string error;
  };
  std::vector<Work> work(groups.size());
  // The load's bf16 buffers, taken here on the run's thread; freed with
  // `work` after the solves.
  for (size_t gi = 0; gi < groups.size(); ++gi)
    for (const std::string &module : groups[gi].modules)
      work[gi].uploads.push_back(!hostWeights && takeStored
                                     ? takeStored(module)
                                     : cuda::DeviceBuffer());
  ensureSolvers(pool, groups.size());
  std::vector<std::thread> threads;
  for (size_t gi = 0; gi < groups.size(); ++gi)
    threads.emplace_back([&, gi] {
      Work &job = work[gi];
      HessianGroup &group = groups[gi];
      try {
        pool.context.makeCurrent();
        const int64_t k = group.hessian.columns();
        // Reserved up front: inputs point into these.
        job.weights.reserve(group.modules.size());
        for (size_t m = 0; m < group.modules.size(); ++m) {
          const std::string &module = group.modules[m];
          int64_t n = 0, kk = 0;
          job.weights.emplace_back();
          if (hostWeights) {
            job.weights.back() = weightF32(checkpoint, module, n, kk);
            job.inputs.push_back({module, job.weights.back().data(), n});
          } else {
            job.inputs.push_back(deviceWeight(checkpoint, executor, module,
                                              kk, job.uploads[m],
                                              job.weights.back()));
          }
          if (kk != k)
            throw Error("'" + module + ".weight' has " + std::to_string(kk) +
                        " inputs, its Hessian " + std::to_string(k));
          job.inputs.back().halfOut =
              halfTarget(executor, module, job.inputs.back().n, k);
        }
        job.solve.results = pool.solvers[gi]->solve(
            job.inputs, group.hessian.matrix().ptr(), k, options,
            pool.streams[gi]->get(), job.solve.report);
      } catch (const std::exception &e) {
        job.error = errorText(e);
      }
    });
  for (std::thread &thread : threads)
    thread.join();
  std::vector<GroupSolve> out;
  for (size_t gi = 0; gi < groups.size(); ++gi) {
    if (!work[gi].error.empty())
      throw Error("layer " + std::to_string(layer) + ", " + groups[gi].input +
                  ": " + work[gi].error);
    out.push_back(std::move(work[gi].solve));
  }
  return out;
}

json LayerQuantizer::quantize(
    int64_t l,
    std::vector<std::pair<QuantizeProgress::Module, size_t>> &recorded) {
  const auto layerStart = Clock::now();
  std::vector<HessianGroup> groups = calib.collect(l);
  const double collectSeconds = secondsSince(layerStart);
  if (beforeSolve)
    beforeSolve();
  const auto solveStart = Clock::now();
  std::vector<GroupSolve> solves =
      solveLayerGroups(l, groups, checkpoint, executor, solvers, solveOptions,
                       hostWeights, takeStored);
  const double solveSeconds = secondsSince(solveStart);
  for (const GroupSolve &solve : solves)
    for (const GptqModuleResult &r : solve.results)
      recorded.push_back({{r.name, r.n, r.k, nullptr}, 0});

  const auto rebindStart = Clock::now();
  double deviceSeconds = 0;
  lossLine.clear();
  std::vector<size_t> packed;
  json layerJson = takeLayerResults(
      l, groups, solves, enc, rebinder, packer, packed, counts, deviceSeconds,
      lossLine, [&](const std::string &warning) { warn(l, warning); });
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

} // namespace qfuse::runtime
