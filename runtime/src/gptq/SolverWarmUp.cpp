//===- SolverWarmUp.cpp - The GPTQ solvers made ready during the load -----===//
//
// A solver's first solve costs several times a later one: the cuBLAS and
// cuSOLVER handles, the workspaces, and the libraries' kernels for these
// sizes, loaded on first use. warmSolvers pays that while the checkpoint
// loads (which waits on the disk and the link, not on the GPU) with one
// throwaway solve per group of the first layer, at its real sizes: zero
// weights and an identity Hessian. Nothing of it reaches the results:
// every buffer a solve reads is written by that solve first (checked: the
// pipeline's codes and losses are bit-identical with and without it). It
// also leaves two page-locked download blocks per module in the pool.
// QFUSE_GPTQ_WARM_UP=0 turns it off (a profiling switch, docs/gptq.md).
//
//===----------------------------------------------------------------------===//

#include "QuantizeLayer.h"

#include "qfuse/runtime/Error.h"
#include "qfuse/runtime/device/PinnedBytesPool.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace qfuse::runtime {

void ensureSolverSlots(SolverPool &pool, size_t count) {
  if (pool.solvers.size() < count) {
    pool.solvers.resize(count);
    pool.streams.resize(count);
  }
}

void ensureSolver(SolverPool &pool, size_t index) {
  if (!pool.solvers[index])
    pool.solvers[index] =
        std::make_unique<GptqSolver>(pool.blocks, pool.context, pool.encoding);
  if (!pool.streams[index])
    pool.streams[index] = std::make_unique<cuda::Stream>();
}

void ensureSolvers(SolverPool &pool, size_t count) {
  ensureSolverSlots(pool, count);
  for (size_t i = 0; i < count; ++i)
    ensureSolver(pool, i);
}

namespace {

/// One throwaway solve of `group`'s modules on `stream`.
void warmGroup(const SharedInput &group, const ModelCheckpoint &checkpoint,
               GptqSolver &solver, const GptqSolveOptions &options,
               CUstream stream) {
  std::vector<cuda::DeviceBuffer> weights;
  std::vector<GptqModuleInput> inputs;
  int64_t k = 0;
  weights.reserve(group.modules.size());
  for (const LinearModule &module : group.modules) {
    const TensorInfo *info = checkpoint.find(module.weight + ".weight");
    if (!info || info->shape.size() != 2 || (k && info->shape[1] != k))
      return; // the layer's own solve reports it
    k = info->shape[1];
    GptqModuleInput in;
    in.name = module.weight;
    in.n = info->shape[0];
    weights.emplace_back(size_t(in.n * k) * 2, module.weight + " (warm-up)");
    weights.back().zero(stream);
    in.device = weights.back().ptr();
    in.deviceType = GptqDeviceWeight::F16;
    inputs.push_back(in);
  }
  if (inputs.empty())
    return;
  cuda::DeviceBuffer hessian(size_t(k * k) * 4, "identity (warm-up)");
  hessian.zero(stream);
  float one = 1.0f;
  unsigned bits;
  std::memcpy(&bits, &one, 4);
  QFUSE_CU_CTX(cuMemsetD2D32Async(hessian.ptr(), size_t(k + 1) * 4, bits, 1,
                                  size_t(k), stream),
               "the warm-up's identity Hessian");
  GptqSolveReport report;
  std::vector<GptqModuleResult> results =
      solver.solve(inputs, hessian.ptr(), k, options, stream, report);
  QFUSE_CU(cuStreamSynchronize(stream));
  // A second download block per module: the packer still holds one
  // layer's codes while the next layer downloads its own.
  if (options.codeDownloads) {
    std::vector<HostBytes> second;
    for (const GptqModuleResult &r : results)
      second.push_back(options.codeDownloads->take(r.codeBytes.size()));
  }
}

} // namespace

std::string warmSolvers(SolverPool &pool, const PlanLayer &layer,
                        const ModelCheckpoint &checkpoint,
                        const GptqSolveOptions &options) {
  std::vector<std::string> errors(layer.groups.size());
  ensureSolverSlots(pool, layer.groups.size());
  std::vector<std::thread> threads;
  for (size_t gi = 0; gi < layer.groups.size(); ++gi)
    threads.emplace_back([&, gi] {
      try {
        pool.context.makeCurrent();
        // Each group's thread makes its own solver (its executor's modules,
        // its cuBLAS and cuSOLVER handles): four at once, not one after
        // another in front of the solves.
        ensureSolver(pool, gi);
        warmGroup(layer.groups[gi], checkpoint, *pool.solvers[gi], options,
                  pool.streams[gi]->get());
      } catch (const std::exception &e) {
        errors[gi] = errorText(e);
      }
    });
  for (std::thread &thread : threads)
    thread.join();
  for (const std::string &error : errors)
    if (!error.empty())
      return error;
  return std::string();
}

void SolverWarmUp::start(SolverPool &pool, const Artifact &calibration,
                         const ModelCheckpoint &checkpoint,
                         GptqSolveOptions options) {
  if (const char *env = std::getenv("QFUSE_GPTQ_WARM_UP");
      env && std::string(env) == "0")
    return;
  int64_t rows = 0; // the calibration's chunk, as LayerwiseCalibrator's
  for (const Plan &plan : calibration.plans)
    rows = std::max(rows, plan.batch);
  PlanLayers layers = analyzePlanLayers(calibration, rows);
  if (layers.layers.empty())
    return;
  thread_ = std::thread([this, &pool, &checkpoint, options = std::move(options),
                         layer = std::move(layers.layers.front())] {
    error_ = warmSolvers(pool, layer, checkpoint, options);
  });
}

std::string SolverWarmUp::finish() {
  if (thread_.joinable())
    thread_.join();
  return error_;
}

} // namespace qfuse::runtime
