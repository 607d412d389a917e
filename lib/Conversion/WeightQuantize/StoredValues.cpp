//===- StoredValues.cpp - the values a row stores, and their bit streams --===//
//
// Which weights of a row format::quantizeRTN stores (keptColumns: every
// column, or under 2:4 the two of each quad select24 picks) and the
// LSB-first bit streams the codes and the 2:4 positions go to:
//
//   quad q of row n (2:4)     w[n, 4q .. 4q+3]
//     best  = the largest |w|, the lower position on a tie
//     next  = the largest |w| of the other three, likewise
//     kept  = w[n, 4q + min(best, next)], w[n, 4q + max(best, next)]
//             stored values 2q, 2q+1; positions into meta's 2-bit fields
//
//===----------------------------------------------------------------------===//

#include "qfuse/Conversion/WeightQuantizer.h"

#include "QuantizeScalars.h"

using namespace mlir;
using namespace mlir::qf;

Value WeightQuantizer::loadWeight(Value n, Value c) {
  QuantizeScalars q(e);
  Type stored = cast<MemRefType>(buf.input.getType()).getElementType();
  return q.toF64(e.loadF32(buf.input, {n, c}, stored));
}

SmallVector<Value> WeightQuantizer::forStored(Value n, Value c0, Value c1,
                                              ValueRange inits,
                                              StoredBody body) {
  ImplicitLocOpBuilder &b = e.builder();
  if (!enc.isSparse24())
    return forCarried(b, c0, c1, inits, [&](Value c, ValueRange acc) {
      return body(loadWeight(n, c), c, Value(), acc);
    });
  Value four = e.idx(4);
  return forCarried(
      b, e.divu(c0, four), e.divu(c1, four), inits,
      [&](Value quad, ValueRange acc) {
        auto kept = select24(n, quad);
        Value j = e.mul(quad, e.idx(2));
        SmallVector<Value> next = body(kept[0].first, j, kept[0].second, acc);
        return body(kept[1].first, e.add(j, e.idx(1)), kept[1].second, next);
      });
}

std::array<std::pair<Value, Value>, 2> WeightQuantizer::select24(Value n,
                                                                 Value quad) {
  QuantizeScalars q(e);
  Type stored = cast<MemRefType>(buf.input.getType()).getElementType();
  Value base = e.mul(quad, e.idx(4));
  Value v[4], mag[4];
  for (int i = 0; i < 4; ++i) {
    v[i] = e.loadF32(buf.input, {n, e.add(base, e.idx(i))}, stored);
    mag[i] = q.fabs(v[i]);
  }
  // for (i = 1..3) if (fabs(v[i]) > fabs(v[best])) best = i;
  Value best = e.c32(0), bestMag = mag[0];
  for (int i = 1; i < 4; ++i) {
    Value larger = q.fgt(mag[i], bestMag);
    best = e.select(larger, e.c32(i), best);
    bestMag = e.select(larger, mag[i], bestMag);
  }
  // next = best == 0 ? 1 : 0; for (i = next + 1..3) if (i != best &&
  // fabs(v[i]) > fabs(v[next])) next = i. Position 1 against itself (when
  // next starts there) is never larger, so the scan may start at 1.
  Value bestIsZero = e.eq(best, e.c32(0));
  Value next = e.select(bestIsZero, e.c32(1), e.c32(0));
  Value nextMag = e.select(bestIsZero, mag[1], mag[0]);
  for (int i = 1; i < 4; ++i) {
    Value other = arith::CmpIOp::create(e.builder(), arith::CmpIPredicate::ne,
                                        best, e.c32(i));
    Value larger = e.band(other, q.fgt(mag[i], nextMag));
    next = e.select(larger, e.c32(i), next);
    nextMag = e.select(larger, mag[i], nextMag);
  }
  auto valueAt = [&](Value position) {
    Value x = v[3];
    for (int i = 2; i >= 0; --i)
      x = e.select(e.eq(position, e.c32(i)), v[i], x);
    return q.toF64(x);
  };
  Value first = arith::MinSIOp::create(e.builder(), best, next);
  Value second = arith::MaxSIOp::create(e.builder(), best, next);
  return {{{valueAt(first), first}, {valueAt(second), second}}};
}

SmallVector<Value> WeightQuantizer::appendField(Value memref, Value n, Value j,
                                                unsigned width, Value field,
                                                ValueRange acc) {
  ImplicitLocOpBuilder &b = e.builder();
  Value packed = e.bor(acc[0], e.shl(field, acc[1]));
  Value filled = e.add(acc[1], e.c32(width));
  Value full =
      arith::CmpIOp::create(b, arith::CmpIPredicate::uge, filled, e.c32(8));
  auto ifFull = scf::IfOp::create(b, full, /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifFull.thenBlock());
    // The byte that element j completes: (j + 1) * width / 8 - 1.
    Value byte = e.sub(
        e.divu(e.mul(e.add(j, e.idx(1)), e.idx(width)), e.idx(8)), e.idx(1));
    e.store(arith::TruncIOp::create(b, b.getI8Type(), packed), memref,
            {n, byte});
  }
  return {e.select(full, e.shru(packed, e.c32(8)), packed),
          e.select(full, e.sub(filled, e.c32(8)), filled)};
}
