//===- Fp4Decode.cpp - fp4 e2m1 codes as sign and magnitude ---------------===//
//
// e2m1's table is sign-magnitude: code c + 8 is code c with the sign bit
// set. So the bytes of the 8 magnitudes' values (0, 0.5, 1, 1.5, 2, 3, 4,
// 6) are two 8-byte tables, one per byte plane, two registers each, that
// one prmt indexes with four codes' low 3 bits; the sign (code bit 3) joins
// as the top bit of the high byte, from the byte mask of the codes' bit 3
// (FourCodeGroups, Table4Registers.cpp) by one lop3. In f16 every
// magnitude's low byte is zero, so that plane needs no lookup. A last prmt
// per pair interleaves the bytes. Per 8 codes: 14 instructions with f16
// activations (13 row-major), 16 with bf16, exact, no multiply and no
// shared table.
//
//===----------------------------------------------------------------------===//

#include "Decode/WeightDecoders.h"

using namespace mlir;
using namespace mlir::qf;
using namespace mlir::qf::decode;

SmallVector<Value> decode::e2m1Word(KernelEmitter &e,
                                    ArrayRef<uint16_t> tableBits, Value w,
                                    NibbleOrder order, Type valueType) {
  assert(tableBits.size() == 16 && "e2m1 has 16 codes");
  for (int64_t c = 0; c < 8; ++c)
    assert(tableBits[c + 8] == (tableBits[c] | 0x8000) &&
           "the e2m1 table is sign-magnitude");
  // Byte plane `high` of the magnitudes as prmt's two registers (bytes of
  // codes 0-3, 4-7), or nulls where every byte is zero.
  auto plane = [&](int64_t high) -> std::pair<Value, Value> {
    auto words = bytePool(tableBits.take_front(8), high);
    if (!words[0] && !words[1])
      return {};
    return {e.c32(words[0]), e.c32(words[1])};
  };
  std::pair<Value, Value> lowPlane = plane(0), highPlane = plane(1);
  auto lookup = [&](std::pair<Value, Value> table, Value index) {
    return table.first ? e.prmt(table.first, table.second, index) : e.c32(0);
  };
  FourCodeGroups codes(e, w, order);
  Value low[2], high[2];
  for (int64_t g = 0; g < 2; ++g) {
    low[g] = lookup(lowPlane, codes.index[g]);
    high[g] = e.orMasked(lookup(highPlane, codes.index[g]), codes.bit3[g],
                         0x80808080);
  }
  return codes.pairs(e, low, high, valueType);
}
