//===- WeightQuantizer.cpp - format::quantizeRTN of a row span, in IR -----===//
//
// One unit (a span of groups of row n, WeightQuantizer.h), for each group g
// of it, as RowQuantizer::quantize does it for a row:
//
//   stats   amax, min, max over w[n, g*G .. ]          (f64, C++'s order)
//   scale   exact = amax / qmax | (hi - lo) / qmax | amax / 448 | ...
//           s = storeScale(exact > 0 ? exact : 1)      -> scales[n, g]
//           NVFP4: s = storeScale(amax / 6 * global)  (0 for a zero group)
//   zero    z = -lo / s; rint + clamp (int) or rounded to the scale type
//   codes   c = clamp(rint(w / s)) | e4m3 | e2m1 | nearest entry
//           -> the LSB-first bit stream of codes[n], a byte once full
//           NVFP4: c = s > 0 ? e2m1(w * global / s) : 0
//
// A unit is the fewest groups whose codes, 2:4 positions and integer zero
// points fill whole bytes (a row ends on a byte: format::validate); the
// bit streams carry across its groups, its zero bytes are written last.
//
//===----------------------------------------------------------------------===//

#include "qfuse/Conversion/WeightQuantizer.h"

#include "QuantizeScalars.h"

#include "qfuse/format/Numerics.h"
#include "qfuse/format/Packing.h"

#include <cmath>

using namespace mlir;
using namespace mlir::qf;
namespace fmt = qfuse::format;
using FormatKind = fmt::ElementFormat;

std::string mlir::qf::quantizeUnsupportedReason(const fmt::Encoding &enc,
                                                int64_t k) {
  // Dense f16/bf16 weights are stored as they are (or converted by the
  // runtime); under 2:4 the quantizer keeps select24's two of each quad
  // (WeightQuantizer::keepGroup).
  if (!enc.isQuantized() && !enc.isSparse24())
    return "unquantized weights are stored as they are";
  if (enc.hasNamedTable())
    return "a named codebook table is only known at run time";
  // Float zero points in an f8 scale type are no encoding: zero points
  // belong to uint4/uint8, f8 scales to fp4e2m1, fp8e4m3 and int8
  // (format::validate), so roundToScaleType needs f16, bf16 and f32 only.
  // 2:4 groups that split quads take the kept values of their columns
  // (WeightQuantizer::forStored), as format::quantizeRTN groups them.
  // Groups whose codes, 2:4 positions or integer zero points do not fill
  // whole bytes share a unit with the next ones (WeightQuantizer's
  // unitGroups), so every unit still writes whole bytes.
  (void)k;
  return "";
}

SmallVector<std::pair<std::string, MemRefType>>
mlir::qf::quantizeComponentTypes(MLIRContext *ctx, const fmt::Encoding &enc,
                                 int64_t n, int64_t k) {
  Builder b(ctx);
  auto scalar = [&](fmt::ScalarType t) -> Type {
    switch (t) {
    case fmt::ScalarType::F16:
      return b.getF16Type();
    case fmt::ScalarType::BF16:
      return b.getBF16Type();
    case fmt::ScalarType::F32:
      return b.getF32Type();
    default: // the f8 types travel as bytes
      return b.getI8Type();
    }
  };
  int64_t groups = fmt::numGroups(enc, k);
  unsigned bits = fmt::codeBits(enc);
  SmallVector<std::pair<std::string, MemRefType>> types;
  types.push_back({fmt::kCodes,
                   MemRefType::get({n, fmt::rowBytes(enc, k)}, b.getI8Type())});
  if (enc.isQuantized())
    types.push_back(
        {fmt::kScales, MemRefType::get({n, groups}, scalar(enc.scaleType))});
  if (enc.zeroPoint == fmt::ZeroPointKind::Int)
    types.push_back({fmt::kZeros, MemRefType::get({n, (groups * bits + 7) / 8},
                                                  b.getI8Type())});
  else if (enc.zeroPoint == fmt::ZeroPointKind::Float)
    types.push_back(
        {fmt::kZeros, MemRefType::get({n, groups}, scalar(enc.scaleType))});
  if (enc.globalScale)
    types.push_back({fmt::kGlobalScale, MemRefType::get({1}, b.getF32Type())});
  if (enc.actOrder)
    types.push_back({fmt::kGIdx, MemRefType::get({k}, b.getI32Type())});
  if (enc.isSparse24())
    types.push_back(
        {fmt::kMetadata, MemRefType::get({n, (k + 7) / 8}, b.getI8Type())});
  return types;
}

bool QuantizeBuffers::bind(StringRef name, Value memref) {
  Value *slot = name == fmt::kCodes         ? &codes
                : name == fmt::kScales      ? &scales
                : name == fmt::kZeros       ? &zeros
                : name == fmt::kGlobalScale ? &globalScale
                : name == fmt::kGIdx        ? &gIdx
                : name == fmt::kMetadata    ? &meta
                                            : nullptr;
  if (slot)
    *slot = memref;
  return slot != nullptr;
}

WeightQuantizer::WeightQuantizer(ScalarEmitter &e, const fmt::Encoding &enc,
                                 int64_t k, const QuantizeBuffers &buffers)
    : e(e), enc(enc), k(k), groups(fmt::numGroups(enc, k)),
      groupCols(enc.isPerChannel() ? k : enc.groupSize), unitGroups(1),
      bits(fmt::codeBits(enc)),
      splitsQuads(enc.isSparse24() && enc.isQuantized() &&
                  !enc.isPerChannel() && enc.groupSize % 4 != 0),
      buf(buffers) {
  // Unquantized 2:4 has no groups; a unit keeps kKeptSpan columns.
  if (!enc.isQuantized()) {
    groupCols = kKeptSpan;
    groups = (k + kKeptSpan - 1) / kKeptSpan;
  }
  // The fewest groups (at most 8) of whole quads under 2:4 whose stored
  // codes, 2:4 positions (2 bits per stored value) and integer zero points
  // fill whole bytes (8 groups always do).
  const bool intZero = enc.zeroPoint == fmt::ZeroPointKind::Int;
  auto whole = [](int64_t bitCount) { return bitCount % 8 == 0; };
  auto fills = [&](int64_t m) {
    const int64_t cols = m * groupCols;
    if (enc.isSparse24() && cols % 4 != 0)
      return false;
    const int64_t stored = enc.isSparse24() ? cols / 2 : cols;
    return whole(stored * bits) && (!enc.isSparse24() || whole(stored * 2)) &&
           (!intZero || whole(m * bits));
  };
  int64_t m = 1;
  while (m < 8 && !fills(m))
    ++m;
  unitGroups = std::min<int64_t>(m, groups);
}

int64_t WeightQuantizer::unitsPerRow() const {
  return (groups + unitGroups - 1) / unitGroups;
}

namespace {

Value minIndex(ImplicitLocOpBuilder &b, Value x, Value y) {
  return arith::MinUIOp::create(b, x, y);
}

} // namespace

Value WeightQuantizer::tensorAmax() {
  ImplicitLocOpBuilder &b = e.builder();
  QuantizeScalars q(e);
  Type stored = cast<MemRefType>(buf.input.getType()).getElementType();
  Value rows = memref::DimOp::create(b, buf.input, e.idx(0));
  // amax = std::max(amax, double(std::fabs(w))), row by row.
  auto row = [&](Value n, Value acc) {
    return e.forReduce(e.idx(0), e.idx(k), acc, [&](Value c, Value acc2) {
      return q.max(acc2, q.toF64(q.fabs(e.loadF32(buf.input, {n, c}, stored))));
    });
  };
  Value amax = e.forReduce(e.idx(0), rows, q.cf64(0.0), row);
  return q.toF32(amax); // exact: the largest of f32 values
}

Value WeightQuantizer::prepareGlobalScale(Value amaxF32) {
  QuantizeScalars q(e);
  tensorAmaxF64 = q.toF64(amaxF32);
  // amax > 0 ? float(double(kE4M3Max) * kE2M1Max / amax) : 1.0f
  Value scale = q.toF32(e.fdiv(q.cf64(double(fmt::kE4M3Max) * fmt::kE2M1Max),
                               tensorAmaxF64));
  globalScaleF32 =
      e.select(q.fgt(tensorAmaxF64, q.cf64(0.0)), scale, e.cf32(1.0));
  globalScaleF64 = q.toF64(globalScaleF32);
  return q.isFinite(globalScaleF32);
}

void WeightQuantizer::storeGlobalScale() {
  e.store(globalScaleF32, buf.globalScale, {e.idx(0)});
}

Value WeightQuantizer::quantizeUnit(Value n, Value u) {
  ImplicitLocOpBuilder &b = e.builder();
  Value g0 = e.mul(u, e.idx(unitGroups));
  Value gEnd = minIndex(b, e.add(g0, e.idx(unitGroups)), e.idx(groups));
  Value trueV = arith::ConstantIntOp::create(b, 1, 1);
  // ok, zero bits, then the pending (bits, count) of codes [and meta].
  SmallVector<Value> inits(enc.isSparse24() ? 6 : 4, e.c32(0));
  inits[0] = trueV;
  SmallVector<Value> out =
      forCarried(b, g0, gEnd, inits, [&](Value g, ValueRange acc) {
        SmallVector<Value> group = quantizeGroup(n, g, acc.drop_front(2));
        Value shift = e.toI32(e.mul(e.sub(g, g0), e.idx(bits)));
        SmallVector<Value> next = {arith::AndIOp::create(b, acc[0], group[0]),
                                   e.bor(acc[1], e.shl(group[1], shift))};
        next.append(group.begin() + 2, group.end());
        return next;
      });
  if (enc.zeroPoint == fmt::ZeroPointKind::Int)
    storeZeroBytes(n, u, out[1]);
  // K = 4 (mod 8) under 2:4: the row's last meta byte holds one quad.
  if (enc.isSparse24() && k % 8 != 0) {
    auto last = scf::IfOp::create(b, e.eq(gEnd, e.idx(groups)),
                                  /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(last.thenBlock());
    e.store(arith::TruncIOp::create(b, b.getI8Type(), out[4]), buf.meta,
            {n, e.idx(k / 8)});
  }
  if (enc.actOrder)
    storeGroupIndex(n, g0, gEnd);
  return out[0];
}

void WeightQuantizer::storeZeroBytes(Value n, Value u, Value zeroBits) {
  ImplicitLocOpBuilder &b = e.builder();
  const int64_t perUnit = (unitGroups * bits + 7) / 8;
  const int64_t rowBytes = (groups * bits + 7) / 8;
  for (int64_t i = 0; i < perUnit; ++i) {
    Value byte = e.add(e.mul(u, e.idx(perUnit)), e.idx(i));
    Value bits8 = arith::TruncIOp::create(
        b, b.getI8Type(), e.shru(zeroBits, e.c32(8 * i)));
    if (unitsPerRow() * perUnit <= rowBytes) {
      e.store(bits8, buf.zeros, {n, byte});
      continue;
    }
    auto inRow = scf::IfOp::create(
        b, arith::CmpIOp::create(b, arith::CmpIPredicate::ult, byte,
                                 e.idx(rowBytes)),
        /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(inRow.thenBlock());
    e.store(bits8, buf.zeros, {n, byte});
  }
}

void WeightQuantizer::storeGroupIndex(Value n, Value g0, Value gEnd) {
  ImplicitLocOpBuilder &b = e.builder();
  auto first =
      scf::IfOp::create(b, e.eq(n, e.idx(0)), /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(first.thenBlock());
  // columnGroups without options.gIdx: int32_t(col / enc.groupSize).
  Value c0 = e.mul(g0, e.idx(groupCols));
  Value c1 = minIndex(b, e.mul(gEnd, e.idx(groupCols)), e.idx(k));
  auto loop = scf::ForOp::create(b, c0, c1, e.idx(1));
  b.setInsertionPoint(loop.getBody()->getTerminator());
  Value c = loop.getInductionVar();
  e.store(e.toI32(e.divu(c, e.idx(enc.groupSize))), buf.gIdx, {c});
}

/// The stored code of the f64 weight `v` in a group with scale `s` (f64)
/// and zero point `zero` (f64, unsigned formats only): RowQuantizer::code,
/// then storedCode (int4 offset-binary, int8 two's complement byte).
Value WeightQuantizer::storedCode(Value v, Value s, Value zero) {
  ImplicitLocOpBuilder &b = e.builder();
  QuantizeScalars q(e);
  const bool floatZero = enc.zeroPoint == fmt::ZeroPointKind::Float;
  const double qmaxSigned = double((1 << (bits - 1)) - 1);
  const double qmaxUnsigned = double((1u << bits) - 1);
  switch (enc.format) {
  case FormatKind::Int4:
  case FormatKind::Int8: {
    Value r = q.min(q.max(q.rint(e.fdiv(v, s)), q.cf64(-qmaxSigned)),
                    q.cf64(qmaxSigned));
    Value c = arith::FPToSIOp::create(b, e.i32(), r);
    return enc.format == FormatKind::Int4 ? e.add(c, e.c32(8))
                                          : e.band(c, e.c32(0xFF));
  }
  case FormatKind::UInt4:
  case FormatKind::UInt8: {
    Value r = floatZero ? q.rint(e.fadd(e.fdiv(v, s), zero))
                        : e.fadd(q.rint(e.fdiv(v, s)), zero);
    r = q.min(q.max(r, q.cf64(0.0)), q.cf64(qmaxUnsigned));
    return arith::FPToSIOp::create(b, e.i32(), r);
  }
  case FormatKind::FP8E4M3:
    return q.encodeMiniFloat(q.toF32(e.fdiv(v, s)), kE4M3Grid, 0x80);
  case FormatKind::FP4E2M1: {
    if (!enc.globalScale)
      return q.encodeMiniFloat(q.toF32(e.fdiv(v, s)), kE2M1Grid, 0x8);
    // s > 0 ? encodeE2M1(float(v * global / s)) : 0 (a zero group's scale
    // is 0); the division by 1 in place of 0 only keeps the value finite.
    Value positive = q.fgt(s, q.cf64(0.0));
    Value scaled = e.fdiv(e.fmul(v, globalScaleF64),
                          e.select(positive, s, q.cf64(1.0)));
    return e.select(positive,
                    q.encodeMiniFloat(q.toF32(scaled), kE2M1Grid, 0x8),
                    e.c32(0));
  }
  default:
    return q.nearestEntry(e.fdiv(v, s), fmt::codebookValues(enc));
  }
}

SmallVector<Value> WeightQuantizer::quantizeGroup(Value n, Value g,
                                                  ValueRange streamsIn) {
  if (!enc.isQuantized())
    return keepGroup(n, g, streamsIn);
  ImplicitLocOpBuilder &b = e.builder();
  QuantizeScalars q(e);
  Value c0 = e.mul(g, e.idx(groupCols));
  Value c1 = minIndex(b, e.add(c0, e.idx(groupCols)), e.idx(k));

  // Statistics over the group's stored values (RowQuantizer::quantize).
  // amax, min, max, all finite[, any: a group that splits quads may keep
  // none of its columns].
  SmallVector<Value> inits = {q.cf64(0.0), q.cf64(INFINITY),
                              q.cf64(-INFINITY),
                              arith::ConstantIntOp::create(b, 1, 1)};
  if (splitsQuads)
    inits.push_back(arith::ConstantIntOp::create(b, 0, 1));
  SmallVector<Value> stats = forStored(
      n, c0, c1, inits, [&](Value v, Value, Value, Value, ValueRange s) {
        SmallVector<Value> next = {
            q.max(s[0], q.fabs(v)), q.min(s[1], v), q.max(s[2], v),
            arith::AndIOp::create(b, s[3], q.isFinite(v))};
        if (splitsQuads) // forStored keeps it false past the group
          next.push_back(arith::ConstantIntOp::create(b, 1, 1));
        return next;
      });
  Value amax = stats[0], lo = stats[1], hi = stats[2];
  // A group that keeps no value: the host's lo = hi = 0.
  if (splitsQuads) {
    lo = e.select(stats[4], lo, q.cf64(0.0));
    hi = e.select(stats[4], hi, q.cf64(0.0));
  }

  // The unrounded scale (RowQuantizer::scales).
  const bool floatZero = enc.zeroPoint == fmt::ZeroPointKind::Float;
  const double qmaxSigned = double((1 << (bits - 1)) - 1);
  const double qmaxUnsigned = double((1u << bits) - 1);
  std::vector<float> table = fmt::codebookValues(enc);
  Value exact;
  switch (enc.format) {
  case FormatKind::Int4:
  case FormatKind::Int8:
    exact = e.fdiv(amax, q.cf64(qmaxSigned));
    break;
  case FormatKind::UInt4:
  case FormatKind::UInt8:
    if (!floatZero) { // integer zero points need 0 inside the range
      lo = q.min(lo, q.cf64(0.0));
      hi = q.max(hi, q.cf64(0.0));
    }
    exact = e.fdiv(e.fsub(hi, lo), q.cf64(qmaxUnsigned));
    break;
  case FormatKind::FP8E4M3:
    exact = e.fdiv(amax, q.cf64(fmt::kE4M3Max));
    break;
  case FormatKind::FP4E2M1:
    exact = e.fdiv(amax, q.cf64(fmt::kE2M1Max));
    if (enc.globalScale)
      exact = e.fmul(exact, globalScaleF64);
    break;
  default: { // nf4, codebook
    double tableMax = 0;
    for (float v : table)
      tableMax = std::max(tableMax, double(std::fabs(v)));
    exact = e.fdiv(amax, q.cf64(tableMax));
    break;
  }
  }
  // A zero group keeps scale 1 (storeScale(1) is 1 in every scale type);
  // under a global scale it keeps 0 and codes 0.
  if (!enc.globalScale)
    exact = e.select(q.fgt(exact, q.cf64(0.0)), exact, q.cf64(1.0));
  StoredScale scale = q.storeScale(exact, enc.scaleType);
  e.store(scale.stored, buf.scales, {n, g});
  Value ok = arith::AndIOp::create(b, stats[3], q.isFinite(scale.value));
  if (!enc.globalScale)
    ok = arith::AndIOp::create(b, ok, q.fgt(scale.value, e.cf32(0.0)));
  else // a group above the given tensor amax: that amax is wrong
    ok = arith::AndIOp::create(b, ok, q.fle(amax, tensorAmaxF64));
  Value scaleD = q.toF64(scale.value);

  // The zero point: z = -lo / s.
  Value zero, zeroBits = e.c32(0);
  if (enc.isUnsigned()) {
    Value z = e.fdiv(arith::NegFOp::create(b, lo), scaleD);
    if (floatZero) {
      StoredScale zs = q.roundToScaleType(q.toF32(z), enc.scaleType);
      e.store(zs.stored, buf.zeros, {n, g});
      zero = q.toF64(zs.value);
    } else {
      zero = q.min(q.max(q.rint(z), q.cf64(0.0)), q.cf64(qmaxUnsigned));
      zeroBits = arith::FPToSIOp::create(b, e.i32(), zero);
    }
  }

  // Codes, into the row's bit stream (carried from the unit's previous
  // group), and under 2:4 each one's position into the meta stream (2 bits
  // per code).
  SmallVector<Value> streams = forStored(
      n, c0, c1, streamsIn,
      [&](Value v, Value j, Value pos, Value valid, ValueRange acc) {
        Value code = storedCode(v, scaleD, zero);
        SmallVector<Value> next =
            appendField(buf.codes, n, j, bits, code, acc.take_front(2), valid);
        if (pos)
          next.append(appendField(buf.meta, n, j, 2, pos, acc.drop_front(2),
                                  valid));
        return next;
      });
  SmallVector<Value> result = {ok, zeroBits};
  result.append(streams.begin(), streams.end());
  return result;
}
