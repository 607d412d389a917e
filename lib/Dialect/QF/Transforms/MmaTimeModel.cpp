//===- MmaTimeModel.cpp - predicted time of an mma.sync tiling -----------===//
//
// One formula with bench/cost-model/fit.py, which fits kParams to the
// tuning sweeps of the training shapes; docs/cost-model.md explains each
// term and reports the fit and the regret.
//
//===----------------------------------------------------------------------===//

#include "qfuse/Dialect/QF/Transforms/MmaTimeModel.h"

#include "qfuse/Conversion/TensorCoreOccupancy.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::qf;

namespace {

/// Fitted on an H200 (sm_90, 132 SMs, 4.8 TB/s): cycles per mma.sync of a
/// scheduler (tensor), per issued instruction, decode instructions per
/// fragment tile and k slab of each decode (int4 magic, table lookups,
/// 8-bit magic), instructions per fragment tile and scale group (the scale
/// read and converted), the dependency chain of a block_k step (fixed, per
/// k slab, per decode instruction of the warp), bytes per cycle an SM fills shared memory at, microseconds per
/// block (prologue, epilogue) and per cluster block beyond the first (the
/// exchange through distributed shared memory), the attained DRAM and L2
/// bandwidth (TB/s; the sweeps ran with warm L2) and the launch.
struct Params {
  double tensorCycles = 5.2084, issueCycles = 1.0781;
  double decodeInstrs = 5.3734, tableDecodeInstrs = 29.7709;
  double int8DecodeInstrs = 13.3833, groupInstrs = 9.9896;
  double chainCycles = 358.8052, chainCyclesPerSlab = 40.7674;
  double chainCyclesPerDecodeInstr = 0.9808;
  double fillBytesPerCycle = 51.2429;
  double blockUs = 2.7645, clusterUs = 0.3060;
  double dramTBps = 9.9153, l2TBps = 7.4798, launchUs = 2.2020;
  double clockGhz = 1.7;
};
constexpr Params kParams;
constexpr double kFitBandwidthGbps = 4800;
constexpr int64_t kSharedPerSm = 228 * 1024;
constexpr int64_t kMaxWarpsPerSm = 64, kMaxBlocksPerSm = 32;

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// No training sweep measures these (docs/cost-model.md): fp8's decode (a
/// cvt per pair) relative to int4's, and a zero point's read per group
/// relative to a scale's.
constexpr double kFp8DecodeRelative = 0.7, kZeroReadRelative = 1.0;
/// 2:4 f16 (mma.sp, not fitted): moving the kept halves, a quarter of int4's.
constexpr double kHalfDecodeRelative = 0.25;

/// Decode instructions per 8-row fragment tile and 16-wide k slab.
double decodeInstrs(const Params &p, DecodeFamily decode) {
  switch (decode) {
  case DecodeFamily::Int4Magic:
    return p.decodeInstrs;
  case DecodeFamily::Int8Magic:
    return p.int8DecodeInstrs;
  case DecodeFamily::Fp8Cvt:
    return kFp8DecodeRelative * p.decodeInstrs;
  case DecodeFamily::Half:
    return kHalfDecodeRelative * p.decodeInstrs;
  case DecodeFamily::Table:
    return p.tableDecodeInstrs;
  }
  return p.decodeInstrs;
}

/// A warp's instructions per block_k step for its scale groups: per tile
/// and group a scale (and zero point) read and converted, and where the
/// kernel defers the scales (TensorCorePlan.cpp: group >= 32 x m tiles +
/// 32) an f32 fma per accumulator folding the group's sums. Per-channel
/// scales fold once, after the K loop.
double groupInstrs(const Params &p, const MmaLaunchShape &l) {
  if (l.groupSize == 0)
    return 0;
  int64_t mTiles = l.blockM / 16;
  double fold = l.groupSize >= 32 * mTiles + 32 ? 4.0 * double(mTiles) : 0;
  double reads = p.groupInstrs * (1 + (l.zeroBits ? kZeroReadRelative : 0));
  return double(l.blockK) / double(l.groupSize) * 4 * (reads + fold);
}

/// Weight bits streamed per logical element: the code, or under 2:4 half
/// a code and a 2-bit position per kept code.
double storedBitsPerElement(const MmaLaunchShape &l) {
  return l.sparse24 ? double(l.codeBits) / 2 + 1 : double(l.codeBits);
}

} // namespace

MmaTimePrediction qf::predictMmaTime(const MmaLaunchShape &l,
                                     const MmaTimeTarget &t) {
  const Params &p = kParams;
  int64_t mBlocks = ceilDiv(l.m, l.blockM);
  int64_t nBlocks = ceilDiv(l.n, l.blockN);
  int64_t blocks = mBlocks * nBlocks * l.clusterK;
  int64_t warps = l.blockN / 32 * l.splitK * l.members;
  int64_t resident = std::min(
      {kSharedPerSm / std::max<int64_t>(l.sharedBytes, 1),
       getTensorCoreBlocksByRegisters(l.blockM, 32 * warps),
       kMaxWarpsPerSm / warps, kMaxBlocksPerSm});
  resident = std::max<int64_t>(resident, 1);
  int64_t perSm = ceilDiv(blocks, t.smCount);
  int64_t rounds = ceilDiv(perSm, resident);
  double concurrent = double(std::min(resident, perSm) * warps);

  // One block_k step of every resident warp on an SM's four schedulers.
  // 2:4 (mma.sp.m16n8k32, not fitted: assumed to take an m16n8k16's
  // cycles for twice its k) issues half the mmas and decodes half the
  // codes; its warps copy the kept codes and a metadata bit per element.
  double slabs = double(l.blockK / 16);
  double sparseShare = l.sparse24 ? 0.5 : 1.0;
  double mmas = slabs * double(l.blockM / 16) * 4 * sparseShare;
  double tensor = concurrent * mmas * p.tensorCycles / 4;
  double issue = concurrent *
                 (slabs * 4 * decodeInstrs(p, l.decode) * sparseShare + mmas +
                  slabs * 8 + groupInstrs(p, l)) *
                 p.issueCycles / 4;
  // One warp's step: a fixed chain plus, per k slab, the mma chain and its
  // own decode (table lookups wait on shared memory).
  double chain = p.chainCycles +
                 slabs * (p.chainCyclesPerSlab +
                          4 * decodeInstrs(p, l.decode) * sparseShare *
                              p.chainCyclesPerDecodeInstr);
  double bitsPerElement = storedBitsPerElement(l);
  double fillBytes = double(l.splitK * l.blockM * l.blockK * 2) +
                     double(warps * l.blockK) * bitsPerElement * 4;
  double fill = double(std::min(resident, perSm)) * fillBytes /
                p.fillBytesPerCycle;
  int64_t steps = ceilDiv(l.k, l.clusterK * l.splitK * l.blockK);
  // The tensor pipe and the decode share the schedulers' issue slots.
  double stepCycles = std::max({chain, tensor + issue, fill});
  double blockUs = double(steps) * stepCycles / (p.clockGhz * 1e3) +
                   p.blockUs + p.clusterUs * double(l.clusterK - 1);

  // Weights (codes, then a scale and a zero point per group) once from
  // DRAM; from L2 again per m block, and the activations per n block.
  double scale = t.bandwidthGbps / kFitBandwidthGbps;
  int64_t groups = l.groupSize == 0 ? 1 : ceilDiv(l.k, l.groupSize);
  double weightBytes =
      double(l.n * l.members) *
      (double(l.k) * bitsPerElement / 8 +
       double(groups) * (double(l.scaleBytes) + double(l.zeroBits) / 8));
  double l2Bytes = double(l.m) * double(l.k) * 2 * double(nBlocks) +
                   weightBytes * double(mBlocks);
  double memoryUs = weightBytes / (p.dramTBps * scale * 1e6) +
                    l2Bytes / (p.l2TBps * scale * 1e6);
  double computeUs = double(rounds) * blockUs;
  return {std::max(computeUs, memoryUs) + p.launchUs, computeUs};
}

double qf::predictMmaTimeUs(const MmaLaunchShape &l, const MmaTimeTarget &t) {
  return predictMmaTime(l, t).us;
}
