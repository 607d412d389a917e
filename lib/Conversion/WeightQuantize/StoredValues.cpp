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
// Unquantized 2:4 stores the kept values themselves (keepGroup): each as
// the f16 or bf16 bits the host's floatToHalf / floatToBFloat16 give its
// f32 value, two bytes of codes per kept value.
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
      return body(loadWeight(n, c), c, Value(), Value(), acc);
    });
  Value four = e.idx(4);
  // A group that splits quads: every quad it overlaps, each kept value
  // gated by its column.
  Value q1 = splitsQuads ? e.divu(e.add(c1, e.idx(3)), four) : e.divu(c1, four);
  auto keep = [&](std::pair<Value, Value> kept, Value quad, Value j,
                  ValueRange acc) {
    if (!splitsQuads)
      return body(kept.first, j, kept.second, Value(), acc);
    Value col = e.add(e.mul(quad, four), e.toIndex(kept.second));
    Value valid = arith::AndIOp::create(
        b, arith::CmpIOp::create(b, arith::CmpIPredicate::uge, col, c0),
        arith::CmpIOp::create(b, arith::CmpIPredicate::ult, col, c1));
    SmallVector<Value> next = body(kept.first, j, kept.second, valid, acc);
    for (size_t i = 0; i < next.size(); ++i)
      next[i] = e.select(valid, next[i], acc[i]);
    return next;
  };
  return forCarried(
      b, e.divu(c0, four), q1, inits, [&](Value quad, ValueRange acc) {
        auto kept = select24(n, quad);
        Value j = e.mul(quad, e.idx(2));
        SmallVector<Value> next = keep(kept[0], quad, j, acc);
        return keep(kept[1], quad, e.add(j, e.idx(1)), next);
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
                                                ValueRange acc, Value valid) {
  ImplicitLocOpBuilder &b = e.builder();
  Value packed = e.bor(acc[0], e.shl(field, acc[1]));
  Value filled = e.add(acc[1], e.c32(width));
  Value full =
      arith::CmpIOp::create(b, arith::CmpIPredicate::uge, filled, e.c32(8));
  // A value another group stores completes no byte here (forStored keeps
  // the carried stream as it was).
  if (valid)
    full = arith::AndIOp::create(b, full, valid);
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

SmallVector<Value> WeightQuantizer::keepGroup(Value n, Value g,
                                              ValueRange streams) {
  ImplicitLocOpBuilder &b = e.builder();
  Value c0 = e.mul(g, e.idx(groupCols));
  Value c1 = e.minu(e.add(c0, e.idx(groupCols)), e.idx(k));
  auto byteOf = [&](Value x) {
    return arith::TruncIOp::create(b, b.getI8Type(), x);
  };
  SmallVector<Value> meta = forStored(
      n, c0, c1, streams.drop_front(2),
      [&](Value, Value j, Value pos, Value, ValueRange acc) {
        Value quad = e.mul(e.divu(j, e.idx(2)), e.idx(4));
        Value h = keptBits(n, e.add(quad, e.toIndex(pos)));
        Value at = e.mul(j, e.idx(2));
        e.store(byteOf(h), buf.codes, {n, at});
        e.store(byteOf(e.shru(h, e.c32(8))), buf.codes,
                {n, e.add(at, e.idx(1))});
        return appendField(buf.meta, n, j, 2, pos, acc);
      });
  SmallVector<Value> result = {arith::ConstantIntOp::create(b, 1, 1),
                               e.c32(0), streams[0], streams[1]};
  result.append(meta.begin(), meta.end());
  return result;
}

Value WeightQuantizer::keptBits(Value n, Value c) {
  ImplicitLocOpBuilder &b = e.builder();
  Type input = cast<MemRefType>(buf.input.getType()).getElementType();
  Type i16 = b.getI16Type();
  auto above = [&](Value x, int64_t v) {
    return arith::CmpIOp::create(b, arith::CmpIPredicate::ugt, x, e.c32(v))
        .getResult();
  };
  // The bits of the f32 the host rounds (halfToFloat / bfloat16ToFloat of
  // the input: exact, a NaN's payload moved up by integer ops so that no
  // float conversion can quiet or replace it).
  Value raw = e.load(buf.input, {n, c});
  Value x;
  if (input.isF32()) {
    x = arith::BitcastOp::create(b, e.i32(), raw);
  } else {
    Value h =
        arith::ExtUIOp::create(b, e.i32(), arith::BitcastOp::create(b, i16, raw));
    if (input.isBF16()) {
      x = e.shl(h, e.c32(16));
    } else {
      Value widened = arith::BitcastOp::create(
          b, e.i32(), arith::ExtFOp::create(b, e.f32(), raw));
      Value nanBits = e.bor(
          e.shl(e.band(h, e.c32(0x8000)), e.c32(16)),
          e.bor(e.c32(0x7F800000), e.shl(e.band(h, e.c32(0x3FF)), e.c32(13))));
      x = e.select(above(e.band(h, e.c32(0x7FFF)), 0x7C00), nanBits, widened);
    }
  }
  Value magnitude = e.band(x, e.c32(0x7FFFFFFF));
  Value nan = above(magnitude, 0x7F800000);
  if (enc.format == qfuse::format::ElementFormat::BF16) {
    // floatToBFloat16: a NaN keeps its top half with the quiet bit set;
    // any other x += 0x7FFF + ((x >> 16) & 1), then the top half.
    Value quiet = e.bor(e.shru(x, e.c32(16)), e.c32(0x40));
    Value lsb = e.band(e.shru(x, e.c32(16)), e.c32(1));
    Value rounded =
        e.shru(e.add(x, e.add(e.c32(0x7FFF), lsb)), e.c32(16));
    return e.select(nan, quiet, rounded);
  }
  // floatToHalf: a NaN keeps its sign, the quiet bit and its top 9 payload
  // bits; any other value is the conversion's round to nearest even, as
  // floatToHalf's (subnormals, and overflow to inf, included).
  Value quiet = e.bor(
      e.band(e.shru(x, e.c32(16)), e.c32(0x8000)),
      e.bor(e.c32(0x7E00), e.band(e.shru(magnitude, e.c32(13)), e.c32(0x1FF))));
  Value half = arith::TruncFOp::create(b, b.getF16Type(), e.bitcastF32(x));
  Value rounded =
      arith::ExtUIOp::create(b, e.i32(), arith::BitcastOp::create(b, i16, half));
  return e.select(nan, quiet, rounded);
}
