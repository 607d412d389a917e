//===- Int4Decode.cpp - int4/uint4 codes under a magic exponent -----------===//
//
// A 4-bit code e placed in the mantissa of half(1024) = 0x6400 is
// half(1024 + e), and one lop3 places two: in the tiled layout (nibble slot
// i holds element [0, 2, 4, 6, 1, 3, 5, 7][i]) element pairs sit one mask
// apart,
//   (w & 0x000F000F) | 0x64006400 = half2(1024 + e0, 1024 + e1)
//   (w & 0x00F000F0) | 0x64006400 = half2(1024 + 16 e2, 1024 + 16 e3)
// and the same on w >> 8 gives (e4, e5) and (e6, e7). The generator removes
// the bias and the zero point z with one sub or fma per pair: q - z =
// lo - (1024 + z) = hi / 16 - (64 + z), exact (int4 is stored as q + 8,
// z = 8). bf16's 7 mantissa bits hold a nibble at bits 0..3 only (bit 7 is
// the exponent's): bf16x2(128 + e) under 0x4300, the high nibbles shifted
// down first.
//
//===----------------------------------------------------------------------===//

#include "Decode/WeightDecoders.h"

using namespace mlir;
using namespace mlir::qf;

void decode::int4MagicWord(KernelEmitter &e, Value w, Type valueType,
                           function_ref<void(Value lo, Value hi)> take) {
  VectorType pair = VectorType::get({2}, valueType);
  Value w8 = e.shru(w, e.c32(8));
  for (Value src : {w, w8}) {
    if (valueType.isBF16()) {
      Value lo = e.bitcast(pair, e.andOr(src, 0x000F000F, 0x43004300));
      Value hi = e.bitcast(
          pair, e.andOr(e.shru(src, e.c32(4)), 0x000F000F, 0x43004300));
      take(lo, hi);
      continue;
    }
    Value lo = e.bitcast(pair, e.andOr(src, 0x000F000F, 0x64006400));
    Value hi = e.bitcast(pair, e.andOr(src, 0x00F000F0, 0x64006400));
    take(lo, hi);
  }
}

Value decode::int4MagicByteBias(KernelEmitter &e, Value loBias, Value hiBias) {
  return e.fneg(
      e.bitcast(e.v2f16(), e.prmt(e.bitcast(e.i32(), loBias),
                                  e.bitcast(e.i32(), hiBias), 0x7610)));
}

/// The byte, replicated by prmt, under (x & 0x00F0000F) | 0x64006400 is
/// half2(1024 + lo, 1024 + 16 hi); one fma by (1, 1/16) adds the bias.
Value decode::int4MagicByte(KernelEmitter &e, Value word, int64_t index,
                           Value bias) {
  Value raw = e.andOr(e.prmt(word, word, uint32_t(0x1111 * index)),
                      0x00F0000F, 0x64006400);
  return e.fma(e.bitcast(e.v2f16(), raw),
               e.bitcast(e.v2f16(), e.c32(0x2C003C00)), // (1, 1/16)
               bias);
}
