//===- Table4Registers.cpp - 4-bit codes of a constant table by prmt ------===//
//
// A table of 16 16-bit values known at compile time is 32 bytes: its low
// bytes and its high bytes, each split into entries 0-7 and 8-15, are four
// 8-byte tables of two registers each. One prmt looks up four codes at once
// in such a table (its selector nibbles are the codes' low 3 bits), so four
// prmt give the low and high bytes of four codes from both halves, a lop3
// per byte plane keeps the half each code's bit 3 names, and prmt
// interleaves the bytes into pairs. Per 8 codes that is about 27
// instructions and no shared memory, against 8 shared-table loads, their
// address arithmetic and 4 prmt (TableDecode.cpp), and no table to fill.
//
//===----------------------------------------------------------------------===//

#include "Decode/WeightDecoders.h"

using namespace mlir;
using namespace mlir::qf;
using namespace mlir::qf::decode;

namespace {
/// The byte planes of a 16-entry table, as prmt's pairs of registers.
struct BytePlanes {
  // [entries 0-7 or 8-15][low or high byte]: (bytes of entries 0-3, 4-7).
  std::pair<Value, Value> plane[2][2];

  BytePlanes(KernelEmitter &e, ArrayRef<uint16_t> bits) {
    for (int64_t half = 0; half < 2; ++half)
      for (int64_t high = 0; high < 2; ++high) {
        auto word = [&](int64_t first) {
          uint32_t v = 0;
          for (int64_t k = 0; k < 4; ++k)
            v |= uint32_t((bits[first + k] >> (8 * high)) & 0xFF) << (8 * k);
          return e.c32(v);
        };
        plane[half][high] = {word(8 * half), word(8 * half + 4)};
      }
  }

  /// The low and high bytes of the 4 codes in bits 0..15 of `src`, byte k
  /// of each for the code at bits 4k.
  std::pair<Value, Value> lookup(KernelEmitter &e, Value src) const {
    Value index = e.band(src, e.c32(0x7777));
    // Byte k: 0xFF where code k has bit 3 set (prmt picks byte 1 of 0xFF00).
    Value upper = e.prmt(e.c32(0xFF00), e.c32(0),
                         e.band(e.shru(src, e.c32(3)), e.c32(0x1111)));
    Value keep = arith::XOrIOp::create(e.builder(), upper, e.c32(-1));
    auto pick = [&](int64_t high) {
      Value lo = e.prmt(plane[0][high].first, plane[0][high].second, index);
      Value hi = e.prmt(plane[1][high].first, plane[1][high].second, index);
      return arith::OrIOp::create(e.builder(), e.band(lo, keep),
                                  e.band(hi, upper))
          .getResult();
    };
    return {pick(0), pick(1)};
  }
};
} // namespace

SmallVector<Value> decode::table4Registers(KernelEmitter &e,
                                          ArrayRef<uint16_t> tableBits,
                                          Value w, NibbleOrder order,
                                          Type valueType) {
  assert(tableBits.size() == 16 && "a 4-bit table has 16 entries");
  VectorType pair = VectorType::get({2}, valueType);
  BytePlanes planes(e, tableBits);
  auto [low0, high0] = planes.lookup(e, w);                      // slots 0-3
  auto [low1, high1] = planes.lookup(e, e.shru(w, e.c32(16))); // slots 4-7
  SmallVector<Value> pairs;
  auto add = [&](Value bytes) { pairs.push_back(e.bitcast(pair, bytes)); };
  if (order == NibbleOrder::RowMajor) {
    // Pairs (slots 2i, 2i + 1): bytes (low k, high k, low k+1, high k+1).
    add(e.prmt(low0, high0, 0x5140));
    add(e.prmt(low0, high0, 0x7362));
    add(e.prmt(low1, high1, 0x5140));
    add(e.prmt(low1, high1, 0x7362));
    return pairs;
  }
  // Tiled pairs (slots i, i + 4): byte i of both halves' planes.
  for (uint32_t sel : {0x5140u, 0x7362u}) {
    Value lows = e.prmt(low0, low1, sel);   // low0 k, low1 k, low0 k+1, ...
    Value highs = e.prmt(high0, high1, sel);
    add(e.prmt(lows, highs, 0x5140));
    add(e.prmt(lows, highs, 0x7362));
  }
  return pairs;
}
