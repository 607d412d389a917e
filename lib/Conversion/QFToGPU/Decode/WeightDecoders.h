//===- WeightDecoders.h - Packed code words into value pairs ----*- C++ -*-===//
//
// One decoder per decode family (qfuse/Conversion/DecodeFamily.h), shared by
// the matvec and the tensor-core generators. A decoder takes words of codes
// the generator loaded and emits the f16 (or bf16) pairs they hold; the
// generator chooses where the words come from and where the pairs go (B or
// sparse A fragments for mma.sync, half2 accumulation for the matvec), and
// how its zero points and scales meet them.
//
//   Int4Decode.cpp   int4/uint4 under a magic exponent, one lop3 per pair
//   Int8Decode.cpp   int8/uint8: prmt places the bytes under one
//   Fp8Decode.cpp    fp8 e4m3: cvt.rn.f16x2.e4m3x2
//   Fp4Decode.cpp    fp4 e2m1: sign and magnitude bytes by prmt
//   TableDecode.cpp  NF4, e2m1 and codebooks: shared-memory table lookups
//   Table4Registers.cpp  4-bit codes of a constant table: prmt lookups
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_LIB_CONVERSION_QFTOGPU_DECODE_WEIGHTDECODERS_H
#define QFUSE_LIB_CONVERSION_QFTOGPU_DECODE_WEIGHTDECODERS_H

#include "Common/KernelEmitter.h"

#include <array>
#include <optional>

namespace mlir {
namespace qf {
namespace decode {

//===----------------------------------------------------------------------===//
// int4 / uint4 (Int4Decode.cpp)
//===----------------------------------------------------------------------===//

/// Decodes a word of 8 codes in the tiled nibble order (slot i holds element
/// format::kNibbleOrder[i]) into pairs of `valueType` (f16 or bf16), still
/// biased: calls `take(lo, hi)` with elements (0, 1), (2, 3), then (4, 5),
/// (6, 7). f16: lo = half2(1024 + e), hi = half2(1024 + 16 e); bf16: both
/// bf16x2(128 + e).
void int4MagicWord(KernelEmitter &e, Value w, Type valueType,
                   function_ref<void(Value lo, Value hi)> take);

/// The pair -(1024 + z, 64 + z) that int4MagicByte adds, from the biases of
/// the low codes, half2(1024 + z), and of the high ones, half2(64 + z).
Value int4MagicByteBias(KernelEmitter &e, Value loBias, Value hiBias);

/// The two codes of byte `index` of `word` (the first in the low nibble)
/// as half2(lo - z, hi - z), `bias` being int4MagicByteBias's.
Value int4MagicByte(KernelEmitter &e, Value word, int64_t index, Value bias);

//===----------------------------------------------------------------------===//
// int8 / uint8 (Int8Decode.cpp)
//===----------------------------------------------------------------------===//

/// Decodes a word of 4 codes into half2(1024 + u) of bytes (0, 1), then
/// (2, 3), one `take` each; u is the byte, or for int8 (`isSigned`) the
/// byte with its sign flipped, q + 128.
void int8MagicWord(KernelEmitter &e, Value w, bool isSigned,
                   function_ref<void(Value pair)> take);

/// Decodes a word of 4 codes into the bf16x2 pairs of q - z (`zero`, an
/// i32) less `floatZero` (an f32, or null) for bytes (0, 1), then (2, 3).
SmallVector<Value> int8Bf16Word(KernelEmitter &e, Value w, bool isSigned,
                                Value zero, Value floatZero);

/// Bytes (0, 1) (`half` 0) or (2, 3) (`half` 1) of `word` as
/// half2(1024 + u).
Value int8MagicPair(KernelEmitter &e, Value word, int64_t half, bool isSigned);

//===----------------------------------------------------------------------===//
// fp8 e4m3 (Fp8Decode.cpp)
//===----------------------------------------------------------------------===//

/// The two f16 (an i32) of the two e4m3 bytes of `bits` (an i16), exact:
/// the one conversion of e4m3 codes and scales.
Value cvtE4m3x2(KernelEmitter &e, Value bits);

/// The half2 of the two e4m3 bytes of `bits` (an i16).
Value e4m3Pair(KernelEmitter &e, Value bits);

/// Decodes a word of 4 codes into pairs of `valueType` (f16 or bf16) of
/// bytes (0, 1), then (2, 3), one `take` each.
void e4m3Word(KernelEmitter &e, Value w, Type valueType,
              function_ref<void(Value pair)> take);

/// The bf16x2 (lo, hi) of two f32 values, rounded to nearest even (exact
/// for decoded codes, which have at most 8 significant bits).
Value packBf16x2(KernelEmitter &e, Value lo, Value hi);

//===----------------------------------------------------------------------===//
// Table formats (TableDecode.cpp)
//===----------------------------------------------------------------------===//

/// How a shared code table holds its entries (the values of the codes in
/// f16 or bf16, one per 16 bits):
enum class TableLayout {
  /// Entry c at word 32 c + l for each lane l: every lane reads its own
  /// bank, so random codes never conflict.
  PerLane,
  /// Entries 2c and 2c + 1 as the halves of word 32 c + l: 8-bit codes
  /// replicated in 16 KB instead of 32.
  PerLanePairs,
  /// Entry c at word c: one copy.
  Single,
};

/// Where a kernel keeps its code table: at `base` in shared memory (the
/// kernel's own array), or `start` bytes past it (a region of its dynamic
/// shared memory).
struct SharedTable {
  Value base;
  std::optional<int64_t> start;
  /// 4 x lane: this lane's column of a replicated table.
  Value laneBytes;

  /// The word at byte `offset` of the table.
  Value wordAt(KernelEmitter &e, Value offset) const;
  /// This lane's copy of the entry whose byte offset is the bits `mask` of
  /// `moved`.
  Value laneEntry(KernelEmitter &e, Value moved, uint32_t mask) const;
  /// Stores `word` at byte `offset` of the table.
  void store(KernelEmitter &e, Value offset, Value word) const;
};

/// Fills `words` words of `table` in `layout`, `threads` threads from `tid`
/// on, entry c being `valueOf(c)`, then waits for the whole block.
void fillTable(KernelEmitter &e, const SharedTable &table, TableLayout layout,
               Value tid, int64_t threads, int64_t words,
               function_ref<Value(Value index)> valueOf);

/// Where the 8 codes of a word of 4-bit codes sit: nibble slot i holds
/// element i (row-major: byte j holds elements 2j and 2j + 1, the first in
/// the low nibble), or element format::kNibbleOrder[i] (tiled).
enum class NibbleOrder { RowMajor, Tiled };

/// Decodes a word of 8 4-bit codes through a PerLane table into 4 pairs of
/// `valueType`, in element order.
SmallVector<Value> table4Word(KernelEmitter &e, const SharedTable &table,
                              Value w, NibbleOrder order, Type valueType);

/// Decodes a word of 4 8-bit codes through a Single table into 2 pairs of
/// `valueType`, in element order.
SmallVector<Value> table8Word(KernelEmitter &e, const SharedTable &table,
                              Value w, Type valueType);

/// Decodes `count` codes (an even number) of `bits` bits, from code `first`
/// on, of `unit`: words whose codes form one little-endian bit stream
/// (Packing.h), through a PerLane table (bits <= 7) or a PerLanePairs one
/// (8 bits), into half2 pairs in element order.
SmallVector<Value> tableStream(KernelEmitter &e, const SharedTable &table,
                               ArrayRef<Value> unit, int64_t bits,
                               int64_t first, int64_t count);

/// Decodes k slab `s` (0 or 1) of a lane's words of a 32 x 32 fragment tile
/// of 2- or 3-bit codes (MmaLayout.h: two low-plane words, then for 3-bit
/// codes the high-plane word) through a PerLane table into the (b0, b1)
/// pairs of `valueType` of n tiles 0..3.
SmallVector<Value> tableMmaPlanes(KernelEmitter &e, const SharedTable &table,
                                  ArrayRef<Value> words, int64_t bits,
                                  int64_t s, Type valueType);

//===----------------------------------------------------------------------===//
// fp4 e2m1 as sign and magnitude (Fp4Decode.cpp)
//===----------------------------------------------------------------------===//

/// Decodes a word of 8 e2m1 codes, whose values' bits in `valueType` (f16
/// or bf16) are `tableBits` (sign << 3 | magnitude), into 4 pairs, in
/// element order (where decodesE2m1BySignMagnitude, DecodeFamily.h).
SmallVector<Value> e2m1Word(KernelEmitter &e, ArrayRef<uint16_t> tableBits,
                            Value w, NibbleOrder order, Type valueType);

/// Byte `byte` (0 low, 1 high) of 8 table entries as prmt's pair of
/// registers' bits: entries 0-3, then 4-7, one byte each.
std::array<uint32_t, 2> bytePool(ArrayRef<uint16_t> entries, int64_t byte);

/// A word of 8 4-bit codes as two groups of four for byte-wise prmt
/// lookups (Table4Registers.cpp): group g holds elements 4 g .. 4 g + 3.
struct FourCodeGroups {
  /// The low 3 bits of group g's codes, as the nibbles of a prmt selector.
  Value index[2];
  /// 0xFF in the bytes of group g whose code has bit 3 set.
  Value bit3[2];

  FourCodeGroups(KernelEmitter &e, Value w, NibbleOrder order);
  /// The pairs of elements (2 i, 2 i + 1) in element order, from each
  /// group's looked-up low and high bytes (byte k for index nibble k).
  SmallVector<Value> pairs(KernelEmitter &e, ArrayRef<Value> low,
                           ArrayRef<Value> high, Type valueType) const;

private:
  bool tiled;
};

/// Decodes a word of 8 4-bit codes of the constant table `tableBits` (16
/// values' bits in `valueType`) into 4 pairs, in element order, from
/// registers (where decodesTable4InRegisters, KernelCommon.h).
SmallVector<Value> table4Registers(KernelEmitter &e,
                                   ArrayRef<uint16_t> tableBits, Value w,
                                   NibbleOrder order, Type valueType);

} // namespace decode
} // namespace qf
} // namespace mlir

#endif // QFUSE_LIB_CONVERSION_QFTOGPU_DECODE_WEIGHTDECODERS_H
