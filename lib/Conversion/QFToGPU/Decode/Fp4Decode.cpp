//===- Fp4Decode.cpp - fp4 e2m1 codes by their f16 high bytes -------------===//
//
// The f16 values of the e2m1 magnitudes 0, 0.5, 1, 1.5, 2, 3, 4, 6 all have
// a zero low byte; their high bytes 00 38 3C 3E 40 42 44 46 are an 8-byte
// table, two registers, that one prmt indexes with four codes' low 3 bits.
// The sign (code bit 3) joins as the top bit of each byte: a sign-mode prmt
// replicates it into a byte mask (as in Table4Registers.cpp) and one lop3
// keeps 0x80 of it. A last prmt per pair places two high bytes over zero
// low bytes. Per 8 codes: 14 instructions (13 row-major), exact, no
// multiply and no shared table. sm_90 has no e2m1 convert; bf16 activations
// look the codes up in registers (Table4Registers.cpp): their low bytes
// are not zero.
//
//===----------------------------------------------------------------------===//

#include "Decode/WeightDecoders.h"

using namespace mlir;
using namespace mlir::qf;
using namespace mlir::qf::decode;

SmallVector<Value> decode::e2m1Word(KernelEmitter &e, Value w,
                                    NibbleOrder order) {
  Value low4 = e.c32(0x3E3C3800), high4 = e.c32(0x46444240);
  // Nibbles 0-3 of `codes` hold elements (0, 1, 2, 3) row-major, (0, 2, 1,
  // 3) for tiled words (slots: elements 0 2 4 6 1 3 5 7) with bytes 1 and 2
  // swapped; nibbles 4-7 the next four the same way.
  bool tiled = order == NibbleOrder::Tiled;
  Value codes = tiled ? e.prmt(w, w, 0x3120) : w;
  Value index = e.band(codes, e.c32(0x77777777));
  Value shifted = arith::ShLIOp::create(e.builder(), codes, e.c32(4));
  // The high bytes of the 4 codes whose low bits are `index`'s nibbles 0-3;
  // sign-mode selector nibbles 8 + byte replicate code k's bit 3, the top
  // bit of byte k / 2 of `shifted` (k even) or of `codes` (k odd).
  auto highBytes = [&](Value idx, uint32_t signSelector) {
    Value magnitude = e.prmt(low4, high4, idx);
    Value sign = e.prmt(codes, shifted, signSelector);
    // magnitude | (sign & 0x80808080).
    return e.ptx("lop3.b32 $0, $1, $2, $3, 0xf8;", "=r,r,r,n", e.i32(),
                 {magnitude, sign, e.c32(0x80808080)});
  };
  Value first = highBytes(index, 0x9D8C);
  Value second = highBytes(e.shru(index, e.c32(16)), 0xBFAE);
  // Pair (elements 2i, 2i + 1): zero, a high byte, zero, a high byte, the
  // high bytes of elements (0, 1), (2, 3) being bytes (0, 1), (2, 3)
  // row-major and (0, 2), (1, 3) tiled.
  uint32_t pairA = tiled ? 0x2404 : 0x1404, pairB = tiled ? 0x3414 : 0x3424;
  SmallVector<Value> pairs;
  for (Value high : {first, second}) {
    pairs.push_back(e.bitcast(e.v2f16(), e.prmt(high, e.c32(0), pairA)));
    pairs.push_back(e.bitcast(e.v2f16(), e.prmt(high, e.c32(0), pairB)));
  }
  return pairs;
}
