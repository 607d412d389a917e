//===- Fp4Decode.cpp - fp4 e2m1 codes by their bits -----------------------===//
//
// An e2m1 code s e1 e0 m placed at f16 bits 15 (sign) and 11..9 (e1 e0 m)
// is the f16 of its value times 2^-14: e1 e0 > 0 gives 2^(e - 15) (1 + m/2)
// against e2m1's 2^(e - 1) (1 + m/2), and e1 e0 = 0 the subnormal m 2^-15
// against m/2. One multiply by 2^14 makes the value, exactly (f16
// multiplies keep subnormals), so a pair costs a shift, one lop3 and one
// multiply instead of two shared-table lookups and a prmt. sm_90 has no
// e2m1 convert; bf16 activations look the codes up in registers
// (Table4Registers.cpp).
//
//===----------------------------------------------------------------------===//

#include "Decode/WeightDecoders.h"

using namespace mlir;
using namespace mlir::qf;
using namespace mlir::qf::decode;

/// The half2 of the two codes at bits 12..15 and 28..31 of `top`.
static Value e2m1TopPair(KernelEmitter &e, Value top) {
  ImplicitLocOpBuilder &b = e.builder();
  Value sign = e.band(top, e.c32(0x80008000));
  Value magnitude = e.band(e.shru(top, e.c32(3)), e.c32(0x0E000E00));
  Value bits = arith::OrIOp::create(b, sign, magnitude);
  return e.fmul(e.bitcast(e.v2f16(), bits), e.ch2(16384.0));
}

SmallVector<Value> decode::e2m1Word(KernelEmitter &e, Value w,
                                    NibbleOrder order) {
  ImplicitLocOpBuilder &b = e.builder();
  auto shl = [&](Value v, int64_t n) -> Value {
    return n == 0 ? v : arith::ShLIOp::create(b, v, e.c32(n)).getResult();
  };
  SmallVector<Value> pairs;
  if (order == NibbleOrder::Tiled) {
    // Pair i: slots i and i + 4, at bits 4 i and 16 + 4 i.
    for (int64_t i = 0; i < 4; ++i)
      pairs.push_back(e2m1TopPair(e, shl(w, 12 - 4 * i)));
    return pairs;
  }
  // Row-major pair i: byte i's low nibble, then its high one. prmt puts
  // byte i of w << 4 (the low nibble on top) in byte 1 and byte i of w in
  // byte 3; bytes 0 and 2 are masked off.
  Value lowOnTop = shl(w, 4);
  for (int64_t i = 0; i < 4; ++i)
    pairs.push_back(e2m1TopPair(
        e, e.prmt(lowOnTop, w, (i << 4) | ((4 + i) << 12))));
  return pairs;
}
