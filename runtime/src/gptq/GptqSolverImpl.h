//===- GptqSolverImpl.h - the GPU solver's private parts -------*- C++ -*-===//
//
// Shared by GptqSolver.cpp (the artifact's kernels, the solver object),
// GptqSolveRun.cpp (one solve, step by step) and GptqDeviceWeights.cpp
// (the modules' weights on the device): the block width, the kernel
// lookup, the library handles and the workspace the solves reuse.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_RUNTIME_GPTQ_GPTQSOLVERIMPL_H
#define QFUSE_RUNTIME_GPTQ_GPTQSOLVERIMPL_H

#include "qfuse/runtime/gptq/GptqSolver.h"

#include "qfuse/runtime/Error.h"
#include "qfuse/runtime/device/Cuda.h"
#include "qfuse/runtime/device/Executor.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <sstream>
#include <string>
#include <tuple>

namespace qfuse::runtime {
namespace detail {

constexpr int64_t kBlockWidth = 128;

/// One qf.gptq_block_update launch of the artifact.
struct BlockKernel {
  size_t step = 0;
  /// kernel parameter name ("w", "u", "scales", "codes", ...) -> buffer.
  std::map<std::string, std::string> buffers;
  /// The kernel stores each code's value as f16 ("values"; GPTQ artifacts
  /// compiled before it do not).
  bool hasValues() const { return buffers.count("values") != 0; }
};

/// (rows, width, static) -> the launch.
using KernelKey = std::tuple<int64_t, int64_t, bool>;

/// One qf.row_min_max launch of the artifact (per-channel artifacts
/// compiled before it have none), by K: a tile of `rows` rows (the same
/// kernel in every plan; `batch` is one of them), its step there and its
/// "w" and "min_max" buffers.
struct RowMinMaxKernel {
  int64_t batch = 0, rows = 0;
  size_t step = 0;
  std::string w, minMax;
};

inline CUdeviceptr offset(CUdeviceptr base, int64_t bytes) {
  return base + static_cast<CUdeviceptr>(bytes);
}

/// Device-to-device copy of `height` rows of `widthBytes` between pitched
/// memory.
void copy2D(CUdeviceptr dst, size_t dstPitch, CUdeviceptr src,
            size_t srcPitch, size_t widthBytes, size_t height,
            CUstream stream, const char *what);

/// Column j of `src` (`count` columns of `elementBytes`, `height` rows,
/// pitched) into column to[j] of `dst`: one copy2D per run of consecutive
/// destinations (GptqSolvePermute.cpp).
void scatterColumns(CUdeviceptr dst, size_t dstPitch, CUdeviceptr src,
                    size_t srcPitch, size_t elementBytes, size_t height,
                    const int64_t *to, int64_t count, CUstream stream,
                    const char *what);

/// The module's device weight as f32 [n, K] at `dst`: a copy for f32; for
/// f16/bf16 `widen`'s kernel where it has the type (every bit kept), else
/// the [n*K, 1] x [1, 1] product with 1.0 accumulated in f32, exact but
/// for -0, which the sum from +0 makes +0. Returns whether every bit was
/// kept. `ones` holds 1.0 as f16 at byte 0 and as bf16 at byte 16.
bool widenToF32(cublasHandle_t blas, const DeviceWiden *widen,
                const GptqModuleInput &m, int64_t k, CUdeviceptr dst,
                CUstream stream, CUdeviceptr ones);

/// The module's weight as given, f32 on the host (`out` holds n * K).
void moduleWeightF32(cublasHandle_t blas, const DeviceWiden *widen,
                     const GptqModuleInput &m, int64_t k, float *out,
                     CUstream stream, CUdeviceptr ones);

/// gptq::nvfp4GlobalScale of `count` f32 values on the device: the largest
/// magnitude (cublasIsamax, the first of equals) is the one value it needs.
float deviceGlobalScale(cublasHandle_t blas, CUdeviceptr w, int64_t count,
                        CUstream stream);

} // namespace detail

struct GptqSolver::Impl {
  using BlockKernel = detail::BlockKernel;
  using KernelKey = detail::KernelKey;

  Impl(const Artifact &artifact, const cuda::Context &context)
      : artifact(artifact), executor(artifact, context) {
    // 1.0 as f16 (byte 0) and bf16 (byte 16), the factor widenToF32 uses.
    const uint16_t bits[16] = {0x3C00, 0, 0, 0, 0, 0, 0, 0,
                               0x3F80, 0, 0, 0, 0, 0, 0, 0};
    ones.upload(bits, sizeof(bits));
  }

  const Artifact &artifact;
  Executor executor;
  cuda::Cublas cublas;
  cuda::Cusolver cusolver;
  std::map<KernelKey, BlockKernel> kernels;
  std::map<int64_t, detail::RowMinMaxKernel> rowMinMax;
  cuda::DeviceBuffer ones{32, "GPTQ ones (f16, bf16)"};
  /// The solve's device buffers by name, kept across calls (SolveRun).
  std::map<std::string, cuda::DeviceBuffer> workspace;

  const BlockKernel &kernel(int64_t rows, int64_t width, bool isStatic) const {
    auto it = kernels.find({rows, width, isStatic});
    if (it == kernels.end()) {
      std::ostringstream os;
      os << "GPTQ: the artifact has no " << (isStatic ? "static" : "dynamic")
         << " block kernel of width " << width << " for " << rows
         << " rows; it has:";
      for (const auto &[key, k] : kernels)
        os << " " << (std::get<2>(key) ? "static" : "dynamic") << " b"
           << std::get<1>(key) << " r" << std::get<0>(key) << ";";
      os << " compile one for this model with `python3 -m qfuse "
            "compile-gptq --config config.json --encoding ...`";
      throw Error(os.str());
    }
    return it->second;
  }

  /// Launches the block kernel with every argument at caller memory; the
  /// values, where the caller does not want them, go to scratch.
  void launch(int64_t rows, int64_t width, bool isStatic,
              const std::map<std::string, CUdeviceptr> &args,
              CUstream stream) {
    const BlockKernel &k = kernel(rows, width, isStatic);
    std::map<std::string, CUdeviceptr> overrides;
    for (const auto &[param, buffer] : k.buffers) {
      auto it = args.find(param);
      if (it == args.end() && param == "values") {
        cuda::DeviceBuffer &scratch = workspace["unused values"];
        if (scratch.size() < size_t(rows * width * 2))
          scratch = cuda::DeviceBuffer(size_t(rows * width * 2),
                                       "GPTQ unused values");
        overrides[buffer] = scratch.ptr();
        continue;
      }
      if (it == args.end())
        throw Error("GPTQ: no pointer for block kernel parameter '" + param +
                    "'");
      overrides[buffer] = it->second;
    }
    executor.runSteps(rows, k.step, k.step + 1, stream, overrides);
  }

  /// Each row's [min, max] of the [rows, K] f32 at `w` into [rows, 2] at
  /// `minMax`, a tile of the kernel's rows at a time; the last tile ends at
  /// the last row, overlapping the one before (its rows get the same values
  /// again, in stream order). Needs the kernel of K and rows >= its tile.
  void launchRowMinMax(int64_t rows, int64_t k, CUdeviceptr w,
                       CUdeviceptr minMax, CUstream stream) {
    const detail::RowMinMaxKernel &rk = rowMinMax.at(k);
    for (int64_t r0 = 0; r0 < rows; r0 += rk.rows) {
      const int64_t first = std::min(r0, rows - rk.rows);
      executor.runSteps(rk.batch, rk.step, rk.step + 1, stream,
                        {{rk.w, detail::offset(w, first * k * 4)},
                         {rk.minMax, detail::offset(minMax, first * 8)}});
    }
  }
};

} // namespace qfuse::runtime

#endif // QFUSE_RUNTIME_GPTQ_GPTQSOLVERIMPL_H
