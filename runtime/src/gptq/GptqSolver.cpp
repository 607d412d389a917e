//===- GptqSolver.cpp - GPTQ of one Hessian's modules on the GPU ----------===//
//
// Memory layouts (R = the modules' rows stacked, K columns, blocks of width
// w_b starting at column i1; "blocked" = block after block, each [R, w_b]
// row-major, so block b starts at element R * i1):
//
//   W        [R, K] f32 row-major, processing (act-order) column order;
//            each block receives the earlier blocks' feedback in place
//   Ut       [K, K] f32 in the Hessian's buffer: read row-major, the upper
//            factor with H = Ut Ut^T (U = Ut^-1 is the reference's factor)
//   Z        [R, K] f32 row-major, Z = E U block by block (left-looking)
//   codes    fused: blocked i8;  eager: column-major [K, R] i8
//   params   fused dynamic: blocked [R, w_b / G];  eager dynamic: [groups, R];
//            static (per column, gathered on the host): fused blocked
//            [R, w_b], eager column-major [K, R]
//   E        [R, w_b] row-major, the block's scaled errors (the eager path
//            writes it column by column and transposes it with cublasSgeam),
//            so the updates and the loss are the same code for both
//
// cuBLAS is column-major: every row-major [R, c] matrix with row stride ld
// is a column-major [c, R] matrix with leading dimension ld, which is how
// the calls below read W, Z, E and Ut.
//
//===----------------------------------------------------------------------===//

#include "qfuse/runtime/gptq/GptqSolver.h"

#include "ParallelRows.h"

#include "qfuse/gptq/Grid.h"
#include "qfuse/runtime/Error.h"
#include "qfuse/runtime/device/Executor.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <tuple>
#include <numeric>
#include <sstream>

namespace qfuse::runtime {
namespace {

constexpr int64_t kBlockWidth = 128;

/// One qf.gptq_block_update launch of the artifact.
struct BlockKernel {
  size_t step = 0;
  /// kernel parameter name ("w", "u", "scales", "codes", ...) -> buffer.
  std::map<std::string, std::string> buffers;
};

/// (rows, width, static) -> the launch.
using KernelKey = std::tuple<int64_t, int64_t, bool>;

std::string gridOf(const std::string &wBuffer) {
  size_t at = wBuffer.find("w:");
  if (at == std::string::npos)
    return std::string();
  std::string text = wBuffer.substr(at + 2);
  size_t note = text.find(" (");
  return note == std::string::npos ? text : text.substr(0, note);
}

CUdeviceptr offset(CUdeviceptr base, int64_t bytes) {
  return base + static_cast<CUdeviceptr>(bytes);
}

/// Device-to-device copy of `height` rows of `widthBytes` between pitched
/// memory.
void copy2D(CUdeviceptr dst, size_t dstPitch, CUdeviceptr src,
            size_t srcPitch, size_t widthBytes, size_t height,
            CUstream stream, const char *what) {
  CUDA_MEMCPY2D copy;
  std::memset(&copy, 0, sizeof(copy));
  copy.srcMemoryType = CU_MEMORYTYPE_DEVICE;
  copy.srcDevice = src;
  copy.srcPitch = srcPitch;
  copy.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  copy.dstDevice = dst;
  copy.dstPitch = dstPitch;
  copy.WidthInBytes = widthBytes;
  copy.Height = height;
  QFUSE_CU_CTX(cuMemcpy2DAsync(&copy, stream), std::string("GPTQ: ") + what);
}

/// The cuBLAS element type of a device weight.
cudaDataType_t cublasTypeOf(GptqDeviceWeight type) {
  switch (type) {
  case GptqDeviceWeight::F16:
    return CUDA_R_16F;
  case GptqDeviceWeight::BF16:
    return CUDA_R_16BF;
  case GptqDeviceWeight::F32:
    return CUDA_R_32F;
  }
  return CUDA_R_32F;
}

/// The module's device weight as f32 [n, K] at `dst`: a copy for f32, and
/// for f16/bf16 the [n*K, 1] x [1, 1] product with 1.0 accumulated in f32,
/// which is exact (every f16/bf16 value is an f32 value).
/// `ones` holds 1.0 as f16 at byte 0 and as bf16 at byte 16.
void widenToF32(cublasHandle_t blas, const GptqModuleInput &m, int64_t k,
                CUdeviceptr dst, CUstream stream, CUdeviceptr ones) {
  const int64_t count = m.n * k;
  if (m.deviceType == GptqDeviceWeight::F32) {
    QFUSE_CU_CTX(cuMemcpyDtoDAsync(dst, m.device, size_t(count) * 4, stream),
                 "GPTQ: copying the f32 weight of '" + m.name + "'");
    return;
  }
  if (count > std::numeric_limits<int>::max())
    throw Error("GPTQ: module '" + m.name + "' has " + std::to_string(count) +
                " elements, more than one cuBLAS call converts");
  const CUdeviceptr one =
      offset(ones, m.deviceType == GptqDeviceWeight::F16 ? 0 : 16);
  const float alpha = 1.0f, beta = 0.0f;
  const cudaDataType_t type = cublasTypeOf(m.deviceType);
  QFUSE_CUBLAS_CTX(
      cublasGemmEx(blas, CUBLAS_OP_N, CUBLAS_OP_N, int(count), 1, 1, &alpha,
                   reinterpret_cast<const void *>(m.device), type, int(count),
                   reinterpret_cast<const void *>(one), type, 1,
                   &beta, reinterpret_cast<void *>(dst), CUDA_R_32F,
                   int(count), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
      "GPTQ: widening the weight of '" + m.name + "' to f32");
}

/// The module's weight as given, f32 on the host (`out` holds n * K).
void moduleWeightF32(cublasHandle_t blas, const GptqModuleInput &m, int64_t k,
                     float *out, CUstream stream, CUdeviceptr ones) {
  cuda::DeviceBuffer scratch(size_t(m.n * k) * 4, "GPTQ weight (f32)");
  widenToF32(blas, m, k, scratch.ptr(), stream, ones);
  QFUSE_CU(cuStreamSynchronize(stream));
  scratch.download(out, scratch.size());
}

/// gptq::nvfp4GlobalScale of `count` f32 values on the device: the largest
/// magnitude (cublasIsamax, the first of equals) is the one value it needs.
float deviceGlobalScale(cublasHandle_t blas, CUdeviceptr w, int64_t count,
                        CUstream stream) {
  if (count > std::numeric_limits<int>::max())
    throw Error("GPTQ: " + std::to_string(count) +
                " weights are more than one cublasIsamax reads");
  int index = 0;
  QFUSE_CUBLAS(cublasIsamax(blas, int(count),
                            reinterpret_cast<const float *>(w), 1, &index));
  float amax = 0.0f;
  if (index > 0) {
    QFUSE_CU(cuStreamSynchronize(stream));
    QFUSE_CU(cuMemcpyDtoH(&amax, offset(w, int64_t(index - 1) * 4), 4));
  }
  return gptq::nvfp4GlobalScale(&amax, 1);
}

} // namespace

struct GptqSolver::Impl {
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
  cuda::DeviceBuffer ones{32, "GPTQ ones (f16, bf16)"};

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

  /// Launches the block kernel with every argument at caller memory.
  void launch(int64_t rows, int64_t width, bool isStatic,
              const std::map<std::string, CUdeviceptr> &args,
              CUstream stream) {
    const BlockKernel &k = kernel(rows, width, isStatic);
    std::map<std::string, CUdeviceptr> overrides;
    for (const auto &[param, buffer] : k.buffers) {
      auto it = args.find(param);
      if (it == args.end())
        throw Error("GPTQ: no pointer for block kernel parameter '" + param +
                    "'");
      overrides[buffer] = it->second;
    }
    executor.runSteps(rows, k.step, k.step + 1, stream, overrides);
  }
};

std::string GptqSolveReport::summary() const {
  std::ostringstream os;
  os.precision(4);
  if (fellBackToRTN)
    os << "fell back to RTN after " << attempts << " attempt(s)";
  else
    os << attempts << " attempt(s), damping " << dampFraction
       << " x mean(diag(H))";
  os << ", " << deadChannels.size() << " dead channel(s)";
  if (actOrder)
    os << ", act-order";
  os << "; solve " << solveSeconds * 1e3 << " ms on the device (factor "
     << factorSeconds * 1e3 << ", blocks " << blockSeconds * 1e3
     << ", updates " << updateSeconds * 1e3 << "), " << totalSeconds * 1e3
     << " ms in all (prepare " << prepareSeconds * 1e3 << ", finish "
     << finishSeconds * 1e3 << ")";
  return os.str();
}

format::Encoding gptqArtifactEncoding(const Artifact &blocks) {
  for (const Plan &plan : blocks.plans)
    for (const Step &step : plan.steps) {
      if (step.kind != Step::Kind::Launch)
        continue;
      const Kernel &kernel = blocks.kernels[step.kernelIndex];
      if (kernel.name.rfind("qf_gptq_block_", 0) != 0)
        continue;
      for (size_t a = 0; a < step.args.size() && a < kernel.params.size(); ++a)
        if (kernel.params[a].name == "w") {
          format::Encoding enc;
          std::string error;
          const std::string text = gridOf(step.args[a].name);
          if (text.empty() || !format::parseEncoding(text, enc, error))
            throw Error("GPTQ artifact: the weight buffer '" +
                        step.args[a].name +
                        "' does not name its grid as 'w:<encoding>'" +
                        (error.empty() ? std::string() : ": " + error));
          return enc;
        }
    }
  throw Error("GPTQ artifact: no qf.gptq_block_update launch");
}

GptqSolver::GptqSolver(const Artifact &blocks, const cuda::Context &context,
                       const format::Encoding &encoding)
    : encoding_(encoding) {
  if (!encoding.isQuantized() || encoding.isSparse24())
    throw Error("GPTQ needs a dense quantized encoding, got '" +
                format::printEncoding(encoding) + "'");
  if (encoding.hasNamedTable())
    throw Error("GPTQ on the GPU does not support the named codebook table '" +
                encoding.tableName + "': inline its values");
  impl_ = std::make_unique<Impl>(blocks, context);
  const std::string wanted = format::printEncoding(encoding);
  for (const Plan &plan : blocks.plans) {
    for (size_t s = 0; s < plan.steps.size(); ++s) {
      const Step &step = plan.steps[s];
      if (step.kind != Step::Kind::Launch)
        continue;
      const Kernel &kernel = blocks.kernels[step.kernelIndex];
      if (kernel.name.rfind("qf_gptq_block_", 0) != 0)
        continue;
      BlockKernel k;
      k.step = s;
      for (size_t a = 0; a < step.args.size() && a < kernel.params.size(); ++a)
        k.buffers[kernel.params[a].name] = step.args[a].name;
      if (!k.buffers.count("w") || !k.buffers.count("u"))
        throw Error("GPTQ artifact: launch '" + kernel.name +
                    "' has no 'w' or 'u' parameter");
      format::Encoding grid;
      std::string error;
      const std::string text = gridOf(k.buffers["w"]);
      if (text.empty() || !format::parseEncoding(text, grid, error))
        throw Error("GPTQ artifact: the weight buffer '" + k.buffers["w"] +
                    "' of '" + kernel.name +
                    "' does not name its grid as 'w:<encoding>'" +
                    (error.empty() ? std::string() : ": " + error));
      if (format::printEncoding(grid) != wanted)
        throw Error("GPTQ artifact: kernel '" + kernel.name + "' is for '" +
                    format::printEncoding(grid) + "', not '" + wanted + "'");
      const BufferSpec *u = blocks.findBuffer(k.buffers["u"]);
      if (!u || u->shape.size() != 2)
        throw Error("GPTQ artifact: no [B, B] buffer '" + k.buffers["u"] + "'");
      const int64_t width = u->extent(0, plan.batch);
      const bool isStatic = k.buffers.count("scales") != 0;
      impl_->kernels[{plan.batch, width, isStatic}] = k;
    }
  }
  if (impl_->kernels.empty())
    throw Error("GPTQ artifact: no qf.gptq_block_update launch");
}

GptqSolver::~GptqSolver() = default;

std::vector<int64_t> GptqSolver::rowCounts() const {
  std::vector<int64_t> rows;
  for (const auto &entry : impl_->kernels)
    if (std::find(rows.begin(), rows.end(), std::get<0>(entry.first)) ==
        rows.end())
      rows.push_back(std::get<0>(entry.first));
  return rows;
}

std::vector<GptqModuleResult>
GptqSolver::solve(const std::vector<GptqModuleInput> &modules,
                  CUdeviceptr hessian, int64_t k,
                  const GptqSolveOptions &options, CUstream stream,
                  GptqSolveReport &report) {
  using Clock = std::chrono::steady_clock;
  const auto wallStart = Clock::now();
  const format::Encoding &enc = encoding_;
  Impl &im = *impl_;
  report = GptqSolveReport();
  report.actOrder = options.actOrder;
  report.staticGroups = options.staticGroups;
  report.blockSize = kBlockWidth;

  // Shapes and modes.
  if (modules.empty())
    throw Error("GPTQ: no module to quantize");
  if (k <= 0)
    throw Error("GPTQ: K must be positive, got " + std::to_string(k));
  int64_t rows = 0;
  for (const GptqModuleInput &m : modules) {
    if ((!m.weight && !m.device) || m.n <= 0)
      throw Error("GPTQ: module '" + m.name + "' has no weight rows");
    std::string error;
    if (!format::validate(enc, m.n, k, error))
      throw Error("GPTQ: module '" + m.name + "' [" + std::to_string(m.n) +
                  ", " + std::to_string(k) + "]: " + error);
    rows += m.n;
  }
  const bool perChannel = enc.isPerChannel();
  const bool dynamic = !perChannel && !options.staticGroups;
  const int64_t group = perChannel ? k : enc.groupSize;
  const int64_t groups = format::numGroups(enc, k);
  const bool hasZeros = enc.zeroPoint != format::ZeroPointKind::None;
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
  const int64_t numBlocks = (k + kBlockWidth - 1) / kBlockWidth;
  auto blockStart = [&](int64_t b) { return b * kBlockWidth; };
  auto blockWidth = [&](int64_t b) {
    return std::min(kBlockWidth, k - b * kBlockWidth);
  };
  // Every kernel needed, before any work (a clear error up front).
  for (int64_t b = 0; b < numBlocks; ++b)
    if (!options.eager)
      im.kernel(rows, blockWidth(b), !dynamic);
  if (options.eager) {
    im.kernel(rows, 1, true);
    if (dynamic)
      im.kernel(rows, group, false);
  }

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
  cublasHandle_t blas = im.cublas.get();
  cuda::Event ePrepared, eFactored, eDone;

  // The stacked weights. Modules given on the device are widened to f32
  // there (exact: x * 1.0f); a host copy exists only where the steps below
  // need one (host inputs, static groups or per-channel fits, act-order).
  bool onDevice = true;
  for (const GptqModuleInput &m : modules)
    onDevice = onDevice && m.device && !m.weight;
  const bool needHost = !onDevice || !dynamic || options.actOrder;
  cuda::DeviceBuffer w(static_cast<size_t>(rows * k) * 4, "GPTQ weights");
  std::vector<float> original;
  if (onDevice) {
    int64_t r0 = 0;
    for (const GptqModuleInput &m : modules) {
      widenToF32(blas, m, k, offset(w.ptr(), r0 * k * 4), stream,
                 im.ones.ptr());
      r0 += m.n;
    }
  }
  if (needHost) {
    original.resize(static_cast<size_t>(rows * k));
    if (onDevice) {
      QFUSE_CU(cuStreamSynchronize(stream));
      w.download(original.data(), original.size() * 4);
    } else {
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
  }

  // 1. diag(H), dead channels, mean, permutation.
  cuda::DeviceBuffer diagBuf(static_cast<size_t>(k) * 4, "GPTQ diag(H)");
  QFUSE_CUBLAS(cublasScopy(blas, int(k), reinterpret_cast<float *>(hessian),
                           int(k + 1), reinterpret_cast<float *>(diagBuf.ptr()),
                           1));
  QFUSE_CU(cuStreamSynchronize(stream));
  std::vector<float> diag(static_cast<size_t>(k));
  diagBuf.download(diag.data(), diag.size() * 4);
  const float one = 1.0f;
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
      QFUSE_CU(cuMemsetD2D32Async(offset(w.ptr(), i * 4), size_t(k) * 4, 0u,
                                  1, size_t(rows), stream));
  }
  if (!report.deadChannels.empty())
    report.warnings.push_back(std::to_string(report.deadChannels.size()) +
                              " dead channel(s) (H[i][i] = 0): their weights "
                              "are set to 0");
  std::vector<int64_t> perm(static_cast<size_t>(k));
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
  const double mean = sum / double(k);

  // One grid per module: NVFP4's global scale is the module's own
  // (448 * 6 / amax over its dead-channel-zeroed weights, as the reference
  // computes it), so stacked modules differ; the kernel reads it per row.
  std::vector<std::unique_ptr<gptq::Grid>> grids;
  std::vector<int64_t> moduleOfRow(static_cast<size_t>(rows));
  std::vector<float> rowGlobal;
  {
    int64_t r0 = 0;
    for (size_t m = 0; m < modules.size(); ++m) {
      gptq::GridOptions gridOptions;
      if (enc.globalScale)
        gridOptions.globalScale =
            needHost ? gptq::nvfp4GlobalScale(original.data() + r0 * k,
                                              modules[m].n * k)
                     : deviceGlobalScale(blas, offset(w.ptr(), r0 * k * 4),
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
  }
  // Group parameters fitted up front (per channel, static groups), in the
  // original column order, on the dead-channel-zeroed weights.
  std::vector<gptq::GroupParams> staticParams;
  if (!dynamic) {
    staticParams.resize(static_cast<size_t>(rows * groups));
    detail::parallelRows(rows, [&](int64_t first, int64_t last) {
      for (int64_t r = first; r < last; ++r) {
        const gptq::Grid &grid = *grids[size_t(moduleOfRow[size_t(r)])];
        for (int64_t g = 0; g < groups; ++g) {
          std::string error;
          const int64_t count = std::min(group, k - g * group);
          // A scale that does not fit its type is caught below: fit
          // leaves a non-finite scale, which the check after the loop
          // reports (threads cannot throw).
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
  auto groupOfPosition = [&](int64_t c) -> int64_t {
    if (perChannel)
      return 0;
    return (dynamic ? c : perm[size_t(c)]) / group;
  };

  // Device working set.
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
  cuda::DeviceBuffer codes(static_cast<size_t>(rows * k), "GPTQ codes");
  cuda::DeviceBuffer err(static_cast<size_t>(rows * kBlockWidth) * 4,
                         "GPTQ block errors");
  cuda::DeviceBuffer errColumns, columnIn, tile, scratch, scratchCodes,
      scratchErr, identity;
  if (options.eager) {
    errColumns = cuda::DeviceBuffer(err.size(), "GPTQ eager error columns");
    columnIn = cuda::DeviceBuffer(static_cast<size_t>(rows) * 4,
                                  "GPTQ eager column");
  } else
    tile = cuda::DeviceBuffer(err.size(), "GPTQ weight tile");
  cuda::DeviceBuffer uTile(kBlockWidth * kBlockWidth * 4, "GPTQ U block");
  // Group parameters on the device (see the layouts at the top).
  const int64_t paramCount = dynamic ? rows * (k / group + (k % group != 0))
                                     : rows * k;
  cuda::DeviceBuffer scales(static_cast<size_t>(paramCount) * 4,
                            "GPTQ scales");
  cuda::DeviceBuffer zeros;
  if (hasZeros)
    zeros = cuda::DeviceBuffer(scales.size(), "GPTQ zeros");
  if (!dynamic) {
    std::vector<float> s(static_cast<size_t>(paramCount)),
        z(hasZeros ? s.size() : 0);
    for (int64_t c = 0; c < k; ++c) {
      const int64_t b = c / kBlockWidth, i1 = blockStart(b),
                    wb = blockWidth(b);
      for (int64_t r = 0; r < rows; ++r) {
        const size_t at =
            options.eager ? size_t(c * rows + r)
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
      zeros.upload(z.data(), z.size() * 4);
  }
  if (options.eager && dynamic) {
    scratch = cuda::DeviceBuffer(static_cast<size_t>(rows * group) * 4,
                                 "GPTQ eager fit tile");
    scratchCodes = cuda::DeviceBuffer(static_cast<size_t>(rows * group),
                                      "GPTQ eager fit codes");
    scratchErr = cuda::DeviceBuffer(scratch.size(), "GPTQ eager fit errors");
    std::vector<float> eye(static_cast<size_t>(group * group), 0.0f);
    for (int64_t i = 0; i < group; ++i)
      eye[size_t(i * group + i)] = 1.0f;
    identity = cuda::DeviceBuffer(eye.size() * 4, "GPTQ identity");
    identity.upload(eye.data(), eye.size() * 4);
  }
  cuda::DeviceBuffer globals;
  if (enc.globalScale) {
    globals = cuda::DeviceBuffer(rowGlobal.size() * 4, "GPTQ global scales");
    globals.upload(rowGlobal.data(), rowGlobal.size() * 4);
  }
  const size_t numModules = modules.size();
  cuda::DeviceBuffer lossSlots(static_cast<size_t>(numBlocks) * numModules * 4,
                               "GPTQ loss");
  lossSlots.zero(stream);
  // Everything the device phase uses is allocated here, so that it times
  // only the solve.
  cuda::DeviceBuffer factor(static_cast<size_t>(k * k) * 4,
                            "GPTQ Cholesky factor");
  cuda::DeviceBuffer info(sizeof(int), "cuSOLVER info");
  cuda::DeviceBuffer ones(static_cast<size_t>(k) * 4, "GPTQ ones");
  {
    std::vector<float> o(static_cast<size_t>(k), 1.0f);
    ones.upload(o.data(), o.size() * 4);
  }
  cusolverDnHandle_t solver = im.cusolver.get();
  float *fPtr = reinterpret_cast<float *>(factor.ptr());
  float *hPtr = reinterpret_cast<float *>(hessian);
  int lwork = 0;
  QFUSE_CUSOLVER(cusolverDnSpotrf_bufferSize(solver, CUBLAS_FILL_MODE_UPPER,
                                             int(k), fPtr, int(k), &lwork));
  cuda::DeviceBuffer workspace(static_cast<size_t>(std::max(lwork, 1)) * 4,
                               "cuSOLVER workspace");
  int *infoPtr = reinterpret_cast<int *>(info.ptr());
  cuda::DeviceBuffer z(w.size(), "GPTQ Z = E U");
  cuda::DeviceBuffer g(err.size(), "GPTQ G"), pBuf(err.size(), "GPTQ P");
  cuda::DeviceBuffer eye(kBlockWidth * kBlockWidth * 4, "GPTQ block identity");
  {
    std::vector<float> e(static_cast<size_t>(kBlockWidth * kBlockWidth), 0.0f);
    for (int64_t i = 0; i < kBlockWidth; ++i)
      e[size_t(i * kBlockWidth + i)] = 1.0f;
    eye.upload(e.data(), e.size() * 4);
  }
  QFUSE_CU(cuStreamSynchronize(stream));
  report.prepareSeconds =
      std::chrono::duration<double>(Clock::now() - wallStart).count();
  if (options.onPrepared)
    options.onPrepared();
  ePrepared.record(stream);

  // 2. Factor, retried with more damping: one Cholesky of the reversed,
  // damped Hessian. With P the reversal of the K indices, P H P = L' L'^T
  // (lower) gives H = Ut Ut^T with Ut = P L' P upper, and the reference's U
  // (U^T U = H^-1, upper) is Ut^-1: the column loop needs only its 128 x 128
  // diagonal blocks, the inverses of Ut's, and the updates between blocks
  // are triangular solves with Ut (below). So K^3 / 3 flops of cuSOLVER
  // instead of the reference's Cholesky, inverse and second Cholesky
  // (4/3 K^3). Reversing both indices of a K x K matrix reverses its K^2
  // elements: one cublasScopy with a negative increment. On the
  // column-major buffer holding P H P, potrf(UPPER) makes R = L'^T, which
  // read row-major is L'; reversed back, the row-major view is Ut.
  if (k * k > std::numeric_limits<int>::max())
    throw Error("GPTQ: K = " + std::to_string(k) +
                " is too large for one cuBLAS copy of the Hessian");
  auto reverseInto = [&](float *dst, const float *src) {
    const cublasStatus_t status =
        cublasScopy(blas, int(k * k), src, 1, dst, -1);
    if (status != CUBLAS_STATUS_SUCCESS)
      throw Error(std::string("GPTQ: cuBLAS refused the negative-increment "
                              "copy that reverses the Hessian (") +
                  cublasGetStatusName(status) + ")");
  };
  bool factored = false;
  std::ostringstream failures;
  double fraction = options.dampFraction;
  if (!(mean > 0) || !std::isfinite(mean)) {
    failures << "mean(diag(H)) = " << mean << " is not positive and finite";
  } else {
    for (int attempt = 0; attempt <= std::max(options.maxRetries, 0);
         ++attempt, fraction *= options.dampGrowth) {
      report.attempts = attempt + 1;
      report.dampFraction = fraction;
      report.damp = fraction * mean;
      const float damp = float(fraction * mean);
      reverseInto(fPtr, hPtr);
      // The reversal keeps the diagonal on the diagonal.
      QFUSE_CUBLAS(cublasSaxpy(blas, int(k), &damp,
                               reinterpret_cast<float *>(ones.ptr()), 1, fPtr,
                               int(k + 1)));
      QFUSE_CUSOLVER(cusolverDnSpotrf(
          solver, CUBLAS_FILL_MODE_UPPER, int(k), fPtr, int(k),
          reinterpret_cast<float *>(workspace.ptr()), lwork, infoPtr));
      int pivot = 0;
      QFUSE_CU(cuStreamSynchronize(stream));
      info.download(&pivot, sizeof(pivot));
      if (pivot == 0) {
        // Ut into the Hessian's buffer, which is not needed any more.
        reverseInto(hPtr, fPtr);
        factored = true;
        break;
      }
      if (attempt > 0)
        failures << "; ";
      // potrf's pivot counts in the reversed order.
      failures << "damping " << fraction
               << " x mean(diag(H)): cholesky failed at column "
               << (k - pivot);
    }
  }
  eFactored.record(stream);

  std::vector<GptqModuleResult> results(numModules);
  if (!factored) {
    if (!options.fallbackToRTN)
      throw Error("GPTQ: the Hessian is not positive definite: " +
                  failures.str());
    report.fellBackToRTN = true;
    report.warnings.push_back("GPTQ: " + failures.str() +
                              "; fell back to round-to-nearest");
    int64_t r0 = 0;
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
      if (!format::quantizeRTN(enc,
                               modules[m].weight ? modules[m].weight
                                                 : given.data(),
                               out.n, k, out.weight, error))
        throw Error("GPTQ: RTN fallback of '" + out.name + "': " + error);
      out.loss = std::numeric_limits<double>::quiet_NaN();
      r0 += out.n;
    }
    eFactored.synchronize();
    report.factorSeconds = cuda::Event::elapsedMs(ePrepared, eFactored) / 1e3;
    report.solveSeconds = report.factorSeconds;
    report.totalSeconds =
        std::chrono::duration<double>(Clock::now() - wallStart).count();
    return results;
  }

  // 3. Blocks, left-looking. Right-looking GPTQ subtracts E_B U[B, F] from
  // every later block F after block B. Summed, block F receives
  // T_F = sum_{B<F} E_B U_BF before its turn; with Z = E U (so Z Ut = E,
  // Ut upper) that is T_F = -G_F U_FF, G_F = Z[:, :i1] Ut[:i1, F], and after
  // the block Z_F = E_F U_FF + T_F. So, per block (U_FF = Ut_FF^-1 by one
  // small triangular solve):
  //   G = Z[:, :i1] Ut[:i1, i1:i2];  P = G U_FF;  W_F += P      (GEMMs)
  //   the column loop on W_F with U_FF -> codes, E_F           (the kernel)
  //   Z_F = E_F U_FF - P                                       (GEMM)
  // The same R K^2 flops as the right-looking updates; only Ut is needed.
  // In cuBLAS's column-major terms every row-major [R, c] matrix with row
  // stride ld is a [c, R] matrix with leading dimension ld.
  std::vector<cuda::Event> marks(static_cast<size_t>(numBlocks) * 3);
  float *wPtr = reinterpret_cast<float *>(w.ptr());
  const float *utPtr = reinterpret_cast<const float *>(hessian);
  float *zPtr = reinterpret_cast<float *>(z.ptr());
  float *gPtr = reinterpret_cast<float *>(g.ptr());
  float *pPtr = reinterpret_cast<float *>(pBuf.ptr());
  float *uBlock = reinterpret_cast<float *>(uTile.ptr());
  float *ePtr = reinterpret_cast<float *>(err.ptr());
  const float minusOne = -1.0f, plusOne = 1.0f, zero = 0.0f;
  const int R = int(rows), K = int(k);
  // options.profile: an event after each step of a block, named by the step
  // it ends (the breakdown of GptqSolveReport::profileMs).
  std::vector<std::pair<const char *, cuda::Event>> ticks;
  if (options.profile)
    ticks.reserve(size_t(numBlocks) * 8 + 1);
  auto tick = [&](const char *ended) {
    if (!options.profile)
      return;
    ticks.emplace_back(std::piecewise_construct, std::forward_as_tuple(ended),
                       std::forward_as_tuple());
    ticks.back().second.record(stream);
  };
  tick("start");
  for (int64_t b = 0; b < numBlocks; ++b) {
    const int64_t i1 = blockStart(b), wb = blockWidth(b), i2 = i1 + wb;
    const int WB = int(wb);
    marks[size_t(3 * b)].record(stream);
    // U_FF = Ut_FF^-1: Ut_FF read column-major is lower triangular.
    copy2D(uTile.ptr(), size_t(wb) * 4, eye.ptr(), kBlockWidth * 4,
           size_t(wb) * 4, size_t(wb), stream, "block identity");
    QFUSE_CUBLAS(cublasStrsm(blas, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER,
                             CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, WB, WB,
                             &plusOne, utPtr + i1 * k + i1, K, uBlock, WB));
    tick("U_FF (trsm)");
    if (i1 > 0) {
      // G^T [R, wb] column-major = Z[:, :i1] Ut[:i1, F], both read
      // transposed: a tall output, which cuBLAS runs faster than the wide
      // [wb, R] one (measured: 19.2 against 23.3 ms over the Llama-3-8B
      // down projection's blocks; splitting the long reduction did not help).
      QFUSE_CUBLAS(cublasSgemm(blas, CUBLAS_OP_T, CUBLAS_OP_T, R, WB, int(i1),
                               &plusOne, zPtr, K, utPtr + i1, K, &zero, gPtr,
                               R));
      tick("G = Z Ut");
      QFUSE_CUBLAS(cublasSgemm(blas, CUBLAS_OP_N, CUBLAS_OP_T, WB, R, WB,
                               &plusOne, uBlock, WB, gPtr, R, &zero, pPtr,
                               WB));
      tick("P = G U_FF");
      QFUSE_CUBLAS(cublasSgeam(blas, CUBLAS_OP_N, CUBLAS_OP_N, WB, R, &plusOne,
                               wPtr + i1, K, &plusOne, pPtr, WB, wPtr + i1,
                               K));
      tick("W_F += P");
    }
    marks[size_t(3 * b + 1)].record(stream);
    tick("other");
    if (!options.eager) {
      copy2D(tile.ptr(), size_t(wb) * 4, offset(w.ptr(), i1 * 4),
             size_t(k) * 4, size_t(wb) * 4, size_t(rows), stream,
             "weight tile");
      std::map<std::string, CUdeviceptr> args = {
          {"w", tile.ptr()},
          {"u", uTile.ptr()},
          {"codes", offset(codes.ptr(), rows * i1)},
          {"err", err.ptr()}};
      if (enc.globalScale)
        args["global_scale"] = globals.ptr();
      if (dynamic) {
        args["scales_out"] = offset(scales.ptr(), rows * (i1 / group) * 4);
        if (hasZeros)
          args["zeros_out"] = offset(zeros.ptr(), rows * (i1 / group) * 4);
      } else {
        args["scales"] = offset(scales.ptr(), rows * i1 * 4);
        if (hasZeros)
          args["zeros"] = offset(zeros.ptr(), rows * i1 * 4);
      }
      im.launch(rows, wb, !dynamic, args, stream);
    } else {
      float *eCols = reinterpret_cast<float *>(errColumns.ptr());
      for (int64_t j = i1; j < i2; ++j) {
        const int64_t jj = j - i1;
        if (dynamic && j % group == 0) {
          // The group's parameters from its current weights: the dynamic
          // kernel fits them at its first column (U = I; its codes and
          // errors go to scratch).
          copy2D(scratch.ptr(), size_t(group) * 4, offset(w.ptr(), j * 4),
                 size_t(k) * 4, size_t(group) * 4, size_t(rows), stream,
                 "eager fit tile");
          std::map<std::string, CUdeviceptr> fit = {
              {"w", scratch.ptr()},
              {"u", identity.ptr()},
              {"codes", scratchCodes.ptr()},
              {"err", scratchErr.ptr()},
              {"scales_out", offset(scales.ptr(), (j / group) * rows * 4)}};
          if (hasZeros)
            fit["zeros_out"] = offset(zeros.ptr(), (j / group) * rows * 4);
          if (enc.globalScale)
            fit["global_scale"] = globals.ptr();
          im.launch(rows, group, false, fit, stream);
        }
        // Column j alone: gather it, quantize it with its group's
        // parameters, then feed its error into the rest of the block.
        QFUSE_CUBLAS(cublasScopy(blas, R, wPtr + j, K,
                                 reinterpret_cast<float *>(columnIn.ptr()),
                                 1));
        const int64_t slot = dynamic ? (j / group) * rows : j * rows;
        std::map<std::string, CUdeviceptr> args = {
            {"w", columnIn.ptr()},
            {"u", offset(uTile.ptr(), (jj * wb + jj) * 4)},
            {"scales", offset(scales.ptr(), slot * 4)},
            {"codes", offset(codes.ptr(), j * rows)},
            {"err", offset(errColumns.ptr(), jj * rows * 4)}};
        if (hasZeros)
          args["zeros"] = offset(zeros.ptr(), slot * 4);
        if (enc.globalScale)
          args["global_scale"] = globals.ptr();
        im.launch(rows, 1, true, args, stream);
        if (i2 - j - 1 > 0)
          QFUSE_CUBLAS(cublasSger(blas, int(i2 - j - 1), R, &minusOne,
                                  uBlock + jj * wb + jj + 1, 1,
                                  eCols + jj * rows, 1, wPtr + j + 1, K));
      }
      // E column by column [wb, R] -> row-major [R, wb].
      QFUSE_CUBLAS(cublasSgeam(blas, CUBLAS_OP_T, CUBLAS_OP_N, WB, R,
                               &plusOne, eCols, R, &zero, ePtr, WB, ePtr,
                               WB));
    }
    marks[size_t(3 * b + 2)].record(stream);
    tick("column loop");
    // Z_F = E_F U_FF - P, for the blocks after this one.
    if (i2 < k) {
      if (i1 > 0)
        QFUSE_CUBLAS(cublasSgeam(blas, CUBLAS_OP_N, CUBLAS_OP_N, WB, R,
                                 &minusOne, pPtr, WB, &zero, pPtr, WB,
                                 zPtr + i1, K));
      QFUSE_CUBLAS(cublasSgemm(blas, CUBLAS_OP_N, CUBLAS_OP_N, WB, R, WB,
                               &plusOne, uBlock, WB, ePtr, WB,
                               i1 > 0 ? &plusOne : &zero, zPtr + i1, K));
    }
    tick("Z_F = E U_FF - P");
    // The block's loss per module: sum of e^2 over its rows.
    QFUSE_CUBLAS(cublasSetPointerMode(blas, CUBLAS_POINTER_MODE_DEVICE));
    int64_t r0 = 0;
    for (size_t m = 0; m < numModules; ++m) {
      const float *e = ePtr + r0 * wb;
      QFUSE_CUBLAS(cublasSdot(
          blas, int(modules[m].n * wb), e, 1, e, 1,
          reinterpret_cast<float *>(lossSlots.ptr()) + b * numModules + m));
      r0 += modules[m].n;
    }
    QFUSE_CUBLAS(cublasSetPointerMode(blas, CUBLAS_POINTER_MODE_HOST));
    tick("loss dots");
  }

  // The device work ends here (recorded before the host allocates the
  // result buffers below, which takes tens of milliseconds for 100 M codes
  // and must not count as device time).
  eDone.record(stream);

  // 4. Results back to the host, in the original column order.
  std::vector<uint8_t> hostCodes(static_cast<size_t>(rows * k));
  std::vector<float> hostScales(static_cast<size_t>(paramCount)),
      hostZeros(hasZeros ? hostScales.size() : 0);
  std::vector<float> hostLoss(static_cast<size_t>(numBlocks) * numModules);
  eDone.synchronize();
  if (options.onDeviceDone)
    options.onDeviceDone();
  const auto finishStart = Clock::now();
  codes.download(hostCodes.data(), hostCodes.size());
  if (dynamic) {
    scales.download(hostScales.data(), hostScales.size() * 4);
    if (hasZeros)
      zeros.download(hostZeros.data(), hostZeros.size() * 4);
  }
  lossSlots.download(hostLoss.data(), hostLoss.size() * 4);

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

  report.factorSeconds = cuda::Event::elapsedMs(ePrepared, eFactored) / 1e3;
  report.solveSeconds = cuda::Event::elapsedMs(ePrepared, eDone) / 1e3;
  report.finishSeconds =
      std::chrono::duration<double>(Clock::now() - finishStart).count();
  // Blocks: from the tile to E (kernel, or the eager column operations);
  // updates: the rest (U_FF, G, P, Z and the loss dots).
  for (int64_t b = 0; b < numBlocks; ++b)
    report.blockSeconds += cuda::Event::elapsedMs(marks[size_t(3 * b + 1)],
                                                  marks[size_t(3 * b + 2)]) /
                           1e3;
  report.updateSeconds =
      report.solveSeconds - report.factorSeconds - report.blockSeconds;
  for (size_t i = 1; i < ticks.size(); ++i)
    report.profileMs[ticks[i].first] +=
        cuda::Event::elapsedMs(ticks[i - 1].second, ticks[i].second);
  report.totalSeconds =
      std::chrono::duration<double>(Clock::now() - wallStart).count();
  return results;
}

} // namespace qfuse::runtime
