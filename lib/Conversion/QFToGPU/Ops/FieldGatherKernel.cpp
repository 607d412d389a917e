//===- FieldGatherKernel.cpp - packing and layouts as a GPU gather --------===//
//
// One thread per 32-bit destination word w; it assembles the word's
// fields, each by the closed form of format::FieldGather
// (qfuse/format/FieldGather.h; runFieldGather is this loop on the host):
//
//   for slot in 0 .. 32/f - 1                      (unrolled)
//     d = w * 32/f + slot;  t = d / period;  e = table[d % period]
//     row = (t / tilesK) * tileN + e >> 16;  col = (t % tilesK) * tileK + e & 0xFFFF
//     valid = d < fields && e >= 0 && row < n && col < k
//     c = hasPerm ? perm[col] : col
//     code = (src[row * srcRowBytes + c * srcBits / 8] >> (c * srcBits % 8))
//            & (2^srcBits - 1)        (a field that leaves its byte: two
//                                      bytes, little-endian)
//     bad |= valid && (signedSrc ? sext8(code) : code) outside [min, max]
//     pad = padParity && d < fields && e >= 0 ? col & 1 : 0   (2:4 metadata)
//     word |= (valid ? (code + addend) & (2^f - 1) : pad) << slot * f
//   dst[w] = word;  if (bad) status[0] = 1
//
// Widths that do not divide 32 (3, 5, 6, 7 bits) pack fields that
// straddle words: word w holds bits [32 w, 32 w + 32) of the stream, so
// it takes fields 32 w / f .. + 32/f + 1, each shifted to its bit
// d * f - 32 w (negative: the field began in the word before) and cut at
// the word's edges.
//
// Invalid fields read index 0 of src, table and perm instead of branching,
// so the loop is straight-line. The kernel writes every word of the
// destination (padding included), so the output needs no zeroing.
//
//===----------------------------------------------------------------------===//

#include "Ops/FieldGatherKernel.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::qf;

namespace {

constexpr int64_t kThreads = 256;

enum Imm {
  kWords, kFields, kPeriod, kTilesK, kTileN, kTileK, kN, kK, kSrcRowBytes,
  kSrcBits, kHasPerm, kSignedSrc, kMinCode, kMaxCode, kAddend, kPadParity,
  kImmCount
};
constexpr const char *kImmNames[kImmCount] = {
    "words", "fields", "period", "tilesK", "tileN", "tileK", "n", "k",
    "srcRowBytes", "srcBits", "hasPerm", "signedSrc", "minCode", "maxCode",
    "addend", "padParity"};

/// Word w of fields whose width f divides 32: slot s holds field
/// w * 32/f + s at bit s * f. `fieldBits` gives a field's stored bits.
Value wholeFieldsWord(KernelEmitter &e, Value w, unsigned dstBits,
                      function_ref<Value(Value)> fieldBits) {
  ImplicitLocOpBuilder &b = e.builder();
  const int64_t perWord = 32 / dstBits;
  Value word = e.c32(0);
  for (int64_t slot = 0; slot < perWord; ++slot) {
    Value stored = fieldBits(e.add(e.mul(w, e.c32(perWord)), e.c32(slot)));
    word = arith::OrIOp::create(
        b, word, arith::ShLIOp::create(b, stored, e.c32(slot * dstBits)));
  }
  return word;
}

/// Word w of fields of odd width f (3, 5, 6, 7), which straddle words: it
/// covers stream bits [32 w, 32 w + 32), so fields first .. first + 32/f +
/// 1 with first = 32 w / f; field first + s starts at bit s * f - r of the
/// word (r = 32 w mod f: the first may begin in the word before, the last
/// run past this one), and is shifted into place and cut at the edges.
Value straddlingFieldsWord(KernelEmitter &e, Value w, unsigned dstBits,
                           function_ref<Value(Value)> fieldBits) {
  ImplicitLocOpBuilder &b = e.builder();
  auto sel = [&](Value c, Value x, Value y) {
    return arith::SelectOp::create(b, c, x, y).getResult();
  };
  Value zero = e.c32(0);
  Value wBits = e.mul(e.zext64(w), e.c64(32));
  Value first =
      arith::TruncIOp::create(b, e.i32(), e.divu(wBits, e.c64(dstBits)));
  Value r = arith::TruncIOp::create(b, e.i32(), e.remu(wBits, e.c64(dstBits)));
  Value word = zero;
  const int64_t slots = 32 / dstBits + 2;
  for (int64_t slot = 0; slot < slots; ++slot) {
    Value stored = fieldBits(e.add(first, e.c32(slot)));
    Value at = e.sub(e.c32(slot * dstBits), r); // in (-f, 32 + f)
    Value inWord =
        arith::CmpIOp::create(b, arith::CmpIPredicate::slt, at, e.c32(32));
    Value left = arith::CmpIOp::create(b, arith::CmpIPredicate::sge, at, zero);
    Value amount = sel(inWord, sel(left, at, e.sub(zero, at)), zero);
    Value piece = sel(left, arith::ShLIOp::create(b, stored, amount).getResult(),
                      e.shru(stored, amount));
    word = arith::OrIOp::create(b, word, sel(inWord, piece, zero));
  }
  return word;
}

void buildBody(ImplicitLocOpBuilder &b, ArrayRef<Value> args,
               unsigned dstBits) {
  KernelEmitter e(b);
  Value src = args[0], table = args[1], perm = args[2], dst = args[3],
        status = args[4];
  auto imm = [&](Imm i) { return args[5 + i]; };
  auto sel = [&](Value c, Value x, Value y) {
    return arith::SelectOp::create(b, c, x, y).getResult();
  };
  auto cmp = [&](arith::CmpIPredicate p, Value x, Value y) {
    return arith::CmpIOp::create(b, p, x, y).getResult();
  };
  auto andI = [&](Value x, Value y) {
    return arith::AndIOp::create(b, x, y).getResult();
  };
  auto i32At = [&](Value base, Value index) {
    return e.loadRO(e.i32(), e.gepBytes(base, e.mul(e.zext64(index), e.c64(4))),
                    4);
  };
  Value w = e.add(e.mul(e.ctaidX(), e.c32(kThreads)), e.tidX());
  auto inRange = scf::IfOp::create(
      b, cmp(arith::CmpIPredicate::ult, w, imm(kWords)), false);
  b.setInsertionPointToStart(inRange.thenBlock());
  Value zero = e.c32(0), one = e.c32(1);
  Value srcMask = e.sub(arith::ShLIOp::create(b, one, imm(kSrcBits)), one);
  Value hasPerm = cmp(arith::CmpIPredicate::ne, imm(kHasPerm), zero);
  Value signedSrc = cmp(arith::CmpIPredicate::ne, imm(kSignedSrc), zero);
  Value padParity = cmp(arith::CmpIPredicate::ne, imm(kPadParity), zero);
  Value bad = arith::ConstantIntOp::create(b, 0, 1);
  // Field d's stored bits (dstBits wide, 0 past the fields), and `bad`
  // updated with its range check.
  auto fieldBits = [&](Value d) {
    Value inFields = cmp(arith::CmpIPredicate::ult, d, imm(kFields));
    d = sel(inFields, d, zero);
    Value t = e.divu(d, imm(kPeriod));
    Value entry = i32At(table, e.remu(d, imm(kPeriod)));
    Value present = cmp(arith::CmpIPredicate::sge, entry, zero);
    entry = sel(present, entry, zero);
    Value row = e.add(e.mul(e.divu(t, imm(kTilesK)), imm(kTileN)),
                      e.shru(entry, e.c32(16)));
    Value col = e.add(e.mul(e.remu(t, imm(kTilesK)), imm(kTileK)),
                      e.band(entry, e.c32(0xFFFF)));
    Value valid = andI(andI(inFields, present),
                       andI(cmp(arith::CmpIPredicate::ult, row, imm(kN)),
                            cmp(arith::CmpIPredicate::ult, col, imm(kK))));
    // A padded field of a present tile entry: col & 1 under padParity.
    Value pad = sel(andI(padParity, andI(inFields, present)),
                    e.band(col, one), zero);
    row = sel(valid, row, zero);
    col = sel(valid, col, zero);
    Value permuted = i32At(perm, sel(hasPerm, col, zero));
    Value c = sel(hasPerm, permuted, col);
    Value bit = e.mul(e.zext64(c), e.zext64(imm(kSrcBits)));
    Value byteIndex =
        e.add(e.mul(e.zext64(row), e.zext64(imm(kSrcRowBytes))),
              arith::ShRUIOp::create(b, bit, e.c64(3)));
    Value byte = arith::ExtUIOp::create(
        b, e.i32(), e.loadRO(e.i8(), e.gepBytes(src, byteIndex), 1));
    // A field that leaves its byte (16-bit kept values, odd widths) reads
    // the next one too; others read their byte again rather than past the
    // row.
    Value shift = arith::TruncIOp::create(b, e.i32(), e.band(bit, e.c64(7)));
    Value wide = cmp(arith::CmpIPredicate::ugt, e.add(shift, imm(kSrcBits)),
                     e.c32(8));
    Value highIndex =
        e.add(byteIndex, arith::ExtUIOp::create(b, e.i64(), wide));
    Value high = arith::ExtUIOp::create(
        b, e.i32(), e.loadRO(e.i8(), e.gepBytes(src, highIndex), 1));
    byte = arith::OrIOp::create(
        b, byte,
        sel(wide, arith::ShLIOp::create(b, high, e.c32(8)).getResult(), zero));
    Value code = e.band(e.shru(byte, shift), srcMask);
    Value asSigned = arith::ExtSIOp::create(
        b, e.i32(), arith::TruncIOp::create(b, e.i8(), code));
    Value value = sel(signedSrc, asSigned, code);
    Value outside =
        arith::OrIOp::create(b, cmp(arith::CmpIPredicate::slt, value,
                                    imm(kMinCode)),
                             cmp(arith::CmpIPredicate::sgt, value,
                                 imm(kMaxCode)));
    bad = arith::OrIOp::create(b, bad, andI(valid, outside));
    Value stored = e.band(e.add(code, imm(kAddend)),
                          e.c32((int64_t(1) << dstBits) - 1));
    return sel(valid, stored, pad);
  };
  Value word = 32 % dstBits == 0 ? wholeFieldsWord(e, w, dstBits, fieldBits)
                                 : straddlingFieldsWord(e, w, dstBits, fieldBits);
  e.store(word, e.gepBytes(dst, e.mul(e.zext64(w), e.c64(4))), 4);
  auto failed = scf::IfOp::create(b, bad, false);
  b.setInsertionPointToStart(failed.thenBlock());
  e.store(one, status, 4);
  b.setInsertionPointAfter(inRange);
}

} // namespace

std::string qf::fieldGatherKernelName(unsigned dstBits) {
  return "qf_gather_fields_b" + std::to_string(dstBits);
}

OpLaunch qf::emitFieldGatherLaunch(gpu::GPUModuleOp module, unsigned dstBits,
                                   LaunchArgAttr src, LaunchArgAttr table,
                                   LaunchArgAttr perm, LaunchArgAttr dst,
                                   LaunchArgAttr status, Location loc) {
  MLIRContext *ctx = module.getContext();
  std::string name = fieldGatherKernelName(dstBits);
  SmallVector<OpParam> params = {{"src", ParamKind::In, src},
                                 {"table", ParamKind::In, table},
                                 {"perm", ParamKind::In, perm},
                                 {"dst", ParamKind::Out, dst},
                                 {"status", ParamKind::Out, status}};
  for (const char *imm : kImmNames)
    params.push_back({imm, ParamKind::I32, i32Arg(ctx, 0)});
  if (!module.lookupSymbol(name)) {
    ImplicitLocOpBuilder b(loc, ctx);
    SmallVector<Value> args = createOpKernel(b, module, name, params, kThreads);
    buildBody(b, args, dstBits);
    LLVM::ReturnOp::create(b, ValueRange{});
  }
  return makeOpLaunch(name, params, /*gridX=*/1, /*gridY=*/1, kThreads);
}
