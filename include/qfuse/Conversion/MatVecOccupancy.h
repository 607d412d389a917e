//===- MatVecOccupancy.h - the matvec's resident blocks per SM -*- C++ -*-===//
//
// How many blocks of a matvec kernel an SM holds, defined once: the kernel
// asks ptxas for that many (.minnctapersm, which sets its register budget;
// lib/Conversion/QFToGPU/MatVec/MatVecKernel.cpp), and qf-select-tiling
// reads it to see whether a tiling's grid runs in one wave. Header-only:
// the cost model's library does not link the conversion.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_CONVERSION_MATVECOCCUPANCY_H
#define QFUSE_CONVERSION_MATVECOCCUPANCY_H

#include <algorithm>
#include <cstdint>

namespace mlir {
namespace qf {

/// What a matvec launch's registers and residency depend on.
struct MatVecOccupancyShape {
  int64_t rowsPerWarp; ///< rows a warp streams at once
  int64_t m;           ///< activation rows (the batch)
  int64_t unroll;      ///< chunks in flight per row (k_unroll)
  int64_t vecBytes;    ///< bytes of one lane's code load
  int64_t warps;       ///< warps a block
  bool norm = false;   ///< an RMSNorm prologue
  int64_t sharedBytes = 0;
};

/// The fewest registers a thread the matvec trades its 50% headroom down to
/// for a grid that then fits one wave: what the M <= 4 variants get under
/// the headroom; ptxas fits the M <= 8 ones into it with at most a few words
/// spilled, where fewer registers spilled hundreds of bytes
/// (docs/defaults.md, "Matvec occupancy").
inline constexpr int64_t kMatVecOneWaveRegisters = 128;

/// A lane's registers: codes in flight, decoded pairs, activations,
/// accumulators.
inline int64_t getMatVecRegisterEstimate(const MatVecOccupancyShape &s) {
  int64_t codes = s.unroll * s.rowsPerWarp * s.vecBytes / 4;
  int64_t estimate = 24 + codes + 2 * s.rowsPerWarp * s.m + 4 * s.m + 8;
  // RMSNorm: the row scales, gamma words and f32 temporaries.
  if (s.norm)
    estimate += s.m + 8;
  return estimate;
}

/// Resident blocks per SM: what the register estimate leaves with 50%
/// headroom, or more, down to kMatVecOneWaveRegisters a thread, where that
/// lets one wave of `smCount` SMs hold the `gridBlocks` blocks (a second,
/// partial wave costs more than the headroom saves); never more than
/// shared memory lets reside.
inline int64_t getMatVecResidentBlocks(const MatVecOccupancyShape &s,
                                       int64_t gridBlocks, int64_t smCount) {
  int64_t threads = s.warps * 32;
  auto blocksWithin = [&](int64_t registers) {
    return std::clamp<int64_t>(
        65536 / (threads * std::min<int64_t>(255, registers)), 1,
        2048 / threads);
  };
  int64_t blocks = blocksWithin(getMatVecRegisterEstimate(s) * 3 / 2);
  int64_t oneWave = (gridBlocks + smCount - 1) / smCount;
  if (oneWave > blocks && oneWave <= blocksWithin(kMatVecOneWaveRegisters))
    blocks = oneWave;
  // 228 KB of shared memory per SM, 1 KB of it reserved per block.
  if (s.sharedBytes > 0)
    blocks = std::clamp<int64_t>(228 * 1024 / (s.sharedBytes + 1024), 1,
                                 blocks);
  return blocks;
}

} // namespace qf
} // namespace mlir

#endif // QFUSE_CONVERSION_MATVECOCCUPANCY_H
