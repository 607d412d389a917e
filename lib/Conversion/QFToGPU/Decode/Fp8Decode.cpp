//===- Fp8Decode.cpp - fp8 e4m3 codes by the hardware convert -------------===//
//
// cvt.rn.f16x2.e4m3x2 (sm_89 and newer) turns two e4m3 bytes into two f16,
// exactly: every e4m3 value is an f16. Every one is an f32 and a bf16 too,
// so bf16 pairs widen the f16 to f32 and pack them.
//
//===----------------------------------------------------------------------===//

#include "Decode/WeightDecoders.h"

using namespace mlir;
using namespace mlir::qf;

Value decode::cvtE4m3x2(KernelEmitter &e, Value bits) {
  return e.ptx("cvt.rn.f16x2.e4m3x2 $0, $1;", "=r,h", e.i32(), {bits});
}

Value decode::e4m3Pair(KernelEmitter &e, Value bits) {
  return e.bitcast(e.v2f16(), cvtE4m3x2(e, bits));
}

void decode::e4m3Word(KernelEmitter &e, Value w, Type valueType,
                      function_ref<void(Value pair)> take) {
  ImplicitLocOpBuilder &b = e.builder();
  for (int64_t half = 0; half < 2; ++half) {
    Value bits =
        arith::TruncIOp::create(b, e.i16(), half ? e.shru(w, e.c32(16)) : w);
    Value pair = e4m3Pair(e, bits);
    if (valueType.isBF16())
      pair = packBf16x2(e, e.extf32(e.extract(pair, 0)),
                        e.extf32(e.extract(pair, 1)));
    take(pair);
  }
}

Value decode::packBf16x2(KernelEmitter &e, Value lo, Value hi) {
  // cvt.rn.bf16x2.f32 d, a, b puts a in the upper half.
  return e.bitcast(e.v2bf16(), e.ptx("cvt.rn.bf16x2.f32 $0, $1, $2;", "=r,f,f",
                                     e.i32(), {hi, lo}));
}
