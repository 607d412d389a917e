//===- GptqSolveRun.cpp - one GPTQ solve on the GPU, step by step ---------===//
//
// GptqSolver::solve as named steps over one shared state (SolveRun):
// shapes, libraries, weights, Hessian preparation, grids, buffers, the
// factorization, the blocks and the results. The memory layouts are at the
// top of GptqSolver.cpp; the left-looking block form is derived in
// docs/gptq.md ("The solver, step by step").
//
//===----------------------------------------------------------------------===//

#include "GptqSolverImpl.h"

#include "ParallelRows.h"

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

namespace {

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
  bool needHost = false;
  std::vector<float> original;
  std::vector<float> diag;
  std::vector<int64_t> perm;
  double mean = 0;
  std::vector<std::unique_ptr<gptq::Grid>> grids;
  std::vector<float> rowGlobal;
  std::vector<gptq::GroupParams> staticParams;
  // allocate
  int64_t paramCount = 0;
  int lwork = 0;
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
  void allocate();
  bool factor();
  std::vector<GptqModuleResult> roundToNearest();
  void runBlocks();
  void blockUpdatesBefore(int64_t b);
  void fusedBlock(int64_t b);
  void eagerBlock(int64_t b);
  void blockUpdatesAfter(int64_t b);
  std::vector<GptqModuleResult> collect();
  void tick(const char *ended) {
    if (!options.profile)
      return;
    ticks.emplace_back(std::piecewise_construct, std::forward_as_tuple(ended),
                       std::forward_as_tuple());
    ticks.back().second.record(stream);
  }
};

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
/// to f32 there (exact: x * 1.0f); a host copy exists only where the later
/// steps need one (host inputs, static groups or per-channel fits,
/// act-order).
void SolveRun::loadWeights() {
  bool onDevice = true;
  for (const GptqModuleInput &m : modules)
    onDevice = onDevice && m.device && !m.weight;
  needHost = !onDevice || !dynamic || options.actOrder;
  cuda::DeviceBuffer &w = buffer("weights", size_t(rows * k) * 4);
  if (onDevice) {
    int64_t r0 = 0;
    for (const GptqModuleInput &m : modules) {
      widenToF32(blas, m, k, offset(w.ptr(), r0 * k * 4), stream,
                 im.ones.ptr());
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
      moduleWeightF32(blas, m, k, original.data() + r0 * k, stream,
                      im.ones.ptr());
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
  const float one = 1.0f;
  const CUdeviceptr w = buffer("weights").ptr();
  for (int64_t i = 0; i < k; ++i) {
    if (diag[size_t(i)] != 0.0f)
      continue;
    report.deadChannels.push_back(i);
    diag[size_t(i)] = 1.0f;
    QFUSE_CU(cuMemcpyHtoD(offset(hessian, (i * k + i) * 4), &one, 4));
    if (needHost)
      for (int64_t r = 0; r < rows; ++r)
        original[size_t(r * k + i)] = 0.0f;
    else
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
    // H -> P^T H P on the host: act-order is the rarer, slower path.
    std::vector<float> h(static_cast<size_t>(k * k)), p(h.size());
    QFUSE_CU(cuMemcpyDtoH(h.data(), hessian, h.size() * 4));
    for (int64_t i = 0; i < k; ++i)
      for (int64_t j = 0; j < k; ++j)
        p[size_t(i * k + j)] = h[size_t(perm[i] * k + perm[j])];
    QFUSE_CU(cuMemcpyHtoD(hessian, p.data(), p.size() * 4));
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
/// Per channel and static groups: every group's parameters up front, in
/// the original column order, on the dead-channel-zeroed weights.
void SolveRun::makeGrids() {
  std::vector<int64_t> moduleOfRow(static_cast<size_t>(rows));
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
  if (dynamic)
    return;
  staticParams.resize(static_cast<size_t>(rows * groups));
  detail::parallelRows(rows, [&](int64_t first, int64_t last) {
    for (int64_t r = first; r < last; ++r) {
      const gptq::Grid &grid = *grids[size_t(moduleOfRow[size_t(r)])];
      for (int64_t g = 0; g < groups; ++g) {
        std::string error;
        const int64_t count = std::min(group, k - g * group);
        // A scale that does not fit its type is caught below: fit leaves a
        // non-finite scale, which the check after the loop reports
        // (threads cannot throw).
        if (!grid.fit(original.data() + r * k + g * group, count,
                      staticParams[size_t(r * groups + g)], error))
          staticParams[size_t(r * groups + g)].scale =
              std::numeric_limits<float>::quiet_NaN();
      }
    }
  });
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t g = 0; g < groups; ++g)
      if (std::isnan(staticParams[size_t(r * groups + g)].scale))
        throw Error("GPTQ: row " + std::to_string(r) + ", group " +
                    std::to_string(g) +
                    ": the group's scale does not fit the scale type");
}

/// The device working set (see the layouts at the top), the static
/// parameters and global scales uploaded; everything the device phase uses
/// exists after this, so that the phase times only the solve.
void SolveRun::allocate() {
  cuda::DeviceBuffer &w = buffer("weights");
  if (needHost && options.actOrder) {
    std::vector<float> work(original.size());
    detail::parallelRows(rows, [&](int64_t first, int64_t last) {
      for (int64_t r = first; r < last; ++r)
        for (int64_t c = 0; c < k; ++c)
          work[size_t(r * k + c)] = original[size_t(r * k + perm[size_t(c)])];
    });
    w.upload(work.data(), work.size() * 4);
  } else if (needHost) {
    w.upload(original.data(), original.size() * 4);
  }
  const size_t errBytes = size_t(rows * kBlockWidth) * 4;
  buffer("codes", size_t(rows * k));
  buffer("block errors", errBytes);
  if (options.eager) {
    buffer("eager error columns", errBytes);
    buffer("eager column", size_t(rows) * 4);
  } else {
    buffer("weight tile", errBytes);
  }
  buffer("U block", kBlockWidth * kBlockWidth * 4);
  paramCount = dynamic ? rows * (k / group + (k % group != 0)) : rows * k;
  cuda::DeviceBuffer &scales = buffer("scales", size_t(paramCount) * 4);
  if (hasZeros)
    buffer("zeros", size_t(paramCount) * 4);
  if (!dynamic) {
    std::vector<float> s(static_cast<size_t>(paramCount)),
        z(hasZeros ? s.size() : 0);
    for (int64_t c = 0; c < k; ++c) {
      const int64_t b = c / kBlockWidth, i1 = blockStart(b),
                    wb = blockWidth(b);
      for (int64_t r = 0; r < rows; ++r) {
        const size_t at = options.eager
                              ? size_t(c * rows + r)
                              : size_t(rows * i1 + r * wb + (c - i1));
        const gptq::GroupParams &p =
            staticParams[size_t(r * groups + groupOfPosition(c))];
        s[at] = p.scale;
        if (hasZeros)
          z[at] = p.zero;
      }
    }
    scales.upload(s.data(), s.size() * 4);
    if (hasZeros)
      buffer("zeros").upload(z.data(), z.size() * 4);
  }
  if (options.eager && dynamic) {
    buffer("eager fit tile", size_t(rows * group) * 4);
    buffer("eager fit codes", size_t(rows * group));
    buffer("eager fit errors", size_t(rows * group) * 4);
    std::vector<float> eye(static_cast<size_t>(group * group), 0.0f);
    for (int64_t i = 0; i < group; ++i)
      eye[size_t(i * group + i)] = 1.0f;
    buffer("group identity", eye.size() * 4).upload(eye.data(), eye.size() * 4);
  }
  if (enc.globalScale)
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

/// Every attempt failed: round to nearest of the weights as given, or
/// throw when the options ask for that.
std::vector<GptqModuleResult> SolveRun::roundToNearest() {
  if (!options.fallbackToRTN)
    throw Error("GPTQ: the Hessian is not positive definite: " +
                failures.str());
  report.fellBackToRTN = true;
  report.warnings.push_back("GPTQ: " + failures.str() +
                            "; fell back to round-to-nearest");
  std::vector<GptqModuleResult> results(numModules);
  for (size_t m = 0; m < numModules; ++m) {
    GptqModuleResult &out = results[m];
    out.name = modules[m].name;
    out.n = modules[m].n;
    out.k = k;
    std::string error;
    std::vector<float> given;
    if (!modules[m].weight) {
      given.resize(static_cast<size_t>(out.n * k));
      moduleWeightF32(blas, modules[m], k, given.data(), stream,
                      im.ones.ptr());
    }
    if (!format::quantizeRTN(
            enc, modules[m].weight ? modules[m].weight : given.data(), out.n,
            k, out.weight, error))
      throw Error("GPTQ: RTN fallback of '" + out.name + "': " + error);
    out.loss = std::numeric_limits<double>::quiet_NaN();
  }
  eFactored.synchronize();
  report.factorSeconds = cuda::Event::elapsedMs(ePrepared, eFactored) / 1e3;
  report.solveSeconds = report.factorSeconds;
  report.totalSeconds =
      std::chrono::duration<double>(Clock::now() - wallStart).count();
  return results;
}

/// Blocks, left-looking. Right-looking GPTQ subtracts E_B U[B, F] from
/// every later block F after block B. Summed, block F receives
/// T_F = sum_{B<F} E_B U_BF before its turn; with Z = E U (so Z Ut = E,
/// Ut upper) that is T_F = -G_F U_FF, G_F = Z[:, :i1] Ut[:i1, F], and after
/// the block Z_F = E_F U_FF + T_F. So, per block (U_FF = Ut_FF^-1 by one
/// small triangular solve):
///   G = Z[:, :i1] Ut[:i1, i1:i2];  P = G U_FF;  W_F += P      (GEMMs)
///   the column loop on W_F with U_FF -> codes, E_F           (the kernel)
///   Z_F = E_F U_FF - P                                       (GEMM)
/// The same R K^2 flops as the right-looking updates; only Ut is needed.
/// options.profile: an event after each step of a block, named by the step
/// it ends (the breakdown of GptqSolveReport::profileMs).
void SolveRun::runBlocks() {
  marks = std::vector<cuda::Event>(size_t(numBlocks) * 3);
  if (options.profile)
    ticks.reserve(size_t(numBlocks) * 8 + 1);
  tick("start");
  for (int64_t b = 0; b < numBlocks; ++b) {
    marks[size_t(3 * b)].record(stream);
    blockUpdatesBefore(b);
    marks[size_t(3 * b + 1)].record(stream);
    tick("other");
    if (options.eager)
      eagerBlock(b);
    else
      fusedBlock(b);
    marks[size_t(3 * b + 2)].record(stream);
    tick("column loop");
    blockUpdatesAfter(b);
  }
}

/// U_FF, and the earlier blocks' feedback into W_F (in cuBLAS's
/// column-major terms every row-major [R, c] matrix with row stride ld is a
/// [c, R] matrix with leading dimension ld).
void SolveRun::blockUpdatesBefore(int64_t b) {
  const int64_t i1 = blockStart(b), wb = blockWidth(b);
  const int WB = int(wb), R = int(rows), K = int(k);
  const float plusOne = 1.0f, zero = 0.0f;
  const float *utPtr = reinterpret_cast<const float *>(hessian);
  float *uBlock = f32("U block");
  // U_FF = Ut_FF^-1: Ut_FF read column-major is lower triangular.
  copy2D(buffer("U block").ptr(), size_t(wb) * 4,
         buffer("block identity").ptr(), kBlockWidth * 4, size_t(wb) * 4,
         size_t(wb), stream, "block identity");
  QFUSE_CUBLAS(cublasStrsm(blas, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER,
                           CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, WB, WB, &plusOne,
                           utPtr + i1 * k + i1, K, uBlock, WB));
  tick("U_FF (trsm)");
  if (i1 == 0)
    return;
  float *wPtr = f32("weights"), *zPtr = f32("Z = E U"), *gPtr = f32("G"),
        *pPtr = f32("P");
  // G^T [R, wb] column-major = Z[:, :i1] Ut[:i1, F], both read transposed:
  // a tall output, which cuBLAS runs faster than the wide [wb, R] one
  // (docs/gptq.md).
  QFUSE_CUBLAS(cublasSgemm(blas, CUBLAS_OP_T, CUBLAS_OP_T, R, WB, int(i1),
                           &plusOne, zPtr, K, utPtr + i1, K, &zero, gPtr, R));
  tick("G = Z Ut");
  QFUSE_CUBLAS(cublasSgemm(blas, CUBLAS_OP_N, CUBLAS_OP_T, WB, R, WB,
                           &plusOne, uBlock, WB, gPtr, R, &zero, pPtr, WB));
  tick("P = G U_FF");
  QFUSE_CUBLAS(cublasSgeam(blas, CUBLAS_OP_N, CUBLAS_OP_N, WB, R, &plusOne,
                           wPtr + i1, K, &plusOne, pPtr, WB, wPtr + i1, K));
  tick("W_F += P");
}

/// The block's column loop: one qf.gptq_block_update launch for every row.
void SolveRun::fusedBlock(int64_t b) {
  const int64_t i1 = blockStart(b), wb = blockWidth(b);
  const CUdeviceptr tile = buffer("weight tile").ptr();
  copy2D(tile, size_t(wb) * 4, offset(buffer("weights").ptr(), i1 * 4),
         size_t(k) * 4, size_t(wb) * 4, size_t(rows), stream, "weight tile");
  std::map<std::string, CUdeviceptr> args = {
      {"w", tile},
      {"u", buffer("U block").ptr()},
      {"codes", offset(buffer("codes").ptr(), rows * i1)},
      {"err", buffer("block errors").ptr()}};
  if (enc.globalScale)
    args["global_scale"] = buffer("global scales").ptr();
  const CUdeviceptr scales = buffer("scales").ptr();
  const CUdeviceptr zeros = hasZeros ? buffer("zeros").ptr() : 0;
  if (dynamic) {
    args["scales_out"] = offset(scales, rows * (i1 / group) * 4);
    if (hasZeros)
      args["zeros_out"] = offset(zeros, rows * (i1 / group) * 4);
  } else {
    args["scales"] = offset(scales, rows * i1 * 4);
    if (hasZeros)
      args["zeros"] = offset(zeros, rows * i1 * 4);
  }
  im.launch(rows, wb, !dynamic, args, stream);
}

/// The block one operation per launch (the eager baseline): per column, a
/// group fit where one starts (dynamic), the column quantized with its
/// group's parameters, then its error fed into the rest of the block.
void SolveRun::eagerBlock(int64_t b) {
  const int64_t i1 = blockStart(b), wb = blockWidth(b), i2 = i1 + wb;
  const int WB = int(wb), R = int(rows), K = int(k);
  const float minusOne = -1.0f, plusOne = 1.0f, zero = 0.0f;
  float *eCols = f32("eager error columns"), *wPtr = f32("weights");
  float *uBlock = f32("U block");
  const CUdeviceptr scales = buffer("scales").ptr();
  const CUdeviceptr zeros = hasZeros ? buffer("zeros").ptr() : 0;
  const CUdeviceptr globals =
      enc.globalScale ? buffer("global scales").ptr() : 0;
  for (int64_t j = i1; j < i2; ++j) {
    const int64_t jj = j - i1;
    if (dynamic && j % group == 0) {
      // The group's parameters from its current weights: the dynamic
      // kernel fits them at its first column (U = I; its codes and errors
      // go to scratch).
      copy2D(buffer("eager fit tile").ptr(), size_t(group) * 4,
             offset(buffer("weights").ptr(), j * 4), size_t(k) * 4,
             size_t(group) * 4, size_t(rows), stream, "eager fit tile");
      std::map<std::string, CUdeviceptr> fit = {
          {"w", buffer("eager fit tile").ptr()},
          {"u", buffer("group identity").ptr()},
          {"codes", buffer("eager fit codes").ptr()},
          {"err", buffer("eager fit errors").ptr()},
          {"scales_out", offset(scales, (j / group) * rows * 4)}};
      if (hasZeros)
        fit["zeros_out"] = offset(zeros, (j / group) * rows * 4);
      if (enc.globalScale)
        fit["global_scale"] = globals;
      im.launch(rows, group, false, fit, stream);
    }
    // Column j alone: gather it, quantize it with its group's parameters,
    // then feed its error into the rest of the block.
    QFUSE_CUBLAS(cublasScopy(blas, R, wPtr + j, K, f32("eager column"), 1));
    const int64_t slot = dynamic ? (j / group) * rows : j * rows;
    std::map<std::string, CUdeviceptr> args = {
        {"w", buffer("eager column").ptr()},
        {"u", offset(buffer("U block").ptr(), (jj * wb + jj) * 4)},
        {"scales", offset(scales, slot * 4)},
        {"codes", offset(buffer("codes").ptr(), j * rows)},
        {"err", offset(buffer("eager error columns").ptr(), jj * rows * 4)}};
    if (hasZeros)
      args["zeros"] = offset(zeros, slot * 4);
    if (enc.globalScale)
      args["global_scale"] = globals;
    im.launch(rows, 1, true, args, stream);
    if (i2 - j - 1 > 0)
      QFUSE_CUBLAS(cublasSger(blas, int(i2 - j - 1), R, &minusOne,
                              uBlock + jj * wb + jj + 1, 1, eCols + jj * rows,
                              1, wPtr + j + 1, K));
  }
  // E column by column [wb, R] -> row-major [R, wb].
  float *ePtr = f32("block errors");
  QFUSE_CUBLAS(cublasSgeam(blas, CUBLAS_OP_T, CUBLAS_OP_N, WB, R, &plusOne,
                           eCols, R, &zero, ePtr, WB, ePtr, WB));
}

/// Z_F = E_F U_FF - P for the blocks after this one, and the block's loss
/// per module (sum of e^2 over its rows).
void SolveRun::blockUpdatesAfter(int64_t b) {
  const int64_t i1 = blockStart(b), wb = blockWidth(b), i2 = i1 + wb;
  const int WB = int(wb), R = int(rows), K = int(k);
  const float minusOne = -1.0f, plusOne = 1.0f, zero = 0.0f;
  float *zPtr = f32("Z = E U"), *pPtr = f32("P"), *ePtr = f32("block errors");
  if (i2 < k) {
    if (i1 > 0)
      QFUSE_CUBLAS(cublasSgeam(blas, CUBLAS_OP_N, CUBLAS_OP_N, WB, R,
                               &minusOne, pPtr, WB, &zero, pPtr, WB,
                               zPtr + i1, K));
    QFUSE_CUBLAS(cublasSgemm(blas, CUBLAS_OP_N, CUBLAS_OP_N, WB, R, WB,
                             &plusOne, f32("U block"), WB, ePtr, WB,
                             i1 > 0 ? &plusOne : &zero, zPtr + i1, K));
  }
  tick("Z_F = E U_FF - P");
  QFUSE_CUBLAS(cublasSetPointerMode(blas, CUBLAS_POINTER_MODE_DEVICE));
  int64_t r0 = 0;
  for (size_t m = 0; m < numModules; ++m) {
    const float *e = ePtr + r0 * wb;
    QFUSE_CUBLAS(cublasSdot(blas, int(modules[m].n * wb), e, 1, e, 1,
                            f32("loss") + b * numModules + m));
    r0 += modules[m].n;
  }
  QFUSE_CUBLAS(cublasSetPointerMode(blas, CUBLAS_POINTER_MODE_HOST));
  tick("loss dots");
}

/// Codes, group parameters and losses back to the host, in the original
/// column order, as one format::Unpacked per module.
std::vector<GptqModuleResult> SolveRun::collect() {
  std::vector<uint8_t> hostCodes(static_cast<size_t>(rows * k));
  std::vector<float> hostScales(static_cast<size_t>(paramCount)),
      hostZeros(hasZeros ? hostScales.size() : 0);
  std::vector<float> hostLoss(static_cast<size_t>(numBlocks) * numModules);
  eDone.synchronize();
  if (options.onDeviceDone)
    options.onDeviceDone();
  const auto finishStart = Clock::now();
  buffer("codes").download(hostCodes.data(), hostCodes.size());
  if (dynamic) {
    buffer("scales").download(hostScales.data(), hostScales.size() * 4);
    if (hasZeros)
      buffer("zeros").download(hostZeros.data(), hostZeros.size() * 4);
  }
  buffer("loss").download(hostLoss.data(), hostLoss.size() * 4);

  // The kernel stores the logical code's low byte: sign-extend the signed
  // integer formats (q in [-8, 7] or [-128, 127]), zero-extend the others.
  const bool signedCodes = enc.format == format::ElementFormat::Int4 ||
                           enc.format == format::ElementFormat::Int8;
  auto codeAt = [&](int64_t r, int64_t c) -> int32_t {
    const uint8_t byte =
        options.eager
            ? hostCodes[size_t(c * rows + r)]
            : hostCodes[size_t(rows * blockStart(c / kBlockWidth) +
                               r * blockWidth(c / kBlockWidth) +
                               (c - blockStart(c / kBlockWidth)))];
    return signedCodes ? int32_t(int8_t(byte)) : int32_t(byte);
  };
  auto paramsAt = [&](int64_t r, int64_t g) -> gptq::GroupParams {
    if (!dynamic)
      return staticParams[size_t(r * groups + g)];
    size_t at;
    if (options.eager) {
      at = size_t(g * rows + r);
    } else {
      const int64_t c = g * group, b = c / kBlockWidth, i1 = blockStart(b),
                    wb = blockWidth(b);
      at = size_t(rows * (i1 / group) + r * (wb / group) + (g - i1 / group));
    }
    gptq::GroupParams p;
    p.scale = hostScales[at];
    p.zero = hasZeros ? hostZeros[at] : 0.0f;
    return p;
  };

  std::vector<GptqModuleResult> results(numModules);
  int64_t r0 = 0;
  for (size_t m = 0; m < numModules; ++m) {
    GptqModuleResult &out = results[m];
    out.name = modules[m].name;
    out.n = modules[m].n;
    out.k = k;
    format::Unpacked &q = out.weight;
    q.codes.resize(static_cast<size_t>(out.n * k));
    detail::parallelRows(out.n, [&](int64_t first, int64_t last) {
      for (int64_t r = first; r < last; ++r)
        for (int64_t c = 0; c < k; ++c)
          q.codes[size_t(r * k + perm[size_t(c)])] = codeAt(r0 + r, c);
    });
    q.scales.resize(static_cast<size_t>(out.n * groups));
    if (enc.isUnsigned())
      q.zeros.resize(q.scales.size());
    for (int64_t r = 0; r < out.n; ++r)
      for (int64_t g = 0; g < groups; ++g) {
        gptq::GroupParams p = paramsAt(r0 + r, g);
        q.scales[size_t(r * groups + g)] = p.scale;
        if (enc.isUnsigned())
          q.zeros[size_t(r * groups + g)] = p.zero;
      }
    if (enc.actOrder) {
      q.gIdx.resize(static_cast<size_t>(k));
      for (int64_t c = 0; c < k; ++c)
        q.gIdx[size_t(perm[size_t(c)])] = int32_t(groupOfPosition(c));
    }
    if (enc.globalScale)
      q.globalScale = grids[m]->globalScale();
    double loss = 0;
    for (int64_t b = 0; b < numBlocks; ++b)
      loss += 0.5 * double(hostLoss[size_t(b) * numModules + m]);
    out.loss = loss;
    r0 += out.n;
  }
  report.finishSeconds =
      std::chrono::duration<double>(Clock::now() - finishStart).count();
  return results;
}

} // namespace

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
