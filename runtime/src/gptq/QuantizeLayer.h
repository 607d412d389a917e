//===- QuantizeLayer.h - one layer of the GPTQ pipeline ---------*- C++ -*-===//
//
// One layer of quantizeModel's loop (LayerQuantizer): its Hessians
// collected, its groups solved, its modules rebound in f16 and queued for
// packing, its quantized outputs propagated. The groups of a layer (q/k/v,
// o, gate/up, down) are independent once their Hessians exist: each is
// solved on its own thread, stream and solver, so that one group's host
// work (weights in, codes out) overlaps another's device work. The solvers
// and streams are made on first use and kept for every layer (SolverPool).
// Private to QuantizeModel.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_RUNTIME_GPTQ_QUANTIZELAYER_H
#define QFUSE_RUNTIME_GPTQ_QUANTIZELAYER_H

#include "qfuse/format/Encoding.h"
#include "qfuse/runtime/artifact/Artifact.h"
#include "qfuse/runtime/checkpoint/ModelCheckpoint.h"
#include "qfuse/runtime/device/Cuda.h"
#include "qfuse/runtime/device/Executor.h"
#include "qfuse/runtime/gptq/BackgroundPacker.h"
#include "qfuse/runtime/gptq/Calibration.h"
#include "qfuse/runtime/gptq/GptqSolver.h"
#include "qfuse/runtime/gptq/HalfRebinder.h"
#include "qfuse/runtime/gptq/QuantizeProgress.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace qfuse::runtime {

/// One solver and stream per group of a layer, kept across layers.
struct SolverPool {
  const Artifact &blocks;
  const cuda::Context &context;
  format::Encoding encoding;
  std::vector<std::unique_ptr<GptqSolver>> solvers;
  std::vector<std::unique_ptr<cuda::Stream>> streams;
};

/// At least `count` slots in `pool` (empty ones null), so that threads can
/// fill their own slots at once (ensureSolver).
void ensureSolverSlots(SolverPool &pool, size_t count);
/// Slot `index` of `pool` (which exists) holds a solver and a stream.
void ensureSolver(SolverPool &pool, size_t index);
/// At least `count` solvers and streams in `pool`.
void ensureSolvers(SolverPool &pool, size_t count);

/// One throwaway solve per group of `layer` at its real sizes (zero
/// weights, identity Hessian), so that the first layer does not pay for
/// the solvers' first use (SolverWarmUp.cpp); runs the groups on threads
/// and returns the first error's text, or "" (the caller goes on: the
/// layer's own solve reports a real problem).
std::string warmSolvers(SolverPool &pool, const PlanLayer &layer,
                        const ModelCheckpoint &checkpoint,
                        const GptqSolveOptions &options);

/// warmSolvers for the first layer of `calibration`'s plan, on a thread
/// of its own: started before the checkpoint loads, finished before the
/// first solve (and on destruction).
class SolverWarmUp {
public:
  SolverWarmUp() = default;
  SolverWarmUp(const SolverWarmUp &) = delete;
  SolverWarmUp &operator=(const SolverWarmUp &) = delete;
  ~SolverWarmUp() { finish(); }

  void start(SolverPool &pool, const Artifact &calibration,
             const ModelCheckpoint &checkpoint, GptqSolveOptions options);
  /// Waits for it; the error's text, or "" (also when never started).
  std::string finish();

private:
  std::thread thread_;
  std::string error_;
};

/// What one group's solve gave.
struct GroupSolve {
  std::vector<GptqModuleResult> results;
  GptqSolveReport report;
};

/// A module's stored bf16 weight that the load left on the device
/// (Fp16Load::takeStored), taken over; an empty buffer where there is none.
using TakeStored = std::function<cuda::DeviceBuffer(const std::string &)>;

/// Solves every group of layer `layer` from its Hessian and the modules'
/// checkpoint weights (on the device as stored: the load's buffer from
/// `takeStored` where it has one, else uploaded; or f32 from the host with
/// `hostWeights`); throws "layer <l>, <input>: <error>" for the first
/// group (in order) that failed. The weights' device buffers are freed
/// before it returns.
std::vector<GroupSolve> solveLayerGroups(int64_t layer,
                                         std::vector<HessianGroup> &groups,
                                         const ModelCheckpoint &checkpoint,
                                         const Executor &executor,
                                         SolverPool &pool,
                                         const GptqSolveOptions &options,
                                         bool hostWeights,
                                         const TakeStored &takeStored = {});

/// Seconds of wall time since `start`, for the report's phases.
inline double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

/// Sums over the layers this run quantized, for the report's phases.
struct LayerTotals {
  double collect = 0, solve = 0, deviceSolve = 0, rebind = 0, propagate = 0;
};

/// What the run has quantized (resumed layers included).
struct QuantizedCounts {
  size_t modules = 0;
  int fallbacks = 0;
};

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
  QuantizedCounts &counts;
  LayerTotals &totals;
  std::function<void(int64_t, const std::string &)> warn;
  std::function<void()> progressDone;
  /// Called once a layer's Hessians are collected, before its solves: the
  /// run waits for the solvers' warm-up there, so that the first layer's
  /// collect runs beside it. May be empty.
  std::function<void()> beforeSolve;
  /// The last layer's losses, " q_proj 0.12 k_proj ...", for its line.
  std::string lossLine;
  /// The load's bf16 weights on the device (may be empty: none).
  TakeStored takeStored;

  /// Layer `l`'s report entry with its phases' seconds; `recorded` gets
  /// its modules with their packer indices (QuantizeProgress).
  nlohmann::json
  quantize(int64_t l,
           std::vector<std::pair<QuantizeProgress::Module, size_t>> &recorded);
};

} // namespace qfuse::runtime

#endif // QFUSE_RUNTIME_GPTQ_QUANTIZELAYER_H
