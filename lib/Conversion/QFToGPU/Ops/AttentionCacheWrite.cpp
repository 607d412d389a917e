//===- AttentionCacheWrite.cpp - qf.attention's KV-cache writes -----------===//
//
// New key and value rows into the KV cache: the plain form's cache-write
// launch, the split rotary form's (rotated key rows), and the one-launch
// rotary form's in-kernel write of the rotated key row, with the chunk
// rotation they share with the query and the new keys, and the query chunk
// both kernels of the cache read.
//
//===----------------------------------------------------------------------===//

#include "Ops/AttentionCommon.h"
#include "Ops/RopeCommon.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::qf;
using namespace mlir::qf::attention;

namespace {

/// What both cache-write launches bind: the new key and value rows, both
/// caches (written) and the positions.
SmallVector<OpParam> cacheWriteParams(MLIRContext *ctx) {
  return {{"key", ParamKind::In, operandArg(ctx, 1)},
          {"value", ParamKind::In, operandArg(ctx, 2)},
          {"key_cache", ParamKind::Out, operandArg(ctx, 3)},
          {"value_cache", ParamKind::Out, operandArg(ctx, 4)},
          {"positions", ParamKind::In, operandArg(ctx, 5)}};
}

} // namespace

OpLaunch attention::cacheWrite(AttentionOp op, OpKernelContext &context,
                               const AttentionShape &s, int64_t batch) {
  int64_t width = halfVectorWidth(s.kvWidth);
  int64_t vectors = s.kvWidth / width;
  int64_t threads =
      std::min<int64_t>(256, std::max<int64_t>(32, (vectors + 31) / 32 * 32));
  std::string name = "qf_kv_cache_write_w" + std::to_string(s.kvWidth) + "_s" +
                     std::to_string(s.seq);
  MLIRContext *ctx = op.getContext();
  SmallVector<OpParam> params = cacheWriteParams(ctx);
  if (!context.module.lookupSymbol(name)) {
    ImplicitLocOpBuilder b(op.getLoc(), ctx);
    KernelEmitter e(b);
    SmallVector<Value> args =
        createOpKernel(b, context.module, name, params, threads);
    Value m = e.ctaidX();
    Value pos =
        e.loadRO(e.i32(), e.gepBytes(args[4], e.mul(e.zext64(m), e.c64(4))), 4);
    // Unsigned compare: negative positions are out of range too.
    auto inRange = scf::IfOp::create(b, e.ult(pos, e.c32(s.seq)),
                                     /*withElseRegion=*/false);
    b.setInsertionPointToStart(inRange.thenBlock());
    Value src = e.mul(m, e.c32(s.kvWidth));
    Value dst = e.mul(pos, e.c32(s.kvWidth));
    auto loop = scf::ForOp::create(b, e.tidX(), e.c32(vectors), e.c32(threads));
    b.setInsertionPointToStart(loop.getBody());
    Value col = e.mul(loop.getInductionVar(), e.c32(width));
    for (int64_t t = 0; t < 2; ++t) {
      Value raw = loadRaw(e, args[t], e.add(src, col), width);
      storeRaw(e, args[2 + t], e.add(dst, col), raw, width);
    }
    b.setInsertionPointAfter(inRange);
    LLVM::ReturnOp::create(b, ValueRange{});
  }
  return makeOpLaunch(name, params, batch, 1, threads);
}

OpLaunch attention::rotaryCacheWrite(AttentionOp op, OpKernelContext &context,
                                     const AttentionShape &s,
                                     const RopeParams &rope, int64_t batch) {
  int64_t tpk = s.d / kChunk;
  int64_t threads = std::max<int64_t>(32, 2 * tpk);
  std::string name = "qf_rotary_kv_cache_write_kv" +
                     std::to_string(s.kvHeads) + "_d" + std::to_string(s.d) +
                     "_s" + std::to_string(s.seq) + "_" + ropeKey(rope);
  MLIRContext *ctx = op.getContext();
  SmallVector<OpParam> params = cacheWriteParams(ctx);
  if (!context.module.lookupSymbol(name)) {
    ImplicitLocOpBuilder b(op.getLoc(), ctx);
    LLVM::GlobalOp table = ropeTable(b, context.module, rope);
    SmallVector<Value> args =
        createOpKernel(b, context.module, name, params, threads);
    KernelEmitter e(b);
    AttentionArgs a;
    a.key = args[0];
    a.value = args[1];
    a.keyCache = args[2];
    a.valueCache = args[3];
    a.positions = args[4];
    AttentionThread t;
    Value kv = e.ctaidX();
    t.h = e.mul(kv, e.c32(s.heads / s.kvHeads));
    t.m = NVVM::BlockIdYOp::create(b, e.i32());
    t.tid = e.tidX();
    t.kvHead = e.mul(kv, e.c32(s.d));
    Value pos = e.loadRO(
        e.i32(), e.gepBytes(a.positions, e.mul(e.zext64(t.m), e.c64(4))), 4);
    writeRotatedRows(e, table, a, s, t, pos, e.ult(pos, e.c32(s.seq)));
    LLVM::ReturnOp::create(b, ValueRange{});
  }
  return makeOpLaunch(name, params, s.kvHeads, batch, threads);
}

SmallVector<Value> attention::rotateChunk(KernelEmitter &e,
                                          LLVM::GlobalOp table, int64_t d,
                                          Value x, Value head, Value col,
                                          ArrayRef<Value> own,
                                          Value position) {
  ImplicitLocOpBuilder &b = e.builder();
  int64_t half = d / 2;
  SmallVector<Value> out;
  if (half < kChunk) {
    SmallVector<Value> freq = loadInvFreq(e, table, e.c32(0), half);
    SmallVector<std::pair<Value, Value>> sinCos;
    for (int64_t k = 0; k < half; ++k)
      sinCos.push_back(ropeSinCos(e, position, freq[k]));
    for (int64_t k = 0; k < half; ++k)
      out.push_back(rotateFirst(e, own[k], own[k + half], sinCos[k].first,
                                sinCos[k].second));
    for (int64_t k = 0; k < half; ++k)
      out.push_back(rotateSecond(e, own[k], own[k + half], sinCos[k].first,
                                 sinCos[k].second));
    return out;
  }
  Value isFirst = e.ult(col, e.c32(half));
  Value freqIndex =
      arith::SelectOp::create(b, isFirst, col, e.sub(col, e.c32(half)));
  Value partnerCol = arith::SelectOp::create(b, isFirst, e.add(col, e.c32(half)),
                                             e.sub(col, e.c32(half)));
  SmallVector<Value> partner =
      loadHalves(e, x, e.add(head, partnerCol), kChunk);
  SmallVector<Value> freq = loadInvFreq(e, table, freqIndex, kChunk);
  SmallVector<std::pair<Value, Value>> sinCos;
  for (int64_t k = 0; k < kChunk; ++k)
    sinCos.push_back(ropeSinCos(e, position, freq[k]));
  // The two halves in separate branches, so that each has the separate
  // kernel's expression (and the backend's contraction of it into FMAs).
  SmallVector<Type> types(kChunk, e.f32());
  auto branch = scf::IfOp::create(b, types, isFirst, /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(branch.thenBlock());
    SmallVector<Value> first;
    for (int64_t k = 0; k < kChunk; ++k)
      first.push_back(rotateFirst(e, own[k], partner[k], sinCos[k].first,
                                  sinCos[k].second));
    scf::YieldOp::create(b, first);
    b.setInsertionPointToStart(branch.elseBlock());
    SmallVector<Value> second;
    for (int64_t k = 0; k < kChunk; ++k)
      second.push_back(rotateSecond(e, partner[k], own[k], sinCos[k].first,
                                    sinCos[k].second));
    scf::YieldOp::create(b, second);
  }
  return SmallVector<Value>(branch.getResults());
}

SmallVector<Value> attention::roundToHalf(KernelEmitter &e,
                                          ArrayRef<Value> values) {
  SmallVector<Value> out;
  for (Value v : values)
    out.push_back(e.extf32(e.truncf16(v)));
  return out;
}

SmallVector<Value> attention::queryChunk(KernelEmitter &e, LLVM::GlobalOp rope,
                                         int64_t d, Value query, Value qHead,
                                         Value col, Value position) {
  SmallVector<Value> q = loadHalves(e, query, e.add(qHead, col), kChunk);
  if (!rope)
    return q;
  Value angle =
      arith::SIToFPOp::create(e.builder(), e.builder().getF64Type(), position);
  return roundToHalf(e, rotateChunk(e, rope, d, query, qHead, col, q, angle));
}

void attention::writeRotatedRows(KernelEmitter &e, LLVM::GlobalOp rope,
                                 const AttentionArgs &args,
                                 const AttentionShape &s,
                                 const AttentionThread &t, Value pos,
                                 Value posInRange) {
  ImplicitLocOpBuilder &b = e.builder();
  int64_t tpk = s.d / kChunk;
  int64_t group = s.heads / s.kvHeads;
  Value h = t.h, m = t.m, tid = t.tid, kvHead = t.kvHead;
  Type f64 = b.getF64Type();
  // No block of the launch reads these rows from the cache (they come from
  // the operands), so nothing waits for these stores.
  OpBuilder::InsertionGuard guard(b);
  Value isWriter = arith::AndIOp::create(
      b,
      arith::CmpIOp::create(b, arith::CmpIPredicate::eq,
                            e.remu(h, e.c32(group)), e.c32(0)),
      posInRange);
  auto writer = scf::IfOp::create(b, isWriter, /*withElseRegion=*/false);
  b.setInsertionPointToStart(writer.thenBlock());
  Value src = e.mul(m, e.c32(s.kvWidth));
  Value dst = e.add(e.mul(pos, e.c32(s.kvWidth)), kvHead);
  // Threads [0, TPK) rotate key chunk tid, [TPK, 2 TPK) copy value chunk
  // tid - TPK.
  auto keyPart = scf::IfOp::create(b, e.ult(tid, e.c32(tpk)),
                                   /*withElseRegion=*/true);
  b.setInsertionPointToStart(keyPart.thenBlock());
  Value keyCol = e.mul(tid, e.c32(kChunk));
  Value keyHead = e.add(src, kvHead);
  SmallVector<Value> own =
      loadHalves(e, args.key, e.add(keyHead, keyCol), kChunk);
  SmallVector<Value> rotated =
      rotateChunk(e, rope, s.d, args.key, keyHead, keyCol, own,
                  arith::SIToFPOp::create(b, f64, pos));
  storeHalves(e, args.keyCache, e.add(dst, keyCol), rotated);
  b.setInsertionPointToStart(keyPart.elseBlock());
  auto valuePart = scf::IfOp::create(b, e.ult(tid, e.c32(2 * tpk)),
                                     /*withElseRegion=*/false);
  b.setInsertionPointToStart(valuePart.thenBlock());
  Value valueCol = e.mul(e.sub(tid, e.c32(tpk)), e.c32(kChunk));
  Value raw =
      loadRaw(e, args.value, e.add(e.add(src, kvHead), valueCol), kChunk);
  storeRaw(e, args.valueCache, e.add(dst, valueCol), raw, kChunk);
}
