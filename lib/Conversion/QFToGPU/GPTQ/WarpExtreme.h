//===- WarpExtreme.h - a warp's min or max as the host selects it -*- C++ -*-===//
//
// gptq::Grid's statsOf keeps, of elements comparing equal to the extreme
// (-0 and +0), the one in the lowest column: std::min / std::max in column
// order replace only on a strict compare. A warp reproduces that by
// carrying each lane's (value, column) and, in the xor butterfly, taking
// the other lane's pair when its value is strictly better or equal from a
// lower column; the sign of a zero extreme is then the host's. A NaN never
// compares true, so it is skipped, as on the host. The per-channel row
// min/max kernel and the block kernel's group fits share it.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_LIB_CONVERSION_QFTOGPU_GPTQ_WARPEXTREME_H
#define QFUSE_LIB_CONVERSION_QFTOGPU_GPTQ_WARPEXTREME_H

#include "Common/KernelEmitter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include <cstdint>
#include <limits>

namespace mlir {
namespace qf {
namespace gptq {

/// A running extreme: the f32 value and the column (i32) it came from.
struct Extreme {
  Value value, column;
};

/// The column of an extreme no element holds yet (any element's column is
/// lower, so it wins a tie; weights are finite, so no element ties the
/// initial +-inf).
constexpr int64_t kNoColumn = std::numeric_limits<int32_t>::max();

/// `candidate` replaces `mine` when strictly better (an ordered compare),
/// or, with `tieOnColumn`, equal and from a lower column.
inline Extreme combineExtreme(KernelEmitter &e, Extreme mine, Extreme candidate,
                              bool isMin, bool tieOnColumn = true) {
  ImplicitLocOpBuilder &b = e.builder();
  auto cmp = [&](arith::CmpFPredicate p, Value x, Value y) {
    return arith::CmpFOp::create(b, p, x, y).getResult();
  };
  Value take = isMin
                   ? cmp(arith::CmpFPredicate::OLT, candidate.value, mine.value)
                   : cmp(arith::CmpFPredicate::OLT, mine.value, candidate.value);
  if (tieOnColumn)
    take = arith::OrIOp::create(
        b, take,
        arith::AndIOp::create(
            b, cmp(arith::CmpFPredicate::OEQ, candidate.value, mine.value),
            e.ult(candidate.column, mine.column)));
  return {arith::SelectOp::create(b, take, candidate.value, mine.value),
          arith::SelectOp::create(b, take, candidate.column, mine.column)};
}

/// The warp's extreme of the lanes' pairs (xor butterfly; every lane ends
/// with it).
inline Extreme warpExtreme(KernelEmitter &e, Extreme x, bool isMin) {
  for (int64_t offset = 16; offset >= 1; offset /= 2)
    x = combineExtreme(
        e, x, {e.shflXor(x.value, offset), e.shflXor(x.column, offset)}, isMin);
  return x;
}

} // namespace gptq
} // namespace qf
} // namespace mlir

#endif // QFUSE_LIB_CONVERSION_QFTOGPU_GPTQ_WARPEXTREME_H
