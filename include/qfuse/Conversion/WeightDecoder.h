//===- WeightDecoder.h - one packed weight element in scf/arith -*- C++ -*-===//
//
// The one scalar decode of every #qf.enc and layout, in plain
// scf/arith/memref over index arithmetic: WeightDecoder turns one stored code
// of one weight row into its column and f32 value. Two consumers: the CPU
// reference (qf-to-cpu) and the GPU dequantize kernel that feeds cuBLAS
// where no fused kernel takes a weight (qf-to-gpu, Ops/DequantizeKernel.cpp).
// ScalarEmitter is the IR-building vocabulary that keeps both short.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_CONVERSION_WEIGHTDECODER_H
#define QFUSE_CONVERSION_WEIGHTDECODER_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "qfuse/Dialect/QF/IR/QFDialect.h"

#include <functional>

namespace mlir {
namespace qf {

class ScalarEmitter {
public:
  explicit ScalarEmitter(ImplicitLocOpBuilder &b) : b(b) {}

  ImplicitLocOpBuilder &builder() { return b; }
  Type i32() { return b.getI32Type(); }
  Type f32() { return b.getF32Type(); }

  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, v); }
  Value c32(int64_t v) { return arith::ConstantIntOp::create(b, v, 32); }
  Value cf32(double v) {
    return arith::ConstantOp::create(b, b.getF32FloatAttr(v));
  }

  Value add(Value x, Value y) { return arith::AddIOp::create(b, x, y); }
  Value sub(Value x, Value y) { return arith::SubIOp::create(b, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, x, y); }
  Value divu(Value x, Value y) { return arith::DivUIOp::create(b, x, y); }
  Value remu(Value x, Value y) { return arith::RemUIOp::create(b, x, y); }
  Value shl(Value x, Value y) { return arith::ShLIOp::create(b, x, y); }
  Value shru(Value x, Value y) { return arith::ShRUIOp::create(b, x, y); }
  Value band(Value x, Value y) { return arith::AndIOp::create(b, x, y); }
  Value bor(Value x, Value y) { return arith::OrIOp::create(b, x, y); }
  Value bxor(Value x, Value y) { return arith::XOrIOp::create(b, x, y); }
  Value minu(Value x, Value y) { return arith::MinUIOp::create(b, x, y); }
  Value eq(Value x, Value y) {
    return arith::CmpIOp::create(b, arith::CmpIPredicate::eq, x, y);
  }
  Value select(Value c, Value t, Value f) {
    return arith::SelectOp::create(b, c, t, f);
  }
  Value fadd(Value x, Value y) { return arith::AddFOp::create(b, x, y); }
  Value fsub(Value x, Value y) { return arith::SubFOp::create(b, x, y); }
  Value fmul(Value x, Value y) { return arith::MulFOp::create(b, x, y); }
  Value fdiv(Value x, Value y) { return arith::DivFOp::create(b, x, y); }
  Value sitofp(Value x) { return arith::SIToFPOp::create(b, f32(), x); }
  Value uitofp(Value x) { return arith::UIToFPOp::create(b, f32(), x); }
  Value toIndex(Value x) {
    return arith::IndexCastUIOp::create(b, b.getIndexType(), x);
  }
  Value toI32(Value x) { return arith::IndexCastUIOp::create(b, i32(), x); }
  Value bitcastF32(Value x) { return arith::BitcastOp::create(b, f32(), x); }

  Value load(Value mem, ValueRange indices) {
    return memref::LoadOp::create(b, mem, indices);
  }
  void store(Value v, Value mem, ValueRange indices) {
    memref::StoreOp::create(b, v, mem, indices);
  }
  /// A byte of an i8 memref, zero-extended to i32.
  Value loadU8(Value mem, ValueRange indices) {
    return arith::ExtUIOp::create(b, i32(), load(mem, indices));
  }

  /// A value of a float memref (f16, bf16, f32) widened to f32, or of an i8
  /// memref holding f8E4M3FN / f8E8M0FNU bytes (`stored` names which),
  /// decoded exactly.
  Value loadF32(Value mem, ValueRange indices, Type stored);
  /// Rounds an f32 to `type` (f16, bf16 or f32).
  Value truncTo(Value v, Type type);

  /// float8_e4m3fn byte (i32, 0..255) -> f32, exact (0x7F/0xFF, the NaNs,
  /// are not special-cased: the quantizer never writes them).
  Value decodeE4M3(Value byte);
  /// E8M0 byte -> 2^(byte - 127) as f32, exact (byte 0 is the subnormal
  /// 2^-127).
  Value decodeE8M0(Value byte);

  /// Element `index` (an index) of the LSB-first bit stream of `bits`-wide
  /// unsigned values in row `row` of the i8 memref `mem` ([rows, rowBytes]),
  /// as i32. Values that cross a byte read the next byte too, clamped to the
  /// row so the last value never reads past it.
  Value getBits(Value mem, Value row, Value index, unsigned bits,
                int64_t rowBytes);

  /// scf.for lb..ub step 1 without results; `body` builds the loop body.
  void forLoop(Value lb, Value ub, function_ref<void(Value)> body);
  /// scf.for with one loop-carried value; `body` returns the next value.
  Value forReduce(Value lb, Value ub, Value init,
                  function_ref<Value(Value, Value)> body);

private:
  ImplicitLocOpBuilder &b;
};

/// The memref element type a buffer of scale/table type `type` is passed
/// as: f16, bf16 and f32 as themselves, the one-byte f8 types as i8.
Type storageType(Type type);

/// The memref type of every packed component of a `type` weight, named as
/// the artifact names them (codes, scales, meta, zeros, perm or g_idx,
/// global_scale, table) with `prefix` in front, in that order: the raw bytes of the
/// qfuse::format component shapes (Packing.h, MmaLayout.h).
SmallVector<std::pair<std::string, MemRefType>>
weightComponentTypes(WeightType type, StringRef prefix = "");

/// The f32 values of the encoding's constant code table (fp4e2m1, nf4,
/// inline codebooks), or none where it has no table or a named one.
SmallVector<float> constantTableValues(EncodingAttr enc);

/// The buffers a weight is decoded from (null where the encoding has none).
struct WeightBuffers {
  Value codes, scales, zeros, globalScale, perm, gIdx, meta, table;
  /// memref.get_global of the constant table (nf4, fp4, inline codebooks).
  Value constTable;
};

/// Decodes stored element `s` of weight row `n` (both index values):
///
///   j     = s, or 4 * (s / 2) + meta[n, s] under 2:4
///   col   = j, or perm[j] under act_order (columns stored sorted by group;
///           2:4 keeps the checkpoint order, format::sortsColumns)
///   code  = bits of stored position pos(s) of codes[n] (row_major: s;
///           tiled 4-bit: word (s / 8), nibble slot of element s % 8;
///           mma fragments: the nibble of (n, s) in its 32 x 32 tile;
///           2:4 fragments: code and meta of (n, s) in their 32 x 128
///           tiles, SparseMmaLayout.h)
///   group = j / group (0 per channel; g_idx[col] under act_order + 2:4)
///   value = scale * q / scale * (q - zero) / scale * table[q] /
///           (e2m1(q) * scale) / global_scale / the f16, bf16 value
///
/// in f32, in the operation order of qfuse::format::dequantize.
class WeightDecoder {
public:
  WeightDecoder(ScalarEmitter &e, WeightType type, const WeightBuffers &buffers)
      : e(e), type(type), buf(buffers) {}

  /// Returns (column, value) of stored element `s` of row `n`.
  std::pair<Value, Value> decode(Value n, Value s);

  /// Stored codes per row (K, or K / 2 under 2:4).
  int64_t storedPerRow() const;

private:
  Value scaleOf(Value n, Value group);
  /// The 4-bit code of (n, k) in the mma fragment layout.
  Value mmaCode(Value n, Value k);
  /// The code and position of kept value (n, s) in the 2:4 fragment layout.
  std::pair<Value, Value> sparseMmaCode(Value n, Value s);
  ScalarEmitter &e;
  WeightType type;
  WeightBuffers buf;
};

} // namespace qf
} // namespace mlir

#endif // QFUSE_CONVERSION_WEIGHTDECODER_H
