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
// and no table to fill. FourCodeGroups, the codes' part, serves e2m1 too
// (Fp4Decode.cpp).
//
//===----------------------------------------------------------------------===//

#include "Decode/WeightDecoders.h"

using namespace mlir;
using namespace mlir::qf;
using namespace mlir::qf::decode;

std::array<uint32_t, 2> decode::bytePool(ArrayRef<uint16_t> entries,
                                         int64_t byte) {
  assert(entries.size() == 8 && "a pool holds 8 entries");
  std::array<uint32_t, 2> words = {0, 0};
  for (int64_t c = 0; c < 8; ++c)
    words[c / 4] |= uint32_t((entries[c] >> (8 * byte)) & 0xFF) << (8 * (c % 4));
  return words;
}

FourCodeGroups::FourCodeGroups(KernelEmitter &e, Value w, NibbleOrder order)
    : tiled(order == NibbleOrder::Tiled) {
  // Nibbles 0-3 of `codes` hold elements (0, 1, 2, 3) row-major; tiled
  // words (slots: elements 0 2 4 6 1 3 5 7) become (0, 2, 1, 3) by swapping
  // bytes 1 and 2. Nibbles 4-7 hold the next four the same way.
  Value codes = tiled ? e.prmt(w, w, 0x3120) : w;
  Value low3 = e.band(codes, e.c32(0x77777777));
  index[0] = low3;
  index[1] = e.shru(low3, e.c32(16));
  // Code k's bit 3 is the top bit of byte k / 2 of `codes` << 4 (k even) or
  // of `codes` (k odd); sign-mode selector nibbles 8 + byte replicate it.
  Value shifted = arith::ShLIOp::create(e.builder(), codes, e.c32(4));
  bit3[0] = e.prmt(codes, shifted, 0x9D8C);
  bit3[1] = e.prmt(codes, shifted, 0xBFAE);
}

SmallVector<Value> FourCodeGroups::pairs(KernelEmitter &e,
                                         ArrayRef<Value> low,
                                         ArrayRef<Value> high,
                                         Type valueType) const {
  // Pairs (elements 2i, 2i + 1) are bytes (0, 1) and (2, 3) of the byte
  // planes row-major, (0, 2) and (1, 3) tiled.
  uint32_t first = tiled ? 0x6240 : 0x5140, second = tiled ? 0x7351 : 0x7362;
  VectorType pair = VectorType::get({2}, valueType);
  SmallVector<Value> result;
  for (int64_t g = 0; g < 2; ++g) {
    result.push_back(e.bitcast(pair, e.prmt(low[g], high[g], first)));
    result.push_back(e.bitcast(pair, e.prmt(low[g], high[g], second)));
  }
  return result;
}

SmallVector<Value> decode::table4Registers(KernelEmitter &e,
                                          ArrayRef<uint16_t> tableBits,
                                          Value w, NibbleOrder order,
                                          Type valueType) {
  assert(tableBits.size() == 16 && "a 4-bit table has 16 entries");
  // [entries 0-7 or 8-15][low or high byte]: prmt's pair of registers, the
  // bytes of entries 0-3 and 4-7.
  std::pair<Value, Value> pool[2][2];
  for (int64_t half = 0; half < 2; ++half)
    for (int64_t high = 0; high < 2; ++high) {
      auto words = bytePool(tableBits.slice(8 * half, 8), high);
      pool[half][high] = {e.c32(words[0]), e.c32(words[1])};
    }
  FourCodeGroups codes(e, w, order);
  Value bytes[2][2]; // [low or high byte][group]
  for (int64_t high = 0; high < 2; ++high)
    for (int64_t g = 0; g < 2; ++g) {
      auto lookup = [&](int64_t half) {
        return e.prmt(pool[half][high].first, pool[half][high].second,
                      codes.index[g]);
      };
      bytes[high][g] = e.select(lookup(0), lookup(1), codes.bit3[g]);
    }
  return codes.pairs(e, bytes[0], bytes[1], valueType);
}
