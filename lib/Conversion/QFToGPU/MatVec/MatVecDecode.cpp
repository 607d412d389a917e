//===- MatVecDecode.cpp - Matvec weight decoding: codes to half2 ----------===//
//
// Scale and zero-point loads, the per-word decoders and the shared code
// tables of the matvec kernel.
//
// Decoding, per 32-bit word of codes:
//   int4/uint4 (tiled layout: nibble slot i holds element [0,2,4,6,1,3,5,7][i])
//     (w & 0x000F000F) | 0x64006400 = half2(1024 + e0, 1024 + e1)
//     (w & 0x00F000F0) | 0x64006400 = half2(1024 + 16 e2, 1024 + 16 e3)
//     and the same on w >> 8 for (e4, e5), (e6, e7): one lop3 per pair, then
//     one sub or fma removes the 1024 bias and the zero point.
//   int8/uint8: prmt pairs bytes with 0x64 for the same 1024 + u trick.
//   fp8e4m3: cvt.rn.f16x2.e4m3x2 on each 16-bit half.
//   nf4, fp4e2m1, 4-bit codebooks (row_major: byte j = elements 2j, 2j+1):
//     a 16-entry shared-memory table replicated across the 32 banks, so each
//     lane's lookups hit its own bank (conflict-free for random codes); one
//     prmt pairs two looked-up halves.
//   codebooks of 2, 3, 5, 6, 7 bits (LutN): the same replicated table with
//     2^bits entries (512 B for 2 bits, 1 KB for 3, up to 16 KB for 7).
//     Codes are a little-endian bit stream (Packing.h): b words always end
//     on a code boundary (32 codes), so a lane's chunk is `unitWords`
//     loads of vec_bytes (3-bit: 3 x 16 B = 128 codes); a code straddling
//     two words is joined with one shift-or. Decoding goes 8 codes at a
//     time to keep the activations in registers small.
//   8-bit codebooks: replicating 256 entries per bank would take 32 KB per
//     block (6 blocks per SM) and unreplicated 512 B gives ~3.5-way bank
//     conflicts on random codes. The table stores two f16 per word
//     (entries 2c, 2c + 1 in word c), replicated per bank: 16 KB, still
//     conflict-free, and c & 1 folds into the prmt selector that pairs two
//     lookups (no extra instruction per code beyond the selector math).
//   2:4 (f16, int4/uint4 tiled, int8/uint8, fp8): the kept codes decode as
//     above; pair j of a word is quad j's two kept values, and one prmt per
//     pair picks the quad's kept activations by its 4-bit metadata nibble.
//     Scale groups count logical columns (a group of g columns is g / 2
//     stored codes).
//===----------------------------------------------------------------------===//

#include "MatVec/MatVecBuilder.h"

#include "Common/KernelCommon.h"
#include "Common/KernelEmitter.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "qfuse/format/Layout.h"
#include "qfuse/format/Numerics.h"

using namespace mlir;
using namespace mlir::qf;
using namespace mlir::qf::matvec;

Value MatVecBuilder::groupIndex(Value row, Value group) {
  return p.perChannel ? row : e.add(e.mul(row, e.c32(p.numGroups)), group);
}

/// Loads element `idx` of a tensor stored in the encoding's scale type and
/// returns it as f32 (scales, and float zero points, use this type).
Value MatVecBuilder::loadScaleTyped(Value base, Value idx) {
  Type st = spec.encoding.getScaleType();
  Value idx64 = e.zext64(idx);
  if (st.isF16()) {
    Value ptr = e.gepBytes(base, e.mul(idx64, e.c64(2)));
    return e.extf32(e.loadRO(e.f16(), ptr, 2));
  }
  if (st.isF32()) {
    Value ptr = e.gepBytes(base, e.mul(idx64, e.c64(4)));
    return e.loadRO(e.f32(), ptr, 4);
  }
  if (st.isBF16()) {
    Value ptr = e.gepBytes(base, e.mul(idx64, e.c64(2)));
    Value bits16 = e.loadRO(e.i16(), ptr, 2);
    Value bits32 = arith::ShLIOp::create(
        b, arith::ExtUIOp::create(b, e.i32(), bits16), e.c32(16));
    return e.bitcast(e.f32(), bits32);
  }
  Value byte = e.loadRO(e.i8(), e.gepBytes(base, idx64), 1);
  if (isa<Float8E8M0FNUType>(st)) {
    // E8M0: the byte is a biased exponent: 2^(byte - 127).
    Value exp = arith::ExtUIOp::create(b, e.i32(), byte);
    return e.bitcast(e.f32(), arith::ShLIOp::create(b, exp, e.c32(23)));
  }
  // E4M3 (NVFP4 block scales): convert through the hardware's fp8 path.
  Value h = e.ptx("cvt.rn.f16x2.e4m3x2 $0, $1;", "=r,h", e.i32(),
                  {arith::ExtUIOp::create(b, e.i16(), byte)});
  return e.extf32(e.extract(e.bitcast(e.v2f16(), h), 0));
}

/// The zero point of (row, group), as the half2 the decoder subtracts:
/// integer zeros as half2(1024 + z) / valueScale (the codes' magic bias),
/// float zeros as half2(z) / valueScale. Dividing by a power of two is exact.
Value MatVecBuilder::zeroAt(const WeightArgs &w, Value row, Value group) {
  Value zeros = w.zeros;
  EncodingAttr enc = spec.encoding;
  switch (enc.getZeroPoint()) {
  case ZeroPointKind::None:
    return {};
  case ZeroPointKind::Float: {
    Value z = e.truncf16(e.fmul(loadScaleTyped(zeros, groupIndex(row, group)),
                                e.cf32(1.0 / valueScale())));
    Value bits = arith::ExtUIOp::create(b, e.i32(), e.bitcast(e.i16(), z));
    Value h2 = arith::OrIOp::create(b, bits,
                                    arith::ShLIOp::create(b, bits, e.c32(16)));
    return e.bitcast(e.v2f16(), h2);
  }
  case ZeroPointKind::Int:
    break;
  }
  Value g = p.perChannel ? e.c32(0) : group;
  Value zRow = e.mul(e.zext64(row), e.c64(p.zeroRowBytes));
  Value z;
  if (p.bits == 4) {
    Value byte = e.loadRO(
        e.i8(), e.gepBytes(zeros, e.add(zRow, e.zext64(e.shru(g, e.c32(1))))),
        1);
    Value shift = e.mul(e.band(g, e.c32(1)), e.c32(4));
    z = e.band(e.shru(arith::ExtUIOp::create(b, e.i32(), byte), shift),
               e.c32(15));
  } else {
    Value byte =
        e.loadRO(e.i8(), e.gepBytes(zeros, e.add(zRow, e.zext64(g))), 1);
    z = arith::ExtUIOp::create(b, e.i32(), byte);
  }
  // half(1024 + z) has bits 0x6400 | z; replicate into both lanes.
  Value h = arith::OrIOp::create(b, z, e.c32(0x6400));
  Value h2 = arith::OrIOp::create(b, h, arith::ShLIOp::create(b, h, e.c32(16)));
  return e.fmul(e.bitcast(e.v2f16(), h2), e.ch2(1.0 / valueScale()));
}

/// Decoded values are the true codes divided by this power of two (keeps
/// half2 span sums in range); the span's scale is multiplied back by it.
double MatVecBuilder::valueScale() const {
  switch (p.decode) {
  case DecodeFamily::Int4Magic:
    return 8;
  case DecodeFamily::Int8Magic:
    return 128;
  case DecodeFamily::Fp8Cvt:
    return 256;
  case DecodeFamily::Table:
  case DecodeFamily::Half:
    return 1;
  }
  llvm_unreachable("unknown decode");
}

/// Decodes one 32-bit word of codes into half2 pairs in element order,
/// with the zero point (or the symmetric offset) already removed.
SmallVector<Value> MatVecBuilder::decodeWord(Value w, Value zero) {
  SmallVector<Value> pairs;
  auto h2 = [&](Value i) { return e.bitcast(e.v2f16(), i); };
  ZeroPointKind zk = spec.encoding.getZeroPoint();
  switch (p.decode) {
  case DecodeFamily::Int4Magic: {
    // Values come out divided by 8 (exactly: a power of two) so that the
    // half2 span sums stay far from f16's range; valueScale() undoes it.
    Value w8 = e.shru(w, e.c32(8));
    for (Value src : {w, w8}) {
      Value lo = h2(e.andOr(src, 0x000F000F, 0x64006400)); // 1024 + e
      Value hi = h2(e.andOr(src, 0x00F000F0, 0x64006400)); // 1024 + 16 e
      if (zk == ZeroPointKind::Float) {
        // (e - z) / 8 = (lo - 1024) / 8 - z / 8; `zero` holds z / 8.
        pairs.push_back(e.fsub(e.fma(lo, e.ch2(0.125), e.ch2(-128)), zero));
        pairs.push_back(e.fsub(e.fma(hi, e.ch2(1.0 / 128), e.ch2(-8)), zero));
      } else {
        // (e - z) / 8 = lo / 8 - (1024 + z) / 8 = hi / 128 - (64 + z) / 8,
        // with z = 8 for int4 (stored q + 8); `zero` holds (1024 + z) / 8.
        Value bias = zk == ZeroPointKind::Int ? zero : e.ch2((1024 + 8) / 8.0);
        pairs.push_back(e.fma(lo, e.ch2(0.125), e.fneg(bias)));
        pairs.push_back(e.fma(hi, e.ch2(1.0 / 128), e.fsub(e.ch2(120), bias)));
      }
    }
    break;
  }
  case DecodeFamily::Int8Magic: {
    // (1024 + u) / 128 - (1024 + z) / 128 = (u - z) / 128, exact in f16.
    bool isSigned = spec.encoding.getFormat() == ElementFormat::Int8;
    Value u = isSigned ? arith::XOrIOp::create(b, w, e.c32(0x80808080)) : w;
    Value magic = e.c32(0x64646464);
    for (uint32_t selector : {0x4140u, 0x4342u}) {
      Value v = h2(e.prmt(u, magic, selector)); // 1024 + u
      if (zk == ZeroPointKind::Float)
        pairs.push_back(e.fsub(e.fma(v, e.ch2(1.0 / 128), e.ch2(-8)), zero));
      else
        pairs.push_back(e.fma(
            v, e.ch2(1.0 / 128),
            e.fneg(zk == ZeroPointKind::Int ? zero : e.ch2(1152.0 / 128))));
    }
    break;
  }
  case DecodeFamily::Fp8Cvt: {
    for (int64_t half = 0; half < 2; ++half) {
      Value bits =
          arith::TruncIOp::create(b, e.i16(), half ? e.shru(w, e.c32(16)) : w);
      Value v =
          h2(e.ptx("cvt.rn.f16x2.e4m3x2 $0, $1;", "=r,h", e.i32(), {bits}));
      pairs.push_back(e.fmul(v, e.ch2(1.0 / 256))); // |e4m3| <= 448
    }
    break;
  }
  case DecodeFamily::Half:
    // The two kept f16 values of one group of 4 columns, as stored.
    pairs.push_back(h2(w));
    break;
  case DecodeFamily::Table: {
    assert(!p.streamsCodes() && "streamed codes are decoded per unit");
    // Code c of this lane is at word c * 32 + lane: every lane reads its own
    // bank, so random codes never conflict. Byte offset (c << 7) + 4 lane,
    // with c taken straight from its nibble by one shift and one mask.
    auto sharedPtr = LLVM::LLVMPointerType::get(b.getContext(), 3);
    auto lookup = [&](int64_t nibble) {
      int64_t shift = 4 * nibble - 7; // nibble bits -> bits 7..10
      Value moved = shift >= 0 ? e.shru(w, e.c32(shift))
                               : arith::ShLIOp::create(b, w, e.c32(-shift));
      Value off = e.add(e.band(moved, e.c32(15 << 7)), laneBytes);
      Value ptr =
          LLVM::GEPOp::create(b, sharedPtr, e.i8(), lut, ValueRange{off});
      return LLVM::LoadOp::create(b, e.i32(), ptr, 4).getResult();
    };
    for (int64_t j = 0; j < 4; ++j) // byte j: elements 2j (low), 2j+1
      pairs.push_back(h2(e.prmt(lookup(2 * j), lookup(2 * j + 1), 0x5410)));
    break;
  }
  }
  return pairs;
}

/// Decodes `count` codes (an even number) of a LutN unit, starting at code
/// `first`, into half2 pairs. Code i of a unit sits at bits [i*b, (i+1)*b)
/// of the unit's words taken as one little-endian bit stream (Packing.h),
/// so a 3-bit code may straddle two words; each code is moved straight into
/// the byte-offset field of its table entry. The table (buildLut) holds
/// entry c for lane l at word c * 32 + l (bits <= 7), or entries 2c, 2c+1 as
/// the two halves of word c * 32 + l (8 bits): every lane reads its own bank.
SmallVector<Value> MatVecBuilder::decodeLutN(ArrayRef<Value> unit,
                                             int64_t first, int64_t count) {
  auto sharedPtr = LLVM::LLVMPointerType::get(b.getContext(), 3);
  int64_t bits = p.bits;
  // Bits [pos, pos + b) of the result hold code i (masked by fieldMask).
  auto field = [&](int64_t i, int64_t pos, uint32_t fieldMask) -> Value {
    int64_t bit = i * bits, wi = bit / 32, sh = bit % 32;
    auto shl = [&](Value v, int64_t n) -> Value {
      return n == 0 ? v : arith::ShLIOp::create(b, v, e.c32(n)).getResult();
    };
    auto shr = [&](Value v, int64_t n) -> Value {
      return n == 0 ? v : e.shru(v, e.c32(n));
    };
    Value v;
    if (sh + bits <= 32) {
      v = sh >= pos ? shr(unit[wi], sh - pos) : shl(unit[wi], pos - sh);
    } else {
      Value code = arith::OrIOp::create(b, shr(unit[wi], sh),
                                        shl(unit[wi + 1], 32 - sh));
      v = shl(code, pos);
    }
    return e.band(v, e.c32(fieldMask));
  };
  auto lookup = [&](Value off) -> Value {
    Value ptr = LLVM::GEPOp::create(b, sharedPtr, e.i8(), lut,
                                    ValueRange{e.add(off, laneBytes)});
    return LLVM::LoadOp::create(b, e.i32(), ptr, 4).getResult();
  };
  SmallVector<Value> pairs;
  for (int64_t j = 0; j < count / 2; ++j) {
    int64_t i0 = first + 2 * j, i1 = i0 + 1;
    if (bits <= 7) {
      uint32_t fm = ((1u << bits) - 1) << 7; // c * 128 bytes
      Value v0 = lookup(field(i0, 7, fm)), v1 = lookup(field(i1, 7, fm));
      pairs.push_back(e.bitcast(e.v2f16(), e.prmt(v0, v1, 0x5410)));
      continue;
    }
    // 8 bits: word c >> 1 holds entries (c & ~1, c | 1); c & 1 picks the
    // half, folded into one prmt selector: bytes {0,1} or {2,3} of v0 and
    // {4,5} or {6,7} of v1.
    uint32_t fm = 0x7Fu << 7; // (c >> 1) * 128 bytes
    Value v0 = lookup(field(i0, 6, fm)), v1 = lookup(field(i1, 6, fm));
    Value sel =
        e.add(e.c32(0x5410), e.add(e.mul(field(i0, 0, 1), e.c32(0x22)),
                                   e.mul(field(i1, 0, 1), e.c32(0x2200))));
    pairs.push_back(
        e.bitcast(e.v2f16(), e.ptx("prmt.b32 $0, $1, $2, $3;", "=r,r,r,r",
                                   e.i32(), {v0, v1, sel})));
  }
  return pairs;
}

Value MatVecBuilder::tableValue(Value index) {
  return codeTableValue(b, module, name, spec.encoding, table, index, codeTable,
                        e.f16());
}

/// Fills the shared table, each entry replicated in all 32 banks: word
/// c * 32 + l holds value(c) for lane l in its low half (Lut4, LutN up to
/// 7 bits), or value(2c) | value(2c + 1) << 16 (8 bits).
void MatVecBuilder::buildLut() {
  Value tid = e.tidX();
  int64_t threads = p.warps * 32;
  bool twoPerWord = p.bits == 8;
  auto loop = scf::ForOp::create(b, tid, e.c32(p.lutWords), e.c32(threads));
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value t = loop.getInductionVar();
    Value c = e.shru(t, e.c32(5));
    auto bitsOf = [&](Value index) -> Value {
      return arith::ExtUIOp::create(b, e.i32(),
                                    e.bitcast(e.i16(), tableValue(index)));
    };
    Value entry;
    if (twoPerWord) {
      Value c2 = e.mul(c, e.c32(2));
      entry = arith::OrIOp::create(
          b, bitsOf(c2),
          arith::ShLIOp::create(b, bitsOf(e.add(c2, e.c32(1))), e.c32(16)));
    } else {
      entry = bitsOf(c);
    }
    auto sharedPtr = LLVM::LLVMPointerType::get(b.getContext(), 3);
    Value ptr = LLVM::GEPOp::create(b, sharedPtr, e.i8(), lut,
                                    ValueRange{e.mul(t, e.c32(4))});
    LLVM::StoreOp::create(b, entry, ptr, 4);
  }
  NVVM::Barrier0Op::create(b);
}
