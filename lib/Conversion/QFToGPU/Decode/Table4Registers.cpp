//===- Table4Registers.cpp - 4-bit codes of a constant table by prmt ------===//
//
// A table of 16 16-bit values known at compile time is 32 bytes: its low
// bytes and its high bytes, each split into entries 0-7 and 8-15, are four
// 8-byte pools of two registers each. One prmt looks up four codes at once
// in a pool (its selector nibbles are the codes' low 3 bits), and one lop3
// per byte plane keeps the half of the table each code's bit 3 names. The
// mask of those bits is one prmt in its sign mode: a selector nibble with
// bit 3 set replicates the top bit of the byte it names, and each code's bit
// 3 is the top bit of a byte of the word or of the word shifted by 4. A
// last prmt per pair interleaves the low and high bytes. Per 8 codes that
// is 22 instructions (21 row-major) and no shared memory, against 8
// shared-table loads, their address arithmetic and 4 prmt (TableDecode.cpp),
// and no table to fill.
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

  /// The low and high bytes of the 4 codes whose low 3 bits are the nibbles
  /// of `index` (bits 0..15), byte k of each for nibble k; `upper` is 0xFF in
  /// the bytes whose code has bit 3 set.
  std::pair<Value, Value> lookup(KernelEmitter &e, Value index,
                                 Value upper) const {
    auto pick = [&](int64_t high) {
      Value lo = e.prmt(plane[0][high].first, plane[0][high].second, index);
      Value hi = e.prmt(plane[1][high].first, plane[1][high].second, index);
      // (lo & ~upper) | (hi & upper).
      return e.ptx("lop3.b32 $0, $1, $2, $3, 0xd8;", "=r,r,r,r", e.i32(),
                   {lo, hi, upper});
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
  // Nibbles 0-3 of `codes` hold elements (0, 1, 2, 3) row-major; tiled
  // words (slots: elements 0 2 4 6 1 3 5 7) become (0, 2, 1, 3) by swapping
  // bytes 1 and 2. Nibbles 4-7 hold the next four the same way.
  bool tiled = order == NibbleOrder::Tiled;
  Value codes = tiled ? e.prmt(w, w, 0x3120) : w;
  Value index = e.band(codes, e.c32(0x77777777));
  // Code k's bit 3 is the top bit of byte k / 2 of `codes` << 4 (k even) or
  // of `codes` (k odd); sign-mode selector nibbles 8 + byte replicate it.
  Value shifted = arith::ShLIOp::create(e.builder(), codes, e.c32(4));
  Value upper0 = e.prmt(codes, shifted, 0x9D8C);
  Value upper1 = e.prmt(codes, shifted, 0xBFAE);
  auto [low0, high0] = planes.lookup(e, index, upper0);
  auto [low1, high1] = planes.lookup(e, e.shru(index, e.c32(16)), upper1);
  // Pairs (elements 2i, 2i + 1) are bytes (0, 1) and (2, 3) of the byte
  // planes row-major, (0, 2) and (1, 3) tiled.
  uint32_t first = tiled ? 0x6240 : 0x5140, second = tiled ? 0x7351 : 0x7362;
  SmallVector<Value> pairs;
  for (auto [low, high] : {std::pair(low0, high0), std::pair(low1, high1)}) {
    pairs.push_back(e.bitcast(pair, e.prmt(low, high, first)));
    pairs.push_back(e.bitcast(pair, e.prmt(low, high, second)));
  }
  return pairs;
}
