//===- QuantizeLoad.cpp - the fp16 weights of a quantize run --------------===//

#include "QuantizeLoad.h"

#include "QuantizeLayer.h"

#include "qfuse/runtime/Error.h"
#include "qfuse/runtime/artifact/PlanLayers.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <utility>

namespace qfuse::runtime {
namespace {

/// Whether the fp16 weights load beside the layers: QFUSE_LOAD_OVERLAP=0
/// binds them all before calibration instead (the serial load, to compare
/// outputs and timings against).
bool loadOverlaps() {
  const char *env = std::getenv("QFUSE_LOAD_OVERLAP");
  return !(env && std::string(env) == "0");
}

/// Device bytes that stay free for the solvers and the calibration beside
/// the plan's weights and the bf16 copies kept for the solver: an eighth of
/// the device, at least 4 GiB.
uint64_t solverReserve(uint64_t total) {
  return std::max<uint64_t>(uint64_t(4) << 30, total / 8);
}

/// The bf16 modules whose stored bytes go to the device and stay until
/// their layer's solve (layers in order, as long as they fit beside the
/// plan's weights and solverReserve); the others round on the host as
/// before, so that a smaller GPU still runs.
StoredOnDevice storedModules(const Artifact &fp16, const PlanLayers &layers,
                             const DeviceHalfRound *halfRound,
                             const Fp16Load::Say &say) {
  StoredOnDevice stored;
  stored.round = halfRound;
  size_t free = 0, total = 0;
  QFUSE_CU(cuMemGetInfo(&free, &total));
  uint64_t planBytes = 0;
  for (const WeightSpec &w : fp16.weights)
    planBytes += uint64_t(w.n) * uint64_t(w.k) * 2;
  for (const TensorSpec &t : fp16.tensors)
    planBytes += t.numBytes();
  const uint64_t need = planBytes + solverReserve(total);
  uint64_t room = free > need ? free - need : 0;
  size_t modules = 0, kept = 0;
  for (const PlanLayer &layer : layers.layers)
    for (const LinearModule &linear : layer.linears) {
      ++modules;
      const std::vector<const WeightSpec *> w =
          fp16.weightsPackedFrom(linear.weight);
      const uint64_t bytes =
          w.empty() ? 0 : uint64_t(w.front()->n) * uint64_t(w.front()->k) * 2;
      if (w.empty() || bytes > room)
        continue;
      room -= bytes;
      stored.weights.insert(linear.weight);
      ++kept;
    }
  if (kept < modules && say) {
    char text[200];
    std::snprintf(text, sizeof(text),
                  "  bf16 weights: %zu of %zu modules kept on the device as "
                  "stored (the rest round on the host: %.1f GiB free of "
                  "%.1f)\n",
                  kept, modules, double(free) / double(1 << 30),
                  double(total) / double(1 << 30));
    say(text);
  }
  return stored;
}

} // namespace

void Fp16Load::start(Executor &executor, const cuda::Context &context,
                     const Artifact &fp16, const ModelCheckpoint &checkpoint,
                     Say log, const DeviceHalfRound *halfRound) {
  say_ = std::move(log);
  start_ = std::chrono::steady_clock::now();
  std::optional<PlanLayers> layers;
  if (loadOverlaps()) {
    int64_t batch = 0; // the calibrator's: the largest plan's
    for (const Plan &plan : fp16.plans)
      batch = std::max(batch, plan.batch);
    try {
      layers = analyzePlanLayers(fp16, batch);
    } catch (const Error &) {
      // Not a layered plan: loaded whole, and the calibrator says why.
    }
  }
  if (!layers) {
    if (halfRound && halfRound->any())
      say("  the load is serial: bf16 weights rounded to f16 on the host\n");
    stats = loadCheckpoint(executor, checkpoint);
    waitSeconds = firstLayerSeconds = stats.seconds;
    prologueReadySeconds = firstLayerReadySeconds = stats.seconds;
    say("  fp16 weights bound in %.1f s\n", stats.seconds);
    return;
  }
  // The embedding and the first layer on half the cores (the other half
  // pack and solve); the rest, made beside the layers, on a quarter of
  // them, so that it competes less with the run's own threads.
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  StoredOnDevice stored;
  if (halfRound && halfRound->any())
    stored = storedModules(fp16, *layers, halfRound, say_);
  background_.emplace(executor, context, checkpoint,
                      layerLoadStages(fp16, *layers),
                      LoadWorkers{std::max(1u, cores / 2),
                                  std::max(2u, cores / 4), /*firstStages=*/2},
                      BackgroundLoad::kPartElements, std::move(stored));
  overlapped = true;
}

void Fp16Load::bindPrologue() {
  if (background_)
    background_->bindThrough(0);
}

void Fp16Load::bindLayer(int64_t l) {
  if (!background_)
    return;
  background_->bindThrough(size_t(1 + l));
  if (firstLayerSeconds >= 0)
    return;
  firstLayerSeconds = secondsSince(start_);
  prologueReadySeconds = background_->readySeconds(0);
  firstLayerReadySeconds = background_->readySeconds(size_t(1 + l));
  say("  fp16 weights: layer %lld's bound in %.1f s; the rest bind beside "
      "the layers\n",
      (long long)l + 1, firstLayerSeconds);
}

void Fp16Load::finish() {
  if (!background_)
    return;
  stats = background_->finish();
  waitSeconds = background_->waitSeconds();
  background_.reset();
  if (firstLayerSeconds < 0) // no layer ran (all resumed)
    firstLayerSeconds = prologueReadySeconds = firstLayerReadySeconds =
        stats.seconds;
  say("  fp16 weights all bound in %.1f s, beside the layers (waited for "
      "%.2f s in all)\n",
      stats.seconds, waitSeconds);
}

cuda::DeviceBuffer Fp16Load::takeStored(const std::string &module) {
  if (!background_)
    return cuda::DeviceBuffer();
  cuda::DeviceBuffer buffer = background_->takeStored(module);
  roundedOnDevice += buffer.empty() ? 0 : 1;
  return buffer;
}

void Fp16Load::say(const char *fmt, ...) const {
  char text[1024];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(text, sizeof(text), fmt, args);
  va_end(args);
  say_(text);
}

} // namespace qfuse::runtime
