//===- WeightDecoder.cpp - one packed weight element -> f32, in scf/arith ---===//
//
// WeightDecoder decodes each stored code with integer ops on the raw
// bytes, exactly as format/include/qfuse/format/Packing.h defines
// the row-major layout and Layout.h the tiled one:
//
//   codes[n] is an LSB-first bit stream; 4-bit codes, K = 8, row_major:
//     byte 0 = [c1 | c0], byte 1 = [c3 | c2], ...
//   tiled (tile_n = 1): inside every 32-bit word, nibble slot i holds element
//     kNibbleOrder[i] = [0, 2, 4, 6, 1, 3, 5, 7][i], so element e of the word
//     sits in slot (e % 2) * 4 + e / 2.
//   2:4: meta[n] is a stream of 2-bit positions; stored value s is column
//     4 * (s / 2) + meta field s.
//   act_order: the columns are stored sorted by group (Layout.h); stored
//     column j is checkpoint column perm[j] and belongs to group j / group.
//     Under 2:4 they stay in checkpoint order and column c belongs to group
//     g_idx[c] (format::sortsColumns).
//
//===----------------------------------------------------------------------===//

#include "qfuse/Conversion/WeightDecoder.h"

#include "qfuse/Dialect/QF/IR/FormatBridge.h"

#include "qfuse/format/MmaLayout.h"
#include "qfuse/format/SparseMmaLayout.h"
#include "qfuse/format/Numerics.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "qfuse/Dialect/QF/Transforms/LayoutUtils.h"

using namespace mlir;
using namespace mlir::qf;

/// The tiled decode below computes the nibble slot of element e of a word as
/// (e % 2) * 4 + e / 2: the inverse of the layout's kNibbleOrder.
static constexpr bool slotFormulaMatchesLayout() {
  for (int slot = 0; slot < 8; ++slot) {
    int elem = kNibbleOrder[slot];
    if ((elem % 2) * 4 + elem / 2 != slot)
      return false;
  }
  return true;
}
static_assert(slotFormulaMatchesLayout(),
              "tiled nibble order changed: update WeightDecoder::decode");

//===----------------------------------------------------------------------===//
// ScalarEmitter
//===----------------------------------------------------------------------===//

Value ScalarEmitter::decodeE4M3(Value byte) {
  // s eeee mmm: normal (1 + m/8) * 2^(e-7) has f32 bits
  // s << 31 | (e + 120) << 23 | m << 20; e = 0 is m * 2^-9.
  Value sign = shru(byte, c32(7));
  Value exp = band(shru(byte, c32(3)), c32(15));
  Value man = band(byte, c32(7));
  Value normalBits =
      bor(bor(shl(sign, c32(31)), shl(add(exp, c32(120)), c32(23))),
          shl(man, c32(20)));
  Value normal = bitcastF32(normalBits);
  Value subAbs = fmul(uitofp(man), cf32(1.0 / 512.0));
  Value sub = select(eq(sign, c32(0)), subAbs, arith::NegFOp::create(b, subAbs));
  return select(eq(exp, c32(0)), sub, normal);
}

Value ScalarEmitter::decodeE8M0(Value byte) {
  // 2^(b - 127) is f32 exponent field b; b = 0 is the f32 subnormal 2^-127.
  Value bits = select(eq(byte, c32(0)), c32(0x00400000), shl(byte, c32(23)));
  return bitcastF32(bits);
}

Value ScalarEmitter::loadF32(Value mem, ValueRange indices, Type stored) {
  if (isa<Float8E4M3FNType>(stored))
    return decodeE4M3(loadU8(mem, indices));
  if (isa<Float8E8M0FNUType>(stored))
    return decodeE8M0(loadU8(mem, indices));
  Value v = load(mem, indices);
  if (v.getType() == f32())
    return v;
  return arith::ExtFOp::create(b, f32(), v);
}

Value ScalarEmitter::truncTo(Value v, Type type) {
  if (type == v.getType())
    return v;
  return arith::TruncFOp::create(b, type, v);
}

Value ScalarEmitter::getBits(Value mem, Value row, Value index, unsigned bits,
                          int64_t rowBytes) {
  if (bits == 8)
    return loadU8(mem, {row, index});
  Value bitOffset = mul(index, idx(bits));
  Value byte = divu(bitOffset, idx(8));
  Value shift = toI32(remu(bitOffset, idx(8)));
  Value word = loadU8(mem, {row, byte});
  if (8 % bits != 0) {
    // 3-, 5-, 6- and 7-bit values may continue in the next byte.
    Value next = minu(add(byte, idx(1)), idx(rowBytes - 1));
    word = bor(word, shl(loadU8(mem, {row, next}), c32(8)));
  }
  return band(shru(word, shift), c32((1 << bits) - 1));
}

void ScalarEmitter::forLoop(Value lb, Value ub, function_ref<void(Value)> body) {
  auto loop = scf::ForOp::create(b, lb, ub, idx(1));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(loop.getBody()->getTerminator());
  body(loop.getInductionVar());
}

Value ScalarEmitter::forReduce(Value lb, Value ub, Value init,
                            function_ref<Value(Value, Value)> body) {
  auto loop = scf::ForOp::create(b, lb, ub, idx(1), ValueRange{init});
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value next = body(loop.getInductionVar(), loop.getRegionIterArgs()[0]);
  scf::YieldOp::create(b, next);
  return loop.getResult(0);
}

Type mlir::qf::storageType(Type type) {
  if (isa<Float8E4M3FNType, Float8E8M0FNUType>(type))
    return IntegerType::get(type.getContext(), 8);
  return type;
}

//===----------------------------------------------------------------------===//
// Components and tables
//===----------------------------------------------------------------------===//

SmallVector<std::pair<std::string, MemRefType>>
mlir::qf::weightComponentTypes(WeightType type, StringRef prefix) {
  MLIRContext *ctx = type.getContext();
  EncodingAttr enc = type.getEncoding();
  Type i8 = IntegerType::get(ctx, 8);
  int64_t n = type.getN(), k = type.getK();
  int64_t stored = enc.isSparse24() ? k / 2 : k;
  int64_t groups = enc.getNumGroups(k);
  unsigned bits = enc.getCodeBits();
  SmallVector<std::pair<std::string, MemRefType>> components;
  auto add = [&](StringRef component, ArrayRef<int64_t> shape, Type elt) {
    components.push_back(
        {(prefix + component).str(), MemRefType::get(shape, elt)});
  };
  // The fragment layouts store whole tiles (MmaLayout.h, SparseMmaLayout.h).
  const bool sparseMma = isSparseMmaLayout(type.getLayout());
  int64_t np = qfuse::format::sparseMmaPaddedN(n);
  int64_t kp = qfuse::format::sparseMmaPaddedK(k);
  if (sparseMma)
    add("codes", {np, kp / 2 * int64_t(bits) / 8}, i8);
  else if (isMmaFragmentLayout(type.getLayout()))
    add("codes",
        {qfuse::format::mmaPaddedN(n),
         qfuse::format::mmaPaddedK(k) * int64_t(bits) / 8},
        i8);
  else
    add("codes", {n, stored * bits / 8}, i8);
  if (enc.isQuantized())
    add("scales", {n, groups}, storageType(enc.getScaleType()));
  if (enc.isSparse24())
    add("meta", sparseMma ? SmallVector<int64_t>{np, kp / 8}
                          : SmallVector<int64_t>{n, (k + 7) / 8},
        i8);
  if (enc.getZeroPoint() == ZeroPointKind::Int)
    add("zeros", {n, (groups * bits + 7) / 8}, i8);
  else if (enc.getZeroPoint() == ZeroPointKind::Float)
    add("zeros", {n, groups}, storageType(enc.getScaleType()));
  if (enc.getActOrder()) // qfuse::format::kPerm or kGIdx
    add(enc.isSparse24() ? "g_idx" : "perm", {k}, IntegerType::get(ctx, 32));
  if (enc.getGlobalScale())
    add("global_scale", {1}, Float32Type::get(ctx));
  if (enc.getFormat() == ElementFormat::Codebook && enc.getTableName())
    add("table", {int64_t(1) << bits}, storageType(enc.getTableType()));
  return components;
}

SmallVector<float> mlir::qf::constantTableValues(EncodingAttr enc) {
  SmallVector<float> values;
  switch (enc.getFormat()) {
  case ElementFormat::FP4E2M1:
    // nibble = sign << 3 | idx
    for (int sign = 0; sign < 2; ++sign)
      for (float v : qfuse::format::kE2M1Values)
        values.push_back(sign ? -v : v);
    break;
  case ElementFormat::NF4:
    values.assign(std::begin(qfuse::format::kNF4Table),
                  std::end(qfuse::format::kNF4Table));
    break;
  case ElementFormat::Codebook:
    // A named table is the "table" component instead.
    if (enc.getTable())
      for (double v : enc.getCodebookValues())
        values.push_back(static_cast<float>(v));
    break;
  default:
    break;
  }
  return values;
}

//===----------------------------------------------------------------------===//
// WeightDecoder
//===----------------------------------------------------------------------===//

int64_t WeightDecoder::storedPerRow() const {
  return type.getEncoding().isSparse24() ? type.getK() / 2 : type.getK();
}

/// The mma.m16n8k16 B-fragment order of qfuse/format/MmaLayout.h
/// (mmaCodePosition): 32 x 32 tiles, tile (tn, tk) at index tn * K/32 + tk,
/// lane 4 g + t, where
///   j = (n % 32) / 8, g = n % 8, s = (k % 32) / 16, r = k % 16,
///   t = (r % 8) / 2, v = r % 2 + 2 (r / 8).
/// 4-bit codes (512-byte tiles): nibble slot of element e = 4 (j % 2) + v of
/// word 2 s + j / 2 of the lane's four. 8-bit codes (1024-byte tiles): byte
/// v of word 4 s + j of the lane's eight. 2-bit codes (256-byte tiles): bits
/// 2 (4 j + v) of word s of the lane's two; 3-bit codes (384-byte tiles):
/// those two bits, and bit 2 at bit 16 s + 4 j + v of the lane's word of
/// the high plane (word 64 + lane of the tile).
Value WeightDecoder::mmaCode(Value n, Value k) {
  auto c = [&](int64_t v) { return e.idx(v); };
  unsigned bits = type.getEncoding().getCodeBits();
  Value nn = e.remu(n, c(32)), kk = e.remu(k, c(32));
  // Whole tiles: K and the buffer's rows padded to 32 (MmaLayout.h).
  int64_t kPadded = qfuse::format::mmaPaddedK(type.getK());
  Value tile = e.add(e.mul(e.divu(n, c(32)), c(kPadded / 32)),
                     e.divu(k, c(32)));
  Value j = e.divu(nn, c(8)), g = e.remu(nn, c(8));
  Value s = e.divu(kk, c(16)), r = e.remu(kk, c(16));
  Value t = e.divu(e.remu(r, c(8)), c(2));
  Value v = e.add(e.remu(r, c(2)), e.mul(e.divu(r, c(8)), c(2)));
  Value lane = e.add(e.mul(g, c(4)), t);
  int64_t rowBytes = kPadded * bits / 8;
  // Bit `bit` (LSB-first) of the whole buffer, seen as rows of rowBytes.
  auto bitAt = [&](Value bit, int64_t width) {
    Value byte = e.divu(bit, c(8));
    Value value = e.loadU8(buf.codes, {e.divu(byte, c(rowBytes)),
                                       e.remu(byte, c(rowBytes))});
    Value shift = e.toI32(e.remu(bit, c(8)));
    return e.band(e.shru(value, shift), e.c32((1 << width) - 1));
  };
  if (bits == 2 || bits == 3) {
    int64_t tileWords = 32 * int64_t(bits);
    Value elem = e.add(e.mul(j, c(4)), v);
    Value word = e.add(e.add(e.mul(tile, c(tileWords)), e.mul(lane, c(2))), s);
    Value code = bitAt(e.add(e.mul(word, c(32)), e.mul(elem, c(2))), 2);
    if (bits == 2)
      return code;
    Value highWord = e.add(e.mul(tile, c(tileWords)), e.add(c(64), lane));
    Value highBit = e.add(e.mul(highWord, c(32)),
                          e.add(e.mul(s, c(16)), elem));
    return e.bor(code, e.shl(bitAt(highBit, 1), e.c32(2)));
  }
  if (bits == 8) {
    Value word = e.add(e.add(e.mul(tile, c(256)), e.mul(lane, c(8))),
                       e.add(e.mul(s, c(4)), j));
    Value byte = e.add(e.mul(word, c(4)), v);
    return e.loadU8(buf.codes,
                    {e.divu(byte, c(rowBytes)), e.remu(byte, c(rowBytes))});
  }
  Value word = e.add(e.add(e.mul(tile, c(128)), e.mul(lane, c(4))),
                     e.add(e.mul(s, c(2)), e.divu(j, c(2))));
  Value elem = e.add(e.mul(e.remu(j, c(2)), c(4)), v);
  Value slot = e.add(e.mul(e.remu(elem, c(2)), c(4)), e.divu(elem, c(2)));
  // Nibble `word * 8 + slot` of the whole buffer, seen as [N, K / 2] bytes.
  Value nibble = e.add(e.mul(word, c(8)), slot);
  Value byte = e.divu(nibble, c(2));
  Value value = e.loadU8(buf.codes, {e.divu(byte, c(rowBytes)),
                                     e.remu(byte, c(rowBytes))});
  Value shift = e.toI32(e.mul(e.remu(nibble, c(2)), c(4)));
  return e.band(e.shru(value, shift), e.c32(15));
}

/// SparseMmaLayout.h (sparseMmaPosition): tile (n / 32, s / 64); code
/// j = 16 slab + 8 wt + 2 (2 c + hi) + i of the run of lane 4 g + t, in
/// piece j / P (P = 128 / bits codes) at tile piece 32 (j / P) + lane; the
/// position at bit 16 hi + 4 q + 2 i of word `slab` of meta lane
/// 4 g + 2 wt + h, where n % 32 = 16 wt + 8 hi + g, s % 64 = 16 slab + kk,
/// t = q = (kk % 8) / 2, c = h = kk / 8, i = kk % 2.
std::pair<Value, Value> WeightDecoder::sparseMmaCode(Value n, Value s) {
  auto c = [&](int64_t v) { return e.idx(v); };
  unsigned bits = type.getEncoding().getCodeBits();
  int64_t kp = qfuse::format::sparseMmaPaddedK(type.getK());
  Value tile =
      e.add(e.mul(e.divu(n, c(32)), c(kp / 128)), e.divu(s, c(64)));
  Value nn = e.remu(n, c(32)), ss = e.remu(s, c(64));
  Value wt = e.divu(nn, c(16)), hi = e.divu(e.remu(nn, c(16)), c(8));
  Value g = e.remu(nn, c(8));
  Value slab = e.divu(ss, c(16)), kk = e.remu(ss, c(16));
  Value i = e.remu(kk, c(2)), half = e.divu(kk, c(8));
  Value pairInHalf = e.divu(e.remu(kk, c(8)), c(2)); // t of codes, q of meta
  Value codeLane = e.add(e.mul(g, c(4)), pairInHalf);
  Value reg = e.add(e.mul(half, c(2)), hi);
  Value inRun = e.add(e.add(e.mul(slab, c(16)), e.mul(wt, c(8))),
                      e.add(e.mul(reg, c(2)), i));
  int64_t perPiece = 128 / int64_t(bits);
  Value piece = e.add(e.mul(e.divu(inRun, c(perPiece)), c(32)), codeLane);
  Value code = e.add(e.mul(tile, c(2048)),
                     e.add(e.mul(piece, c(perPiece)),
                           e.remu(inRun, c(perPiece))));
  Value metaLane = e.add(e.mul(g, c(4)), e.add(e.mul(wt, c(2)), half));
  Value word = e.add(e.add(e.mul(tile, c(128)), e.mul(metaLane, c(4))), slab);
  Value metaBit = e.add(e.mul(word, c(32)),
                        e.add(e.mul(hi, c(16)),
                              e.add(e.mul(pairInHalf, c(4)), e.mul(i, c(2)))));
  // Bytes of the buffers, seen as rows of rowBytes.
  auto byteAt = [&](Value mem, Value byte, int64_t rowBytes) {
    return e.loadU8(mem,
                    {e.divu(byte, c(rowBytes)), e.remu(byte, c(rowBytes))});
  };
  int64_t codeRow = kp / 2 * int64_t(bits) / 8;
  Value value;
  if (bits == 4) {
    Value byte = byteAt(buf.codes, e.divu(code, c(2)), codeRow);
    Value shift = e.toI32(e.mul(e.remu(code, c(2)), c(4)));
    value = e.band(e.shru(byte, shift), e.c32(15));
  } else if (bits == 8) {
    value = byteAt(buf.codes, code, codeRow);
  } else {
    Value at = e.mul(code, c(2));
    value = e.bor(byteAt(buf.codes, at, codeRow),
                  e.shl(byteAt(buf.codes, e.add(at, c(1)), codeRow),
                        e.c32(8)));
  }
  Value metaByte = byteAt(buf.meta, e.divu(metaBit, c(8)), kp / 8);
  Value pos = e.band(e.shru(metaByte, e.toI32(e.remu(metaBit, c(8)))),
                     e.c32(3));
  return {value, pos};
}

Value WeightDecoder::scaleOf(Value n, Value group) {
  return e.loadF32(buf.scales, {n, group}, type.getEncoding().getScaleType());
}

std::pair<Value, Value> WeightDecoder::decode(Value n, Value s) {
  EncodingAttr enc = type.getEncoding();
  unsigned bits = enc.getCodeBits();
  int64_t rowBytes = storedPerRow() * bits / 8;

  // Column of stored element s: its position in the stored (sorted) order,
  // then, under act_order, the checkpoint column it stands for.
  Value col = s;
  const bool sparseMma = isSparseMmaLayout(type.getLayout());
  std::pair<Value, Value> sparseCode;
  if (sparseMma)
    sparseCode = sparseMmaCode(n, s);
  if (enc.isSparse24()) {
    int64_t metaBytes = (type.getK() + 7) / 8;
    Value pos = e.toIndex(sparseMma ? sparseCode.second
                                    : e.getBits(buf.meta, n, s, 2, metaBytes));
    col = e.add(e.mul(e.divu(s, e.idx(2)), e.idx(4)), pos);
  }
  Value sortedCol = col;
  const bool sortedByGroup = enc.getActOrder() && !enc.isSparse24();
  if (sortedByGroup)
    col = e.toIndex(e.load(buf.perm, {s}));

  // Position of its code in the row's bit stream.
  Value pos = s;
  if (!type.getLayout().isRowMajor() &&
      !isMmaFragmentLayout(type.getLayout()) && !sparseMma) {
    Value elem = e.remu(s, e.idx(8));
    Value slot = e.add(e.mul(e.remu(elem, e.idx(2)), e.idx(4)),
                       e.divu(elem, e.idx(2)));
    pos = e.add(e.sub(s, elem), slot);
  }

  // The unscaled value of the code.
  Value code, value;
  if (sparseMma) {
    code = sparseCode.first;
  } else if (isMmaFragmentLayout(type.getLayout())) {
    code = mmaCode(n, s);
  } else if (bits == 16) {
    Value lo = e.loadU8(buf.codes, {n, e.mul(pos, e.idx(2))});
    Value hi = e.loadU8(buf.codes, {n, e.add(e.mul(pos, e.idx(2)), e.idx(1))});
    code = e.bor(lo, e.shl(hi, e.c32(8)));
  } else {
    code = e.getBits(buf.codes, n, pos, bits, rowBytes);
  }
  ImplicitLocOpBuilder &b = e.builder();
  switch (enc.getFormat()) {
  case ElementFormat::F16: {
    Value h = arith::TruncIOp::create(b, b.getI16Type(), code);
    Value half = arith::BitcastOp::create(b, b.getF16Type(), h);
    value = arith::ExtFOp::create(b, e.f32(), half);
    break;
  }
  case ElementFormat::BF16:
    value = e.bitcastF32(e.shl(code, e.c32(16)));
    break;
  case ElementFormat::Int4: // stored offset-binary, q = c - 8
    value = e.sitofp(e.sub(code, e.c32(8)));
    break;
  case ElementFormat::Int8: // two's complement byte
    value = e.sitofp(e.sub(e.bxor(code, e.c32(128)), e.c32(128)));
    break;
  case ElementFormat::UInt4:
  case ElementFormat::UInt8:
    value = e.uitofp(code);
    break;
  case ElementFormat::FP8E4M3:
    value = e.decodeE4M3(code);
    break;
  case ElementFormat::FP4E2M1:
  case ElementFormat::NF4:
  case ElementFormat::Codebook:
    if (buf.constTable)
      value = e.load(buf.constTable, {e.toIndex(code)});
    else
      value = e.loadF32(buf.table, {e.toIndex(code)}, enc.getTableType());
    break;
  }
  if (!enc.isQuantized())
    return {col, value};

  // Groups are contiguous in the stored order (act_order included), but
  // for act_order + 2:4, whose columns are in checkpoint order.
  Value group;
  if (enc.isPerChannel())
    group = e.idx(0);
  else if (enc.getActOrder() && !sortedByGroup)
    group = e.toIndex(e.load(buf.gIdx, {col}));
  else
    group = e.divu(sortedCol, e.idx(enc.getGroupSize()));
  Value scale = scaleOf(n, group);

  if (enc.getFormat() == ElementFormat::UInt4 ||
      enc.getFormat() == ElementFormat::UInt8) {
    Value zero = e.cf32(0.0);
    if (enc.getZeroPoint() == ZeroPointKind::Int) {
      int64_t zeroBytes = (enc.getNumGroups(type.getK()) * bits + 7) / 8;
      zero = e.uitofp(e.getBits(buf.zeros, n, group, bits, zeroBytes));
    } else if (enc.getZeroPoint() == ZeroPointKind::Float) {
      zero = e.loadF32(buf.zeros, {n, group}, enc.getScaleType());
    }
    return {col, e.fmul(scale, e.fsub(value, zero))};
  }
  if (enc.getGlobalScale()) {
    Value global = e.load(buf.globalScale, {e.idx(0)});
    return {col, e.fdiv(e.fmul(value, scale), global)};
  }
  return {col, e.fmul(scale, value)};
}
