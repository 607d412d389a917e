//===- TensorCorePlan.cpp - the tensor-core kernel's plan ------------------===//

#include "TensorCore/TensorCorePlan.h"

#include "Common/KernelCommon.h"

#include "qfuse/Conversion/TensorCoreStage.h"
#include "qfuse/Conversion/TensorCoreSupport.h"
#include "qfuse/Dialect/QF/IR/FormatBridge.h"
#include "qfuse/format/MmaLayout.h"
#include "qfuse/format/SparseMmaLayout.h"

#include "llvm/Support/CommandLine.h"

using namespace mlir;
using namespace mlir::qf;
using namespace mlir::qf::tensor_core;

using ErrorFn = function_ref<InFlightDiagnostic()>;

// Both m16 tiles of a slab share one metadata word per lane through
// sparsity selectors 0 and 1; the option reads tile 1's with selector 0
// from a word shuffled from lane ^ 2 instead, for A/B runs.
static llvm::cl::opt<bool> sparseMetaPerTile(
    "qf-mma-sp-meta-per-tile",
    llvm::cl::desc("2:4 on mma.sp: read both m16 tiles' metadata with "
                   "sparsity selector 0 (one shuffle per k slab) instead of "
                   "selectors 0 and 1 (the default)"),
    llvm::cl::init(false));

// Which wgmma kernels are fed by a producer warpgroup through mbarriers
// instead of every thread copying its share and the k group meeting at a
// barrier each step (docs/tensor-core.md has the measurements).
enum class ProducerUse { Gated, All, Off };
static llvm::cl::opt<ProducerUse> wgmmaProducer(
    "qf-wgmma-producer",
    llvm::cl::desc("wgmma kernels fed by a producer warpgroup"),
    llvm::cl::values(
        clEnumValN(ProducerUse::Gated, "gated",
                   "silu_mul (gate/up) kernels only (the default)"),
        clEnumValN(ProducerUse::All, "all", "every wgmma kernel"),
        clEnumValN(ProducerUse::Off, "off", "none")),
    llvm::cl::init(ProducerUse::Gated));

/// Checks 2:4 weights against mma.sp, whose sparse A fragments are decoded
/// from the 2:4 fragment layout (SparseMmaLayout.h).
static LogicalResult planSparseDecode(const MatmulSpec &spec, Plan &p,
                                      ErrorFn emitError) {
  EncodingAttr enc = spec.encoding;
  p.lut = false;
  p.codeBits = enc.getCodeBits();
  p.tileBytes = 0;
  if (p.wgmma)
    return emitError() << "2:4 weights run on mma.sp (#qf.tiling<mma, ...>); "
                          "the wgmma kernel reads dense weights",
           failure();
  if (spec.bf16)
    return emitError() << "the mma.sp kernel reads f16 activations; 2:4 "
                          "weights with bf16 activations run the fallback",
           failure();
  if (!isSparseMmaLayout(spec.layout))
    return emitError() << "the mma.sp kernel reads 2:4 codes in "
                          "#qf.layout<tiled, tile_n = 32, tile_k = 64>; got "
                       << spec.layout << "; run qf-choose-layout",
           failure();
  p.metaSelectorPair = !sparseMetaPerTile;
  return success();
}

/// Picks the weight decode and checks the encoding and the fragment layout.
static LogicalResult planDecode(const MatmulSpec &spec, Plan &p,
                                ErrorFn emitError) {
  EncodingAttr enc = spec.encoding;
  TilingAttr t = spec.tiling;
  p.wgmma = t.getKernel() == KernelKind::WGMMA;
  p.sparse24 = enc.isSparse24();
  if (std::optional<std::string> refusal =
          tensorCoreRefusesEncoding(enc, spec.target.getSmVersion()))
    return emitError() << *refusal, failure();
  p.decode = getDecodeFamily(enc.getFormat());
  if (p.sparse24)
    return planSparseDecode(spec, p, emitError);
  p.lut = needsSharedCodeTable(enc);
  p.codeBits = enc.getCodeBits();
  p.tileBytes = kTile * kTile * p.codeBits / 8;
  LayoutAttr layout = spec.layout;
  if (layout.getKind() != LayoutKind::Tiled || layout.getTileN() != kTile ||
      layout.getTileK() != kTile || layout.getInterleave() != 1)
    return emitError() << "the tensor-core kernel reads the fragment layout "
                          "#qf.layout<tiled, tile_n = 32, tile_k = 32>; got "
                       << layout << "; run qf-choose-layout",
           failure();
  return success();
}

/// Checks the tiling's block sizes, stages and k split against the target.
static LogicalResult planTiling(const MatmulSpec &spec, Plan &p,
                                ErrorFn emitError) {
  TilingAttr t = spec.tiling;
  p.m = spec.m;
  p.n = spec.n;
  p.k = spec.k;
  p.blockM = t.getBlockM();
  p.blockK = t.getBlockK();
  p.stages = t.getStages();
  p.kGroups = t.getSplitK();
  if (p.blockM < 16 || p.blockM > 128 || p.blockM % 16 != 0)
    return emitError() << "block_m must be a multiple of 16 up to 128; got "
                       << p.blockM,
           failure();
  if (t.getBlockN() % kTile != 0 || t.getBlockN() > 128)
    return emitError() << "block_n must be 32, 64, 96 or 128; got "
                       << t.getBlockN(),
           failure();
  if (p.blockK != 64 && p.blockK != 128)
    return emitError() << "block_k must be 64 or 128; got " << p.blockK,
           failure();
  if (p.stages < 2 || p.stages > 8)
    return emitError() << "stages must be 2..8; got " << p.stages, failure();
  p.clusterK = t.getClusterK();
  if (p.clusterK > 1 && spec.target.getSmVersion() < 90)
    return emitError() << "cluster_k = " << p.clusterK
                       << " needs thread-block clusters (sm_90); target is sm_"
                       << spec.target.getSmVersion(),
           failure();
  if (!llvm::is_contained({1, 2, 4, 8}, p.kGroups))
    return emitError() << "split_k must be 1, 2, 4 or 8; got " << p.kGroups,
           failure();
  if (p.m < 1)
    return emitError() << "batch must be positive; got " << p.m, failure();
  if (p.sparse24) {
    if (p.k % p.blockK != 0)
      return emitError() << "2:4 rows are copied in whole block_k steps; "
                            "block_k = "
                         << p.blockK << " does not divide K = " << p.k,
             failure();
    namespace format = qfuse::format;
    p.sparseTilesK = format::sparseMmaPaddedK(p.k) / 128;
    p.sparseTileBytes = format::kSparseMmaTileN * format::kSparseMmaTileK *
                        p.codeBits / 8;
    p.stepLaneBytes = p.blockK / 2 * p.codeBits / 8;
    p.stepMetaBytes = p.blockK / 8;
  }
  return success();
}

/// Collects the N of every member weight and checks silu_mul and qf.group.
static LogicalResult planMembers(const MatmulSpec &spec, Plan &p,
                                 ErrorFn emitError) {
  EncodingAttr enc = spec.encoding;
  TilingAttr t = spec.tiling;
  p.memberNs = {p.n};
  p.memberNs.append(spec.groupNs.begin(), spec.groupNs.end());
  p.blockN = t.getBlockN();
  p.nTail = p.oddN = p.blockTail = false;
  for (int64_t n : p.memberNs) {
    p.nTail |= n % kTile != 0;
    p.oddN |= n % 2 != 0;
    p.blockTail |= qfuse::format::mmaPaddedN(n) % p.blockN != 0;
  }
  // Columns past N exist as soon as a block reaches past the tiles.
  p.nTail |= p.blockTail;
  p.members = spec.gated ? 2 : 1;
  if (spec.gated) {
    if (spec.hasBias)
      return emitError() << "silu_mul takes no bias", failure();
    if (!spec.groupNs.empty())
      return emitError() << "a qf.group of silu_mul matmuls is not supported",
             failure();
    if (t.getClusterK() > 1)
      return emitError() << "silu_mul combines gate and up inside a block; "
                            "cluster_k = "
                         << t.getClusterK() << " is not supported with it",
             failure();
  }
  if ((spec.gated || !spec.groupNs.empty()) &&
      enc.getFormat() == ElementFormat::Codebook && enc.getTableName())
    return emitError() << "a named codebook table is one parameter; "
                       << (spec.gated ? "silu_mul" : "a qf.group")
                       << " would need one per weight",
           failure();
  if (std::optional<std::string> refusal =
          tensorCoreRefusesShape(enc, p.n, p.k))
    return emitError() << *refusal, failure();
  return success();
}

/// Sets the warps of a block and the block_k steps along K.
static LogicalResult planWarps(const MatmulSpec &spec, Plan &p,
                               ErrorFn emitError) {
  TilingAttr t = spec.tiling;
  p.mTiles = p.blockM / 16;
  p.nWarps = t.getBlockN() / kTile;
  p.groupWarps = p.nWarps * p.members;
  p.warps = p.groupWarps * p.kGroups;
  p.threads = p.warps * 32;
  if (p.warps > 16)
    return emitError() << "block_n / 32 x split_k"
                       << (spec.gated ? " x 2 (silu_mul)" : "") << " = "
                       << p.warps << " warps; at most 16 fit a block",
           failure();
  p.kTilesPerStep = p.blockK / kTile;
  p.kTiles = qfuse::format::mmaPaddedK(p.k) / kTile;
  p.steps = (p.k + p.blockK - 1) / p.blockK;
  p.kTail = p.k % p.blockK != 0;
  if (p.steps < p.kGroups * p.clusterK)
    return emitError() << "split_k x cluster_k = " << p.kGroups * p.clusterK
                       << " exceeds the " << p.steps
                       << " block_k steps of K = " << p.k,
           failure();
  return success();
}

/// Sets how group scales and zeros are read and when they are applied.
static LogicalResult planScales(const MatmulSpec &spec, Plan &p,
                                ErrorFn emitError) {
  EncodingAttr enc = spec.encoding;
  TilingAttr t = spec.tiling;
  if (!enc.isQuantized()) { // 2:4 f16: the values as they are
    p.perChannel = true;
    p.numGroups = 1;
    p.groupSize = p.k;
    p.groupsPerStep = 1;
    p.deferScale = false;
    p.scaleBytes = 0;
    p.intZeros = p.floatZeros = false;
    p.zeroRowBytes = 0;
    return success();
  }
  p.perChannel = enc.isPerChannel();
  p.numGroups = enc.getNumGroups(p.k);
  p.groupSize = p.perChannel ? p.k : enc.getGroupSize();
  if (!p.perChannel &&
      (p.groupSize % 16 != 0 ||
       (p.groupSize % p.blockK != 0 && p.blockK % p.groupSize != 0)))
    return emitError() << "group size " << p.groupSize
                       << " must be a multiple of 16 that divides, or is a "
                          "multiple of, block_k = "
                       << p.blockK,
           failure();
  p.groupsPerStep =
      p.perChannel ? 1 : std::max<int64_t>(1, p.blockK / p.groupSize);
  // A group's fold costs 16 mTiles fmas plus 8 scale reads per lane; the
  // multiplies it replaces cost groupSize / 2.
  p.deferScale = p.perChannel || p.groupSize >= 32 * p.mTiles + 32;
  // mma.sp: the scale multiplies the decoded A fragments, 4 half2 per k32
  // slab and 16 rows whatever the batch, where a deferred fold would cost
  // an fma per accumulator and group.
  if (p.sparse24)
    p.deferScale = false;
  if (p.wgmma) {
    // A warpgroup per k group (two under silu_mul: gate's, then up's):
    // four n warps, each decoding its 32-row tile row into two 16-row A
    // fragments of m64 wgmmas whose B is the k group's activation tile,
    // read by a descriptor from the 128-byte-swizzled shared memory the
    // pipeline writes (so block_k is 64: one swizzle row). Group scales
    // multiply the fragments; per-channel ones fold in the epilogue.
    if (!spec.target.isArchSpecific())
      return emitError() << "the wgmma kernel needs sm_90a (qfuse-compile "
                            "--chip=sm_90a); target is sm_"
                         << spec.target.getSmVersion(),
             failure();
    if (p.nWarps != 4 || p.blockK != 64)
      return emitError() << "the wgmma kernel takes block_n = 128 (a "
                            "warpgroup per k group and weight) and "
                            "block_k = 64; got "
                         << t,
             failure();
    p.deferScale = p.perChannel;
  }
  Type st = enc.getScaleType();
  p.scaleBytes = st.getIntOrFloatBitWidth() / 8;
  // Small groups: a row's scales of a step are contiguous, so a lane copies
  // them with one cp.async instead of one word per group (NVFP4 at
  // block_k = 128: 8 bytes, not 8 words), where every step is whole (no run
  // past the row) and runs are aligned.
  const int64_t run = p.groupsPerStep * p.scaleBytes;
  if (!p.perChannel && !p.deferScale && !p.sparse24 && !p.kTail &&
      p.groupsPerStep > 1 && (run == 4 || run == 8 || run == 16) &&
      (p.numGroups * p.scaleBytes) % run == 0)
    p.scaleRunBytes = run;
  p.intZeros = enc.getZeroPoint() == ZeroPointKind::Int;
  p.floatZeros = enc.getZeroPoint() == ZeroPointKind::Float;
  p.zeroRowBytes = (p.numGroups * p.codeBits + 7) / 8;
  const int64_t stepZeroBits = p.groupsPerStep * p.codeBits;
  p.zeroWordPerStep = p.intZeros && !p.perChannel && !p.sparse24 &&
                      !p.kTail && p.groupsPerStep > 1 &&
                      32 % stepZeroBits == 0 && p.zeroRowBytes % 4 == 0;
  return success();
}

/// Lays out the pipeline's shared memory and checks it fits a block.
static LogicalResult planSharedMemory(const MatmulSpec &spec, Plan &p,
                                      ErrorFn emitError) {
  // Shared memory: the pipeline (stages of A, then codes, then scale and
  // zero slots), then (reused) the split-K partial sums.
  TensorCoreStage stage = getTensorCoreStage(
      p.blockM, p.blockK, p.codeBits, p.groupsPerStep,
      p.intZeros || p.floatZeros, p.sparse24);
  p.aBytes = stage.activations;
  int64_t off = 0;
  p.aOff = off;
  off += p.stages * p.kGroups * stage.activations;
  p.bOff = off;
  off += p.stages * p.warps * stage.codes;
  p.sOff = off;
  off += p.stages * p.warps * stage.scales;
  p.zOff = off;
  off += p.stages * p.warps * stage.zeros;
  p.pipelineBytes = off;
  // In-block partials of k groups 1.., the sums of cluster ranks 1.. (in
  // rank 0), or the gate sums handed to the up warps (silu_mul).
  int64_t handOverSlots =
      tensorCoreHandOverSlots(p.kGroups, p.clusterK, p.members);
  p.lutOff = std::max(
      off, tensorCoreHandOverBytes(handOverSlots, p.groupWarps, p.blockM));
  p.total = tensorCoreSharedBytes(stage, p.stages, p.kGroups, p.warps,
                                  p.clusterK, p.members, p.groupWarps,
                                  p.blockM,
                                  p.lut ? codeTableBytes(p.codeBits) : 0);
  if (p.total > spec.target.getMaxSharedPerBlock())
    return emitError() << "the tiling needs " << p.total
                       << " bytes of shared memory, more than the "
                       << spec.target.getMaxSharedPerBlock()
                       << " a block can have on " << spec.target.getChip(),
           failure();
  return success();
}

/// The producer warpgroup of a wgmma kernel: its threads, the mbarriers
/// after the rest of shared memory and the registers the k groups' threads
/// take over from it (a block's registers are those of a thread at the
/// launch's limit, kBlockRegisters / threads rounded down to 8, times its
/// threads). A
/// tiling whose pipeline leaves no room for the mbarriers, or with more
/// than two warpgroups of its own (whose registers would serialize their
/// wgmmas), runs without the producer.
static void planProducer(const MatmulSpec &spec, Plan &p) {
  int64_t barrierOff = (p.total + 7) / 8 * 8;
  int64_t total = barrierOff + 2 * 8 * p.stages * p.kGroups;
  int64_t consumers = p.warps * 32;
  bool wanted = wgmmaProducer == ProducerUse::All ||
                (wgmmaProducer == ProducerUse::Gated && spec.gated);
  p.producer = p.wgmma && wanted && consumers <= 256 &&
               total <= spec.target.getMaxSharedPerBlock();
  if (!p.producer)
    return;
  p.launchRegisters =
      std::min<int64_t>(kBlockRegisters / (consumers + kProducerThreads) / 8 * 8,
                        255);
  int64_t blockRegisters =
      p.launchRegisters * (consumers + kProducerThreads);
  p.consumerRegisters = std::min<int64_t>(
      (blockRegisters - kProducerThreads * kProducerRegisters) / consumers /
          8 * 8,
      256);
  p.threads += kProducerThreads;
  p.barrierOff = barrierOff;
  p.total = total;
}

FailureOr<Plan>
tensor_core::makePlan(const MatmulSpec &spec,
                      function_ref<InFlightDiagnostic()> emitError) {
  TilingAttr t = spec.tiling;
  Plan p;
  if (!t || !isTensorCoreKernel(t.getKernel()))
    return emitError() << "the tensor-core generator needs a #qf.tiling<mma, "
                          "...> or <wgmma, ...>; run qf-select-tiling",
           failure();
  if (failed(planDecode(spec, p, emitError)) ||
      failed(planTiling(spec, p, emitError)) ||
      failed(planMembers(spec, p, emitError)) ||
      failed(planWarps(spec, p, emitError)) ||
      failed(planScales(spec, p, emitError)) ||
      failed(planSharedMemory(spec, p, emitError)))
    return failure();
  planProducer(spec, p);
  p.mBlocks = (p.m + p.blockM - 1) / p.blockM;
  p.nBlocks = 0;
  for (int64_t n : p.memberNs)
    p.nBlocks += blocksOf(n, p.blockN);
  return p;
}
