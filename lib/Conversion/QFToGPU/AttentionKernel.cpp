//===- AttentionKernel.cpp - qf.attention kernels -------------------------===//
//
// qf.attention(query [M, H*D], key [M, KV*D], value [M, KV*D],
//              key_cache [S, KV*D], value_cache [S, KV*D], positions [M])
//   -> (out [M, H*D], key_cache_out, value_cache_out)
// The cache results alias the cache operands (docs/decode-model.md), so the
// op is two launches, in order:
//
// 1. qf_kv_cache_write_*: grid (M), key/value row m -> cache row
//    positions[m], copied raw in 16-byte vectors. A position outside
//    [0, S) writes nothing (the attention of that row returns NaN, below).
//
// 2. qf_attention_*: causal GQA attention, one block per (head h, row m)
//    (grid (H, M)), reading cache rows [0, n), n = positions[m] + 1; head h
//    reads kv head h / (H / KV); scale 1 / sqrt(D); online softmax in f32.
//
//    Threads per key: TPK = D / 8 lanes share one key row, each holding one
//    16-byte chunk of 8 halves (lane % TPK = chunk c), so a warp works on
//    KPW = 32 / TPK keys at once and the block's W warps form
//    W * KPW independent "streams" (stream = warp * KPW + lane / TPK).
//    A loop trip covers W * KPW * U positions: stream s takes positions
//    base + u * W * KPW + s for u < U, so each warp reads KPW contiguous
//    rows per step (D * 2 contiguous bytes each), and all U key and value
//    chunks are loaded before any is used (U * 32 bytes in flight per lane).
//      score  = sum over the TPK lanes (xor butterfly) of q_c . k_c, with q
//               pre-scaled by log2(e) / sqrt(D) so that exp is one ex2
//      m'     = max(m, max_u score_u);  mu = m' unless -inf, then 0
//      l      = l 2^(m - mu) + sum_u 2^(score_u - mu)
//      acc_c  = acc_c 2^(m - mu) + sum_u 2^(score_u - mu) v_u,c
//    Positions past n are clamped to n - 1 for the load and scored -inf
//    (weight exactly 0); "mu = 0 when m' = -inf" keeps an empty stream at
//    l = 0, acc = 0 without a NaN from -inf - -inf.
//    Combine: two states merge as (max m, w1 l1 + w2 l2, w1 acc1 + w2 acc2),
//    w_i = 2^(m_i - mu). The KPW streams of a warp merge by xor shuffles
//    (offsets TPK .. 16 pair lanes holding the same chunk); each warp then
//    writes (m, l) and its D accumulators to shared memory, and after one
//    barrier thread d < D computes
//      out[d] = sum_w 2^(m_w - mx) acc_w[d] / sum_w 2^(m_w - mx) l_w,
//    mx = max_w m_w. A row whose position is outside [0, S) has n = 0:
//    every stream is empty and out = 0 / 0 = NaN, visibly.
//    W = 16 warps and U = 8: a block has 512 x 8 x 32 B = 128 KB of loads
//    in flight; one trip covers 256 positions at D = 128, 512 at D = 64.
//
//    Why not a split over the sequence (flash-decoding): it needs a
//    workspace for the partial results, which launch records cannot name
//    yet. At decode (M = 1) this kernel has H blocks (one SM each)
//    streaming the context; the G heads of a kv group re-read its rows from
//    L2.
//
//===----------------------------------------------------------------------===//

#include "OpKernelCommon.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::qf;

namespace {

/// Warps per attention block and positions per stream per loop trip.
constexpr int64_t kWarps = 16;
constexpr int64_t kUnroll = 8;
/// Halves per lane chunk (one 16-byte load).
constexpr int64_t kChunk = 8;

struct AttentionShape {
  int64_t heads, kvHeads, d, seq, kvWidth;
};

/// Launch 1: key/value rows -> cache rows positions[m].
OpLaunch cacheWrite(AttentionOp op, OpKernelContext &context,
                    const AttentionShape &s, int64_t batch) {
  int64_t width = halfVectorWidth(s.kvWidth);
  int64_t vectors = s.kvWidth / width;
  int64_t threads =
      std::min<int64_t>(256, std::max<int64_t>(32, (vectors + 31) / 32 * 32));
  std::string name = "qf_kv_cache_write_w" + std::to_string(s.kvWidth) + "_s" +
                     std::to_string(s.seq);
  MLIRContext *ctx = op.getContext();
  SmallVector<OpParam> params = {
      {"key", ParamKind::In, operandArg(ctx, 1)},
      {"value", ParamKind::In, operandArg(ctx, 2)},
      {"key_cache", ParamKind::Out, operandArg(ctx, 3)},
      {"value_cache", ParamKind::Out, operandArg(ctx, 4)},
      {"positions", ParamKind::In, operandArg(ctx, 5)}};
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

/// The 8 halves of a raw 16-byte chunk, as f32.
SmallVector<Value> unpack(KernelEmitter &e, Value raw) {
  SmallVector<Value> out;
  for (int64_t w = 0; w < kChunk / 2; ++w) {
    Value pair = e.bitcast(e.v2f16(), e.extract(raw, w));
    out.push_back(e.extf32(e.extract(pair, 0)));
    out.push_back(e.extf32(e.extract(pair, 1)));
  }
  return out;
}

/// Launch 2's body (see the file comment).
void buildAttention(ImplicitLocOpBuilder &b, gpu::GPUModuleOp module,
                    StringRef name, ArrayRef<Value> args,
                    const AttentionShape &s) {
  KernelEmitter e(b);
  Value query = args[0], keyCache = args[1], valueCache = args[2],
        positions = args[3], out = args[4];
  int64_t tpk = s.d / kChunk, kpw = 32 / tpk, streams = kWarps * kpw;
  int64_t group = s.heads / s.kvHeads;
  Value h = e.ctaidX();
  Value m = NVVM::BlockIdYOp::create(b, e.i32());
  Value tid = e.tidX();
  Value lane = e.band(tid, e.c32(31));
  Value warp = e.shru(tid, e.c32(5));
  Value chunk = e.remu(lane, e.c32(tpk));
  Value stream = e.add(e.mul(warp, e.c32(kpw)), e.divu(lane, e.c32(tpk)));
  Value kvCol = e.add(e.mul(e.divu(h, e.c32(group)), e.c32(s.d)),
                      e.mul(chunk, e.c32(kChunk)));

  Value pos =
      e.loadRO(e.i32(), e.gepBytes(positions, e.mul(e.zext64(m), e.c64(4))), 4);
  Value n = arith::SelectOp::create(b, e.ult(pos, e.c32(s.seq)),
                                    e.add(pos, e.c32(1)), e.c32(0));

  // q chunk, pre-scaled into the base-2 exponent domain.
  double qScale = 1.4426950408889634 / std::sqrt(static_cast<double>(s.d));
  Value qIndex = e.add(e.mul(e.add(e.mul(m, e.c32(s.heads)), h), e.c32(s.d)),
                       e.mul(chunk, e.c32(kChunk)));
  SmallVector<Value> q = loadHalves(e, query, qIndex, kChunk);
  for (Value &v : q)
    v = e.fmul(v, e.cf32(qScale));

  Value negInf = e.cf32(-std::numeric_limits<double>::infinity());
  SmallVector<Value> init = {negInf, e.cf32(0.0)};
  init.append(kChunk, e.cf32(0.0));
  int64_t perTrip = streams * kUnroll;
  auto loop = scf::ForOp::create(b, e.c32(0), n, e.c32(perTrip), init);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value base = loop.getInductionVar();
    ValueRange state = loop.getRegionIterArgs();
    Value last = e.sub(n, e.c32(1));
    SmallVector<Value> valid, keys, values;
    for (int64_t u = 0; u < kUnroll; ++u) {
      Value p = e.add(base, e.add(e.c32(u * streams), stream));
      valid.push_back(e.ult(p, n));
      Value row = e.minu(p, last);
      Value at = e.add(e.mul(row, e.c32(s.kvWidth)), kvCol);
      keys.push_back(loadRaw(e, keyCache, at, kChunk));
      values.push_back(loadRaw(e, valueCache, at, kChunk));
    }
    SmallVector<Value> scores;
    Value newMax = state[0];
    for (int64_t u = 0; u < kUnroll; ++u) {
      SmallVector<Value> k = unpack(e, keys[u]);
      Value dot = e.fmul(q[0], k[0]);
      for (int64_t i = 1; i < kChunk; ++i)
        dot = e.fma(q[i], k[i], dot);
      // The TPK lanes of a key are an aligned group: xor offsets < TPK stay
      // inside it, and every lane of the warp runs the shuffles.
      for (int64_t off = tpk / 2; off >= 1; off /= 2)
        dot = e.fadd(dot, e.shflXor(dot, off));
      Value score = arith::SelectOp::create(b, valid[u], dot, negInf);
      scores.push_back(score);
      newMax = arith::MaxNumFOp::create(b, newMax, score);
    }
    Value isEmpty =
        arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, newMax, negInf);
    Value mu = arith::SelectOp::create(b, isEmpty, e.cf32(0.0), newMax);
    Value correction = exp2Approx(e, e.fsub(state[0], mu));
    Value l = e.fmul(state[1], correction);
    SmallVector<Value> acc;
    for (int64_t i = 0; i < kChunk; ++i)
      acc.push_back(e.fmul(state[2 + i], correction));
    for (int64_t u = 0; u < kUnroll; ++u) {
      Value weight = exp2Approx(e, e.fsub(scores[u], mu));
      l = e.fadd(l, weight);
      SmallVector<Value> v = unpack(e, values[u]);
      for (int64_t i = 0; i < kChunk; ++i)
        acc[i] = e.fma(weight, v[i], acc[i]);
    }
    SmallVector<Value> next = {newMax, l};
    next.append(acc.begin(), acc.end());
    scf::YieldOp::create(b, next);
  }

  // Merge the KPW streams of each warp: xor offsets TPK .. 16 pair lanes
  // of the same chunk in different streams; afterwards every lane holds its
  // warp's state for its chunk.
  Value mx = loop.getResult(0), l = loop.getResult(1);
  SmallVector<Value> acc;
  for (int64_t i = 0; i < kChunk; ++i)
    acc.push_back(loop.getResult(2 + i));
  for (int64_t off = tpk; off < 32; off *= 2) {
    Value otherMax = e.shflXor(mx, off);
    Value otherL = e.shflXor(l, off);
    Value both = arith::MaxNumFOp::create(b, mx, otherMax);
    Value empty =
        arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, both, negInf);
    Value mu = arith::SelectOp::create(b, empty, e.cf32(0.0), both);
    Value mine = exp2Approx(e, e.fsub(mx, mu));
    Value theirs = exp2Approx(e, e.fsub(otherMax, mu));
    l = e.fma(theirs, otherL, e.fmul(mine, l));
    for (int64_t i = 0; i < kChunk; ++i)
      acc[i] = e.fma(theirs, e.shflXor(acc[i], off), e.fmul(mine, acc[i]));
    mx = both;
  }

  // Then the warps, through shared memory: the first TPK lanes of warp w
  // store its D accumulators, lane 0 its (max, sum).
  Value accShared =
      sharedArray(b, module, (name + "_acc").str(), e.f32(), kWarps * s.d);
  Value mlShared =
      sharedArray(b, module, (name + "_ml").str(), e.f32(), 2 * kWarps);
  {
    OpBuilder::InsertionGuard guard(b);
    auto firstStream = scf::IfOp::create(b, e.ult(lane, e.c32(tpk)),
                                         /*withElseRegion=*/false);
    b.setInsertionPointToStart(firstStream.thenBlock());
    Value accBase = e.add(e.mul(warp, e.c32(s.d)), e.mul(chunk, e.c32(kChunk)));
    for (int64_t i = 0; i < kChunk; ++i)
      e.store(acc[i], sharedElement(e, accShared, e.add(accBase, e.c32(i)), 4),
              4);
    auto lane0 = scf::IfOp::create(
        b, arith::CmpIOp::create(b, arith::CmpIPredicate::eq, lane, e.c32(0)),
        /*withElseRegion=*/false);
    b.setInsertionPointToStart(lane0.thenBlock());
    Value slot = e.mul(warp, e.c32(2));
    e.store(mx, sharedElement(e, mlShared, slot, 4), 4);
    e.store(l, sharedElement(e, mlShared, e.add(slot, e.c32(1)), 4), 4);
  }
  NVVM::Barrier0Op::create(b);

  OpBuilder::InsertionGuard guard(b);
  auto owner = scf::IfOp::create(b, e.ult(tid, e.c32(s.d)),
                                 /*withElseRegion=*/false);
  b.setInsertionPointToStart(owner.thenBlock());
  auto loadShared = [&](Value base, Value index) -> Value {
    return LLVM::LoadOp::create(b, e.f32(), sharedElement(e, base, index, 4),
                                4);
  };
  SmallVector<Value> maxes;
  Value total = negInf;
  for (int64_t w = 0; w < kWarps; ++w) {
    maxes.push_back(loadShared(mlShared, e.c32(2 * w)));
    total = arith::MaxNumFOp::create(b, total, maxes.back());
  }
  Value isEmpty =
      arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, total, negInf);
  Value mu = arith::SelectOp::create(b, isEmpty, e.cf32(0.0), total);
  Value denom = e.cf32(0.0), numer = e.cf32(0.0);
  for (int64_t w = 0; w < kWarps; ++w) {
    Value weight = exp2Approx(e, e.fsub(maxes[w], mu));
    denom = e.fma(weight, loadShared(mlShared, e.c32(2 * w + 1)), denom);
    numer =
        e.fma(weight, loadShared(accShared, e.add(e.c32(w * s.d), tid)), numer);
  }
  Value outIndex =
      e.add(e.mul(e.add(e.mul(m, e.c32(s.heads)), h), e.c32(s.d)), tid);
  storeHalves(e, out, outIndex, {e.fdiv(numer, denom)});
}

/// Launch 2: attention of each query row against the cache.
OpLaunch attend(AttentionOp op, OpKernelContext &context,
                const AttentionShape &s, int64_t batch) {
  std::string name = "qf_attention_h" + std::to_string(s.heads) + "_kv" +
                     std::to_string(s.kvHeads) + "_d" + std::to_string(s.d) +
                     "_s" + std::to_string(s.seq);
  MLIRContext *ctx = op.getContext();
  SmallVector<OpParam> params = {
      {"query", ParamKind::In, operandArg(ctx, 0)},
      {"key_cache", ParamKind::In, operandArg(ctx, 3)},
      {"value_cache", ParamKind::In, operandArg(ctx, 4)},
      {"positions", ParamKind::In, operandArg(ctx, 5)},
      {"out", ParamKind::Out, resultArg(ctx, 0)}};
  if (!context.module.lookupSymbol(name)) {
    ImplicitLocOpBuilder b(op.getLoc(), ctx);
    SmallVector<Value> args =
        createOpKernel(b, context.module, name, params, kWarps * 32);
    buildAttention(b, context.module, name, args, s);
    LLVM::ReturnOp::create(b, ValueRange{});
  }
  int64_t shared = (kWarps * s.d + 2 * kWarps) * 4;
  return makeOpLaunch(name, params, s.heads, batch, kWarps * 32, shared);
}

} // namespace

FailureOr<SmallVector<OpLaunch>>
qf::lowerAttention(AttentionOp op, OpKernelContext &context, int64_t batch) {
  if (failed(requireF16(op, "activations and caches", op.getQuery().getType())))
    return failure();
  AttentionShape s;
  s.heads = op.getNumHeads();
  s.kvHeads = op.getNumKvHeads();
  s.d = op.getHeadDim();
  RankedTensorType cache = op.getKeyCache().getType();
  s.seq = cache.getDimSize(0);
  s.kvWidth = s.kvHeads * s.d;
  if (ShapedType::isDynamic(s.seq))
    return op.emitOpError("needs a static cache length for its GPU kernel"),
           failure();
  // A lane holds 8 halves of a key and TPK = D / 8 lanes share a key, a
  // power of two dividing the warp.
  if (s.d % kChunk != 0 || s.d > 256 || (32 % (s.d / kChunk)) != 0)
    return op.emitOpError() << "head_dim = " << s.d
                            << " is not supported by the attention kernel; "
                               "expected 8, 16, 32, 64, 128 or 256",
           failure();
  if (s.seq * s.kvWidth > std::numeric_limits<int32_t>::max())
    return op.emitOpError() << "a cache of " << s.seq << " x " << s.kvWidth
                            << " elements overflows the kernel's i32 index",
           failure();
  return SmallVector<OpLaunch>{cacheWrite(op, context, s, batch),
                               attend(op, context, s, batch)};
}
