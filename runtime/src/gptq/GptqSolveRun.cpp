//===- GptqSolveRun.cpp - one GPTQ solve on the GPU, step by step ---------===//
//
// GptqSolver::solve as named steps over one shared state (SolveRun):
// shapes, libraries, weights, Hessian preparation, grids, buffers and the
// factorization here, then the blocks (GptqSolveBlocks.cpp) and the results
// (GptqSolveResults.cpp). The memory layouts are at the top of
// GptqSolver.cpp; the left-looking block form is derived in docs/gptq.md
// ("The solver, step by step").
//
//===----------------------------------------------------------------------===//

#include "GptqSolveRun.h"

#include "qfuse/gptq/Grid.h"
#include "qfuse/runtime/Error.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <sstream>

namespace qfuse::runtime {
using namespace detail;

void SolveRun::checkShapes() {
  if (modules.empty())
    throw Error("GPTQ: no module to quantize");
  if (k <= 0)
    throw Error("GPTQ: K must be positive, got " + std::to_string(k));
  for (const GptqModuleInput &m : modules) {
    if ((!m.weight && !m.device) || m.n <= 0)
      throw Error("GPTQ: module '" + m.name + "' has no weight rows");
    std::string error;
    if (!format::validate(enc, m.n, k, error))
      throw Error("GPTQ: module '" + m.name + "' [" + std::to_string(m.n) +
                  ", " + std::to_string(k) + "]: " + error);
    rows += m.n;
  }
  numModules = modules.size();
  perChannel = enc.isPerChannel();
  dynamic = !perChannel && !options.staticGroups;
  group = perChannel ? k : enc.groupSize;
  groups = format::numGroups(enc, k);
  hasZeros = enc.zeroPoint != format::ZeroPointKind::None;
  if (dynamic) {
    if (kBlockWidth % group != 0 || (k % kBlockWidth) % group != 0)
      throw Error("GPTQ on the GPU fits groups inside a block: group " +
                  std::to_string(group) + " must divide the block width " +
                  std::to_string(kBlockWidth) + " and K % " +
                  std::to_string(kBlockWidth) + " (K = " + std::to_string(k) +
                  "); use static groups");
    if (options.actOrder && !enc.actOrder && group < k)
      throw Error("act-order without static groups permutes the groups: the "
                  "encoding needs act_order to store g_idx (or use static "
                  "groups)");
  }
  if (k * k > std::numeric_limits<int>::max())
    throw Error("GPTQ: K = " + std::to_string(k) +
                " is too large for one cuBLAS copy of the Hessian");
  numBlocks = (k + kBlockWidth - 1) / kBlockWidth;
  // Every kernel needed, before any work (a clear error up front).
  for (int64_t b = 0; b < numBlocks; ++b)
    if (!options.eager)
      im.kernel(rows, blockWidth(b), !dynamic);
  if (options.eager) {
    im.kernel(rows, 1, true);
    if (dynamic)
      im.kernel(rows, group, false);
  }
}

void SolveRun::setUpLibraries() {
  im.cublas.setStream(stream);
  im.cusolver.setStream(stream);
  // Best effort: a library or device without the emulation keeps FP32.
  const bool emulated =
      options.bf16x9 &&
      cusolverDnSetMathMode(im.cusolver.get(),
                            CUSOLVER_FP32_EMULATED_BF16X9_MATH) ==
          CUSOLVER_STATUS_SUCCESS &&
      cublasSetMathMode(im.cublas.get(), CUBLAS_FP32_EMULATED_BF16X9_MATH) ==
          CUBLAS_STATUS_SUCCESS;
  if (!options.bf16x9) {
    cusolverDnSetMathMode(im.cusolver.get(), CUSOLVER_DEFAULT_MATH);
    cublasSetMathMode(im.cublas.get(), CUBLAS_DEFAULT_MATH);
  }
  report.bf16x9 = emulated;
  blas = im.cublas.get();
}

/// The stacked weights into "w". Modules given on the device are widened
/// to f32 there (widenToF32); a host copy exists only where the later
/// steps need one (host inputs, fits on the host: hostPrepare or no kernel
/// to fit with; act-order with hostPrepare).
void SolveRun::loadWeights() {
  onDevice = true;
  for (const GptqModuleInput &m : modules)
    onDevice = onDevice && m.device && !m.weight;
  fitOnDevice = canFitOnDevice();
  needHost = !onDevice || (!dynamic && !fitOnDevice) ||
             (options.actOrder && options.hostPrepare);
  cuda::DeviceBuffer &w = buffer("weights", size_t(rows * k) * 4);
  if (onDevice) {
    int64_t r0 = 0;
    report.exactWidening = true;
    for (const GptqModuleInput &m : modules) {
      report.exactWidening &=
          widenToF32(blas, options.widen, m, k, offset(w.ptr(), r0 * k * 4),
                     stream, im.ones.ptr());
      r0 += m.n;
    }
  }
  if (!needHost)
    return;
  original.resize(static_cast<size_t>(rows * k));
  if (onDevice) {
    QFUSE_CU(cuStreamSynchronize(stream));
    w.download(original.data(), original.size() * 4);
    return;
  }
  int64_t r0 = 0;
  for (const GptqModuleInput &m : modules) {
    if (m.weight)
      std::memcpy(original.data() + r0 * k, m.weight,
                  static_cast<size_t>(m.n * k) * sizeof(float));
    else
      moduleWeightF32(blas, options.widen, m, k, original.data() + r0 * k,
                      stream, im.ones.ptr());
    r0 += m.n;
  }
}

/// diag(H), dead channels, the act-order permutation, mean(diag(H)).
void SolveRun::prepareHessian() {
  cuda::DeviceBuffer &diagBuf = buffer("diag(H)", size_t(k) * 4);
  QFUSE_CUBLAS(cublasScopy(blas, int(k), reinterpret_cast<float *>(hessian),
                           int(k + 1), reinterpret_cast<float *>(diagBuf.ptr()),
                           1));
  QFUSE_CU(cuStreamSynchronize(stream));
  diag.resize(static_cast<size_t>(k));
  diagBuf.download(diag.data(), diag.size() * 4);
  const CUdeviceptr w = buffer("weights").ptr();
  for (int64_t i = 0; i < k; ++i) {
    if (diag[size_t(i)] != 0.0f)
      continue;
    report.deadChannels.push_back(i);
    diag[size_t(i)] = 1.0f;
    // 1.0f (0x3F800000) on the stream, ordered before the act-order moves
    // and the factorization that read it.
    QFUSE_CU(cuMemsetD32Async(offset(hessian, (i * k + i) * 4), 0x3F800000u,
                              1, stream));
    if (needHost)
      for (int64_t r = 0; r < rows; ++r)
        original[size_t(r * k + i)] = 0.0f;
    if (onDevice)
      QFUSE_CU(cuMemsetD2D32Async(offset(w, i * 4), size_t(k) * 4, 0u, 1,
                                  size_t(rows), stream));
  }
  if (!report.deadChannels.empty())
    report.warnings.push_back(std::to_string(report.deadChannels.size()) +
                              " dead channel(s) (H[i][i] = 0): their weights "
                              "are set to 0");
  perm.resize(static_cast<size_t>(k));
  std::iota(perm.begin(), perm.end(), int64_t(0));
  if (options.actOrder) {
    std::stable_sort(perm.begin(), perm.end(), [&](int64_t a, int64_t b) {
      return diag[size_t(a)] > diag[size_t(b)];
    });
    permuteHessian();
  }
  report.permutation = perm;
  double sum = 0;
  for (float d : diag)
    sum += double(d);
  mean = sum / double(k);
}

/// One grid per module: NVFP4's global scale is the module's own
/// (448 * 6 / amax over its dead-channel-zeroed weights, as the reference
/// computes it), so stacked modules differ; the kernel reads it per row.
/// Per channel and static groups: every group's parameters up front
/// (fitStaticParams, GptqSolveFits.cpp).
void SolveRun::makeGrids() {
  moduleOfRow.resize(static_cast<size_t>(rows));
  const CUdeviceptr w = buffer("weights").ptr();
  int64_t r0 = 0;
  for (size_t m = 0; m < numModules; ++m) {
    gptq::GridOptions gridOptions;
    if (enc.globalScale)
      gridOptions.globalScale =
          needHost ? gptq::nvfp4GlobalScale(original.data() + r0 * k,
                                            modules[m].n * k)
                   : deviceGlobalScale(blas, offset(w, r0 * k * 4),
                                       modules[m].n * k, stream);
    std::string error;
    grids.push_back(gptq::makeGrid(enc, gridOptions, error));
    if (!grids.back())
      throw Error("GPTQ: module '" + modules[m].name + "': " + error);
    for (int64_t r = r0; r < r0 + modules[m].n; ++r)
      moduleOfRow[size_t(r)] = int64_t(m);
    if (enc.globalScale)
      rowGlobal.insert(rowGlobal.end(), size_t(modules[m].n),
                       grids.back()->globalScale());
    r0 += modules[m].n;
  }
  if (!dynamic)
    fitStaticParams();
}

/// The device working set (see the layouts at the top), the static
/// parameters and global scales uploaded; everything the device phase uses
/// exists after this, so that the phase times only the solve.
void SolveRun::allocate() {
  // Modules on the device: "weights" holds W already (dead channels
  // zeroed there too).
  if (!onDevice)
    buffer("weights").upload(original.data(), original.size() * 4);
  if (options.actOrder)
    permuteWeights();
  const size_t errBytes = size_t(rows * kBlockWidth) * 4;
  buffer("codes", size_t(rows * k));
  // The fused kernel: values and code bytes can go where the caller wants
  // them without a host pass over the codes (act-order's columns put back
  // in their order on the device, unless hostPrepare).
  const bool inOrder =
      !options.eager && !(options.actOrder && options.hostPrepare);
  codesAsBytes = inOrder && options.codesAsBytes;
  const bool anyHalfOut =
      std::any_of(modules.begin(), modules.end(),
                  [](const GptqModuleInput &m) { return m.halfOut != 0; });
  writeHalves =
      inOrder && anyHalfOut &&
      im.kernel(rows, blockWidth(0), !dynamic).hasValues() &&
      im.kernel(rows, blockWidth(numBlocks - 1), !dynamic).hasValues();
  if (writeHalves)
    buffer("block values", size_t(rows * kBlockWidth) * 2);
  if (codesAsBytes)
    buffer("codes in order", size_t(rows * k));
  buffer("block errors", errBytes);
  if (options.eager) {
    buffer("eager error columns", errBytes);
    buffer("eager column", size_t(rows) * 4);
  } else {
    buffer("weight tile", errBytes);
  }
  buffer("U block", kBlockWidth * kBlockWidth * 4);
  paramCount = dynamic ? rows * (k / group + (k % group != 0)) : rows * k;
  buffer("scales", size_t(paramCount) * 4);
  if (hasZeros)
    buffer("zeros", size_t(paramCount) * 4);
  if (!dynamic)
    expandStaticParams();
  if (options.eager && dynamic)
    prepareGroupFit(); // the global scales too
  else if (enc.globalScale && !tablesOnDevice)
    buffer("global scales", rowGlobal.size() * 4)
        .upload(rowGlobal.data(), rowGlobal.size() * 4);
  buffer("loss", size_t(numBlocks) * numModules * 4)
      .zero(stream);
  buffer("Cholesky factor", size_t(k * k) * 4);
  buffer("cuSOLVER info", sizeof(int));
  {
    std::vector<float> o(static_cast<size_t>(k), 1.0f);
    buffer("diagonal ones", o.size() * 4).upload(o.data(), o.size() * 4);
  }
  QFUSE_CUSOLVER(cusolverDnSpotrf_bufferSize(
      im.cusolver.get(), CUBLAS_FILL_MODE_UPPER, int(k),
      f32("Cholesky factor"), int(k), &lwork));
  buffer("cuSOLVER workspace", size_t(std::max(lwork, 1)) * 4);
  buffer("Z = E U", size_t(rows * k) * 4);
  buffer("G", errBytes);
  buffer("P", errBytes);
  {
    std::vector<float> e(static_cast<size_t>(kBlockWidth * kBlockWidth), 0.0f);
    for (int64_t i = 0; i < kBlockWidth; ++i)
      e[size_t(i * kBlockWidth + i)] = 1.0f;
    buffer("block identity", e.size() * 4).upload(e.data(), e.size() * 4);
  }
  QFUSE_CU(cuStreamSynchronize(stream));
}

/// Factor, retried with more damping: one Cholesky of the reversed, damped
/// Hessian. With P the reversal of the K indices, P H P = L' L'^T (lower)
/// gives H = Ut Ut^T with Ut = P L' P upper, and the reference's U
/// (U^T U = H^-1, upper) is Ut^-1: the column loop needs only its
/// 128 x 128 diagonal blocks, the inverses of Ut's, and the updates between
/// blocks are triangular solves with Ut (below). So K^3 / 3 flops of
/// cuSOLVER instead of the reference's Cholesky, inverse and second
/// Cholesky (4/3 K^3). Reversing both indices of a K x K matrix reverses
/// its K^2 elements: one cublasScopy with a negative increment. On the
/// column-major buffer holding P H P, potrf(UPPER) makes R = L'^T, which
/// read row-major is L'; reversed back, the row-major view is Ut.
bool SolveRun::factor() {
  auto reverseInto = [&](float *dst, const float *src) {
    const cublasStatus_t status =
        cublasScopy(blas, int(k * k), src, 1, dst, -1);
    if (status != CUBLAS_STATUS_SUCCESS)
      throw Error(std::string("GPTQ: cuBLAS refused the negative-increment "
                              "copy that reverses the Hessian (") +
                  cublasGetStatusName(status) + ")");
  };
  float *fPtr = f32("Cholesky factor");
  float *hPtr = reinterpret_cast<float *>(hessian);
  int *infoPtr = reinterpret_cast<int *>(buffer("cuSOLVER info").ptr());
  double fraction = options.dampFraction;
  if (!(mean > 0) || !std::isfinite(mean)) {
    failures << "mean(diag(H)) = " << mean << " is not positive and finite";
    return false;
  }
  for (int attempt = 0; attempt <= std::max(options.maxRetries, 0);
       ++attempt, fraction *= options.dampGrowth) {
    report.attempts = attempt + 1;
    report.dampFraction = fraction;
    report.damp = fraction * mean;
    const float damp = float(fraction * mean);
    reverseInto(fPtr, hPtr);
    // The reversal keeps the diagonal on the diagonal.
    QFUSE_CUBLAS(cublasSaxpy(blas, int(k), &damp, f32("diagonal ones"), 1, fPtr,
                             int(k + 1)));
    QFUSE_CUSOLVER(cusolverDnSpotrf(im.cusolver.get(), CUBLAS_FILL_MODE_UPPER,
                                    int(k), fPtr, int(k),
                                    f32("cuSOLVER workspace"), lwork,
                                    infoPtr));
    int pivot = 0;
    QFUSE_CU(cuStreamSynchronize(stream));
    buffer("cuSOLVER info").download(&pivot, sizeof(pivot));
    if (pivot == 0) {
      // Ut into the Hessian's buffer, which is not needed any more.
      reverseInto(hPtr, fPtr);
      return true;
    }
    if (attempt > 0)
      failures << "; ";
    // potrf's pivot counts in the reversed order.
    failures << "damping " << fraction
             << " x mean(diag(H)): cholesky failed at column " << (k - pivot);
  }
  return false;
}

std::vector<GptqModuleResult>
GptqSolver::solve(const std::vector<GptqModuleInput> &modules,
                  CUdeviceptr hessian, int64_t k,
                  const GptqSolveOptions &options, CUstream stream,
                  GptqSolveReport &report) {
  report = GptqSolveReport();
  report.actOrder = options.actOrder;
  report.staticGroups = options.staticGroups;
  report.blockSize = kBlockWidth;
  SolveRun run(*impl_, encoding_, modules, hessian, k, options, stream,
               report);
  run.checkShapes();
  run.setUpLibraries();
  run.loadWeights();
  run.prepareHessian();
  run.makeGrids();
  run.allocate();
  report.prepareSeconds =
      std::chrono::duration<double>(SolveRun::Clock::now() - run.wallStart)
          .count();
  if (options.onPrepared)
    options.onPrepared();
  run.ePrepared.record(stream);
  const bool factored = run.factor();
  run.eFactored.record(stream);
  if (!factored)
    return run.roundToNearest();
  run.runBlocks();
  // The device work ends here (recorded before the host allocates the
  // result buffers, which takes tens of milliseconds for 100 M codes and
  // must not count as device time).
  run.eDone.record(stream);
  std::vector<GptqModuleResult> results = run.collect();

  report.factorSeconds =
      cuda::Event::elapsedMs(run.ePrepared, run.eFactored) / 1e3;
  report.solveSeconds = cuda::Event::elapsedMs(run.ePrepared, run.eDone) / 1e3;
  // Blocks: from the tile to E (kernel, or the eager column operations);
  // updates: the rest (U_FF, G, P, Z and the loss dots).
  for (int64_t b = 0; b < run.numBlocks; ++b)
    report.blockSeconds +=
        cuda::Event::elapsedMs(run.marks[size_t(3 * b + 1)],
                               run.marks[size_t(3 * b + 2)]) /
        1e3;
  report.updateSeconds =
      report.solveSeconds - report.factorSeconds - report.blockSeconds;
  for (size_t i = 1; i < run.ticks.size(); ++i)
    report.profileMs[run.ticks[i].first] += cuda::Event::elapsedMs(
        run.ticks[i - 1].second, run.ticks[i].second);
  report.totalSeconds =
      std::chrono::duration<double>(SolveRun::Clock::now() - run.wallStart)
          .count();
  return results;
}

} // namespace qfuse::runtime
