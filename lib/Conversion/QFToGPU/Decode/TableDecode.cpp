//===- TableDecode.cpp - Codes as shared-memory table lookups -------------===//
//
// NF4, fp4e2m1 and codebooks have no arithmetic decode: a code indexes a
// table of f16 (bf16) values in shared memory. The table is replicated
// across the 32 banks (TableLayout::PerLane) so that each lane's lookups
// hit its own bank, conflict-free for random codes, and a code's byte
// offset in it is one shift and one mask of its word: code c at bits
// [7, 7 + b) is offset c * 128. One prmt pairs two looked-up values.
//
// Per width:
//   4 bits: a word holds 8 codes in the row-major or the tiled nibble order;
//   8 bits: replicating 256 entries per bank would take 32 KB per block, so
//     the matvec stores two per word (PerLanePairs, 16 KB, still
//     conflict-free: c & 1 folds into the prmt selector that pairs two
//     lookups) and the tensor-core kernel, whose decode is a smaller share
//     of its time, one copy (Single, 1 KB);
//   2, 3, 5, 6, 7 bits, row-major: the codes are one little-endian bit
//     stream (Packing.h) ending on a word boundary every b words, so a code
//     may straddle two words and is joined by one shift-or;
//   2 and 3 bits, tiled: the planes of the mma fragment layout (MmaLayout.h).
//
//===----------------------------------------------------------------------===//

#include "Decode/WeightDecoders.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::qf;
using namespace mlir::qf::decode;

static Value sharedAt(KernelEmitter &e, Value base, Value offset) {
  auto sharedPtr = LLVM::LLVMPointerType::get(e.builder().getContext(), 3);
  return LLVM::GEPOp::create(e.builder(), sharedPtr, e.i8(), base,
                             ValueRange{offset});
}

static Value loadWord(KernelEmitter &e, Value ptr) {
  return LLVM::LoadOp::create(e.builder(), e.i32(), ptr, 4).getResult();
}

/// `w` moved by `from - to` bits: the field at bit `from` now at bit `to`.
static Value moveBits(KernelEmitter &e, Value w, int64_t from, int64_t to) {
  int64_t shift = from - to;
  return shift >= 0
             ? e.shru(w, e.c32(shift))
             : arith::ShLIOp::create(e.builder(), w, e.c32(-shift)).getResult();
}

Value SharedTable::wordAt(KernelEmitter &e, Value offset) const {
  return loadWord(
      e, sharedAt(e, base, start ? e.add(offset, e.c32(*start)) : offset));
}

Value SharedTable::laneEntry(KernelEmitter &e, Value moved,
                             uint32_t mask) const {
  Value tableStart = start ? e.c32(*start) : Value();
  Value offset = e.add(e.band(moved, e.c32(mask)), laneBytes);
  return loadWord(
      e, sharedAt(e, base, tableStart ? e.add(offset, tableStart) : offset));
}

void SharedTable::store(KernelEmitter &e, Value offset, Value word) const {
  LLVM::StoreOp::create(
      e.builder(), word,
      sharedAt(e, base, start ? e.add(e.c32(*start), offset) : offset), 4);
}

void decode::fillTable(KernelEmitter &e, const SharedTable &table,
                       TableLayout layout, Value tid, int64_t threads,
                       int64_t words,
                       function_ref<Value(Value index)> valueOf) {
  ImplicitLocOpBuilder &b = e.builder();
  auto loop = scf::ForOp::create(b, tid, e.c32(words), e.c32(threads));
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value t = loop.getInductionVar();
    auto bitsOf = [&](Value index) -> Value {
      return arith::ExtUIOp::create(b, e.i32(),
                                    e.bitcast(e.i16(), valueOf(index)));
    };
    Value entry;
    switch (layout) {
    case TableLayout::PerLane:
      entry = bitsOf(e.shru(t, e.c32(5)));
      break;
    case TableLayout::PerLanePairs: {
      Value c = e.shru(t, e.c32(5));
      Value c2 = e.mul(c, e.c32(2));
      entry = arith::OrIOp::create(
          b, bitsOf(c2),
          arith::ShLIOp::create(b, bitsOf(e.add(c2, e.c32(1))), e.c32(16)));
      break;
    }
    case TableLayout::Single:
      entry = bitsOf(t);
      break;
    }
    table.store(e, e.mul(t, e.c32(4)), entry);
  }
  NVVM::Barrier0Op::create(b);
}

SmallVector<Value> decode::table4Word(KernelEmitter &e,
                                      const SharedTable &table, Value w,
                                      NibbleOrder order, Type valueType) {
  VectorType pair = VectorType::get({2}, valueType);
  // Nibble slot i to bits 7..10: c * 128.
  auto lookup = [&](int64_t slot) {
    return table.laneEntry(e, moveBits(e, w, 4 * slot, 7), 15 << 7);
  };
  // Pair i: slots (2i, 2i + 1) row-major, (i, i + 4) tiled.
  bool tiled = order == NibbleOrder::Tiled;
  SmallVector<Value> pairs;
  for (int64_t i = 0; i < 4; ++i)
    pairs.push_back(
        e.bitcast(pair, e.prmt(lookup(tiled ? i : 2 * i),
                               lookup(tiled ? i + 4 : 2 * i + 1), 0x5410)));
  return pairs;
}

SmallVector<Value> decode::table8Word(KernelEmitter &e,
                                      const SharedTable &table, Value w,
                                      Type valueType) {
  VectorType pair = VectorType::get({2}, valueType);
  // Byte v to bits 2..9: c * 4.
  auto lookup = [&](int64_t v) {
    Value moved = moveBits(e, w, 8 * v, 2);
    return table.wordAt(e, e.band(moved, e.c32(0xFF << 2)));
  };
  SmallVector<Value> pairs;
  pairs.push_back(e.bitcast(pair, e.prmt(lookup(0), lookup(1), 0x5410)));
  pairs.push_back(e.bitcast(pair, e.prmt(lookup(2), lookup(3), 0x5410)));
  return pairs;
}

/// Code i of the unit sits at bits [i b, (i + 1) b) of the stream; each
/// code is moved straight into the byte-offset field of its table entry.
SmallVector<Value> decode::tableStream(KernelEmitter &e,
                                       const SharedTable &table,
                                       ArrayRef<Value> unit, int64_t bits,
                                       int64_t first, int64_t count) {
  ImplicitLocOpBuilder &b = e.builder();
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
    return table.wordAt(e, e.add(off, table.laneBytes));
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
    pairs.push_back(e.bitcast(e.v2f16(), e.prmt(v0, v1, sel)));
  }
  return pairs;
}

/// Element 4 j + v of slab s (n tile j) has its bits 0-1 in word s's field
/// 4 j + v and, for 3-bit codes, bit 2 at bit 16 s + 4 j + v of the
/// high-plane word (MmaLayout.h).
SmallVector<Value> decode::tableMmaPlanes(KernelEmitter &e,
                                          const SharedTable &table,
                                          ArrayRef<Value> words, int64_t bits,
                                          int64_t s, Type valueType) {
  ImplicitLocOpBuilder &b = e.builder();
  auto moveTo = [&](Value w, int64_t from, int64_t to, int64_t mask) {
    Value moved = moveBits(e, w, from, to);
    return e.band(moved, e.c32(mask));
  };
  auto offsetOf = [&](int64_t element) {
    Value offset = moveTo(words[s], 2 * element, 7, 3 << 7); // c * 128
    if (bits == 3)
      offset = arith::OrIOp::create(
          b, offset, moveTo(words[2], 16 * s + element, 9, 1 << 9));
    return e.add(offset, table.laneBytes);
  };
  // b0 = elements (4 j, 4 j + 1), b1 = (4 j + 2, 4 j + 3).
  SmallVector<Value> regs;
  for (int64_t element = 0; element < 16; element += 2) {
    Value lo = table.wordAt(e, offsetOf(element));
    Value hi = table.wordAt(e, offsetOf(element + 1));
    regs.push_back(
        e.bitcast(VectorType::get({2}, valueType), e.prmt(lo, hi, 0x5410)));
  }
  return regs;
}
