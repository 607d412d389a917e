//===- TensorCoreOccupancy.h - the mma kernel's resident blocks -*- C++ -*-===//
//
// The tensor-core kernel's registers and resident blocks per SM, defined
// once: the time model counts the blocks an SM holds from them
// (lib/Dialect/QF/Transforms/MmaTimeModel.cpp), and the kernel asks ptxas
// for the blocks one wave of its grid needs (.minnctapersm;
// lib/Conversion/QFToGPU/TensorCore/TensorCoreKernel.cpp). Header-only: the
// cost model's library does not link the conversion.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_CONVERSION_TENSORCOREOCCUPANCY_H
#define QFUSE_CONVERSION_TENSORCOREOCCUPANCY_H

#include <cstdint>

namespace mlir {
namespace qf {

/// ptxas's registers per thread of the int4 kernel at each block_m (sm_90).
inline int64_t getTensorCoreRegisterEstimate(int64_t blockM) {
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

/// Blocks of `threads` threads an SM's registers hold at the estimate.
inline int64_t getTensorCoreBlocksByRegisters(int64_t blockM,
                                              int64_t threads) {
  return 65536 / (getTensorCoreRegisterEstimate(blockM) * threads);
}

/// The resident blocks a launch of `gridBlocks` blocks of `threads` threads
/// asks ptxas for: those one wave of the grid needs on `smCount` SMs, where
/// that many blocks leave each thread the estimate's registers (one block
/// always does: ptxas's own limit is lower); else 0, asking nothing. Without
/// the bound ptxas spilled a few words to keep room for more blocks than
/// the grid has (docs/tensor-core.md, "Registers of one-wave grids").
inline int64_t getTensorCoreResidentBlocks(int64_t gridBlocks,
                                           int64_t smCount, int64_t threads,
                                           int64_t blockM) {
  int64_t wave = (gridBlocks + smCount - 1) / smCount;
  return wave == 1 || wave <= getTensorCoreBlocksByRegisters(blockM, threads)
             ? wave
             : 0;
}

} // namespace qf
} // namespace mlir

#endif // QFUSE_CONVERSION_TENSORCOREOCCUPANCY_H
