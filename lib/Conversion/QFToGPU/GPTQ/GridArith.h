//===- GridArith.h - GPTQ grid arithmetic as rounded PTX ---------*- C++
//-*-===//
//
// The reference's quantization grid (format::storeScale, Grid::fit and
// Grid::code) as IR: every f32/f64 operation an explicitly rounded PTX
// instruction, so that the block kernel's codes match the CPU reference bit
// for bit. Used by GPTQBlockKernel.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_LIB_CONVERSION_QFTOGPU_GPTQ_GRIDARITH_H
#define QFUSE_LIB_CONVERSION_QFTOGPU_GPTQ_GRIDARITH_H

#include "Ops/OpKernelCommon.h"

#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace mlir {
namespace qf {
namespace gptq {

/// How a scale is stored (format::storeScale).
enum class ScaleKind { F16, BF16, F32, E8M0, E4M3 };

/// Everything that determines the kernel's code.
struct GridSpec {
  ElementFormat format;
  ScaleKind scale;
  bool isUnsigned = false, floatZero = false;
  bool globalScale = false; ///< NVFP4: one f32 global scale per row
  double qmax = 0; ///< integer formats: 2^(b-1) - 1, or 2^b - 1 unsigned
  /// Codebooks: the f32 table, and its entries sorted by value with equal
  /// values collapsed to their lowest index (format::NearestEntry).
  SmallVector<float> table;
  SmallVector<std::pair<float, int32_t>> sorted;
  double tableMax = 0;
  bool dynamic = false;
  int64_t group = 0;
  int64_t rows = 0, cols = 0;
};

/// Minifloat element grids, as format's encodeMagnitude sees them.
struct MiniFloat {
  int mantBits, bias;
  uint32_t maxCode;
};
constexpr MiniFloat kE4M3 = {3, 7, 0x7E};
constexpr MiniFloat kE2M1 = {1, 1, 0x7};

/// The operations of the reference, one explicitly rounded PTX instruction
/// each, plus the selects of std::min/std::max.
class Arith {
public:
  explicit Arith(KernelEmitter &e) : e(e), b(e.builder()) {}

  Type f64() { return b.getF64Type(); }
  Value cf64(double v) {
    return arith::ConstantOp::create(b, b.getF64FloatAttr(v));
  }

  Value mulF(Value x, Value y) { return f32op("mul.rn.f32", x, y); }
  Value subF(Value x, Value y) { return f32op("sub.rn.f32", x, y); }
  Value divF(Value x, Value y) { return f32op("div.rn.f32", x, y); }
  Value divD(Value x, Value y) { return f64op("div.rn.f64", x, y); }
  Value addD(Value x, Value y) { return f64op("add.rn.f64", x, y); }
  Value subD(Value x, Value y) { return f64op("sub.rn.f64", x, y); }
  Value mulD(Value x, Value y) { return f64op("mul.rn.f64", x, y); }
  /// rint: round half to even, to an integral double.
  Value rint(Value x) {
    return e.ptx("cvt.rni.f64.f64 $0, $1;", "=d,d", f64(), {x});
  }
  /// float(double), rounded to nearest even.
  Value toF32(Value x) {
    return e.ptx("cvt.rn.f32.f64 $0, $1;", "=f,d", e.f32(), {x});
  }
  /// The smallest f32 not below x.
  Value toF32Up(Value x) {
    return e.ptx("cvt.rp.f32.f64 $0, $1;", "=f,d", e.f32(), {x});
  }
  Value toF64(Value x) { return arith::ExtFOp::create(b, f64(), x); }

  Value flt(Value x, Value y) {
    return arith::CmpFOp::create(b, arith::CmpFPredicate::OLT, x, y);
  }
  Value feq(Value x, Value y) {
    return arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, x, y);
  }
  Value select(Value c, Value x, Value y) {
    return arith::SelectOp::create(b, c, x, y);
  }
  /// std::max(x, y) = x < y ? y : x;  std::min(x, y) = y < x ? y : x.
  Value max(Value x, Value y) { return select(flt(x, y), y, x); }
  Value min(Value x, Value y) { return select(flt(y, x), y, x); }
  Value fabs(Value x) {
    Type t = x.getType();
    bool isF64 = t.isF64();
    Value bits = e.bitcast(isF64 ? e.i64() : e.i32(), x);
    Value mask = isF64 ? e.c64(0x7FFFFFFFFFFFFFFFll) : e.c32(0x7FFFFFFF);
    return e.bitcast(t, e.band(bits, mask));
  }

private:
  Value f32op(StringRef op, Value x, Value y) {
    return e.ptx((op + " $0, $1, $2;").str(), "=f,f,f", e.f32(), {x, y});
  }
  Value f64op(StringRef op, Value x, Value y) {
    return e.ptx((op + " $0, $1, $2;").str(), "=d,d,d", f64(), {x, y});
  }

  KernelEmitter &e;
  ImplicitLocOpBuilder &b;
};

/// The code of the grid value nearest to |x| (f32, not NaN), ties to the
/// even code, saturating at maxCode: format's encodeMagnitude, with frexp
/// read off the exponent field of the (exact) double and ldexp as a multiply
/// by a power of two (exact here).
inline Value encodeMagnitude(KernelEmitter &e, Arith &a, Value magnitude,
                             const MiniFloat &f) {
  ImplicitLocOpBuilder &b = e.builder();
  Value m = a.toF64(magnitude);
  Value bits = e.bitcast(e.i64(), m);
  Value biased = arith::TruncIOp::create(b, e.i32(), e.shru(bits, e.c64(52)));
  // f32 values are normal doubles: exponent = field - 1023 (frexp's e2 - 1).
  Value exponent = e.sub(biased, e.c32(1023));
  const int minExponent = 1 - f.bias;
  exponent = arith::MaxSIOp::create(b, exponent, e.c32(minExponent));
  // 2^(mantBits - exponent), a normal double for every f32 magnitude.
  Value shift = e.sub(e.c32(f.mantBits + 1023), exponent);
  Value pow2 =
      e.bitcast(a.f64(), arith::ShLIOp::create(b, e.zext64(shift), e.c64(52)));
  Value q = a.rint(a.mulD(m, pow2));
  double implicitOne = std::ldexp(1.0, f.mantBits);
  // Rounded up into the next binade: q / 2 (exact), exponent + 1.
  Value carried = arith::CmpFOp::create(b, arith::CmpFPredicate::OGE, q,
                                        a.cf64(2 * implicitOne));
  q = a.select(carried, a.mulD(q, a.cf64(0.5)), q);
  exponent = a.select(carried, e.add(exponent, e.c32(1)), exponent);
  Value qi = arith::FPToSIOp::create(b, e.i32(), q);
  Value subnormal = a.flt(q, a.cf64(implicitOne));
  Value normal = arith::OrIOp::create(
      b,
      arith::ShLIOp::create(b, e.sub(exponent, e.c32(minExponent - 1)),
                            e.c32(f.mantBits)),
      e.sub(qi, e.c32(int64_t(implicitOne))));
  Value code = a.select(subnormal, qi, normal);
  code = arith::MinUIOp::create(b, code, e.c32(f.maxCode));
  Value isZero = a.feq(m, a.cf64(0.0));
  return a.select(isZero, e.c32(0), code);
}

/// The magnitude of a minifloat code (< 2^(1+exponent bits+mantBits), sign
/// cleared) as an f32: mant * 2^(1-bias-mantBits) when the exponent field is
/// 0, else (2^mantBits + mant) * 2^(field-bias-mantBits); exact.
inline Value decodeMagnitude(KernelEmitter &e, Arith &a, Value code,
                             const MiniFloat &f) {
  ImplicitLocOpBuilder &b = e.builder();
  Value field = e.shru(code, e.c32(f.mantBits));
  Value mant = e.band(code, e.c32((1 << f.mantBits) - 1));
  Value isSub =
      arith::CmpIOp::create(b, arith::CmpIPredicate::eq, field, e.c32(0));
  Value significand =
      a.select(isSub, mant, e.add(mant, e.c32(1 << f.mantBits)));
  Value power = a.select(isSub, e.c32(1), field); // 2^(power-bias-mantBits)
  Value exp2 = e.bitcast(
      e.f32(),
      arith::ShLIOp::create(b, e.add(power, e.c32(127 - f.bias - f.mantBits)),
                            e.c32(23)));
  Value sigF = arith::SIToFPOp::create(b, e.f32(), significand);
  return a.mulF(sigF, exp2); // exact: a small integer times a power of two
}

inline Value withSign(KernelEmitter &e, Arith &a, Value magnitude,
                      Value negative) {
  return a.select(negative, e.fneg(magnitude), magnitude);
}

/// format::storeScale(s, type) for s > 0, and for s == 0 what finishScale
/// keeps: 1, or 0 with a global scale (NVFP4: a zero group stays zero).
/// f16/bf16/f32/E8M0 round up: the smallest f32 not below s first (cvt.rp;
/// every f16/bf16/E8M0 value is an f32, so the smallest one not below s is
/// the smallest one not below that f32), then up into the type. E4M3 rounds
/// to nearest and saturates at 448 (encodeMagnitude's maxCode 0x7E) for
/// every finite f32.
inline Value storeScale(KernelEmitter &e, Arith &a, Value exact, ScaleKind kind,
                        bool globalScale = false) {
  ImplicitLocOpBuilder &b = e.builder();
  Value scale;
  switch (kind) {
  case ScaleKind::F32:
    scale = a.toF32Up(exact);
    break;
  case ScaleKind::F16: {
    Value f = a.toF32Up(exact);
    Value h = e.truncf16(f); // cvt.rn.f16.f32
    Value below = a.flt(e.extf32(h), f);
    Value hBits = e.bitcast(e.i16(), h);
    Value up =
        arith::AddIOp::create(b, hBits, arith::ConstantIntOp::create(b, 1, 16));
    scale = e.extf32(e.bitcast(e.f16(), a.select(below, up, hBits)));
    break;
  }
  case ScaleKind::BF16: {
    // floatToBFloat16: x + 0x7FFF + ((x >> 16) & 1), top half; then one up
    // when that is below f.
    Value f = a.toF32Up(exact);
    Value x = e.bitcast(e.i32(), f);
    Value rounded =
        e.add(x, e.add(e.c32(0x7FFF), e.band(e.shru(x, e.c32(16)), e.c32(1))));
    Value top = e.band(rounded, e.c32(static_cast<int32_t>(0xFFFF0000u)));
    Value below = a.flt(e.bitcast(e.f32(), top), f);
    top = a.select(below, e.add(top, e.c32(0x10000)), top);
    scale = e.bitcast(e.f32(), top);
    break;
  }
  case ScaleKind::E8M0: {
    // encodeE8M0Ceil: the power of two not below f, exponent in [-127, 127].
    Value f = a.toF32Up(exact);
    Value x = e.bitcast(e.i32(), f);
    Value field = e.shru(x, e.c32(23));
    Value mant = e.band(x, e.c32(0x7FFFFF));
    Value exponent = e.sub(field, e.c32(127));
    Value exact2 =
        arith::CmpIOp::create(b, arith::CmpIPredicate::eq, mant, e.c32(0));
    exponent = a.select(exact2, exponent, e.add(exponent, e.c32(1)));
    // f32 subnormals (field 0) are below 2^-127 or equal to it: -127.
    Value sub =
        arith::CmpIOp::create(b, arith::CmpIPredicate::eq, field, e.c32(0));
    exponent = a.select(sub, e.c32(-127), exponent);
    exponent = arith::MinSIOp::create(b, exponent, e.c32(127));
    Value normal =
        arith::ShLIOp::create(b, e.add(exponent, e.c32(127)), e.c32(23));
    Value isMin = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, exponent,
                                        e.c32(-127));
    scale = e.bitcast(e.f32(), a.select(isMin, e.c32(0x00400000), normal));
    break;
  }
  case ScaleKind::E4M3: {
    // decodeE4M3(encodeE4M3(float(s))): to nearest (s > 0 here).
    Value f = a.toF32(exact);
    scale = decodeMagnitude(e, a, encodeMagnitude(e, a, f, kE4M3), kE4M3);
    break;
  }
  }
  Value positive =
      arith::CmpFOp::create(b, arith::CmpFPredicate::OGT, exact, a.cf64(0.0));
  return a.select(positive, scale, e.cf32(globalScale ? 0.0 : 1.0));
}

/// format::roundToScalarType(v, type) for the float zero points.
inline Value roundToScaleType(KernelEmitter &e, Arith &a, Value v,
                              ScaleKind kind) {
  switch (kind) {
  case ScaleKind::F32:
    return v;
  case ScaleKind::F16:
    return e.extf32(e.truncf16(v));
  case ScaleKind::BF16: {
    Value x = e.bitcast(e.i32(), v);
    Value rounded =
        e.add(x, e.add(e.c32(0x7FFF), e.band(e.shru(x, e.c32(16)), e.c32(1))));
    return e.bitcast(e.f32(),
                     e.band(rounded, e.c32(static_cast<int32_t>(0xFFFF0000u))));
  }
  case ScaleKind::E8M0:
  case ScaleKind::E4M3:
    break; // rejected before generation
  }
  return v;
}

/// Group parameters (scale, zero) from the group's statistics (Grid::fit);
/// `global` is the row's NVFP4 global scale (f32), null for other grids.
inline std::pair<Value, Value> fitGroup(KernelEmitter &e, Arith &a,
                                        const GridSpec &g, Value amax,
                                        Value lo32, Value hi32, Value global) {
  Value amaxD = a.toF64(amax);
  switch (g.format) {
  case ElementFormat::Int4:
  case ElementFormat::Int8:
    return {storeScale(e, a, a.divD(amaxD, a.cf64(g.qmax)), g.scale),
            e.cf32(0.0)};
  case ElementFormat::UInt4:
  case ElementFormat::UInt8: {
    Value lo = a.toF64(lo32), hi = a.toF64(hi32);
    if (!g.floatZero) { // integer zero points need 0 inside the range
      lo = a.min(lo, a.cf64(0.0));
      hi = a.max(hi, a.cf64(0.0));
    }
    Value scale =
        storeScale(e, a, a.divD(a.subD(hi, lo), a.cf64(g.qmax)), g.scale);
    Value z = a.divD(e.fneg(lo), a.toF64(scale));
    Value zero;
    if (g.floatZero)
      zero = roundToScaleType(e, a, a.toF32(z), g.scale);
    else
      zero = a.toF32(a.min(a.max(a.rint(z), a.cf64(0.0)), a.cf64(g.qmax)));
    return {scale, zero};
  }
  case ElementFormat::FP8E4M3:
    return {storeScale(e, a, a.divD(amaxD, a.cf64(448.0)), g.scale),
            e.cf32(0.0)};
  case ElementFormat::FP4E2M1: {
    Value exact = a.divD(amaxD, a.cf64(6.0));
    if (global) // exact *= global, in double
      exact = a.mulD(exact, a.toF64(global));
    return {storeScale(e, a, exact, g.scale, g.globalScale), e.cf32(0.0)};
  }
  default: // codebooks
    return {storeScale(e, a, a.divD(amaxD, a.cf64(g.tableMax)), g.scale),
            e.cf32(0.0)};
  }
}

/// Grid::code(w, p) then Grid::value(code, p): the code as i32 (the logical
/// code of Packing.h) and the f32 value it stands for. `global` is the row's
/// NVFP4 global scale (f32), null for other grids.
inline std::pair<Value, Value> codeAndValue(KernelEmitter &e, Arith &a,
                                            const GridSpec &g, Value w,
                                            Value scale, Value zero,
                                            Value global) {
  ImplicitLocOpBuilder &b = e.builder();
  Value v = a.toF64(w), s = a.toF64(scale);
  switch (g.format) {
  case ElementFormat::Int4:
  case ElementFormat::Int8: {
    Value q =
        a.min(a.max(a.rint(a.divD(v, s)), a.cf64(-g.qmax)), a.cf64(g.qmax));
    Value code = arith::FPToSIOp::create(b, e.i32(), q);
    return {code, a.mulF(scale, arith::SIToFPOp::create(b, e.f32(), code))};
  }
  case ElementFormat::UInt4:
  case ElementFormat::UInt8: {
    Value z = a.toF64(zero);
    Value q = g.floatZero ? a.rint(a.addD(a.divD(v, s), z))
                          : a.addD(a.rint(a.divD(v, s)), z);
    q = a.min(a.max(q, a.cf64(0.0)), a.cf64(g.qmax));
    Value code = arith::FPToSIOp::create(b, e.i32(), q);
    Value codeF = arith::SIToFPOp::create(b, e.f32(), code);
    return {code, a.mulF(scale, a.subF(codeF, zero))};
  }
  case ElementFormat::FP8E4M3:
  case ElementFormat::FP4E2M1: {
    bool fp8 = g.format == ElementFormat::FP8E4M3;
    const MiniFloat &f = fp8 ? kE4M3 : kE2M1;
    // float(v / scale); NVFP4: float(v * global / scale), both in double.
    Value x = global ? a.toF32(a.divD(a.mulD(v, a.toF64(global)), s))
                     : a.toF32(a.divD(v, s));
    Value negative = arith::CmpIOp::create(b, arith::CmpIPredicate::slt,
                                           e.bitcast(e.i32(), x), e.c32(0));
    Value magnitude = encodeMagnitude(e, a, a.fabs(x), f);
    if (global) {
      // NVFP4: p.scale > 0 ? encodeE2M1(...) : 0 (a zero group's scale is 0).
      Value usable = arith::CmpFOp::create(b, arith::CmpFPredicate::OGT, scale,
                                           e.cf32(0.0));
      magnitude = a.select(usable, magnitude, e.c32(0));
      negative = arith::AndIOp::create(b, usable, negative);
    }
    uint32_t signBit = fp8 ? 0x80 : 0x8;
    Value code =
        a.select(negative, arith::OrIOp::create(b, magnitude, e.c32(signBit)),
                 magnitude);
    Value decoded =
        withSign(e, a, decodeMagnitude(e, a, magnitude, f), negative);
    if (global) // (decoded * p.scale) / global: f32 mul, then f32 div
      return {code, a.divF(a.mulF(decoded, scale), global)};
    return {code, a.mulF(scale, decoded)};
  }
  default: {
    // format::NearestEntry on the sorted, deduplicated entries: x at or
    // below the first gives the first, above the last the last; between
    // entries i-1 < x <= i, the nearer, the lower index on a tie.
    Value x = a.divD(v, s);
    Value code = e.c32(g.sorted.back().second);
    for (size_t i = g.sorted.size() - 1; i >= 1; --i) {
      auto [belowV, belowI] = g.sorted[i - 1];
      auto [aboveV, aboveI] = g.sorted[i];
      Value dBelow = a.subD(x, a.cf64(belowV));
      Value dAbove = a.subD(a.cf64(aboveV), x);
      Value pickBelow = a.flt(dBelow, dAbove);
      if (belowI < aboveI)
        pickBelow = arith::OrIOp::create(b, pickBelow, a.feq(dBelow, dAbove));
      Value here = a.select(pickBelow, e.c32(belowI), e.c32(aboveI));
      Value inRange = arith::CmpFOp::create(b, arith::CmpFPredicate::OLE, x,
                                            a.cf64(aboveV));
      code = a.select(inRange, here, code);
    }
    Value atFirst = arith::CmpFOp::create(b, arith::CmpFPredicate::OLE, x,
                                          a.cf64(g.sorted.front().first));
    code = a.select(atFirst, e.c32(g.sorted.front().second), code);
    // The entry's value: a select chain over the table (no local memory).
    Value entry = e.cf32(g.table[0]);
    for (size_t i = 1; i < g.table.size(); ++i)
      entry = a.select(arith::CmpIOp::create(b, arith::CmpIPredicate::eq, code,
                                             e.c32(int64_t(i))),
                       e.cf32(g.table[i]), entry);
    return {code, a.mulF(scale, entry)};
  }
  }
}

} // namespace gptq
} // namespace qf
} // namespace mlir

#endif // QFUSE_LIB_CONVERSION_QFTOGPU_GPTQ_GRIDARITH_H
