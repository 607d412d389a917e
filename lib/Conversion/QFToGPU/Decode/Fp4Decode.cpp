//===- Fp4Decode.cpp - fp4 e2m1 codes as sign and magnitude ---------------===//
//
// e2m1's table is sign-magnitude: code c + 8 is code c with the sign bit
// set. So the bytes of the 8 magnitudes' values (0, 0.5, 1, 1.5, 2, 3, 4,
// 6) are two 8-byte tables, one per byte plane, two registers each, that
// one prmt indexes with four codes' low 3 bits; the sign (code bit 3) joins
// as the top bit of the high byte: a sign-mode prmt replicates it into a
// byte mask (as in Table4Registers.cpp) and one lop3 keeps 0x80 of it. In
// f16 every magnitude's low byte is zero, so that plane needs no lookup.
// A last prmt per pair interleaves the bytes. Per 8 codes: 14 instructions
// with f16 activations (13 row-major), 16 with bf16, exact, no multiply and
// no shared table.
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
  // Byte plane `high` of the magnitudes as prmt's two registers (bytes of
  // codes 0-3, 4-7), or nulls where every byte is zero.
  auto plane = [&](int64_t high) -> std::pair<Value, Value> {
    uint32_t words[2] = {0, 0};
    for (int64_t c = 0; c < 8; ++c) {
      assert(tableBits[c + 8] == (tableBits[c] | 0x8000) &&
             "the e2m1 table is sign-magnitude");
      words[c / 4] |= uint32_t((tableBits[c] >> (8 * high)) & 0xFF)
                      << (8 * (c % 4));
    }
    if (!words[0] && !words[1])
      return {};
    return {e.c32(words[0]), e.c32(words[1])};
  };
  std::pair<Value, Value> lowPlane = plane(0), highPlane = plane(1);
  auto lookup = [&](std::pair<Value, Value> table, Value index) {
    return table.first ? e.prmt(table.first, table.second, index) : e.c32(0);
  };
  // Nibbles 0-3 of `codes` hold elements (0, 1, 2, 3) row-major, (0, 2, 1,
  // 3) for tiled words (slots: elements 0 2 4 6 1 3 5 7) with bytes 1 and 2
  // swapped; nibbles 4-7 the next four the same way.
  bool tiled = order == NibbleOrder::Tiled;
  Value codes = tiled ? e.prmt(w, w, 0x3120) : w;
  Value index = e.band(codes, e.c32(0x77777777));
  Value shifted = arith::ShLIOp::create(e.builder(), codes, e.c32(4));
  // The low and high bytes of the 4 codes whose low bits are `idx`'s
  // nibbles 0-3; sign-mode selector nibbles 8 + byte replicate code k's bit
  // 3, the top bit of byte k / 2 of `shifted` (k even) or of `codes` (k odd).
  auto bytesOf = [&](Value idx, uint32_t signSelector) {
    Value sign = e.prmt(codes, shifted, signSelector);
    // magnitude | (sign & 0x80808080).
    Value high = e.ptx("lop3.b32 $0, $1, $2, $3, 0xf8;", "=r,r,r,n", e.i32(),
                       {lookup(highPlane, idx), sign, e.c32(0x80808080)});
    return std::pair(lookup(lowPlane, idx), high);
  };
  auto [low0, high0] = bytesOf(index, 0x9D8C);
  auto [low1, high1] = bytesOf(e.shru(index, e.c32(16)), 0xBFAE);
  // Pairs (elements 2i, 2i + 1) are bytes (0, 1) and (2, 3) of the byte
  // planes row-major, (0, 2) and (1, 3) tiled.
  uint32_t first = tiled ? 0x6240 : 0x5140, second = tiled ? 0x7351 : 0x7362;
  VectorType pair = VectorType::get({2}, valueType);
  SmallVector<Value> pairs;
  for (auto [low, high] : {std::pair(low0, high0), std::pair(low1, high1)}) {
    pairs.push_back(e.bitcast(pair, e.prmt(low, high, first)));
    pairs.push_back(e.bitcast(pair, e.prmt(low, high, second)));
  }
  return pairs;
}
