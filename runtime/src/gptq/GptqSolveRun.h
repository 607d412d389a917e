//===- GptqSolveRun.h - The state one GPTQ solve's steps share --*- C++ -*-===//
//
// Private to runtime/src/gptq: SolveRun holds the inputs and the state of
// one GptqSolver::solve call; its steps are defined in GptqSolveRun.cpp
// (preparation, factorization), GptqSolveBlocks.cpp (the block loop) and
// GptqSolveResults.cpp (the results, or the round-to-nearest fallback).
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_RUNTIME_SRC_GPTQ_GPTQSOLVERUN_H
#define QFUSE_RUNTIME_SRC_GPTQ_GPTQSOLVERUN_H

#include "GptqSolverImpl.h"

#include "qfuse/gptq/Grid.h"

#include <chrono>
#include <memory>
#include <sstream>
#include <utility>
#include <vector>

namespace qfuse::runtime::detail {

/// One call of GptqSolver::solve: its inputs, the state its steps share,
/// and the steps, in the order solve() runs them. Device buffers come from
/// the solver's workspace (kept across calls: a solver serves the same
/// group of every layer, so after the first layer nothing is allocated).
struct SolveRun {
  using Clock = std::chrono::steady_clock;

  SolveRun(GptqSolver::Impl &im, const format::Encoding &enc,
           const std::vector<GptqModuleInput> &modules, CUdeviceptr hessian,
           int64_t k, const GptqSolveOptions &options, CUstream stream,
           GptqSolveReport &report)
      : im(im), enc(enc), modules(modules), hessian(hessian), k(k),
        options(options), stream(stream), report(report) {}

  GptqSolver::Impl &im;
  const format::Encoding &enc;
  const std::vector<GptqModuleInput> &modules;
  const CUdeviceptr hessian;
  const int64_t k;
  const GptqSolveOptions &options;
  const CUstream stream;
  GptqSolveReport &report;
  const Clock::time_point wallStart = Clock::now();

  // checkShapes
  int64_t rows = 0, group = 0, groups = 0, numBlocks = 0;
  bool perChannel = false, dynamic = false, hasZeros = false;
  size_t numModules = 0;
  // setUpLibraries
  cublasHandle_t blas = nullptr;
  cuda::Event ePrepared, eFactored, eDone;
  // loadWeights, prepareHessian, makeGrids
  /// Every module's weight given on the device ("weights" holds W from
  /// loadWeights on); needHost: a host copy in `original` too; fitOnDevice:
  /// static or per-channel fits from the device's weights
  /// (GptqSolveFits.cpp); tablesOnDevice: the static groups' fit left the
  /// [groups, rows] tables there for expandStaticParams.
  bool onDevice = false, needHost = false, fitOnDevice = false,
       tablesOnDevice = false;
  std::vector<float> original;
  std::vector<float> diag;
  std::vector<int64_t> perm;
  double mean = 0;
  std::vector<std::unique_ptr<gptq::Grid>> grids;
  std::vector<int64_t> moduleOfRow;
  std::vector<float> rowGlobal;
  std::vector<gptq::GroupParams> staticParams;
  // allocate
  int64_t paramCount = 0;
  int lwork = 0;
  /// The block kernels' f16 values go to the modules' halfOut; the codes
  /// come back as bytes in column order (GptqSolveOptions::codesAsBytes).
  bool writeHalves = false, codesAsBytes = false;
  // factor
  std::ostringstream failures;
  // runBlocks
  std::vector<cuda::Event> marks;
  std::vector<std::pair<const char *, cuda::Event>> ticks;

  int64_t blockStart(int64_t b) const { return b * kBlockWidth; }
  int64_t blockWidth(int64_t b) const {
    return std::min(kBlockWidth, k - b * kBlockWidth);
  }
  /// The group of the column processed at position c.
  int64_t groupOfPosition(int64_t c) const {
    if (perChannel)
      return 0;
    return (dynamic ? c : perm[size_t(c)]) / group;
  }
  cuda::DeviceBuffer &buffer(const char *name) { return im.workspace[name]; }
  /// The workspace buffer `name`, at least `bytes` long (reallocated only
  /// when a call needs more than an earlier one).
  cuda::DeviceBuffer &buffer(const char *name, size_t bytes) {
    cuda::DeviceBuffer &b = im.workspace[name];
    if (b.size() < bytes)
      b = cuda::DeviceBuffer(std::max<size_t>(bytes, 16),
                             std::string("GPTQ ") + name);
    return b;
  }
  float *f32(const char *name) {
    return reinterpret_cast<float *>(buffer(name).ptr());
  }

  void checkShapes();
  void setUpLibraries();
  void loadWeights();
  void prepareHessian();
  void makeGrids();
  // GptqSolveFits.cpp: static groups' and per-channel parameters.
  bool canFitOnDevice() const;
  void fitStaticParams();
  void fitStaticOnDevice();
  void fitStaticOnHost();
  void fitPerChannelOnDevice();
  void checkStaticScales() const;
  void prepareGroupFit();
  void fitGroup(CUdeviceptr from, CUdeviceptr scalesOut, CUdeviceptr zerosOut);
  void allocate();
  // GptqSolvePermute.cpp: act-order and static groups' moves.
  void permuteHessian();
  void permuteWeights();
  bool gatherColumns(CUdeviceptr dst, CUdeviceptr src, int64_t rows,
                     int64_t srcCols, unsigned elementBytes,
                     const std::vector<int64_t> &from, const char *what);
  void expandStaticParams();
  bool expandByColumns(CUdeviceptr table, const std::vector<int64_t> &from,
                       CUdeviceptr scratch, CUdeviceptr out);
  void expandStaticParamsOnHost();
  bool factor();
  std::vector<GptqModuleResult> roundToNearest();
  void runBlocks();
  void blockUpdatesBefore(int64_t b);
  void fusedBlock(int64_t b);
  void copyHalves(int64_t b);
  void eagerBlock(int64_t b);
  void blockUpdatesAfter(int64_t b);
  std::vector<GptqModuleResult> collect();
  std::vector<bool>
  enqueueDevicePacking(CUdeviceptr inOrder,
                       std::vector<GptqModuleResult> &results,
                       CUdeviceptr &flags);
  void downloadCodeBytes(std::vector<GptqModuleResult> &results);
  void tick(const char *ended) {
    if (!options.profile)
      return;
    ticks.emplace_back(std::piecewise_construct, std::forward_as_tuple(ended),
                       std::forward_as_tuple());
    ticks.back().second.record(stream);
  }
};

} // namespace qfuse::runtime::detail

#endif // QFUSE_RUNTIME_SRC_GPTQ_GPTQSOLVERUN_H
