//===- MatVecWeights.cpp - How the matvec kernel reads a weight -----------===//
//
// Scale and zero-point loads, the shared code table, and each step's codes
// through their family's decoder (Decode/WeightDecoders.h) into half2 pairs
// with the zero point (or the symmetric offset) removed, ready for the
// body's half2 accumulation.
//
// Decoded values are the true codes divided by a power of two (valueScale:
// 8 for int4, 128 for int8, 256 for fp8) so that the half2 sums of a scale
// span stay far from f16's range; the span's f32 scale is multiplied back
// by it. Table codes of 4 bits are decoded a word at a time, other widths
// 8 codes of a unit at a time (decodeStep) to keep the activations in
// registers few.
//
// 2:4 (f16, int4/uint4 tiled, int8/uint8, fp8): the kept codes decode as
// dense ones; pair j of a word is quad j's two kept values, and one prmt
// per pair picks the quad's kept activations by its 4-bit metadata nibble
// (MatVecBody.cpp). Scale groups count logical columns (a group of g
// columns is g / 2 stored codes).
//
//===----------------------------------------------------------------------===//

#include "MatVec/MatVecBuilder.h"

#include "Common/KernelCommon.h"
#include "Common/KernelEmitter.h"
#include "Decode/WeightDecoders.h"

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
  Value h = decode::cvtE4m3x2(e, arith::ExtUIOp::create(b, e.i16(), byte));
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
    return 256; // |e4m3| <= 448
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
  ZeroPointKind zk = spec.encoding.getZeroPoint();
  switch (p.decode) {
  case DecodeFamily::Int4Magic:
    // lo = 1024 + e, hi = 1024 + 16 e. Values come out divided by 8
    // (exactly: a power of two).
    decode::int4MagicWord(e, w, e.f16(), [&](Value lo, Value hi) {
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
    });
    break;
  case DecodeFamily::Int8Magic: {
    // (1024 + u) / 128 - (1024 + z) / 128 = (u - z) / 128, exact in f16.
    bool isSigned = spec.encoding.getFormat() == ElementFormat::Int8;
    decode::int8MagicWord(e, w, isSigned, [&](Value v) {
      if (zk == ZeroPointKind::Float)
        pairs.push_back(e.fsub(e.fma(v, e.ch2(1.0 / 128), e.ch2(-8)), zero));
      else
        pairs.push_back(e.fma(
            v, e.ch2(1.0 / 128),
            e.fneg(zk == ZeroPointKind::Int ? zero : e.ch2(1152.0 / 128))));
    });
    break;
  }
  case DecodeFamily::Fp8Cvt:
    decode::e4m3Word(e, w, e.f16(), [&](Value v) {
      pairs.push_back(e.fmul(v, e.ch2(1.0 / 256)));
    });
    break;
  case DecodeFamily::Half:
    // The two kept f16 values of one group of 4 columns, as stored.
    pairs.push_back(e.bitcast(e.v2f16(), w));
    break;
  case DecodeFamily::Table:
    assert(!p.streamsCodes() && "code streams are decoded per unit");
    if (decodesE2m1BySignMagnitude(spec.encoding.getFormat()))
      return decode::e2m1Word(e, constantCodeTableBits(spec.encoding, e.f16()),
                              w, decode::NibbleOrder::RowMajor, e.f16());
    if (decodesTable4InRegisters(spec.encoding))
      return decode::table4Registers(
          e, constantCodeTableBits(spec.encoding, e.f16()), w,
          decode::NibbleOrder::RowMajor, e.f16());
    return decode::table4Word(e, lut, w, decode::NibbleOrder::RowMajor,
                              e.f16());
  }
  return pairs;
}

/// Decodes step `step` of a row's chunk into f16 pairs: a word, or
/// `stepElems` codes of a unit of streamed codes.
SmallVector<Value> MatVecBuilder::decodeStep(ArrayRef<Value> rowWords,
                                             Value zero, int64_t step) {
  int64_t firstElem = step * p.stepElems;
  if (p.streamsCodes()) {
    int64_t unit = firstElem / p.unitElems;
    return decode::tableStream(e, lut,
                               rowWords.slice(unit * p.unitWords, p.unitWords),
                               p.bits, firstElem % p.unitElems, p.stepElems);
  }
  return decodeWord(rowWords[step], zero);
}

Value MatVecBuilder::tableValue(Value index) {
  return codeTableValue(b, module, name, spec.encoding, table, index, codeTable,
                        e.f16());
}

/// Fills the shared table, each entry replicated in all 32 banks (two per
/// word for 8-bit codes).
void MatVecBuilder::buildLut() {
  decode::fillTable(e, lut,
                    p.bits == 8 ? decode::TableLayout::PerLanePairs
                                : decode::TableLayout::PerLane,
                    e.tidX(), p.warps * 32, p.lutWords,
                    [&](Value index) { return tableValue(index); });
}
