//===- MmaTimeModel.h - predicted time of an mma.sync tiling -----*- C++ -*-===//
//
// The time of one mma.sync tensor-core launch for a tiling and a shape,
// from the kernel's structure: blocks and waves, warps resident per SM,
// each block_k step bound by its dependency chain, the tensor pipe, the
// issue slots (decode) or the shared-memory fill, and the weights and
// activations read from DRAM and L2. selectMma ranks candidate tilings by
// it. The parameters are fitted to the tuning sweeps of a training set of
// shapes by bench/cost-model/fit.py (docs/cost-model.md); zoo shapes are
// never part of that set.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_DIALECT_QF_TRANSFORMS_MMATIMEMODEL_H
#define QFUSE_DIALECT_QF_TRANSFORMS_MMATIMEMODEL_H

#include "qfuse/Conversion/DecodeFamily.h"

#include <cstdint>

namespace mlir {
namespace qf {

/// A candidate mma.sync launch: the shape, the tiling, the encoding's
/// decode and scale groups, and what it costs a block in shared memory.
struct MmaLaunchShape {
  int64_t m, n, k;   ///< n: rows of one member, padded to whole tiles
  int64_t blockM, blockN, blockK, splitK, stages, clusterK;
  int64_t members = 1;      ///< 2 under silu_mul: an up warp per gate warp
  int64_t codeBits = 4;     ///< bits per stored code
  /// How codes become B fragments (DecodeFamily.h), priced per family.
  DecodeFamily decode = DecodeFamily::Int4Magic;
  int64_t groupSize = 128;  ///< weights per scale; 0: one scale per row
  int64_t scaleBytes = 2;   ///< bytes of one scale
  int64_t zeroBits = 0;     ///< bits of one zero point (0: none)
  bool sparse24 = false;    ///< 2:4 on mma.sp: half the codes, + metadata
  int64_t sharedBytes = 0;  ///< dynamic shared memory of one block
};

/// The chip the model is scaled to.
struct MmaTimeTarget {
  int64_t smCount = 132;
  double bandwidthGbps = 4800;
};

/// A launch's predicted time in microseconds, and the part of it that is
/// the blocks' work (waves of block_k steps): the whole is the larger of
/// that and the memory time, plus the launch.
struct MmaTimePrediction {
  double us = 0;
  double computeUs = 0;
};

MmaTimePrediction predictMmaTime(const MmaLaunchShape &launch,
                                 const MmaTimeTarget &target);

/// predictMmaTime(launch, target).us.
double predictMmaTimeUs(const MmaLaunchShape &launch,
                        const MmaTimeTarget &target);

} // namespace qf
} // namespace mlir

#endif // QFUSE_DIALECT_QF_TRANSFORMS_MMATIMEMODEL_H
