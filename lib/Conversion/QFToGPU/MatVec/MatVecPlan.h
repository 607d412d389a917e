//===- MatVecPlan.h - The matvec kernel's plan, checked once ----*- C++ -*-===//
//
// Everything the matvec generator derives from a MatmulSpec before emitting
// IR (decode family, chunking, warps, shared memory), and the checks that
// refuse a spec this kernel cannot take.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_LIB_CONVERSION_QFTOGPU_MATVEC_MATVECPLAN_H
#define QFUSE_LIB_CONVERSION_QFTOGPU_MATVEC_MATVECPLAN_H

#include "Common/MatmulSpec.h"

#include "qfuse/Conversion/DecodeFamily.h"

namespace mlir {
namespace qf {
namespace matvec {

/// Code bytes a lane may have in flight (k_unroll x rows x vec_bytes): 32
/// registers, beyond which occupancy drops faster than latency is hidden.
constexpr int64_t kMaxCodeBytesInFlight = 128;

/// Static shared memory a kernel may declare (the limit without opt-in).
constexpr int64_t kMaxStaticShared = 48 * 1024;


/// Everything derived from the spec that the body needs, checked once.
struct Plan {
  DecodeFamily decode = DecodeFamily::Int4Magic;
  int64_t bits, vecBytes, elemsPerChunk, rowBytes, chunksPerRow;
  int64_t splitK, warps, rowGroups, rowsPerWarp, unroll, m, n, k;
  int64_t numGroups, spanElems; // spanElems: stored codes sharing one scale
  bool perChannel;
  int64_t zeroRowBytes; // int zero points: packed bytes per row
  // A lane's chunk is `unitWords` loads of vec_bytes: codes of any width
  // 2..8 end on a word boundary every `unitWords` words (3-bit: 3 words =
  // 32 codes), so a chunk holds whole codes.
  int64_t unitWords, unitElems, chunkBytes;
  // Codes decoded (and activations loaded) together: one word, or for a
  // code stream at most 8 codes of a unit.
  int64_t stepElems;
  bool sparse;            // 2:4: a stored code stands for 2 logical columns
  int64_t colsPerStored;  // 2 under 2:4, else 1
  int64_t lutWords;       // shared code table words (needsSharedCodeTable),
                          // 0 otherwise
  bool norm;              // RMSNorm prologue
  int64_t normVecElems;   // x elements per load of the sum-of-squares pass
  bool gated;             // silu_mul: rows [0, R/2) gate, [R/2, R) up
  int64_t outRowsPerWarp; // outputs a warp produces: R, or R / 2 gated
  int64_t outBlockN;      // outputs a block produces
  int64_t sharedBytes;    // static shared memory

  /// Table codes of other widths than 4 bits are decoded as a bit stream,
  /// `stepElems` codes of a unit at a time (decodeStep).
  bool streamsCodes() const {
    return decode == DecodeFamily::Table && bits != 4;
  }
};

/// Shared words of the replicated code table of `bits`-wide codes: one
/// value per word up to 7 bits (2^bits x 32 banks), two f16 per word for
/// 8 bits (128 x 32 words = 16 KB instead of 32 KB).
inline int64_t lutWordsFor(int64_t bits) {
  return (bits <= 7 ? int64_t(1) << bits : 128) * 32;
}

/// The plan of `spec`, or a diagnostic naming what this kernel cannot take.
FailureOr<Plan> makePlan(const MatmulSpec &spec,
                         function_ref<InFlightDiagnostic()> emitError);

} // namespace matvec
} // namespace qf
} // namespace mlir

#endif // QFUSE_LIB_CONVERSION_QFTOGPU_MATVEC_MATVECPLAN_H
