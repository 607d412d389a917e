//===- TensorCoreWeights.cpp - Weight codes into B fragments --------------===//
//
// Scales, zero points, the code table, and each word of codes through its
// family's decoder (Decode/WeightDecoders.h) into the B fragment registers
// of the tensor-core kernel, in the fragment order of MmaLayout.h:
//   a word of 4-bit codes holds the (b0, b1) of two n tiles: int4/uint4
//     biased (f16: half2(1024 + e), the high nibbles 1024 + 16 e; bf16:
//     bf16x2(128 + e)), for decodeSlab to subtract 1024 + z (64 + z after
//     a multiply by 1/16; bf16: 128 + z), exact; NF4, fp4 and codebooks
//     from a table replicated across the 32 banks;
//   a lane's two words of 2-bit codes (three of 3-bit ones) hold a slab's
//     codes of all four n tiles (MmaLayout.h), through the same table;
//   a word of 8-bit codes is one n tile's (b0, b1): int8/uint8 biased
//     (half2(1024 + u), int8's sign bit flipped: z = 128) or, with bf16
//     activations, q - z formed in f32; fp8 e4m3 by cvt; 8-bit codebooks
//     from one shared 256-word table (32 copies would take 32 KB).
// With bf16 activations the tables hold bf16 values.
// Float zero points (uint4/uint8, zero = float): the codes decode to q as
//   with an integer zero of 0, then z (rounded to the activation type) is
//   subtracted, rounding q - z once; bf16 8-bit codes subtract it in f32
//   before the pair is packed.
// Then mma.sync accumulates in f32, with the scale applied one of two ways:
//   per fragment: one half2 multiply of B by the group's scale (the same
//     rounding as an fp16 dequantize);
//   deferred: B stays the unscaled value (q - z, exact in f16), each scale
//     group accumulates into fresh registers, and the partial sums are
//     folded in with one f32 fma per accumulator and the scale of its
//     column. That trades the 8 half2 multiplies per 16 k for 4 mTiles fmas
//     per group, so it is chosen for long groups and few m tiles (decode
//     batches: the multiplies are a fifth of the issue slots there), and
//     per-channel scales fold once, after the K loop.
//
//===----------------------------------------------------------------------===//

#include "TensorCore/TensorCoreBuilder.h"

#include "Common/KernelCommon.h"
#include "Decode/WeightDecoders.h"

using namespace mlir;
using namespace mlir::qf;
using namespace mlir::qf::tensor_core;

/// The byte of its aligned word where scale element `elementIndex` starts.
Value TensorCoreBuilder::scaleByteInWord(Value elementIndex) {
  return e.band(e.mul(elementIndex, e.c32(p.scaleBytes)), e.c32(3));
}

/// The scale stored at element `elementIndex` of the scales tensor, whose
/// aligned word is `word`, as a pair of the activation type with both lanes
/// equal: a scale of the activation type is its bits twice, an E4M3 byte
/// placed twice converts to the f16 pair at once.
Value TensorCoreBuilder::scalePair(Value word, Value elementIndex) {
  Type st = spec.encoding.getScaleType();
  if (st == act()) {
    Value bits = e.band(
        e.shru(word, e.mul(scaleByteInWord(elementIndex), e.c32(8))),
        e.c32(0xFFFF));
    return e.bitcast(actPair(),
                     arith::OrIOp::create(
                         b, bits, arith::ShLIOp::create(b, bits, e.c32(16))));
  }
  if (isa<Float8E4M3FNType>(st) && !spec.bf16) {
    Value twice = e.prmt(word, word,
                         e.mul(scaleByteInWord(elementIndex), e.c32(0x11)));
    Value bits = arith::TruncIOp::create(b, e.i16(), twice);
    return e.bitcast(actPair(), decode::cvtE4m3x2(e, bits));
  }
  return pairOf(scaleF32(word, elementIndex));
}

/// The f32 `value` rounded to the activation type once, as a pair with
/// both lanes equal (one packing convert).
Value TensorCoreBuilder::pairOf(Value value) {
  StringRef text = spec.bf16 ? "cvt.rn.bf16x2.f32 $0, $1, $1;"
                             : "cvt.rn.f16x2.f32 $0, $1, $1;";
  return e.bitcast(actPair(), e.ptx(text, "=r,f", e.i32(), {value}));
}

/// The scale stored at element `elementIndex` of the scales tensor, whose
/// aligned word is `word`, exactly as an f32.
Value TensorCoreBuilder::scaleF32(Value word, Value elementIndex) {
  Type st = spec.encoding.getScaleType();
  if (st.isF32())
    return e.bitcast(e.f32(), word);
  Value bits =
      e.shru(word, e.mul(scaleByteInWord(elementIndex), e.c32(8)));
  if (st.isF16())
    return e.extf32(
        e.bitcast(b.getF16Type(), arith::TruncIOp::create(b, e.i16(), bits)));
  if (st.isBF16())
    return e.bitcast(e.f32(), arith::ShLIOp::create(b, bits, e.c32(16)));
  if (isa<Float8E8M0FNUType>(st))
    return e.bitcast(e.f32(), arith::ShLIOp::create(
                                  b, e.band(bits, e.c32(0xFF)), e.c32(23)));
  // E4M3: exact through the f16 pair conversion.
  Value byte = arith::TruncIOp::create(b, e.i16(), e.band(bits, e.c32(0xFF)));
  Value h2 = decode::cvtE4m3x2(e, byte);
  return e.extf32(
      e.bitcast(b.getF16Type(), arith::TruncIOp::create(b, e.i16(), h2)));
}

/// The f32 scales of the accumulator columns this lane holds: entry
/// 2 j + c is row nBase + 8 j + 2 t + c (c0/c2 and c1/c3 of n tile j).
/// `wordOfRow` gives the aligned 32-bit word holding a row's scale.
SmallVector<Value>
TensorCoreBuilder::columnScales(function_ref<Value(Value row)> wordOfRow,
                                Value group) {
  SmallVector<Value> result;
  for (int64_t j = 0; j < 4; ++j)
    for (int64_t c = 0; c < 2; ++c) {
      Value row = e.add(nBase, e.add(e.c32(8 * j),
                                     e.add(e.mul(t4, e.c32(2)), e.c32(c))));
      result.push_back(
          scaleF32(wordOfRow(row),
                   e.add(e.mul(scaleRow(row), e.c32(p.numGroups)), group)));
    }
  return result;
}

/// The integer zero point of (row, group): z from the packed zeros word, or
/// the symmetric formats' implied 8 (int4) and 128 (int8, whose sign bit
/// decodeWord flips).
Value TensorCoreBuilder::zeroOf(Value word, Value row, Value group) {
  if (!p.intZeros)
    return e.c32(p.codeBits == 8 ? 128 : 8);
  Value bit = e.mul(group, e.c32(p.codeBits));
  Value byteIdx =
      e.add(e.mul(row, e.c32(p.zeroRowBytes)), e.shru(bit, e.c32(3)));
  Value shift = e.add(e.mul(e.band(byteIdx, e.c32(3)), e.c32(8)),
                      e.band(bit, e.c32(7)));
  return e.band(e.shru(word, shift), e.c32((1 << p.codeBits) - 1));
}

/// The pair the decoder subtracts from the raw codes of zero point z:
/// f16: half2(1024 + z), or half2(64 + z) for the high nibbles, which decode
/// as 1024 + 16 e and are scaled by 1/16 first; bf16 4-bit codes:
/// bf16x2(128 + z) (both nibbles decode as 128 + e). bf16 8-bit codes
/// subtract in f32 (decodeWord).
Value TensorCoreBuilder::zeroBias(Value z, bool high) {
  // half(1024 + z) = 0x6400 | z (ulp 1); half(64 + z) = 0x5400 + 16 z
  // (ulp 1/16); bf16(128 + z) = 0x4300 | z (ulp 1, z < 128).
  Value hbits;
  if (spec.bf16)
    hbits = arith::OrIOp::create(b, z, e.c32(0x4300));
  else
    hbits = high ? e.add(arith::ShLIOp::create(b, z, e.c32(4)), e.c32(0x5400))
                 : arith::OrIOp::create(b, z, e.c32(0x6400));
  return e.bitcast(actPair(),
                   arith::OrIOp::create(
                       b, hbits, arith::ShLIOp::create(b, hbits, e.c32(16))));
}

/// The B registers of one code word, in the fragment order of MmaLayout.h.
/// 4-bit codes give four: (b0, b1) of n tile 2 jp, then (b0, b1) of n tile
/// 2 jp + 1; int4/uint4 come back raw (f16 lo: 1024 + e, hi: 1024 + 16 e;
/// bf16: 128 + e), for computeStep to remove each tile's zero point; table
/// formats as values. 8-bit codes give (b0, b1) of one n tile: int8/uint8
/// raw (f16: 1024 + u) or, with bf16 activations, already q - z (`zero`
/// is z, an i32; a float zero point `floatZero`, an f32, is subtracted
/// too), fp8 and codebooks as values.
SmallVector<Value> TensorCoreBuilder::decodeWord(Value w, Value zero,
                                                 Value floatZero) {
  SmallVector<Value> pairs;
  auto take = [&](Value pair) { pairs.push_back(pair); };
  bool isSigned = spec.encoding.getFormat() == ElementFormat::Int8;
  switch (p.decode) {
  case DecodeFamily::Int4Magic:
    decode::int4MagicWord(e, w, act(), [&](Value lo, Value hi) {
      pairs.push_back(lo);
      pairs.push_back(hi);
    });
    break;
  case DecodeFamily::Int8Magic:
    if (spec.bf16)
      return decode::int8Bf16Word(e, w, isSigned, zero, floatZero);
    decode::int8MagicWord(e, w, isSigned, take);
    break;
  case DecodeFamily::Fp8Cvt:
    decode::e4m3Word(e, w, act(), take);
    break;
  case DecodeFamily::Table:
    if (decodesE2m1BySignMagnitude(spec.encoding.getFormat()))
      return decode::e2m1Word(e, constantCodeTableBits(spec.encoding, act()),
                              w, decode::NibbleOrder::Tiled, act());
    if (decodesTable4InRegisters(spec.encoding))
      return decode::table4Registers(
          e, constantCodeTableBits(spec.encoding, act()), w,
          decode::NibbleOrder::Tiled, act());
    return p.codeBits == 8 ? decode::table8Word(e, lut, w, act())
                           : decode::table4Word(
                                 e, lut, w, decode::NibbleOrder::Tiled, act());
  case DecodeFamily::Half:
    llvm_unreachable("2:4 f16 values are their fragments (decodeSparsePair)");
  }
  return pairs;
}

Value TensorCoreBuilder::tableValue(Value index) {
  return codeTableValue(b, module, name, spec.encoding, table, index,
                        codeTable, act());
}

/// Fills the shared table (codeTableBytes): up to 4-bit codes one copy per
/// lane, 8-bit codes one copy.
void TensorCoreBuilder::buildLut() {
  decode::fillTable(e, lut,
                    p.codeBits <= 4 ? decode::TableLayout::PerLane
                                    : decode::TableLayout::Single,
                    tid, p.threads, codeTableBytes(p.codeBits) / 4,
                    [&](Value index) { return tableValue(index); });
}
