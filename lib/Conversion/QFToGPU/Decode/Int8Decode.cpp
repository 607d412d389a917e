//===- Int8Decode.cpp - int8/uint8 codes placed by prmt -------------------===//
//
// prmt pairs each byte u with 0x64: half2(1024 + u) for two bytes in one
// instruction, and 1024 + u - (1024 + z) = u - z is exact in f16. int8 is
// stored as q; flipping its sign bit gives u = q + 128 (z = 128). bf16
// holds 128 + u only up to u = 127, so its bytes go under the f32 2^23
// (0x4B000000 | u = 2^23 + u) instead: minus 2^23 + z that is q - z
// exactly, and a pair of them rounds exactly (|q - z| <= 255) into bf16x2.
//
//===----------------------------------------------------------------------===//

#include "Decode/WeightDecoders.h"

using namespace mlir;
using namespace mlir::qf;

void decode::int8MagicWord(KernelEmitter &e, Value w, bool isSigned,
                           function_ref<void(Value pair)> take) {
  ImplicitLocOpBuilder &b = e.builder();
  Value u = isSigned ? arith::XOrIOp::create(b, w, e.c32(0x80808080)) : w;
  Value magic = e.c32(0x64646464);
  for (uint32_t selector : {0x4140u, 0x4342u})
    take(e.bitcast(e.v2f16(), e.prmt(u, magic, selector)));
}

SmallVector<Value> decode::int8Bf16Word(KernelEmitter &e, Value w,
                                        bool isSigned, Value zero,
                                        Value floatZero) {
  ImplicitLocOpBuilder &b = e.builder();
  Value u = isSigned ? arith::XOrIOp::create(b, w, e.c32(0x80808080)) : w;
  Value magic = e.c32(0x4B000000);
  Value bias =
      e.bitcast(e.f32(), arith::OrIOp::create(b, zero, e.c32(0x4B000000)));
  auto value = [&](uint32_t v) {
    Value q = e.fsub(e.bitcast(e.f32(), e.prmt(u, magic, 0x7540 + v)), bias);
    return floatZero ? e.fsub(q, floatZero) : q;
  };
  SmallVector<Value> pairs;
  pairs.push_back(packBf16x2(e, value(0), value(1)));
  pairs.push_back(packBf16x2(e, value(2), value(3)));
  return pairs;
}

Value decode::int8MagicPair(KernelEmitter &e, Value word, int64_t half,
                           bool isSigned) {
  ImplicitLocOpBuilder &b = e.builder();
  Value u = isSigned
                ? arith::XOrIOp::create(b, word, e.c32(0x8080 << (16 * half)))
                : word;
  return e.bitcast(e.v2f16(),
                   e.prmt(u, e.c32(0x64646464), 0x4140 + 0x0202 * half));
}
