//===- GPTQBlockKernel.cpp - qf.gptq_block_update kernel ------------------===//
//
// One block of GPTQ's column loop (runtime/gptq Block.h), bit for bit:
//
//   one warp per row (4 rows per 128-thread block, grid ceil(R / 4)); lane l
//   holds the row's columns l, l + 32, l + 64, l + 96 (P = ceil(B / 32)
//   registers), so the whole row stays in registers for the B columns.
//   Column j = 32 k + l (k unrolled here, l an scf.for):
//     [dynamic, j % G == 0]  the group's amax/min/max over the lanes' current
//                            weights (warp max/min: exact, any order), then
//                            Grid::fit's double arithmetic in every lane;
//     wj = shfl(w[k], l)     every lane computes code, value and error of
//                            column j redundantly (the same operations on
//                            the same bits give the same results);
//     w[c] -= e * U[j][c]    each lane for its own columns c > j.
//   Codes and errors stay in the owning lane's registers and are stored once,
//   coalesced, after the loop; dynamic group parameters are stored by lane 0.
//
// The arithmetic is the reference's, operation for operation: every f32 or
// f64 operation is an explicitly rounded PTX instruction (mul.rn, sub.rn,
// div.rn, cvt.rni), written as inline PTX so that neither LLVM (which would
// only contract with a `contract` flag) nor ptxas (which fuses plain mul.f32
// and add.f32 into fma) can change the rounding. Grid::code divides in f64
// (rint of an f32 quotient can differ at half-way points); the scale is
// rounded into its type as format::storeScale does (up for f16/bf16/f32/E8M0,
// to nearest for E4M3); min/max are written as the selects of std::min and
// std::max, so that signed zeros come out as in the reference.
//
// NVFP4 (MinifloatGrid with a global scale): the `global_scale` operand holds
// one f32 per row, which each warp loads once. fit: s = e4m3_rn(f32((amax /
// 6) * g)) in f64, saturating at 448, and 0 (not 1) for a zero group; code:
// s > 0 ? e2m1(f32((w * g) / s)) : 0, in f64; value: (e2m1 * s) / g, an f32
// mul.rn then an f32 div.rn.
//
//===----------------------------------------------------------------------===//

#include "OpKernelCommon.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

using namespace mlir;
using namespace mlir::qf;

namespace {

constexpr int64_t kRowsPerBlock = 4;
constexpr int64_t kThreads = 32 * kRowsPerBlock;

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
Value encodeMagnitude(KernelEmitter &e, Arith &a, Value magnitude,
                      const MiniFloat &f) {
  ImplicitLocOpBuilder &b = e.builder();
  Value m = a.toF64(magnitude);
  Value bits = e.bitcast(e.i64(), m);
  Value biased = arith::TruncIOp::create(b, e.i32(),
                                         e.shru(bits, e.c64(52)));
  // f32 values are normal doubles: exponent = field - 1023 (frexp's e2 - 1).
  Value exponent = e.sub(biased, e.c32(1023));
  const int minExponent = 1 - f.bias;
  exponent = arith::MaxSIOp::create(b, exponent, e.c32(minExponent));
  // 2^(mantBits - exponent), a normal double for every f32 magnitude.
  Value shift = e.sub(e.c32(f.mantBits + 1023), exponent);
  Value pow2 = e.bitcast(
      a.f64(), arith::ShLIOp::create(b, e.zext64(shift), e.c64(52)));
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
Value decodeMagnitude(KernelEmitter &e, Arith &a, Value code,
                      const MiniFloat &f) {
  ImplicitLocOpBuilder &b = e.builder();
  Value field = e.shru(code, e.c32(f.mantBits));
  Value mant = e.band(code, e.c32((1 << f.mantBits) - 1));
  Value isSub = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, field,
                                      e.c32(0));
  Value significand =
      a.select(isSub, mant, e.add(mant, e.c32(1 << f.mantBits)));
  Value power = a.select(isSub, e.c32(1), field); // 2^(power-bias-mantBits)
  Value exp2 = e.bitcast(
      e.f32(), arith::ShLIOp::create(
                   b, e.add(power, e.c32(127 - f.bias - f.mantBits)),
                   e.c32(23)));
  Value sigF = arith::SIToFPOp::create(b, e.f32(), significand);
  return a.mulF(sigF, exp2); // exact: a small integer times a power of two
}

Value withSign(KernelEmitter &e, Arith &a, Value magnitude, Value negative) {
  return a.select(negative, e.fneg(magnitude), magnitude);
}

/// format::storeScale(s, type) for s > 0, and for s == 0 what finishScale
/// keeps: 1, or 0 with a global scale (NVFP4: a zero group stays zero).
/// f16/bf16/f32/E8M0 round up: the smallest f32 not below s first (cvt.rp;
/// every f16/bf16/E8M0 value is an f32, so the smallest one not below s is
/// the smallest one not below that f32), then up into the type. E4M3 rounds
/// to nearest and saturates at 448 (encodeMagnitude's maxCode 0x7E) for
/// every finite f32.
Value storeScale(KernelEmitter &e, Arith &a, Value exact, ScaleKind kind,
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
    Value up = arith::AddIOp::create(
        b, hBits, arith::ConstantIntOp::create(b, 1, 16));
    scale = e.extf32(e.bitcast(e.f16(), a.select(below, up, hBits)));
    break;
  }
  case ScaleKind::BF16: {
    // floatToBFloat16: x + 0x7FFF + ((x >> 16) & 1), top half; then one up
    // when that is below f.
    Value f = a.toF32Up(exact);
    Value x = e.bitcast(e.i32(), f);
    Value rounded = e.add(
        x, e.add(e.c32(0x7FFF), e.band(e.shru(x, e.c32(16)), e.c32(1))));
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
    Value exact2 = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, mant,
                                         e.c32(0));
    exponent = a.select(exact2, exponent, e.add(exponent, e.c32(1)));
    // f32 subnormals (field 0) are below 2^-127 or equal to it: -127.
    Value sub = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, field,
                                      e.c32(0));
    exponent = a.select(sub, e.c32(-127), exponent);
    exponent = arith::MinSIOp::create(b, exponent, e.c32(127));
    Value normal = arith::ShLIOp::create(b, e.add(exponent, e.c32(127)),
                                         e.c32(23));
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
  Value positive = arith::CmpFOp::create(b, arith::CmpFPredicate::OGT, exact,
                                         a.cf64(0.0));
  return a.select(positive, scale, e.cf32(globalScale ? 0.0 : 1.0));
}

/// format::roundToScalarType(v, type) for the float zero points.
Value roundToScaleType(KernelEmitter &e, Arith &a, Value v, ScaleKind kind) {
  switch (kind) {
  case ScaleKind::F32:
    return v;
  case ScaleKind::F16:
    return e.extf32(e.truncf16(v));
  case ScaleKind::BF16: {
    Value x = e.bitcast(e.i32(), v);
    Value rounded = e.add(
        x, e.add(e.c32(0x7FFF), e.band(e.shru(x, e.c32(16)), e.c32(1))));
    return e.bitcast(
        e.f32(), e.band(rounded, e.c32(static_cast<int32_t>(0xFFFF0000u))));
  }
  case ScaleKind::E8M0:
  case ScaleKind::E4M3:
    break; // rejected before generation
  }
  return v;
}

/// Group parameters (scale, zero) from the group's statistics (Grid::fit);
/// `global` is the row's NVFP4 global scale (f32), null for other grids.
std::pair<Value, Value> fitGroup(KernelEmitter &e, Arith &a,
                                 const GridSpec &g, Value amax, Value lo32,
                                 Value hi32, Value global) {
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
std::pair<Value, Value> codeAndValue(KernelEmitter &e, Arith &a,
                                     const GridSpec &g, Value w, Value scale,
                                     Value zero, Value global) {
  ImplicitLocOpBuilder &b = e.builder();
  Value v = a.toF64(w), s = a.toF64(scale);
  switch (g.format) {
  case ElementFormat::Int4:
  case ElementFormat::Int8: {
    Value q = a.min(a.max(a.rint(a.divD(v, s)), a.cf64(-g.qmax)),
                    a.cf64(g.qmax));
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
    Value negative = arith::CmpIOp::create(
        b, arith::CmpIPredicate::slt, e.bitcast(e.i32(), x), e.c32(0));
    Value magnitude = encodeMagnitude(e, a, a.fabs(x), f);
    if (global) {
      // NVFP4: p.scale > 0 ? encodeE2M1(...) : 0 (a zero group's scale is 0).
      Value usable = arith::CmpFOp::create(b, arith::CmpFPredicate::OGT,
                                           scale, e.cf32(0.0));
      magnitude = a.select(usable, magnitude, e.c32(0));
      negative = arith::AndIOp::create(b, usable, negative);
    }
    uint32_t signBit = fp8 ? 0x80 : 0x8;
    Value code = a.select(negative,
                          arith::OrIOp::create(b, magnitude, e.c32(signBit)),
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

/// Warp-wide reduction of an f32 with `combine` (xor butterfly; exact for
/// max and min, so the order does not matter).
Value warpReduce(KernelEmitter &e, Value v,
                 function_ref<Value(Value, Value)> combine) {
  for (int64_t offset = 16; offset >= 1; offset /= 2)
    v = combine(v, e.shflXor(v, offset));
  return v;
}

Value shflIdx(KernelEmitter &e, Value v, Value lane) {
  return NVVM::ShflOp::create(e.builder(), v.getType(), e.c32(-1), v, lane,
                              e.c32(31), NVVM::ShflKind::idx,
                              /*return_value_and_is_valid=*/UnitAttr());
}

/// Kernel arguments, in the order of the params.
struct BlockArgs {
  Value w, u, scales, zeros, globalScale, codes, err, scalesOut, zerosOut;
};

void buildBlockKernel(ImplicitLocOpBuilder &b, const GridSpec &g,
                      const BlockArgs &args) {
  KernelEmitter e(b);
  Arith a(e);
  const int64_t B = g.cols, P = (B + 31) / 32;
  const int64_t groups = g.dynamic ? B / g.group : 0;
  Value tid = e.tidX();
  Value lane = e.band(tid, e.c32(31));
  Value row = e.add(e.mul(e.ctaidX(), e.c32(kRowsPerBlock)),
                    e.shru(tid, e.c32(5)));
  // Whole warps leave together: the guard is uniform in a warp.
  auto inRows = scf::IfOp::create(b, e.ult(row, e.c32(g.rows)),
                                  /*withElseRegion=*/false);
  b.setInsertionPointToStart(inRows.thenBlock());

  auto f32At = [&](Value base, Value index) {
    return e.gepBytes(base, e.mul(e.zext64(index), e.c64(4)));
  };
  // NVFP4: the row's global scale, loaded once by every lane of its warp.
  Value global = g.globalScale
                     ? e.loadRO(e.f32(), f32At(args.globalScale, row), 4)
                     : Value();
  Value rowBase = e.mul(row, e.c32(B));
  // Lane slot p holds column 32 p + lane (clamped for the load when past B).
  SmallVector<Value> colOf, validOf, w;
  for (int64_t p = 0; p < P; ++p) {
    Value col = e.add(lane, e.c32(32 * p));
    bool full = 32 * (p + 1) <= B;
    colOf.push_back(col);
    validOf.push_back(full ? Value() : e.ult(col, e.c32(B)));
    Value at = full ? col : e.minu(col, e.c32(B - 1));
    w.push_back(e.loadRO(e.f32(), f32At(args.w, e.add(rowBase, at)), 4));
  }

  // Loop-carried: w[P], codes[P], errors[P], scale, zero.
  SmallVector<Value> state(w);
  for (int64_t p = 0; p < P; ++p)
    state.push_back(e.c32(0));
  for (int64_t p = 0; p < P; ++p)
    state.push_back(e.cf32(0.0));
  state.push_back(e.cf32(1.0));
  state.push_back(e.cf32(0.0));

  for (int64_t k = 0; k < P; ++k) {
    int64_t lanes = std::min<int64_t>(32, B - 32 * k);
    auto loop = scf::ForOp::create(b, e.c32(0), e.c32(lanes), e.c32(1), state);
    OpBuilder::InsertionGuard loopGuard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value l = loop.getInductionVar();
    SmallVector<Value> s(loop.getRegionIterArgs());
    MutableArrayRef<Value> ws(s.data(), P), cs(s.data() + P, P),
        es(s.data() + 2 * P, P);
    Value &scale = s[3 * P], &zero = s[3 * P + 1];
    Value j = e.add(l, e.c32(32 * k));

    if (g.dynamic) {
      // Grid::fit at each group's first column, on the current weights.
      Value starts = arith::CmpIOp::create(
          b, arith::CmpIPredicate::eq, e.remu(j, e.c32(g.group)), e.c32(0));
      auto fit = scf::IfOp::create(b, TypeRange{e.f32(), e.f32()}, starts,
                                   /*withElseRegion=*/true);
      {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(fit.thenBlock());
        Value end = e.add(j, e.c32(g.group));
        Value amax = e.cf32(0.0);
        Value lo = e.cf32(std::numeric_limits<float>::infinity());
        Value hi = e.cf32(-std::numeric_limits<float>::infinity());
        for (int64_t p = 0; p < P; ++p) {
          Value in = arith::AndIOp::create(
              b, arith::CmpIOp::create(b, arith::CmpIPredicate::uge, colOf[p], j),
              e.ult(colOf[p], end));
          amax = a.select(in, a.max(amax, a.fabs(ws[p])), amax);
          lo = a.select(in, a.min(lo, ws[p]), lo);
          hi = a.select(in, a.max(hi, ws[p]), hi);
        }
        auto fmax = [&](Value x, Value y) { return a.max(x, y); };
        auto fmin = [&](Value x, Value y) { return a.min(x, y); };
        amax = warpReduce(e, amax, fmax);
        bool needRange = g.format == ElementFormat::UInt4 ||
                         g.format == ElementFormat::UInt8;
        if (needRange) {
          lo = warpReduce(e, lo, fmin);
          hi = warpReduce(e, hi, fmax);
        }
        auto [newScale, newZero] = fitGroup(e, a, g, amax, lo, hi, global);
        // Lane 0 records the group's parameters: [R, B / G].
        Value isLane0 = arith::CmpIOp::create(b, arith::CmpIPredicate::eq,
                                              lane, e.c32(0));
        auto store = scf::IfOp::create(b, isLane0, /*withElseRegion=*/false);
        {
          OpBuilder::InsertionGuard storeGuard(b);
          b.setInsertionPointToStart(store.thenBlock());
          Value at = e.add(e.mul(row, e.c32(groups)),
                           e.divu(j, e.c32(g.group)));
          e.store(newScale, f32At(args.scalesOut, at), 4);
          if (args.zerosOut)
            e.store(newZero, f32At(args.zerosOut, at), 4);
        }
        scf::YieldOp::create(b, ValueRange{newScale, newZero});
        b.setInsertionPointToStart(fit.elseBlock());
        scf::YieldOp::create(b, ValueRange{scale, zero});
      }
      scale = fit.getResult(0);
      zero = fit.getResult(1);
    } else {
      // Static: the host gathered one scale (and zero) per column.
      Value at = e.add(rowBase, j);
      scale = e.loadRO(e.f32(), f32At(args.scales, at), 4);
      if (args.zeros)
        zero = e.loadRO(e.f32(), f32At(args.zeros, at), 4);
    }

    // Column j, redundantly in every lane: c = code(w[j]), q = value(c),
    // t = w[j] - q, e = t / U[j][j] (f32 sub, f32 true division).
    Value wj = shflIdx(e, ws[k], l);
    auto [code, q] = codeAndValue(e, a, g, wj, scale, zero, global);
    Value uRow = e.mul(j, e.c32(B));
    Value d = e.loadRO(e.f32(), f32At(args.u, e.add(uRow, j)), 4);
    Value err = a.divF(a.subF(wj, q), d);
    // w[c] = w[c] - e * U[j][c] for this lane's columns c > j: a rounded
    // multiply, then a rounded subtract.
    for (int64_t p = 0; p < P; ++p) {
      Value later = arith::CmpIOp::create(b, arith::CmpIPredicate::ugt,
                                          colOf[p], j);
      if (validOf[p])
        later = arith::AndIOp::create(b, later, validOf[p]);
      Value at = validOf[p] ? e.minu(colOf[p], e.c32(B - 1)) : colOf[p];
      Value u = e.loadRO(e.f32(), f32At(args.u, e.add(uRow, at)), 4);
      ws[p] = a.select(later, a.subF(ws[p], a.mulF(err, u)), ws[p]);
    }
    // The owning lane keeps the code and error of column j.
    Value mine =
        arith::CmpIOp::create(b, arith::CmpIPredicate::eq, lane, l);
    cs[k] = a.select(mine, code, cs[k]);
    es[k] = a.select(mine, err, es[k]);
    scf::YieldOp::create(b, s);
    state.assign(loop.getResults().begin(), loop.getResults().end());
  }

  // Coalesced stores of the codes (i8, the logical code's low byte) and E.
  for (int64_t p = 0; p < P; ++p) {
    OpBuilder::InsertionGuard guard(b);
    if (validOf[p]) {
      auto in = scf::IfOp::create(b, validOf[p], /*withElseRegion=*/false);
      b.setInsertionPointToStart(in.thenBlock());
    }
    Value at = e.add(rowBase, colOf[p]);
    Value code8 = arith::TruncIOp::create(b, e.i8(), state[P + p]);
    e.store(code8, e.gepBytes(args.codes, e.zext64(at)), 1);
    e.store(state[2 * P + p], f32At(args.err, at), 4);
  }
}

/// A short, unique spelling of the grid for the kernel name.
std::string gridName(const GridSpec &g) {
  std::string name = stringifyElementFormat(g.format).str();
  if (g.format == ElementFormat::Codebook || g.format == ElementFormat::NF4) {
    // FNV-1a over the entries' bits: stable across runs and builds.
    uint32_t h = 2166136261u;
    for (float v : g.table) {
      uint32_t bits;
      std::memcpy(&bits, &v, 4);
      for (int i = 0; i < 4; ++i)
        h = (h ^ ((bits >> (8 * i)) & 0xFF)) * 16777619u;
    }
    name += "_n" + std::to_string(g.table.size()) + "_t" + llvm::utohexstr(h);
  }
  static const char *scaleNames[] = {"f16", "bf16", "f32", "e8m0", "e4m3"};
  name += std::string("_s") + scaleNames[int(g.scale)];
  if (g.isUnsigned)
    name += g.floatZero ? "_zf" : "_zi";
  if (g.globalScale) // NVFP4
    name += "_gs";
  return name;
}

} // namespace

FailureOr<SmallVector<OpLaunch>>
qf::lowerGPTQBlockUpdate(GPTQBlockUpdateOp op, OpKernelContext &context,
                         int64_t batch) {
  EncodingAttr grid = op.getGrid();
  RankedTensorType wType = op.getWeights().getType();
  GridSpec g;
  g.format = grid.getFormat();
  // Dynamic rows: one kernel per plan batch (the row count).
  g.rows = wType.isDynamicDim(0) ? batch : wType.getDimSize(0);
  g.cols = wType.getDimSize(1);
  g.dynamic = !op.getScales();
  g.group = grid.getGroupSize();
  auto reject = [&](const Twine &why) -> FailureOr<SmallVector<OpLaunch>> {
    return op.emitOpError() << "has no GPU kernel for grid " << grid << ": "
                            << why,
           failure();
  };
  if (g.cols > 128)
    return reject("the block holds " + Twine(g.cols) +
                  " columns; the kernel keeps at most 128 in a warp's "
                  "registers");
  if (batch != g.rows)
    return reject("the kernel is compiled for its " + Twine(g.rows) +
                  " rows, not a batch of " + Twine(batch));
  // NVFP4: the verifier guarantees the global_scale operand, one per row.
  g.globalScale = grid.getGlobalScale();

  Type scaleType = grid.getScaleType();
  if (!scaleType || scaleType.isF32())
    g.scale = ScaleKind::F32;
  else if (scaleType.isF16())
    g.scale = ScaleKind::F16;
  else if (scaleType.isBF16())
    g.scale = ScaleKind::BF16;
  else if (isa<Float8E8M0FNUType>(scaleType))
    g.scale = ScaleKind::E8M0;
  else if (isa<Float8E4M3FNType>(scaleType))
    g.scale = ScaleKind::E4M3;
  else
    return reject("unsupported scale type");

  switch (g.format) {
  case ElementFormat::Int4:
  case ElementFormat::Int8:
    g.qmax = g.format == ElementFormat::Int4 ? 7 : 127;
    break;
  case ElementFormat::UInt4:
  case ElementFormat::UInt8:
    g.isUnsigned = true;
    g.floatZero = grid.getZeroPoint() == ZeroPointKind::Float;
    g.qmax = g.format == ElementFormat::UInt4 ? 15 : 255;
    if (g.floatZero &&
        (g.scale == ScaleKind::E8M0 || g.scale == ScaleKind::E4M3))
      return reject("float zero points rounded to an fp8 scale type");
    break;
  case ElementFormat::FP8E4M3:
  case ElementFormat::FP4E2M1:
    break;
  case ElementFormat::NF4:
  case ElementFormat::Codebook: {
    if (grid.getTableName())
      return reject("the named table '" + grid.getTableName().getValue() +
                    "' is not an operand of the op: inline it");
    for (double v : grid.getCodebookValues())
      g.table.push_back(static_cast<float>(v));
    if (g.table.empty())
      return reject("the codebook has no table");
    for (size_t i = 0; i < g.table.size(); ++i) {
      g.sorted.push_back({g.table[i], int32_t(i)});
      g.tableMax = std::max(g.tableMax, std::fabs(double(g.table[i])));
    }
    if (!(g.tableMax > 0))
      return reject("the codebook has no non-zero entry to scale to");
    if (llvm::any_of(g.table, [](float v) { return std::isnan(v); }))
      return reject("the codebook has a NaN entry");
    std::stable_sort(g.sorted.begin(), g.sorted.end(),
                     [](auto &x, auto &y) { return x.first < y.first; });
    g.sorted.erase(std::unique(g.sorted.begin(), g.sorted.end(),
                               [](auto &x, auto &y) {
                                 return x.first == y.first;
                               }),
                   g.sorted.end());
    break;
  }
  default:
    return reject("not a quantized element format");
  }

  std::string name = "qf_gptq_block_" + gridName(g) +
                     (g.dynamic ? "_g" + std::to_string(g.group)
                                : std::string("_static")) +
                     "_r" + std::to_string(g.rows) + "_b" +
                     std::to_string(g.cols);
  MLIRContext *ctx = op.getContext();
  bool hasZeros = grid.getZeroPoint() != ZeroPointKind::None;
  SmallVector<OpParam> params = {{"w", ParamKind::In, operandArg(ctx, 0)},
                                 {"u", ParamKind::In, operandArg(ctx, 1)}};
  if (!g.dynamic) {
    params.push_back({"scales", ParamKind::In, operandArg(ctx, 2)});
    if (hasZeros)
      params.push_back({"zeros", ParamKind::In, operandArg(ctx, 3)});
  }
  if (g.globalScale) // the last operand, after scales/zeros
    params.push_back(
        {"global_scale", ParamKind::In,
         operandArg(ctx, op.getODSOperandIndexAndLength(4).first)});
  params.push_back({"codes", ParamKind::Out, resultArg(ctx, 0)});
  params.push_back({"err", ParamKind::Out, resultArg(ctx, 1)});
  if (g.dynamic) {
    params.push_back({"scales_out", ParamKind::Out, resultArg(ctx, 2)});
    if (hasZeros)
      params.push_back({"zeros_out", ParamKind::Out, resultArg(ctx, 3)});
  }
  if (!context.module.lookupSymbol(name)) {
    ImplicitLocOpBuilder b(op.getLoc(), ctx);
    SmallVector<Value> v =
        createOpKernel(b, context.module, name, params, kThreads);
    BlockArgs args;
    size_t i = 0;
    args.w = v[i++];
    args.u = v[i++];
    if (!g.dynamic) {
      args.scales = v[i++];
      if (hasZeros)
        args.zeros = v[i++];
    }
    if (g.globalScale)
      args.globalScale = v[i++];
    args.codes = v[i++];
    args.err = v[i++];
    if (g.dynamic) {
      args.scalesOut = v[i++];
      if (hasZeros)
        args.zerosOut = v[i++];
    }
    {
      OpBuilder::InsertionGuard guard(b);
      buildBlockKernel(b, g, args);
    }
    LLVM::ReturnOp::create(b, ValueRange{});
  }
  int64_t blocks = (g.rows + kRowsPerBlock - 1) / kRowsPerBlock;
  return SmallVector<OpLaunch>{
      makeOpLaunch(name, params, blocks, 1, kThreads)};
}
