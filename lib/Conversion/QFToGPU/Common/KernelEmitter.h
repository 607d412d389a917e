//===- KernelEmitter.h - small IR-building vocabulary for kernels -*- C++ -*-===//
//
// Kernels are written directly in the LLVM/NVVM dialects (plus arith and scf
// for arithmetic and loops) so that the PTX carries exactly the loads and
// bit tricks the generator chose: 128-bit invariant loads become
// `ld.global.nc.v4`, `lop3`/`prmt` reach the PTX as written. This header
// keeps the generator's code short and readable.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_LIB_CONVERSION_QFTOGPU_COMMON_KERNELEMITTER_H
#define QFUSE_LIB_CONVERSION_QFTOGPU_COMMON_KERNELEMITTER_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/Matchers.h"

namespace mlir {
namespace qf {

class KernelEmitter {
public:
  explicit KernelEmitter(ImplicitLocOpBuilder &b) : b(b) {}

  ImplicitLocOpBuilder &builder() { return b; }
  Type i8() { return b.getI8Type(); }
  Type i16() { return b.getI16Type(); }
  Type i32() { return b.getI32Type(); }
  Type i64() { return b.getI64Type(); }
  Type f16() { return b.getF16Type(); }
  Type bf16() { return b.getBF16Type(); }
  Type f32() { return b.getF32Type(); }
  VectorType v2f16() { return VectorType::get({2}, b.getF16Type()); }
  VectorType v2bf16() { return VectorType::get({2}, b.getBF16Type()); }
  VectorType vNi32(int64_t n) { return VectorType::get({n}, b.getI32Type()); }
  LLVM::LLVMPointerType globalPtr() {
    return LLVM::LLVMPointerType::get(b.getContext(), 1);
  }

  Value c32(int64_t v) { return arith::ConstantIntOp::create(b, v, 32); }
  Value c64(int64_t v) { return arith::ConstantIntOp::create(b, v, 64); }
  Value cf32(double v) {
    return arith::ConstantOp::create(b, b.getF32FloatAttr(v));
  }
  /// A half2 constant with both lanes equal to `v`.
  Value ch2(double v) {
    auto attr = DenseElementsAttr::get(v2f16(), b.getF16FloatAttr(v));
    return arith::ConstantOp::create(b, attr);
  }

  Value add(Value x, Value y) { return arith::AddIOp::create(b, x, y); }
  Value sub(Value x, Value y) { return arith::SubIOp::create(b, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, x, y); }
  Value divu(Value x, Value y) { return arith::DivUIOp::create(b, x, y); }
  Value remu(Value x, Value y) { return arith::RemUIOp::create(b, x, y); }
  Value shru(Value x, Value y) { return arith::ShRUIOp::create(b, x, y); }
  Value band(Value x, Value y) { return arith::AndIOp::create(b, x, y); }
  Value minu(Value x, Value y) { return arith::MinUIOp::create(b, x, y); }
  Value ult(Value x, Value y) {
    return arith::CmpIOp::create(b, arith::CmpIPredicate::ult, x, y);
  }
  Value zext64(Value x) { return arith::ExtUIOp::create(b, i64(), x); }
  Value fadd(Value x, Value y) { return arith::AddFOp::create(b, x, y); }
  Value fsub(Value x, Value y) { return arith::SubFOp::create(b, x, y); }
  Value fmul(Value x, Value y) { return arith::MulFOp::create(b, x, y); }
  Value fdiv(Value x, Value y) { return arith::DivFOp::create(b, x, y); }
  Value fneg(Value x) { return arith::NegFOp::create(b, x); }
  Value fma(Value x, Value y, Value z) {
    return LLVM::FMAOp::create(b, x, y, z);
  }
  Value extf32(Value x) { return arith::ExtFOp::create(b, f32(), x); }
  Value truncf16(Value x) { return arith::TruncFOp::create(b, f16(), x); }
  /// Rounds an f32 to `type` (f16 or bf16), to nearest even.
  Value truncTo(Type type, Value x) {
    return arith::TruncFOp::create(b, type, x);
  }
  Value bitcast(Type t, Value x) { return LLVM::BitcastOp::create(b, t, x); }
  Value extract(Value vec, int64_t i) {
    return LLVM::ExtractElementOp::create(b, vec, c32(i));
  }

  /// ptr + byteOffset (i64), as an i8 GEP in the global address space.
  Value gepBytes(Value ptr, Value byteOffset) {
    return LLVM::GEPOp::create(b, globalPtr(), i8(), ptr,
                               ValueRange{byteOffset});
  }
  /// A read-only load: `invariant` lets NVPTX select ld.global.nc.
  Value loadRO(Type type, Value ptr, unsigned align) {
    return LLVM::LoadOp::create(b, type, ptr, align, /*isVolatile=*/false,
                                /*isNonTemporal=*/false, /*isInvariant=*/true);
  }
  void store(Value v, Value ptr, unsigned align) {
    LLVM::StoreOp::create(b, v, ptr, align);
  }

  /// One-result inline PTX, pure (no side effects), operands by constraint.
  Value ptx(StringRef text, StringRef constraints, Type result,
            ValueRange operands) {
    return LLVM::InlineAsmOp::create(
               b, result, operands, text, constraints,
               /*has_side_effects=*/false, /*is_align_stack=*/false,
               LLVM::tailcallkind::TailCallKind::None,
               LLVM::AsmDialectAttr::get(b.getContext(),
                                         LLVM::AsmDialect::AD_ATT),
               /*operand_attrs=*/nullptr)
        .getResult(0);
  }
  /// Inline PTX with side effects (kept in place and in order), results as
  /// one struct when there are several, operands by constraint.
  Operation *ptxEffect(StringRef text, StringRef constraints, Type result,
                       ValueRange operands) {
    return LLVM::InlineAsmOp::create(
        b, result ? TypeRange(result) : TypeRange(), operands, text,
        constraints, /*has_side_effects=*/true, /*is_align_stack=*/false,
        LLVM::tailcallkind::TailCallKind::None,
        LLVM::AsmDialectAttr::get(b.getContext(), LLVM::AsmDialect::AD_ATT),
        /*operand_attrs=*/nullptr);
  }
  /// d = (a & mask) | bits: one lop3 (LUT 0xea = (a & b) | c).
  Value andOr(Value a, uint32_t mask, uint32_t bits) {
    return ptx("lop3.b32 $0, $1, $2, $3, 0xea;", "=r,r,n,n", i32(),
               {a, c32(mask), c32(bits)});
  }
  /// d = (a & ~mask) | (b & mask): one lop3 (LUT 0xd8).
  Value select(Value a, Value bv, Value mask) {
    return ptx("lop3.b32 $0, $1, $2, $3, 0xd8;", "=r,r,r,r", i32(),
               {a, bv, mask});
  }
  /// d = a | (b & bits): one lop3 (LUT 0xf8).
  Value orMasked(Value a, Value bv, uint32_t bits) {
    return ptx("lop3.b32 $0, $1, $2, $3, 0xf8;", "=r,r,r,n", i32(),
               {a, bv, c32(bits)});
  }
  /// silu(g) * u = g / (1 + 2^(-g log2 e)) * u, in f32: for g << 0 the
  /// exponential overflows to +inf and the quotient is -0, the limit;
  /// ex2.approx is accurate to ~2^-22 relative, far below the f16 rounding
  /// of the result. The one definition of the fused epilogues and the
  /// elementwise kernel.
  Value siluMul(Value g, Value u) {
    Value ex = ptx("ex2.approx.ftz.f32 $0, $1;", "=f,f", f32(),
                   {fmul(g, cf32(-1.4426950408889634))});
    return fmul(fdiv(g, fadd(cf32(1.0), ex)), u);
  }
  /// d = bytes of {b, a} selected by `selector` (prmt.b32). Constant bytes
  /// (a table, a magic exponent) come as pinnedConstant's registers.
  Value prmt(Value a, Value bv, uint32_t selector) {
    return ptx("prmt.b32 $0, $1, $2, $3;", "=r,r,r,n", i32(),
               {pinnedConstant(a), pinnedConstant(bv), c32(selector)});
  }
  /// The same with the selector in a register (an i32 value).
  Value prmt(Value a, Value bv, Value selector) {
    return ptx("prmt.b32 $0, $1, $2, $3;", "=r,r,r,r", i32(),
               {pinnedConstant(a), pinnedConstant(bv), selector});
  }

  /// From here on, pinnedConstant hides constants from ptxas behind a zero
  /// it cannot see: bit 0 of `alignedPointer`, an argument that points to
  /// elements of 2 bytes or more. Called once, at the kernel's entry.
  void pinConstantsWith(Value alignedPointer) {
    Value address = LLVM::PtrToIntOp::create(b, i64(), alignedPointer);
    Value low = arith::TruncIOp::create(b, i32(), address);
    runtimeZero = band(low, c32(1));
  }
  /// `v`, where it is an integer constant and pinConstantsWith has run, as
  /// `v ^ 0` of a zero ptxas cannot fold. prmt takes its bytes only from
  /// registers; ptxas keeps a constant in a uniform register and copies it
  /// into a register before every use, but keeps a value it cannot fold in
  /// a register (docs/tensor-core.md, "Constants in registers").
  Value pinnedConstant(Value v) {
    if (!runtimeZero || !matchPattern(v, m_Constant()))
      return v;
    return arith::XOrIOp::create(b, v, runtimeZero);
  }

  Value tidX() { return NVVM::ThreadIdXOp::create(b, i32()); }
  Value ctaidX() { return NVVM::BlockIdXOp::create(b, i32()); }
  Value shflXor(Value v, int64_t offset) {
    return NVVM::ShflOp::create(b, v.getType(), c32(-1), v, c32(offset),
                                c32(31), NVVM::ShflKind::bfly,
                                /*return_value_and_is_valid=*/UnitAttr());
  }

private:
  ImplicitLocOpBuilder &b;
  Value runtimeZero; // pinConstantsWith's
};

} // namespace qf
} // namespace mlir

#endif // QFUSE_LIB_CONVERSION_QFTOGPU_COMMON_KERNELEMITTER_H
