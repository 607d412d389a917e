//===- MatVecPlan.cpp - The matvec kernel's plan and its limits -----------===//

#include "MatVec/MatVecPlan.h"

#include "Common/KernelCommon.h"

#include "qfuse/Conversion/TensorCoreSupport.h"

#include "qfuse/format/Layout.h"
#include "qfuse/format/Numerics.h"

#include <numeric>

using namespace mlir;
using namespace mlir::qf;
using namespace mlir::qf::matvec;

using ErrorFn = function_ref<InFlightDiagnostic()>;

/// Picks the weight decode for the encoding and checks the target and layout
/// can run it.
static LogicalResult planDecode(const MatmulSpec &spec, Plan &p,
                                ErrorFn emitError) {
  EncodingAttr enc = spec.encoding;
  p.sparse = enc.isSparse24();
  p.colsPerStored = p.sparse ? 2 : 1;
  // qf-to-gpu runs act_order weights as plain ones on permuted activations
  // (docs/act-order.md): the kernel never reads perm.
  if (enc.getActOrder())
    return emitError() << "the matvec generator reads act_order weights as "
                          "plain ones (qf-to-gpu permutes the activations "
                          "first); got the encoding with act_order",
           failure();
  if (std::optional<std::string> why =
          matvecRefusesEncoding(enc, spec.target.getSmVersion()))
    return emitError() << *why, failure();
  p.decode = getDecodeFamily(enc.getFormat());
  if (p.decode == DecodeFamily::Int4Magic &&
      (spec.layout.getKind() != LayoutKind::Tiled ||
       spec.layout.getTileN() != 1))
    return emitError() << "int4/uint4 matvec kernels read the pair-"
                          "interleaved #qf.layout<tiled, tile_n = 1, ...>; "
                          "run qf-choose-layout",
           failure();
  if (p.decode != DecodeFamily::Int4Magic && !spec.layout.isRowMajor())
    return emitError() << "this format's matvec kernel reads row_major codes",
           failure();
  return success();
}

/// Sizes each lane's chunk of packed codes and checks it tiles a row.
static LogicalResult planChunks(const MatmulSpec &spec, Plan &p,
                                ErrorFn emitError) {
  EncodingAttr enc = spec.encoding;
  TilingAttr t = spec.tiling;
  p.bits = enc.getCodeBits();
  p.vecBytes = t.getVecBytes();
  p.unitWords = p.bits / std::gcd<int64_t>(p.bits, 32);
  // A multi-word chunk (3-bit: 3 loads) is narrowed, not dropped, when the
  // warp's rows would hold more than the in-flight budget (the row split is
  // checked below).
  if (p.unitWords > 1) {
    int64_t warps = t.getSplitK() == 8 ? 8 : 4;
    int64_t rowGroups = std::max<int64_t>(1, warps / t.getSplitK());
    int64_t rows = std::max<int64_t>(1, t.getBlockN() / rowGroups);
    while (p.vecBytes > 4 &&
           rows * p.unitWords * p.vecBytes > kMaxCodeBytesInFlight)
      p.vecBytes /= 2;
  }
  p.unitElems = 32 * p.unitWords / p.bits;
  p.chunkBytes = p.vecBytes * p.unitWords;
  p.elemsPerChunk = p.chunkBytes * 8 / p.bits;
  p.stepElems =
      p.streamsCodes() ? std::min<int64_t>(8, p.unitElems) : 32 / p.bits;
  // Under 2:4 a row stores its K / 2 kept values.
  p.rowBytes = (p.sparse ? spec.k / 2 : spec.k) * p.bits / 8;
  if (p.sparse && p.elemsPerChunk % 4 != 0)
    return emitError() << "2:4 kernels load whole bytes of metadata: a lane's "
                          "vec_bytes = "
                       << p.vecBytes << " holds " << p.elemsPerChunk
                       << " kept values; at least 4 (two quads) are needed",
           failure();
  if (p.unitWords == 1 && p.rowBytes % p.vecBytes != 0)
    return emitError() << "vec_bytes = " << p.vecBytes
                       << " does not divide a row's " << p.rowBytes
                       << " packed bytes (K = " << spec.k << ")",
           failure();
  if (p.rowBytes % p.chunkBytes != 0)
    return emitError() << p.bits << "-bit codes end on a word boundary every "
                       << p.unitWords << " words: a lane's chunk of "
                       << p.unitWords << " x vec_bytes = " << p.chunkBytes
                       << " bytes does not divide a row's " << p.rowBytes
                       << " packed bytes (K = " << spec.k << ")",
           failure();
  if (p.decode == DecodeFamily::Int4Magic &&
      spec.layout.getTileK() != p.elemsPerChunk)
    return emitError() << "layout tile_k = " << spec.layout.getTileK()
                       << " does not match one lane's load of "
                       << p.elemsPerChunk << " codes",
           failure();
  return success();
}

/// Splits a block's warps between row groups and split-K slices.
static LogicalResult planWarps(const MatmulSpec &spec, Plan &p,
                               ErrorFn emitError) {
  TilingAttr t = spec.tiling;
  p.chunksPerRow = p.rowBytes / p.chunkBytes;
  p.splitK = t.getSplitK();
  p.warps = p.splitK == 8 ? 8 : 4;
  if (p.warps % p.splitK != 0)
    return emitError() << "split_k must be 1, 2, 4 or 8, got " << p.splitK,
           failure();
  p.rowGroups = p.warps / p.splitK;
  if (t.getBlockN() % p.rowGroups != 0)
    return emitError() << "block_n = " << t.getBlockN()
                       << " is not a multiple of the " << p.rowGroups
                       << " row groups of a block",
           failure();
  p.rowsPerWarp = t.getBlockN() / p.rowGroups;
  p.m = spec.m;
  if (p.m < 1 || p.m > 8 || p.rowsPerWarp * p.m > 32)
    return emitError() << "matvec takes batch 1..8 and at most 32 row x batch "
                          "accumulators per warp; got batch "
                       << p.m << " with " << p.rowsPerWarp << " rows per warp",
           failure();
  if (t.getThreadsPerRow() != 32)
    return emitError() << "the matvec generator uses a full warp per row "
                          "(threads_per_row = 32)",
           failure();
  return success();
}

/// Checks the fused norm, silu_mul and qf.group against the plan.
static LogicalResult planFusions(const MatmulSpec &spec, Plan &p,
                                 ErrorFn emitError) {
  EncodingAttr enc = spec.encoding;
  TilingAttr t = spec.tiling;
  p.norm = spec.hasNorm;
  p.gated = spec.gated;
  if (p.gated) {
    if (p.rowsPerWarp % 2 != 0)
      return emitError() << "silu_mul streams the gate and up rows of each "
                            "output together: rows per warp (block_n / "
                         << p.rowGroups << " row groups = " << p.rowsPerWarp
                         << ") must be even",
             failure();
    if (enc.getFormat() == ElementFormat::Codebook && enc.getTableName())
      return emitError() << "silu_mul with a named codebook: gate and up "
                            "would each need their own shared code table",
             failure();
    if (spec.hasBias)
      return emitError() << "silu_mul takes no bias", failure();
  }
  if (!spec.groupNs.empty()) {
    if (p.gated)
      return emitError() << "a qf.group of silu_mul matmuls is not supported",
             failure();
    if (enc.getFormat() == ElementFormat::Codebook && enc.getTableName())
      return emitError() << "a qf.group cannot share a named codebook table "
                            "between weights",
             failure();
  }
  p.outRowsPerWarp = p.gated ? p.rowsPerWarp / 2 : p.rowsPerWarp;
  p.outBlockN = p.gated ? t.getBlockN() / 2 : t.getBlockN();
  return success();
}

/// Sets the unroll and the span of codes summed in half2 between scales.
static LogicalResult planSums(const MatmulSpec &spec, Plan &p,
                              ErrorFn emitError) {
  EncodingAttr enc = spec.encoding;
  TilingAttr t = spec.tiling;
  p.normVecElems = 1;
  for (int64_t v : {8, 4, 2})
    if (spec.k % v == 0) {
      p.normVecElems = v;
      break;
    }
  p.unroll = t.getKUnroll();
  // Multi-word chunks (3-, 5-, 6-, 7-bit codes) are several loads already:
  // unroll less rather than hold more than the in-flight budget.
  if (p.unitWords > 1)
    p.unroll = std::max<int64_t>(
        1, std::min(p.unroll,
                    kMaxCodeBytesInFlight / (p.rowsPerWarp * p.chunkBytes)));
  p.n = spec.n;
  p.k = spec.k;
  p.perChannel = enc.isPerChannel();
  p.numGroups = enc.getNumGroups(spec.k);
  // Half2 sums span at most 32 stored codes (16 products per half) before
  // they are scaled into the f32 accumulator.
  int64_t maxSpan = std::min<int64_t>(p.elemsPerChunk, 32);
  if (p.perChannel || !enc.isQuantized()) {
    p.spanElems = maxSpan;
  } else {
    int64_t g = enc.getGroupSize();
    // Groups count logical columns; under 2:4 a group of g columns holds
    // g / 2 stored codes.
    int64_t gs = g / p.colsPerStored;
    if (g % p.colsPerStored != 0 || gs % p.stepElems != 0 ||
        (gs % p.elemsPerChunk != 0 && p.elemsPerChunk % gs != 0))
      return emitError() << "group size " << g
                         << " does not align with the kernel's "
                         << p.stepElems * p.colsPerStored << "-code words and "
                         << p.elemsPerChunk * p.colsPerStored << "-code loads"
                         << (p.sparse ? " (logical columns under 2:4)" : ""),
             failure();
    p.spanElems = std::min(gs, maxSpan);
  }
  p.zeroRowBytes = (p.numGroups * p.bits + 7) / 8;
  return success();
}

/// Adds up the block's shared memory and checks it against the limit.
static LogicalResult planSharedMemory(const MatmulSpec &spec, Plan &p,
                                      ErrorFn emitError) {

  p.lutWords =
      needsSharedCodeTable(spec.encoding) ? lutWordsFor(p.bits) : 0;
  int64_t partials = p.splitK > 1 ? p.warps * p.rowsPerWarp * p.m * 4 : 0;
  // RMSNorm: each warp's partial sum of squares per batch row.
  int64_t normPartials = p.norm ? p.warps * p.m * 4 : 0;
  p.sharedBytes = partials + normPartials + p.lutWords * 4;
  int64_t limit = kMaxStaticShared;
  if (p.sharedBytes > limit)
    return emitError() << "the kernel needs " << p.sharedBytes
                       << " bytes of shared memory ("
                       << "code table " << p.lutWords * 4 << ", partial sums "
                       << partials << "), more than the " << limit
                       << " a block may use on sm_"
                       << spec.target.getSmVersion(),
           failure();
  return success();
}

FailureOr<matvec::Plan>
matvec::makePlan(const MatmulSpec &spec,
                 function_ref<InFlightDiagnostic()> emitError) {
  TilingAttr t = spec.tiling;
  Plan p;
  if (!t || t.getKernel() != KernelKind::MatVec)
    return emitError() << "the matvec generator needs a #qf.tiling<matvec, "
                          "...>; run qf-select-tiling",
           failure();
  if (failed(planDecode(spec, p, emitError)) ||
      failed(planChunks(spec, p, emitError)) ||
      failed(planWarps(spec, p, emitError)) ||
      failed(planFusions(spec, p, emitError)) ||
      failed(planSums(spec, p, emitError)) ||
      failed(planSharedMemory(spec, p, emitError)))
    return failure();
  return p;
}
