//===- MmaTimeModel.cpp - predicted time of an mma.sync tiling -----------===//
//
// One formula with bench/cost-model/fit.py, which fits kParams to the
// tuning sweeps of the training shapes; docs/cost-model.md explains each
// term and reports the fit and the regret.
//
//===----------------------------------------------------------------------===//

#include "qfuse/Dialect/QF/Transforms/MmaTimeModel.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::qf;

namespace {

/// Fitted on an H200 (sm_90, 132 SMs, 4.8 TB/s): cycles per mma.sync of a
/// scheduler (tensor), per issued instruction, decode instructions per
/// fragment tile and k slab (int4), the dependency chain of a block_k step
/// (fixed + per k slab), bytes per cycle an SM fills shared memory at,
/// microseconds per block (prologue, epilogue) and per cluster block
/// beyond the first (the exchange through distributed shared memory),
/// the attained DRAM and L2 bandwidth (TB/s; the sweeps ran with warm L2)
/// and the launch.
struct Params {
  double tensorCycles = 5.2038, issueCycles = 1.0781, decodeInstrs = 7.4581;
  double chainCycles = 371.3985, chainCyclesPerSlab = 54.9193;
  double fillBytesPerCycle = 53.4444;
  double blockUs = 2.7756, clusterUs = 0.1818;
  double dramTBps = 8.5207, l2TBps = 7.8564, launchUs = 2.4919;
  double clockGhz = 1.7;
};
constexpr Params kParams;
constexpr double kFitBandwidthGbps = 4800;
constexpr int64_t kSharedPerSm = 228 * 1024, kRegistersPerSm = 65536;
constexpr int64_t kMaxWarpsPerSm = 64, kMaxBlocksPerSm = 32;

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// ptxas's registers per thread of the int4 kernel at each block_m (sm_90).
int64_t registersPerThread(int64_t blockM) {
  if (blockM <= 16)
    return 96;
  if (blockM <= 32)
    return 144;
  if (blockM <= 48)
    return 168;
  if (blockM <= 64)
    return 160;
  return 243;
}

/// Weight bits streamed per logical element: the code, or under 2:4 half
/// a code and a 2-bit position per kept code.
double storedBitsPerElement(const MmaLaunchShape &l) {
  return l.sparse24 ? double(l.codeBits) / 2 + 1 : double(l.codeBits);
}

} // namespace

double qf::predictMmaTimeUs(const MmaLaunchShape &l, const MmaTimeTarget &t) {
  const Params &p = kParams;
  int64_t mBlocks = ceilDiv(l.m, l.blockM);
  int64_t nBlocks = ceilDiv(l.n, l.blockN);
  int64_t blocks = mBlocks * nBlocks * l.clusterK;
  int64_t warps = l.blockN / 32 * l.splitK * l.members;
  int64_t resident = std::min(
      {kSharedPerSm / std::max<int64_t>(l.sharedBytes, 1),
       kRegistersPerSm / (registersPerThread(l.blockM) * 32 * warps),
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
                 (slabs * 4 * p.decodeInstrs * l.decodeCost * sparseShare +
                  mmas + slabs * 8) *
                 p.issueCycles / 4;
  double chain = p.chainCycles + p.chainCyclesPerSlab * slabs;
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

  // Weights once from DRAM; from L2 again per m block, and the activations
  // per n block.
  double scale = t.bandwidthGbps / kFitBandwidthGbps;
  double weightBytes = double(l.n * l.members) * double(l.k) *
                       bitsPerElement / 8 * 1.03;
  double l2Bytes = double(l.m) * double(l.k) * 2 * double(nBlocks) +
                   weightBytes * double(mBlocks);
  double memoryUs = weightBytes / (p.dramTBps * scale * 1e6) +
                    l2Bytes / (p.l2TBps * scale * 1e6);
  return std::max(double(rounds) * blockUs, memoryUs) + p.launchUs;
}
