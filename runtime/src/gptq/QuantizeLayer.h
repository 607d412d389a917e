//===- QuantizeLayer.h - one layer's GPTQ groups at once --------*- C++ -*-===//
//
// The groups of a layer (q/k/v, o, gate/up, down) are independent once their
// Hessians exist: each is solved on its own thread, stream and solver, so
// that one group's host work (weights in, codes out) overlaps another's
// device work. The solvers and streams are made on first use and kept for
// every layer (SolverPool). Private to QuantizeModel.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_RUNTIME_GPTQ_QUANTIZELAYER_H
#define QFUSE_RUNTIME_GPTQ_QUANTIZELAYER_H

#include "qfuse/format/Encoding.h"
#include "qfuse/runtime/artifact/Artifact.h"
#include "qfuse/runtime/checkpoint/ModelCheckpoint.h"
#include "qfuse/runtime/device/Cuda.h"
#include "qfuse/runtime/device/Executor.h"
#include "qfuse/runtime/gptq/Calibration.h"
#include "qfuse/runtime/gptq/GptqSolver.h"

#include <memory>
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

/// What one group's solve gave.
struct GroupSolve {
  std::vector<GptqModuleResult> results;
  GptqSolveReport report;
};

/// Solves every group of layer `layer` from its Hessian and the modules'
/// checkpoint weights (on the device as stored, or f32 from the host with
/// `hostWeights`); throws "layer <l>, <input>: <error>" for the first
/// group (in order) that failed.
std::vector<GroupSolve> solveLayerGroups(int64_t layer,
                                         std::vector<HessianGroup> &groups,
                                         const ModelCheckpoint &checkpoint,
                                         const Executor &executor,
                                         SolverPool &pool,
                                         const GptqSolveOptions &options,
                                         bool hostWeights);

} // namespace qfuse::runtime

#endif // QFUSE_RUNTIME_GPTQ_QUANTIZELAYER_H
