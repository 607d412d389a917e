//===- GptqLayerProblem.h - qfuse-gptq-layer's synthetic layers -*- C++ -*-===//
//
// The problems qfuse-gptq-layer solves: per group of modules sharing a
// Hessian, inputs with correlated channels, their Hessian on the device and
// random weights, all made from a seed so every pass sees the same problem;
// and the measures it compares solutions with.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_RUNTIME_TOOLS_GPTQLAYERPROBLEM_H
#define QFUSE_RUNTIME_TOOLS_GPTQLAYERPROBLEM_H

#include "qfuse/format/Encoding.h"
#include "qfuse/format/Packing.h"
#include "qfuse/runtime/device/Cuda.h"
#include "qfuse/runtime/gptq/GptqSolver.h"

#include <cstdint>
#include <string>
#include <vector>

namespace qfuse::tools {

/// Modules sharing one Hessian: their row counts and the common K.
struct GroupSpec {
  std::string name;
  std::vector<int64_t> rows;
  int64_t k = 0;
};

/// The correlated-input distribution of one K: fixed channel scales and
/// mixing, fresh samples per call.
struct InputModel {
  int64_t k = 0;
  static constexpr int64_t kRank = 16;
  std::vector<float> scale; // [K]
  std::vector<float> mix;   // [kRank, K]

  InputModel(int64_t k, uint64_t seed);

  /// X [t, K] row-major: z * scale + y * mix, on all cores.
  std::vector<float> sample(int64_t t, uint64_t seed) const;
};

/// One group's inputs: its input distribution, Hessian (and a working copy,
/// since the solver overwrites it) and random weights, made from the seed
/// and the group's index so that every pass sees the same problem.
struct GroupProblem {
  InputModel model;
  runtime::cuda::DeviceBuffer h, work;
  std::vector<std::vector<float>> weights;
  std::vector<runtime::GptqModuleInput> inputs;

  GroupProblem(const GroupSpec &g, size_t gi, uint64_t seed, int64_t tokens,
               int64_t dead, runtime::cuda::Cublas &blas, CUstream stream);

  /// The solver's Hessian argument, restored from h before each solve.
  CUdeviceptr freshHessian();
};

/// The fraction of codes `a` and `b` share (0 when their sizes differ).
double identicalFraction(const format::Unpacked &a, const format::Unpacked &b);

/// ||X (W - Q)^T||_F^2 / ||X W^T||_F^2 over the held-out rows.
double outputError(const format::Encoding &enc, const format::Unpacked &q,
                   const std::vector<float> &w, int64_t n, int64_t k,
                   const std::vector<float> &x, int64_t t);

} // namespace qfuse::tools

#endif // QFUSE_RUNTIME_TOOLS_GPTQLAYERPROBLEM_H
