//===- GptqSolver.h - GPTQ of one Hessian's modules on the GPU --*- C++ -*-===//
//
// The GPU side of GPTQ (docs/gptq.md): given the Hessian of a
// layer input on the device and the modules that read that input (q/k/v, or
// gate/up, or one module alone), quantizes them together:
//
//   prepare   diag(H) read back; dead channels (H[i][i] = 1, weight column
//             0); act-order permutation (host); NVFP4: each module's global
//             scale, uploaded per row
//   factor    one cuSOLVER Cholesky (f32) of the damped Hessian with its
//             indices reversed (a negative-increment cublasScopy), which
//             gives Ut, upper, with H = Ut Ut^T and U = Ut^-1 the reference's
//             upper factor of H^-1 (K^3 / 3 flops instead of 4/3 K^3); a
//             failed pivot retries with f *= growth, and after the last
//             retry the modules fall back to round-to-nearest with a warning
//             (as gptq::prepareHessian)
//   blocks    the modules' rows stacked into one [rows, K] f32 matrix; per
//             block of 128 columns, left-looking: U_FF = Ut_FF^-1
//             (cublasStrsm), the earlier blocks' feedback as cuBLAS GEMMs
//             with Ut, then the compiler's qf.gptq_block_update kernel (one
//             launch for every module: same-shape work batched)
//
// docs/gptq.md ("The solver, step by step") derives the left-looking form.
// The kernels come from a GPTQ artifact (python3 -m qfuse compile-gptq):
// qf.gptq_block_update with dynamic rows, one plan per stacked row count,
// each launch naming its op and grid. The solver finds the launch whose rows,
// block width and mode (dynamic groups or static scales) it needs, and
// points its arguments at its own tiles (Executor::runSteps overrides).
//
// `eager` runs the same algorithm one operation per launch: per column, the
// same kernel on a one-column tile (static scales), then a cublasSger of the
// error into the rest of the block; groups are fitted by the dynamic kernel
// on a scratch copy. It is the baseline the fused path is measured against.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_RUNTIME_GPTQ_GPTQSOLVER_H
#define QFUSE_RUNTIME_GPTQ_GPTQSOLVER_H

#include "qfuse/format/Encoding.h"
#include "qfuse/format/Packing.h"
#include "qfuse/gptq/Gptq.h"
#include "qfuse/runtime/HostBytes.h"
#include "qfuse/runtime/artifact/Artifact.h"
#include "qfuse/runtime/device/Cuda.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace qfuse::runtime {

class Executor;
class PinnedBytesPool;
class DeviceGather;
class DeviceWiden;

struct GptqSolveOptions {
  /// Dampening: f * mean(diag(H)) added to the diagonal, f = dampFraction,
  /// then f *= dampGrowth for each of at most maxRetries retries.
  double dampFraction = 0.01;
  double dampGrowth = 10.0;
  int maxRetries = 2;
  /// Process columns by descending diag(H) (the encoding needs act_order
  /// unless staticGroups).
  bool actOrder = false;
  /// Fit every group up front on the original weights.
  bool staticGroups = false;
  /// After the last retry: round to nearest (true) or throw (false).
  bool fallbackToRTN = true;
  /// The per-column baseline instead of the fused block kernel.
  bool eager = false;
  /// act-order's permutations (H, W's columns, the codes back) and the
  /// static parameters' expansion on the host, as before they moved to the
  /// device: the reference the GPU tests compare the device's moves with.
  bool hostPrepare = false;
  /// FP32 emulated with BF16x9 tensor-core products (cuSOLVER and cuBLAS
  /// math modes) for the factorization and the lazy updates; ignored where
  /// the libraries refuse it.
  bool bf16x9 = false;
  /// Benchmark hooks (may be empty): called on the calling thread once the
  /// weights and buffers are on the device, before the first factorization,
  /// and once the device work is complete, before the results come back.
  /// Solves of independent groups on several threads line up their device
  /// phases with them.
  std::function<void()> onPrepared, onDeviceDone;
  /// Time every step of every block (GptqSolveReport::profileMs).
  bool profile = false;
  /// Results carry their codes as bytes (GptqModuleResult::codeBytes), one
  /// download per module, instead of widened into weight.codes, where the
  /// block kernel ran (and, under act-order, not hostPrepare: the codes
  /// go back to column order on the device).
  bool codesAsBytes = false;
  /// Where codesAsBytes downloads go: page-locked blocks reused across
  /// solves (may be null: fresh memory each time).
  PinnedBytesPool *codeDownloads = nullptr;
  /// With codesAsBytes: pack each module's codes into the row-major codes
  /// component on the device (qf_gather_fields, DeviceGather.h) and
  /// download that (GptqModuleResult::packedCodes), where a kernel takes
  /// the code width and the module's f16 weight was written (so nothing on
  /// the host needs the codes one by one). Null: the bytes come back.
  DeviceGather *gather = nullptr;
  /// With gather: download the code bytes too, so that the packer compares
  /// the device's codes component with format::packCodeBytes' (QFUSE_PACK=
  /// check).
  bool checkGather = false;
  /// The f16/bf16 -> f32 widening of device weights (DeviceWiden.h):
  /// every bit kept. Null, or without the weight's type: a cuBLAS product
  /// x * 1, exact but for -0, which becomes +0.
  const DeviceWiden *widen = nullptr;
};

/// The element type of a module's weight on the device.
enum class GptqDeviceWeight { F16, BF16, F32 };

/// One module reading the Hessian's input: its [n, K] weight, row-major
/// (Hugging Face's [out, in]), either f32 on the host (`weight`) or, as the
/// checkpoint stores it, on the device (`device`, of type `deviceType`),
/// where the solver widens it to f32 (GptqSolveOptions::widen) instead of a
/// host loop.
struct GptqModuleInput {
  std::string name;
  const float *weight = nullptr;
  int64_t n = 0;
  CUdeviceptr device = 0;
  GptqDeviceWeight deviceType = GptqDeviceWeight::F16;
  /// When set: where the quantized weight goes as f16, [n, K] row-major
  /// (format::dequantize rounded to f16), written on the device from the
  /// block kernel's values where the artifact's kernels have them and the
  /// columns keep their order (GptqModuleResult::halfWritten says so). It
  /// may be `device` itself: the weight is read before it is written.
  CUdeviceptr halfOut = 0;
};

struct GptqModuleResult {
  std::string name;
  int64_t n = 0, k = 0;
  /// What format::quantizeRTN produces: format::pack writes it. With
  /// `codeBytes`, everything but the codes.
  format::Unpacked weight;
  /// GptqSolveOptions::codesAsBytes: each logical code's low byte, [n, K]
  /// row-major (format::packCodeBytes); empty otherwise.
  HostBytes codeBytes;
  /// GptqSolveOptions::gather: the codes component packed on the device
  /// (format::packCodeBytes' bytes); codeBytes is then empty (unless
  /// checkGather); page-locked from GptqSolveOptions::codeDownloads where
  /// it has room.
  HostBytes packedCodes;
  /// The f16 weight was written to GptqModuleInput::halfOut.
  bool halfWritten = false;
  /// sum of 0.5 e^2 over the module's rows and columns (GPTQ's loss
  /// estimate, as gptq::GptqResult::loss); NaN after an RTN fallback.
  double loss = 0;
};

/// The reference's report (gptq::GptqReport: fallback, warnings, dead
/// channels, damping, attempts, permutation, modes) plus the GPU solve's
/// timings.
struct GptqSolveReport : gptq::GptqReport {
  /// The BF16x9 emulation was asked for and accepted.
  bool bf16x9 = false;
  /// The static parameters fitted without a host copy of the weights
  /// (weights on the device, no hostPrepare): static groups by the
  /// artifact's dynamic kernel, per channel by Grid::fit over each row's
  /// [min, max] from its qf.row_min_max kernel. False: fitted on the host
  /// from the rows (host inputs, hostPrepare, or an artifact without the
  /// kernel, such as a per-channel one compiled before qf.row_min_max).
  bool fitOnDevice = false;
  /// Every f16/bf16 device weight was widened to f32 by a
  /// GptqSolveOptions::widen kernel (every bit kept); false where any went
  /// through the cuBLAS product (-0 made +0) or the weights were on the
  /// host.
  bool exactWidening = false;
  /// Seconds. The solve proper is what runs on the device once the weights
  /// and the Hessian are there: from the first factorization to the last
  /// update (events on the stream; the factorization's pivot checks
  /// included). prepare and finish are host wall time around it.
  double prepareSeconds = 0; // diag, dead channels, permutation, uploads
  double solveSeconds = 0;   // factor + blocks + updates, on the device
  double factorSeconds = 0;  // cuSOLVER, retries included
  double blockSeconds = 0;   // block kernels (or eager column operations)
  double updateSeconds = 0;  // lazy cuBLAS updates and the loss dots
  double finishSeconds = 0;  // downloads and unpacking into results
  double totalSeconds = 0;   // wall time of solve()
  /// With GptqSolveOptions::profile: milliseconds per step of the block
  /// loop, summed over the blocks ("G = Z Ut", "column loop", ...).
  std::map<std::string, double> profileMs;
  /// One line for logs.
  std::string summary() const;
};

/// The grid a GPTQ artifact's kernels were compiled for (the "encoding" of
/// its first qf.gptq_block_update launch); throws when it has none.
format::Encoding gptqArtifactEncoding(const Artifact &blocks);

class GptqSolver {
public:
  /// `blocks` is the GPTQ artifact; its kernels must be for `encoding`
  /// (checked against each launch's "encoding"). Both `blocks` and
  /// `context` must outlive the solver.
  GptqSolver(const Artifact &blocks, const cuda::Context &context,
             const format::Encoding &encoding);
  ~GptqSolver();
  GptqSolver(const GptqSolver &) = delete;
  GptqSolver &operator=(const GptqSolver &) = delete;

  const format::Encoding &encoding() const { return encoding_; }
  /// Row counts the artifact has kernels for (its plan batches).
  std::vector<int64_t> rowCounts() const;

  /// Quantizes `modules` (all with the same K) against the symmetric [K, K]
  /// f32 Hessian at `hessian` on the device, which is overwritten. The sum
  /// of the modules' rows must be one of rowCounts(), K a multiple of the
  /// artifact's block width or covered by a narrower last-block kernel.
  /// Throws naming the module and the reason on any other shape.
  std::vector<GptqModuleResult>
  solve(const std::vector<GptqModuleInput> &modules, CUdeviceptr hessian,
        int64_t k, const GptqSolveOptions &options, CUstream stream,
        GptqSolveReport &report);

  /// The artifact's kernels, the library handles and the workspace
  /// (defined in GptqSolver.cpp).
  struct Impl;

private:
  std::unique_ptr<Impl> impl_;
  format::Encoding encoding_;
};

} // namespace qfuse::runtime

#endif // QFUSE_RUNTIME_GPTQ_GPTQSOLVER_H
