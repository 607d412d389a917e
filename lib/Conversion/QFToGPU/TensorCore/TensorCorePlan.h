//===- TensorCorePlan.h - the tensor-core kernel's plan ----------*- C++ -*-===//
//
// What TensorCoreKernel.cpp generates for one fused matmul: the tiling
// checked against the kernel's contract, the decode of the weight's codes,
// the warps of a block and the offsets of the shared-memory pipeline. A
// tiling the kernel cannot take is a diagnostic here, before any IR is
// built.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_LIB_CONVERSION_QFTOGPU_TENSORCORE_TENSORCOREPLAN_H
#define QFUSE_LIB_CONVERSION_QFTOGPU_TENSORCORE_TENSORCOREPLAN_H

#include "MatVec/MatVecKernel.h"

#include "qfuse/Conversion/DecodeFamily.h"
#include "qfuse/Conversion/TensorCoreStage.h"
#include "qfuse/format/MmaLayout.h"

namespace mlir {
namespace qf {
namespace tensor_core {

/// One fragment tile: 32 output features x 32 reduction elements.
inline constexpr int64_t kTile = 32;

/// Everything the generator needs to know about one kernel variant.
struct Plan {
  // How a word of codes becomes B fragment registers, or under 2:4 the
  // sparse A fragments (Half: the kept values are the fragments).
  DecodeFamily decode = DecodeFamily::Int4Magic;
  bool wgmma = false; // warpgroup MMA (sm_90a) instead of mma.sync
  // wgmma, warp-specialized (TensorCoreProducer.cpp): a producer warpgroup
  // issues every copy, the k groups' warpgroups only decode and multiply,
  // each slot handed over by a full and an empty mbarrier.
  bool producer = false;
  // Producer: registers a thread at launch (.maxnreg) and the k groups'
  // after the producer gives up all but kProducerRegisters (setmaxnreg).
  int64_t launchRegisters = 0, consumerRegisters = 0;
  // 2:4 weights on mma.sp (TensorCoreSparse.cpp): the weight rows are the
  // sparse A operand, read in the 2:4 fragment layout
  // (qfuse/format/SparseMmaLayout.h), each lane its own run of a tile.
  bool sparse24 = false;
  int64_t sparseTilesK = 0;   // 2:4: 32 x 128 tiles per tile row
  int64_t sparseTileBytes = 0; // 2:4: kept codes of one tile
  int64_t stepLaneBytes = 0;  // 2:4: a lane's kept codes in one step
  int64_t stepMetaBytes = 0;  // 2:4: a lane's metadata in one step (8, 16)
  // 2:4: m16 tile 1 reads its metadata with sparsity selector 1 (the
  // layout's order); false: selector 0 on a word shuffled from lane ^ 2.
  bool metaSelectorPair = true;
  bool lut = false;     // the shared code table is built (needsSharedCodeTable)
  int64_t codeBits = 4; // 2, 3, 4 or 8
  int64_t tileBytes;    // one 32 x 32 fragment tile of codes
  int64_t m, n, k;
  // Shapes that are not whole tiles: the layout pads to 32 x 32 tiles
  // (MmaLayout.h), the last K step may run past them (its missing code
  // tiles and the activations past K are zero-filled), and rows past N are
  // neither read from the scales nor stored.
  int64_t kTiles;     // ceil(K / 32): code tiles per tile row
  bool kTail;         // K is not a whole number of block_k steps
  bool nTail;         // columns past N exist: N not whole tiles, or a
                      // last block reaching past the last tile row
  bool oddN;          // some member's N is odd: stores go element by element
  bool blockTail;     // some member's tile rows are not whole blocks
  // warps: the k groups' warps; threads: the block's, the producer's too.
  int64_t blockM, mTiles, nWarps, kGroups, warps, threads;
  int64_t members;    // warps per n warp and k group: 2 under silu_mul
  int64_t groupWarps; // warps of one k group: nWarps x members
  SmallVector<int64_t> memberNs; // qf.group: N of each member, in order
  int64_t blockN;
  int64_t clusterK; // blocks of a cluster splitting K (grid z)
  int64_t blockK, stages, kTilesPerStep, steps;
  int64_t groupSize, numGroups, groupsPerStep;
  bool perChannel;
  bool deferScale;      // scales folded into f32 partial sums
  int64_t scaleBytes;   // bytes per stored scale
  // Bytes of one row's scales of a step, copied as one run (4, 8 or 16)
  // where they are whole aligned runs; 0: a word per row and group.
  int64_t scaleRunBytes = 0;
  // Integer zeros: a step's groups share one aligned word of a row's packed
  // zeros, copied once per step rather than once per group.
  bool zeroWordPerStep = false;
  bool intZeros;
  bool floatZeros; // zero = float: one value per group in the scale type
  int64_t zeroRowBytes; // packed integer zero points per row
  // Dynamic shared memory offsets (bytes).
  int64_t aBytes, aOff, bOff, sOff, zOff, lutOff, pipelineBytes, total;
  int64_t barrierOff = 0; // producer: the full, then empty mbarrier of
                          // each (k group, slot), 8 bytes each
  int64_t mBlocks, nBlocks;
};

/// The producer warpgroup's threads, after the k groups' warps, and the
/// registers each keeps (it only computes copy addresses).
inline constexpr int64_t kProducerThreads = 128;
inline constexpr int64_t kProducerRegisters = 40;
/// The registers a block may hold on sm_80 and sm_90 (64K 32-bit).
inline constexpr int64_t kBlockRegisters = 65536;

/// Blocks of `blockN` rows covering the whole 32-row tiles of N rows.
inline int64_t blocksOf(int64_t n, int64_t blockN) {
  return (qfuse::format::mmaPaddedN(n) + blockN - 1) / blockN;
}

/// The plan of `spec`, or a diagnostic naming what the kernel cannot take.
FailureOr<Plan> makePlan(const MatmulSpec &spec,
                         function_ref<InFlightDiagnostic()> emitError);

} // namespace tensor_core
} // namespace qf
} // namespace mlir

#endif // QFUSE_LIB_CONVERSION_QFTOGPU_TENSORCORE_TENSORCOREPLAN_H
