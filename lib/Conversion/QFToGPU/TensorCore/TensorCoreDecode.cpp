//===- TensorCoreDecode.cpp - Weight codes into B fragments -----------------===//
//
// Scales, zero points, the per-word decoders and the code tables of the
// tensor-core kernel.
//
// Decoding a 32-bit word of 4-bit codes gives the two B registers of two n
// tiles:
//   int4/uint4: (w & 0x000F000F) | 0x64006400 = half2(1024 + e0, 1024 + e1),
//     minus half2(1024 + z), exact; the high nibbles through an fma by 1/16;
//   nf4, fp4e2m1, 4-bit codebooks: a 16-entry table replicated across the 32
//     shared-memory banks (value c at word 32 c + lane), paired by prmt.
// 2- and 3-bit codebooks: a lane's two words (w = s) hold a slab's codes of
//   all four n tiles, element 4 j + v at bits 2 (4 j + v), 3-bit codes their
//   third bit in a third word (MmaLayout.h); the table (4 or 8 entries) is
//   replicated per bank like the 4-bit one, an offset being one shift and
//   mask of the word (and-or the high plane's bit for 3-bit codes).
// With bf16 activations the same words decode into bf16 pairs: int4/uint4
//   under 0x4300 (bf16x2(128 + e), the high nibbles shifted down first: bit
//   7 is bf16's exponent), NF4/fp4/codebooks from a bf16 table.
// A word of 8-bit codes is one n tile's two B registers:
//   int8/uint8: prmt places each byte under 0x64, half2(1024 + u), minus
//     half2(1024 + z) (int8: the sign bit flipped first, z = 128), exact;
//   fp8 e4m3: one cvt.rn.f16x2.e4m3x2 per register, exact;
//   8-bit codebooks: each byte indexes one shared 256-word table (one copy:
//     32 would take 32 KB), paired by prmt.
// Float zero points (uint4/uint8, zero = float): the codes decode to q as
//   with an integer zero of 0, then z (rounded to the activation type) is
//   subtracted, rounding q - z once; bf16 8-bit codes subtract it in f32
//   before the pair is packed.
//   bf16: 128 + 255 does not fit bf16, so bytes go under the f32 2^23 and
//   q - z is formed in f32; fp8 widens through f32; pairs are packed by
//   cvt.rn.bf16x2.f32 (exact: at most 8 significant bits).
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

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "qfuse/format/MmaLayout.h"

using namespace mlir;
using namespace mlir::qf;
using namespace mlir::qf::tensor_core;

/// The scale stored at element `elementIndex` of the scales tensor, whose
/// aligned word is `word`, as a pair of the activation type with both lanes
/// equal.
Value TensorCoreBuilder::scalePair(Value word, Value elementIndex) {
  return pairOf(scaleF32(word, elementIndex));
}

/// The f32 `value` rounded to the activation type, as a pair with both
/// lanes equal.
Value TensorCoreBuilder::pairOf(Value value) {
  // Rounded to f16 (bf16) once: exact for f16 and E4M3 (bf16, E8M0) scales,
  // where LLVM folds the extension and truncation away.
  Value h = e.bitcast(e.i16(), e.truncTo(act(), value));
  Value h32 = arith::ExtUIOp::create(b, e.i32(), h);
  return e.bitcast(actPair(),
                   arith::OrIOp::create(
                       b, h32, arith::ShLIOp::create(b, h32, e.c32(16))));
}

/// The scale stored at element `elementIndex` of the scales tensor, whose
/// aligned word is `word`, exactly as an f32.
Value TensorCoreBuilder::scaleF32(Value word, Value elementIndex) {
  Type st = spec.encoding.getScaleType();
  if (st.isF32())
    return e.bitcast(e.f32(), word);
  Value shift = e.mul(e.band(e.mul(elementIndex, e.c32(p.scaleBytes)),
                             e.c32(3)),
                      e.c32(8));
  Value bits = e.shru(word, shift);
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
  Value h2 = e.ptx("cvt.rn.f16x2.e4m3x2 $0, $1;", "=r,h", e.i32(), {byte});
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

/// The bf16x2 (lo, hi) of two f32 values (exact for the values decoded
/// here, which have at most 8 significant bits).
Value TensorCoreBuilder::packBf16(Value lo, Value hi) {
  return e.bitcast(e.v2bf16(), e.ptx("cvt.rn.bf16x2.f32 $0, $1, $2;",
                                     "=r,f,f", e.i32(), {hi, lo}));
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
  auto h2 = [&](Value i) { return e.bitcast(actPair(), i); };
  if (p.decode == DecodeFamily::Table && p.codeBits == 8) {
    pairs.push_back(h2(e.prmt(lookupByte(w, 0), lookupByte(w, 1), 0x5410)));
    pairs.push_back(h2(e.prmt(lookupByte(w, 2), lookupByte(w, 3), 0x5410)));
    return pairs;
  }
  if (p.decode == DecodeFamily::Int8Magic) {
    // u = the unsigned byte (int8: sign flipped, u = q + 128; uint8 has a
    // zero point, integer or float).
    Value u = p.intZeros || p.floatZeros
                  ? w
                  : arith::XOrIOp::create(b, w, e.c32(0x80808080));
    if (spec.bf16) {
      // bf16 holds 128 + u only up to u = 127: each byte goes under the f32
      // 2^23 (0x4B000000 | u = 2^23 + u), minus 2^23 + z is q - z exactly,
      // and a pair of them rounds (exactly, |q - z| <= 255) into bf16x2.
      Value magic = e.c32(0x4B000000);
      Value bias = e.bitcast(
          e.f32(), arith::OrIOp::create(b, zero, e.c32(0x4B000000)));
      auto value = [&](uint32_t v) {
        Value q =
            e.fsub(e.bitcast(e.f32(), e.prmt(u, magic, 0x7540 + v)), bias);
        return floatZero ? e.fsub(q, floatZero) : q;
      };
      pairs.push_back(packBf16(value(0), value(1)));
      pairs.push_back(packBf16(value(2), value(3)));
      return pairs;
    }
    // Bytes (v0, v1) and (v2, v3) under 0x64: half2(1024 + u).
    Value magic = e.c32(0x64646464);
    pairs.push_back(h2(e.prmt(u, magic, 0x4140)));
    pairs.push_back(h2(e.prmt(u, magic, 0x4342)));
    return pairs;
  }
  if (p.decode == DecodeFamily::Fp8Cvt) {
    for (int64_t half = 0; half < 2; ++half) {
      Value bits = arith::TruncIOp::create(
          b, e.i16(), half ? e.shru(w, e.c32(16)) : w);
      Value f16x2 =
          e.ptx("cvt.rn.f16x2.e4m3x2 $0, $1;", "=r,h", e.i32(), {bits});
      if (!spec.bf16) {
        pairs.push_back(h2(f16x2));
        continue;
      }
      // Every E4M3 value is an f16, an f32 and a bf16: widen, then pack.
      Value v = e.bitcast(e.v2f16(), f16x2);
      pairs.push_back(
          packBf16(e.extf32(e.extract(v, 0)), e.extf32(e.extract(v, 1))));
    }
    return pairs;
  }
  if (p.decode == DecodeFamily::Int4Magic) {
    // Element 2i sits in nibble slot i, 2i + 1 in slot i + 4 (kNibbleOrder):
    // lo(w) = (e0, e1), hi(w) = (e2, e3), lo(w >> 8) = (e4, e5), ...
    Value w8 = e.shru(w, e.c32(8));
    for (Value src : {w, w8}) {
      if (spec.bf16) {
        // bf16's 7 mantissa bits hold a nibble at bits 0..3 only (bit 7 is
        // the exponent's): the high nibbles are shifted down first.
        pairs.push_back(h2(e.andOr(src, 0x000F000F, 0x43004300)));
        pairs.push_back(
            h2(e.andOr(e.shru(src, e.c32(4)), 0x000F000F, 0x43004300)));
        continue;
      }
      pairs.push_back(h2(e.andOr(src, 0x000F000F, 0x64006400)));
      pairs.push_back(h2(e.andOr(src, 0x00F000F0, 0x64006400)));
    }
    return pairs;
  }
  // Table formats, same nibble order: pair i = (slot i, slot i + 4).
  auto sharedPtr = LLVM::LLVMPointerType::get(b.getContext(), 3);
  auto lookup = [&](int64_t slot) {
    int64_t shift = 4 * slot - 7; // nibble bits -> bits 7..10 (c * 128)
    Value moved = shift >= 0 ? e.shru(w, e.c32(shift))
                             : arith::ShLIOp::create(b, w, e.c32(-shift));
    Value off = e.add(e.add(e.band(moved, e.c32(15 << 7)), laneBytes),
                      e.c32(p.lutOff));
    Value ptr = LLVM::GEPOp::create(b, sharedPtr, e.i8(), smem,
                                    ValueRange{off});
    return LLVM::LoadOp::create(b, e.i32(), ptr, 4).getResult();
  };
  for (int64_t i = 0; i < 4; ++i)
    pairs.push_back(h2(e.prmt(lookup(i), lookup(i + 4), 0x5410)));
  return pairs;
}

/// The shared table word at `byteOffset` past the table's start.
Value TensorCoreBuilder::tableWordAt(Value byteOffset) {
  auto sharedPtr = LLVM::LLVMPointerType::get(b.getContext(), 3);
  Value ptr = LLVM::GEPOp::create(b, sharedPtr, e.i8(), smem,
                                  ValueRange{e.add(byteOffset, e.c32(p.lutOff))});
  return LLVM::LoadOp::create(b, e.i32(), ptr, 4).getResult();
}

/// The table word of byte `v` of `w` (8-bit codes: value c at word c).
Value TensorCoreBuilder::lookupByte(Value w, int64_t v) {
  int64_t shift = 8 * v - 2; // byte v -> bits 2..9 (c * 4)
  Value moved = shift >= 0 ? e.shru(w, e.c32(shift))
                           : arith::ShLIOp::create(b, w, e.c32(-shift));
  return tableWordAt(e.band(moved, e.c32(0xFF << 2)));
}

/// The byte offset in the replicated table (value c at word 32 c + lane) of
/// element `element` (4 j + v) of slab `s` of 2- or 3-bit codes: bits 0-1
/// from word s's field `element`, bit 2 from the high-plane word's bit
/// 16 s + element (MmaLayout.h).
Value TensorCoreBuilder::smallCodeOffset(ArrayRef<Value> words, int64_t s,
                                         int64_t element) {
  auto moveTo = [&](Value w, int64_t from, int64_t to, int64_t mask) {
    int64_t shift = from - to;
    Value moved = shift >= 0 ? e.shru(w, e.c32(shift))
                             : arith::ShLIOp::create(b, w, e.c32(-shift));
    return e.band(moved, e.c32(mask));
  };
  Value offset = moveTo(words[s], 2 * element, 7, 3 << 7); // c * 128
  if (p.codeBits == 3)
    offset = arith::OrIOp::create(
        b, offset, moveTo(words[2], 16 * s + element, 9, 1 << 9));
  return e.add(offset, laneBytes);
}

/// The (b0, b1) of n tiles j = 0..3 of slab `s` of 2- or 3-bit codes: b0 =
/// elements (4 j, 4 j + 1), b1 = (4 j + 2, 4 j + 3), paired by prmt.
SmallVector<Value> TensorCoreBuilder::decodeSmallCodes(ArrayRef<Value> words,
                                                       int64_t s) {
  SmallVector<Value> regs;
  for (int64_t element = 0; element < 16; element += 2) {
    Value lo = tableWordAt(smallCodeOffset(words, s, element));
    Value hi = tableWordAt(smallCodeOffset(words, s, element + 1));
    regs.push_back(e.bitcast(actPair(), e.prmt(lo, hi, 0x5410)));
  }
  return regs;
}

Value TensorCoreBuilder::tableValue(Value index) {
  return codeTableValue(b, module, name, spec.encoding, table, index,
                        codeTable, act());
}

/// Fills the shared table (codeTableBytes): up to 4-bit codes, word
/// c * 32 + l holds value(c) for lane l; 8-bit codes, word c holds value(c).
void TensorCoreBuilder::buildLut() {
  bool replicated = p.codeBits <= 4;
  int64_t words = codeTableBytes(p.codeBits) / 4;
  auto loop = scf::ForOp::create(b, tid, e.c32(words), e.c32(p.threads));
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value i = loop.getInductionVar();
    Value value = tableValue(replicated ? e.shru(i, e.c32(5)) : i);
    Value entry =
        arith::ExtUIOp::create(b, e.i32(), e.bitcast(e.i16(), value));
    LLVM::StoreOp::create(
        b, entry, smemAt(e.add(e.c32(p.lutOff), e.mul(i, e.c32(4)))), 4);
  }
  NVVM::Barrier0Op::create(b);
}
