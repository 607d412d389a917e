//===- GptqSolveResults.cpp - The results of one GPTQ solve ---------------===//
//
// The last steps of GptqSolver::solve (GptqSolveRun.h): the codes, group
// parameters and losses back to the host as one result per module, or,
// when no damping makes the Hessian factor, round to nearest instead.
//
//===----------------------------------------------------------------------===//

#include "GptqSolveRun.h"

#include "ParallelRows.h"

#include "qfuse/gptq/Grid.h"
#include "qfuse/format/FieldGather.h"
#include "qfuse/runtime/device/DeviceGather.h"
#include "qfuse/runtime/device/PinnedBytesPool.h"
#include "qfuse/runtime/Error.h"

#include <chrono>
#include <limits>

namespace qfuse::runtime {
using namespace detail;

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
      moduleWeightF32(blas, options.widen, modules[m], k, given.data(),
                      stream, im.ones.ptr());
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

/// With options.gather: each module's codes packed into its codes
/// component on the device, on this solve's stream (the solvers of a
/// layer's groups pack at once), and downloaded into its packedCodes,
/// page-locked where the pool has room; `flags` becomes the device address
/// of one i32 per module (1: a code out of range), or 0 where none was
/// packed. Enqueued only: the caller synchronizes.
/// Returns which modules were packed (where the module's f16 weight was
/// written, so that the host rebinds none from the codes).
std::vector<bool>
SolveRun::enqueueDevicePacking(CUdeviceptr inOrder,
                               std::vector<GptqModuleResult> &results,
                               CUdeviceptr &flags) {
  std::vector<bool> packed(numModules, false);
  flags = 0;
  if (!options.gather || !writeHalves)
    return packed;
  std::vector<format::FieldGather> gathers(numModules);
  std::vector<size_t> at(numModules, 0);
  size_t bytes = 0;
  for (size_t m = 0; m < numModules; ++m) {
    std::string why;
    packed[m] = modules[m].halfOut != 0 &&
                format::codeBytesGather(enc, modules[m].n, k, gathers[m],
                                        why) &&
                options.gather->has(gathers[m].dstBits);
    if (!packed[m])
      continue;
    at[m] = bytes;
    bytes += (size_t(gathers[m].words()) * 4 + 15) / 16 * 16;
  }
  if (bytes == 0)
    return packed;
  const CUdeviceptr dst = buffer("packed codes", bytes).ptr();
  flags = buffer("packing status", numModules * 4).ptr();
  QFUSE_CU(cuMemsetD32Async(flags, 0, numModules, stream));
  int64_t r0 = 0;
  for (size_t m = 0; m < numModules; ++m) {
    const int64_t n = modules[m].n;
    if (packed[m]) {
      const format::FieldGather &g = gathers[m];
      options.gather->enqueue(g, offset(inOrder, r0 * k),
                              dst + at[m], flags + 4 * m, stream);
      const size_t size = size_t(g.dstBytes);
      results[m].packedCodes = options.codeDownloads
                                   ? options.codeDownloads->take(size)
                                   : HostBytes::allocate(size);
      QFUSE_CU_CTX(cuMemcpyDtoHAsync(results[m].packedCodes.data(),
                                     dst + at[m], size, stream),
                   "GPTQ: the packed codes of '" + modules[m].name + "'");
    }
    r0 += n;
  }
  return packed;
}

/// The codes in column order, [rows, K] (the kernel wrote them block by
/// block, [rows, wb] each, in the processing order), one download per module into its codeBytes, or,
/// with options.gather, packed on the device into its packedCodes
/// (enqueueDevicePacking); a module packed there gets its code bytes only
/// with checkGather, or when a code was out of range (the host names it).
void SolveRun::downloadCodeBytes(std::vector<GptqModuleResult> &results) {
  const CUdeviceptr blocked = buffer("codes").ptr(),
                    inOrder = buffer("codes in order").ptr();
  // Under act-order, position c goes to column perm[c] (the inverse
  // permutation, on the device).
  for (int64_t b = 0; b < numBlocks; ++b)
    if (options.actOrder)
      scatterColumns(inOrder, size_t(k), offset(blocked, rows * blockStart(b)),
                     size_t(blockWidth(b)), 1, size_t(rows),
                     perm.data() + blockStart(b), blockWidth(b), stream,
                     "codes in column order");
    else
      copy2D(offset(inOrder, blockStart(b)), size_t(k),
             offset(blocked, rows * blockStart(b)), size_t(blockWidth(b)),
             size_t(blockWidth(b)), size_t(rows), stream, "codes in order");
  CUdeviceptr flags = 0;
  const std::vector<bool> packed =
      enqueueDevicePacking(inOrder, results, flags);
  auto downloadBytes = [&](size_t m, int64_t r0) {
    HostBytes &bytes = results[m].codeBytes;
    const size_t size = size_t(modules[m].n * k);
    bytes = options.codeDownloads ? options.codeDownloads->take(size)
                                  : HostBytes::allocate(size);
    QFUSE_CU_CTX(cuMemcpyDtoHAsync(bytes.data(), offset(inOrder, r0 * k),
                                   bytes.size(), stream),
                 "GPTQ: the codes of '" + modules[m].name + "'");
  };
  int64_t r0 = 0;
  for (size_t m = 0; m < numModules; ++m) {
    if (!packed[m] || options.checkGather)
      downloadBytes(m, r0);
    r0 += modules[m].n;
  }
  // Last on the stream: a download into pageable memory returns only once
  // it is done.
  std::vector<int32_t> status(numModules, 0);
  if (flags)
    QFUSE_CU(cuMemcpyDtoHAsync(status.data(), flags, numModules * 4, stream));
  QFUSE_CU(cuStreamSynchronize(stream));
  r0 = 0;
  bool again = false;
  for (size_t m = 0; m < numModules; ++m) {
    if (packed[m] && status[m] != 0) {
      results[m].packedCodes = HostBytes();
      if (!options.checkGather) {
        downloadBytes(m, r0);
        again = true;
      }
    }
    r0 += modules[m].n;
  }
  if (again)
    QFUSE_CU(cuStreamSynchronize(stream));
}

/// Codes, group parameters and losses back to the host, in the original
/// column order, as one format::Unpacked per module (or, codesAsBytes,
/// the codes as bytes beside the other parameters).
std::vector<GptqModuleResult> SolveRun::collect() {
  std::vector<uint8_t> hostCodes(codesAsBytes ? 0 : size_t(rows * k));
  std::vector<float> hostScales(static_cast<size_t>(paramCount)),
      hostZeros(hasZeros ? hostScales.size() : 0);
  std::vector<float> hostLoss(static_cast<size_t>(numBlocks) * numModules);
  eDone.synchronize();
  if (options.onDeviceDone)
    options.onDeviceDone();
  const auto finishStart = Clock::now();
  std::vector<GptqModuleResult> results(numModules);
  if (codesAsBytes)
    downloadCodeBytes(results);
  else
    buffer("codes").download(hostCodes.data(), hostCodes.size());
  if (dynamic) {
    buffer("scales").download(hostScales.data(), hostScales.size() * 4);
    if (hasZeros)
      buffer("zeros").download(hostZeros.data(), hostZeros.size() * 4);
  }
  buffer("loss").download(hostLoss.data(), hostLoss.size() * 4);

  // The kernel stores the logical code's low byte.
  auto codeAt = [&](int64_t r, int64_t c) -> int32_t {
    const uint8_t byte =
        options.eager
            ? hostCodes[size_t(c * rows + r)]
            : hostCodes[size_t(rows * blockStart(c / kBlockWidth) +
                               r * blockWidth(c / kBlockWidth) +
                               (c - blockStart(c / kBlockWidth)))];
    return format::codeFromByte(enc.format, byte);
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
    out.halfWritten = writeHalves && modules[m].halfOut != 0;
    format::Unpacked &q = out.weight;
    if (!codesAsBytes) {
      q.codes.resize(static_cast<size_t>(out.n * k));
      detail::parallelRows(out.n, [&](int64_t first, int64_t last) {
        for (int64_t r = first; r < last; ++r)
          for (int64_t c = 0; c < k; ++c)
            q.codes[size_t(r * k + perm[size_t(c)])] = codeAt(r0 + r, c);
      });
    }
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

} // namespace qfuse::runtime
