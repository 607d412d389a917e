//===- QuantizeScalars.h - quantizeRTN's scalar steps as IR -----*- C++ -*-===//
//
// The scalar functions format::quantizeRTN calls (storeScale, encodeE4M3,
// encodeE2M1, NearestEntry, roundToScalarType), as plain arith/math ops on
// f64 and f32 values, each following its C++ definition step for step.
// Used by WeightQuantizer.cpp only.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_LIB_CONVERSION_WEIGHTQUANTIZE_QUANTIZESCALARS_H
#define QFUSE_LIB_CONVERSION_WEIGHTQUANTIZE_QUANTIZESCALARS_H

#include "qfuse/Conversion/WeightDecoder.h"
#include "qfuse/format/Encoding.h"

namespace mlir {
namespace qf {

/// A sign-less minifloat grid (format's MiniFloat in Numerics.cpp).
struct MiniFloatGrid {
  int mantBits, bias;
  uint32_t maxCode;
};
inline constexpr MiniFloatGrid kE4M3Grid = {3, 7, 0x7E};
inline constexpr MiniFloatGrid kE2M1Grid = {1, 1, 0x7};

/// A scale as its f32 value and as the value stored in the scale's memref
/// (f16/bf16/f32 itself, or the i8 byte of E8M0 / E4M3).
struct StoredScale {
  Value value, stored;
};

/// scf.for lb..ub with loop-carried values; `body` returns the next ones.
inline SmallVector<Value>
forCarried(ImplicitLocOpBuilder &b, Value lb, Value ub, ValueRange inits,
           function_ref<SmallVector<Value>(Value, ValueRange)> body) {
  Value one = arith::ConstantIndexOp::create(b, 1);
  auto loop = scf::ForOp::create(b, lb, ub, one, inits);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  SmallVector<Value> next =
      body(loop.getInductionVar(), loop.getRegionIterArgs());
  scf::YieldOp::create(b, next);
  return SmallVector<Value>(loop.getResults());
}

class QuantizeScalars {
public:
  explicit QuantizeScalars(ScalarEmitter &e) : e(e), b(e.builder()) {}

  Type f64() { return b.getF64Type(); }
  Type i64() { return b.getI64Type(); }
  Value cf64(double v) {
    return arith::ConstantOp::create(b, b.getF64FloatAttr(v));
  }
  Value c64(int64_t v) { return arith::ConstantIntOp::create(b, v, 64); }
  Value toF64(Value x) { return arith::ExtFOp::create(b, f64(), x); }
  /// float(double): to nearest even.
  Value toF32(Value x) { return arith::TruncFOp::create(b, e.f32(), x); }
  Value flt(Value x, Value y) { return cmpf(arith::CmpFPredicate::OLT, x, y); }
  Value fle(Value x, Value y) { return cmpf(arith::CmpFPredicate::OLE, x, y); }
  Value feq(Value x, Value y) { return cmpf(arith::CmpFPredicate::OEQ, x, y); }
  Value fgt(Value x, Value y) { return cmpf(arith::CmpFPredicate::OGT, x, y); }
  Value cmpf(arith::CmpFPredicate p, Value x, Value y) {
    return arith::CmpFOp::create(b, p, x, y);
  }
  /// std::max(x, y) = x < y ? y : x;  std::min(x, y) = y < x ? y : x.
  Value max(Value x, Value y) { return e.select(flt(x, y), y, x); }
  Value min(Value x, Value y) { return e.select(flt(y, x), y, x); }
  /// std::rint under the default rounding mode: half to even.
  Value rint(Value x);
  /// |x| by clearing the sign bit (f32 or f64).
  Value fabs(Value x);
  /// True when the f32 or f64 x is neither infinite nor NaN.
  Value isFinite(Value x) {
    return cmpf(
        arith::CmpFPredicate::OLT, fabs(x),
        arith::ConstantOp::create(b, b.getFloatAttr(x.getType(), INFINITY)));
  }
  /// The sign bit of an f32, as i1.
  Value signBit(Value x);

  /// The smallest f32 not below the f64 `s` (s >= 0): float(s), then one
  /// step up when that is below s.
  Value toF32Up(Value s);
  /// format::storeScale(s, type) for s > 0 (f64), or s >= 0 for E4M3.
  StoredScale storeScale(Value s, qfuse::format::ScalarType type);
  /// format::roundToScalarType(v, type) for f16, bf16, f32 (the float zero
  /// points), and the value stored in the zero's memref.
  StoredScale roundToScaleType(Value v, qfuse::format::ScalarType type);
  /// format's encodeMagnitude(|x|) for an f32 magnitude (not NaN), as i32.
  Value encodeMagnitude(Value magnitude, const MiniFloatGrid &f);
  /// encodeE4M3 / encodeE2M1 of an f32 that is not NaN (sign from the
  /// sign bit, so -0 keeps it).
  Value encodeMiniFloat(Value x, const MiniFloatGrid &f, uint32_t signBit);
  /// format::NearestEntry(table)(x) for an f64 x that is not NaN.
  Value nearestEntry(Value x, ArrayRef<float> table);

private:
  /// floatToBFloat16's rounding of an f32's bits: the bf16 bits, as i32.
  Value bf16Bits(Value f);
  /// 2^exponent as f64 for an i32 exponent in the normal range.
  Value pow2(Value exponent);

  ScalarEmitter &e;
  ImplicitLocOpBuilder &b;
};

} // namespace qf
} // namespace mlir

#endif // QFUSE_LIB_CONVERSION_WEIGHTQUANTIZE_QUANTIZESCALARS_H
