//===- QuantizeScalars.cpp - quantizeRTN's scalar steps as arith/math IR
//---===//
//
// Each function mirrors one C++ function of format/src (Quantize.cpp,
// Numerics.cpp, Encoding.cpp) operation for operation, so that the IR
// rounds exactly where the C++ rounds: no step is reassociated, fused or
// computed in a different precision.
//
//===----------------------------------------------------------------------===//

#include "QuantizeScalars.h"

#include "mlir/Dialect/Math/IR/Math.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace mlir::qf;
using qfuse::format::ScalarType;

Value QuantizeScalars::rint(Value x) { return math::RoundEvenOp::create(b, x); }

Value QuantizeScalars::fabs(Value x) {
  bool isF64 = x.getType().isF64();
  Type intType = isF64 ? i64() : e.i32();
  Value bits = arith::BitcastOp::create(b, intType, x);
  Value mask = isF64 ? c64(0x7FFFFFFFFFFFFFFFll) : e.c32(0x7FFFFFFF);
  return arith::BitcastOp::create(b, x.getType(), e.band(bits, mask));
}

Value QuantizeScalars::signBit(Value x) {
  Value bits = arith::BitcastOp::create(b, e.i32(), x);
  return arith::CmpIOp::create(b, arith::CmpIPredicate::slt, bits, e.c32(0));
}

Value QuantizeScalars::pow2(Value exponent) {
  Value field = arith::ExtSIOp::create(b, i64(), e.add(exponent, e.c32(1023)));
  return arith::BitcastOp::create(b, f64(),
                                  arith::ShLIOp::create(b, field, c64(52)));
}

Value QuantizeScalars::toF32Up(Value s) {
  // float f = float(s); if (double(f) < s) f = nextafter(f, +inf);
  // s >= 0, so the next f32 up is the next bit pattern.
  Value f = toF32(s);
  Value up =
      e.bitcastF32(e.add(arith::BitcastOp::create(b, e.i32(), f), e.c32(1)));
  return e.select(flt(toF64(f), s), up, f);
}

Value QuantizeScalars::bf16Bits(Value f) {
  // x += 0x7FFF + ((x >> 16) & 1); return x >> 16;
  Value x = arith::BitcastOp::create(b, e.i32(), f);
  Value rounded =
      e.add(x, e.add(e.c32(0x7FFF), e.band(e.shru(x, e.c32(16)), e.c32(1))));
  return e.shru(rounded, e.c32(16));
}

StoredScale QuantizeScalars::storeScale(Value s, ScalarType type) {
  Type i16 = b.getI16Type();
  switch (type) {
  case ScalarType::F16: {
    // The smallest f16 not below s: every f16 is an f32, so it is the
    // smallest f16 not below toF32Up(s), which is the nearest f16 to that
    // f32, or the next one when the nearest is below it.
    Value f = toF32Up(s);
    Value h = arith::TruncFOp::create(b, b.getF16Type(), f);
    Value hBits = arith::BitcastOp::create(b, i16, h);
    Value up =
        arith::AddIOp::create(b, hBits, arith::ConstantIntOp::create(b, 1, 16));
    Value below = flt(arith::ExtFOp::create(b, e.f32(), h), f);
    Value stored =
        arith::BitcastOp::create(b, b.getF16Type(), e.select(below, up, hBits));
    return {arith::ExtFOp::create(b, e.f32(), stored), stored};
  }
  case ScalarType::BF16: {
    Value f = toF32Up(s);
    Value bits = bf16Bits(f);
    Value below = flt(e.bitcastF32(e.shl(bits, e.c32(16))), f);
    bits = e.select(below, e.add(bits, e.c32(1)), bits);
    Value value = e.bitcastF32(e.shl(bits, e.c32(16)));
    Value stored = arith::BitcastOp::create(
        b, b.getBF16Type(), arith::TruncIOp::create(b, i16, bits));
    return {value, stored};
  }
  case ScalarType::F32: {
    Value f = toF32Up(s);
    return {f, f};
  }
  case ScalarType::F8E8M0FNU: {
    // encodeE8M0Ceil(f): frexp's exponent of the (exact, normal) double of
    // f, one less for an exact power of two; clamped to [-127, 127].
    Value f = toF32Up(s);
    Value bits = arith::BitcastOp::create(b, i64(), toF64(f));
    Value field = arith::TruncIOp::create(
        b, e.i32(), arith::ShRUIOp::create(b, bits, c64(52)));
    Value mant = arith::AndIOp::create(b, bits, c64((int64_t(1) << 52) - 1));
    Value inexact =
        arith::CmpIOp::create(b, arith::CmpIPredicate::ne, mant, c64(0));
    Value exponent = e.add(e.sub(field, e.c32(1023)),
                           arith::ExtUIOp::create(b, e.i32(), inexact));
    exponent = arith::MaxSIOp::create(b, exponent, e.c32(-127));
    exponent = arith::MinSIOp::create(b, exponent, e.c32(127));
    Value value = toF32(pow2(exponent)); // 2^-127 is an exact f32 subnormal
    Value stored =
        arith::TruncIOp::create(b, b.getI8Type(), e.add(exponent, e.c32(127)));
    return {value, stored};
  }
  case ScalarType::F8E4M3FN: {
    // decodeE4M3(encodeE4M3(float(s))): to nearest, s >= 0 (NVFP4 keeps
    // 0 for a zero group).
    Value code = encodeMagnitude(toF32(s), kE4M3Grid);
    Value field = e.shru(code, e.c32(kE4M3Grid.mantBits));
    Value mant = e.band(code, e.c32((1 << kE4M3Grid.mantBits) - 1));
    Value sub = e.eq(field, e.c32(0));
    Value significand =
        e.select(sub, mant, e.add(mant, e.c32(1 << kE4M3Grid.mantBits)));
    Value power = e.select(sub, e.c32(1), field);
    Value scale =
        pow2(e.sub(power, e.c32(kE4M3Grid.bias + kE4M3Grid.mantBits)));
    Value value = toF32(arith::MulFOp::create(
        b, arith::SIToFPOp::create(b, f64(), significand), scale));
    return {value, arith::TruncIOp::create(b, b.getI8Type(), code)};
  }
  case ScalarType::None:
    break;
  }
  llvm_unreachable("a quantized encoding has a scale type");
}

StoredScale QuantizeScalars::roundToScaleType(Value v, ScalarType type) {
  switch (type) {
  case ScalarType::F16: {
    Value h = arith::TruncFOp::create(b, b.getF16Type(), v);
    return {arith::ExtFOp::create(b, e.f32(), h), h};
  }
  case ScalarType::BF16: {
    Value bits = bf16Bits(v);
    Value stored = arith::BitcastOp::create(
        b, b.getBF16Type(), arith::TruncIOp::create(b, b.getI16Type(), bits));
    return {e.bitcastF32(e.shl(bits, e.c32(16))), stored};
  }
  default: // f32 (no encoding has float zero points in an f8 scale type)
    return {v, v};
  }
}

Value QuantizeScalars::encodeMagnitude(Value magnitude,
                                       const MiniFloatGrid &f) {
  // frexp read off the exponent field of the exact double; ldexp as a
  // multiply by a power of two (exact in this range).
  Value m = toF64(magnitude);
  Value bits = arith::BitcastOp::create(b, i64(), m);
  Value biased = arith::TruncIOp::create(
      b, e.i32(), arith::ShRUIOp::create(b, bits, c64(52)));
  const int minExponent = 1 - f.bias;
  Value exponent =
      arith::MaxSIOp::create(b, e.sub(biased, e.c32(1023)), e.c32(minExponent));
  Value q = rint(
      arith::MulFOp::create(b, m, pow2(e.sub(e.c32(f.mantBits), exponent))));
  const double implicitOne = std::ldexp(1.0, f.mantBits);
  Value carried = cmpf(arith::CmpFPredicate::OGE, q, cf64(2 * implicitOne));
  q = e.select(carried, arith::MulFOp::create(b, q, cf64(0.5)), q);
  exponent = e.select(carried, e.add(exponent, e.c32(1)), exponent);
  Value qi = arith::FPToSIOp::create(b, e.i32(), q);
  Value normal =
      e.bor(e.shl(e.sub(exponent, e.c32(minExponent - 1)), e.c32(f.mantBits)),
            e.sub(qi, e.c32(int64_t(implicitOne))));
  Value code = e.select(flt(q, cf64(implicitOne)), qi, normal);
  return e.minu(code, e.c32(f.maxCode));
}

Value QuantizeScalars::encodeMiniFloat(Value x, const MiniFloatGrid &f,
                                       uint32_t signMask) {
  Value magnitude = encodeMagnitude(fabs(x), f);
  return e.select(signBit(x), e.bor(magnitude, e.c32(signMask)), magnitude);
}

Value QuantizeScalars::nearestEntry(Value x, ArrayRef<float> table) {
  // NearestEntry's constructor: sorted by (value, index), equal values
  // collapsed to their lowest index.
  SmallVector<std::pair<float, int32_t>> sorted;
  for (auto [i, v] : llvm::enumerate(table))
    sorted.push_back({v, int32_t(i)});
  llvm::sort(sorted);
  sorted.erase(std::unique(sorted.begin(), sorted.end(),
                           [](const auto &l, const auto &r) {
                             return l.first == r.first;
                           }),
               sorted.end());
  // lower_bound: the first entry >= x is entry i for the smallest i with
  // x <= value[i]; the chain runs downwards so that the smallest wins.
  Value code = e.c32(sorted.back().second); // x above every entry
  for (size_t i = sorted.size() - 1; i >= 1; --i) {
    auto [belowV, belowI] = sorted[i - 1];
    auto [aboveV, aboveI] = sorted[i];
    Value dBelow = arith::SubFOp::create(b, x, cf64(belowV));
    Value dAbove = arith::SubFOp::create(b, cf64(aboveV), x);
    Value pickBelow = flt(dBelow, dAbove);
    if (belowI < aboveI)
      pickBelow = e.bor(pickBelow, feq(dBelow, dAbove));
    Value here = e.select(pickBelow, e.c32(belowI), e.c32(aboveI));
    code = e.select(fle(x, cf64(aboveV)), here, code);
  }
  return e.select(fle(x, cf64(sorted.front().first)),
                  e.c32(sorted.front().second), code);
}
