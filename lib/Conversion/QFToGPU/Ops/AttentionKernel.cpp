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
//    Rotary form (rope_theta set; qf-fuse-rotary-attention): ONE launch,
//    qf_rotary_attention_*, same grid (H, M) and block. Under the op's
//    contract positions[i] = positions[0] + i (p0 = positions[0]):
//    - block (h, m) with h % G == 0 (G = H / KV, the first head of a kv
//      group) rotates key row m of kv head h / G (threads [0, D/8)) and
//      copies value row m (threads [D/8, D/4)) into cache row positions[m]
//      (nothing when out of [0, S));
//    - every block rotates its query chunk, attends cache rows [0, p0) in
//      the loop above, then rows p0 .. positions[m] straight from the key
//      and value operands (rows 0..m, keys rotated and rounded to f16 as
//      the cache holds them), one row per stream and trip, into the same
//      online-softmax state.
//    So no block reads a cache row written in this launch, and no
//    grid-wide barrier is needed. Each warp checks the contract over all M
//    rows (gridDim.y) and ORs the result with shuffles (uniform, no
//    barrier); if it is broken, or p0 or positions[m] is outside [0, S),
//    the block reads nothing and writes NaN (0 / 0). Rotations call the
//    rotary kernel's code (RopeCommon.h): same f64 angles, range reduction
//    and rounding. The caches' loads stay ld.global.nc: the rows read are
//    never written during the launch.
//
//    Split rotary form (rotary, batch >= kRotarySplitFromBatch): the
//    one-launch form rotates, in every block, all the new keys before its
//    row: H x M^2 / 2 rotations per launch, which dominate a prefill chunk
//    (and its f64 angles the SM). From that batch the op is two launches:
//    - qf_rotary_kv_cache_write_*: grid (KV, M), block (x, m) writes kv
//      head x's rotated key row m and value row m to cache row
//      positions[m] (the one-launch form's part 1, each row once);
//    - qf_attention_rotated_query_*: the plain attention kernel, its query
//      chunk rotated by positions[m] as above. It reads rows [0, n) of the
//      cache, so positions need not be consecutive.
//
//    Tiled form (batch >= kTiledFromBatch, D = 64 or 128): launch 2 of
//    the plain and the split rotary form is qf_attention_tiled_*
//    (AttentionTiled.cpp), a block per (kv head, run of rows) on the tensor
//    cores; other shapes keep the kernel above.
//
//    Sorted output (`_sorted`, an out_order parameter): where the output
//    is an act_order matmul's only input (o_proj), up to batch 16, column
//    c goes to out_order[c], the matmul's inv_perm (SortedOutput.h); from
//    batch 32 the tiled form stores so (qf-to-gpu
//    sorted-attention-max-batch, default 16).
//
//    Why not a split over the sequence (flash-decoding): it needs a
//    workspace for the partial results, which launch records cannot name
//    yet. At decode (M = 1) this kernel has H blocks (one SM each)
//    streaming the context; the G heads of a kv group re-read its rows from
//    L2.
//
//===----------------------------------------------------------------------===//

#include "Ops/AttentionCommon.h"
#include "Ops/RopeCommon.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

#include <limits>

using namespace mlir;
using namespace mlir::qf;
using namespace mlir::qf::attention;

namespace {

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

/// Score of one key chunk against q: the chunk's dot product reduced over
/// the TPK lanes of the key, -inf where `valid` is false.
Value score(KernelEmitter &e, ArrayRef<Value> q, ArrayRef<Value> k,
            int64_t tpk, Value valid, Value negInf) {
  Value dot = e.fmul(q[0], k[0]);
  for (int64_t i = 1; i < kChunk; ++i)
    dot = e.fma(q[i], k[i], dot);
  // The TPK lanes of a key are an aligned group: xor offsets < TPK stay
  // inside it, and every lane of the warp runs the shuffles.
  for (int64_t off = tpk / 2; off >= 1; off /= 2)
    dot = e.fadd(dot, e.shflXor(dot, off));
  return arith::SelectOp::create(e.builder(), valid, dot, negInf);
}

/// One online-softmax step of a stream: `state` = (max, sum, acc[8]) and
/// the scores and raw value chunks of the positions it takes.
SmallVector<Value> onlineUpdate(KernelEmitter &e, ValueRange state,
                                ArrayRef<Value> scores, ArrayRef<Value> values,
                                Value negInf) {
  ImplicitLocOpBuilder &b = e.builder();
  Value newMax = state[0];
  for (Value s : scores)
    newMax = arith::MaxNumFOp::create(b, newMax, s);
  Value isEmpty =
      arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, newMax, negInf);
  Value mu = arith::SelectOp::create(b, isEmpty, e.cf32(0.0), newMax);
  Value correction = exp2Approx(e, e.fsub(state[0], mu));
  Value l = e.fmul(state[1], correction);
  SmallVector<Value> acc;
  for (int64_t i = 0; i < kChunk; ++i)
    acc.push_back(e.fmul(state[2 + i], correction));
  for (size_t u = 0; u < scores.size(); ++u) {
    Value weight = exp2Approx(e, e.fsub(scores[u], mu));
    l = e.fadd(l, weight);
    SmallVector<Value> v = unpack(e, values[u]);
    for (int64_t i = 0; i < kChunk; ++i)
      acc[i] = e.fma(weight, v[i], acc[i]);
  }
  SmallVector<Value> next = {newMax, l};
  next.append(acc.begin(), acc.end());
  return next;
}

/// Whether positions[i] = positions[0] + i for every row i < M (M =
/// gridDim.y), the same i1 in every lane: lane i checks rows i, i + 32, ...
/// and the warp ORs the mismatches with xor shuffles. Every warp checks
/// all rows, so the answer is uniform over the block without a barrier.
Value consecutivePositions(KernelEmitter &e, Value positions, Value pos0,
                           Value lane) {
  ImplicitLocOpBuilder &b = e.builder();
  Value rows = NVVM::GridDimYOp::create(b, e.i32());
  auto loop = scf::ForOp::create(b, lane, rows, e.c32(32),
                                 ValueRange{e.c32(0)});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value i = loop.getInductionVar();
    Value p =
        e.loadRO(e.i32(), e.gepBytes(positions, e.mul(e.zext64(i), e.c64(4))),
                 4);
    Value mismatch = arith::ExtUIOp::create(
        b, e.i32(),
        arith::CmpIOp::create(b, arith::CmpIPredicate::ne, p, e.add(pos0, i)));
    scf::YieldOp::create(
        b, ValueRange{arith::OrIOp::create(b, loop.getRegionIterArgs()[0],
                                           mismatch)});
  }
  Value bad = loop.getResult(0);
  for (int64_t off = 16; off >= 1; off /= 2)
    bad = arith::OrIOp::create(b, bad, e.shflXor(bad, off));
  return arith::CmpIOp::create(b, arith::CmpIPredicate::eq, bad, e.c32(0));
}
/// The thread's place in block (h, m) = (ctaid.x, ctaid.y).
AttentionThread indexThread(KernelEmitter &e, const AttentionShape &s) {
  ImplicitLocOpBuilder &b = e.builder();
  int64_t tpk = s.d / kChunk, kpw = 32 / tpk;
  int64_t group = s.heads / s.kvHeads;
  AttentionThread t;
  t.h = e.ctaidX();
  t.m = NVVM::BlockIdYOp::create(b, e.i32());
  t.tid = e.tidX();
  t.lane = e.band(t.tid, e.c32(31));
  t.warp = e.shru(t.tid, e.c32(5));
  t.chunk = e.remu(t.lane, e.c32(tpk));
  t.stream = e.add(e.mul(t.warp, e.c32(kpw)), e.divu(t.lane, e.c32(tpk)));
  t.kvHead = e.mul(e.divu(t.h, e.c32(group)), e.c32(s.d));
  t.col = e.mul(t.chunk, e.c32(kChunk));
  t.kvCol = e.add(t.kvHead, t.col);
  return t;
}

/// The online-softmax state (max, sum, acc[8]) of the thread's stream over
/// cache rows [0, nCache), kUnroll positions per stream and trip.
SmallVector<Value> attendCache(KernelEmitter &e, const AttentionArgs &args,
                               const AttentionShape &s,
                               const AttentionThread &t, ArrayRef<Value> q,
                               Value nCache, Value negInf) {
  ImplicitLocOpBuilder &b = e.builder();
  int64_t tpk = s.d / kChunk, streams = kWarps * (32 / tpk);
  Value stream = t.stream, kvCol = t.kvCol;
  SmallVector<Value> init = {negInf, e.cf32(0.0)};
  init.append(kChunk, e.cf32(0.0));
  int64_t perTrip = streams * kUnroll;
  auto loop = scf::ForOp::create(b, e.c32(0), nCache, e.c32(perTrip), init);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value base = loop.getInductionVar();
    ValueRange state = loop.getRegionIterArgs();
    Value last = e.sub(nCache, e.c32(1));
    SmallVector<Value> valid, keys, values;
    for (int64_t u = 0; u < kUnroll; ++u) {
      Value p = e.add(base, e.add(e.c32(u * streams), stream));
      valid.push_back(e.ult(p, nCache));
      Value row = e.minu(p, last);
      Value at = e.add(e.mul(row, e.c32(s.kvWidth)), kvCol);
      // Invariant loads in the rotary form too: rows below positions[0]
      // are not written by this launch.
      keys.push_back(loadRaw(e, args.keyCache, at, kChunk));
      values.push_back(loadRaw(e, args.valueCache, at, kChunk));
    }
    SmallVector<Value> scores;
    for (int64_t u = 0; u < kUnroll; ++u)
      scores.push_back(score(e, q, unpack(e, keys[u]), tpk, valid[u], negInf));
    scf::YieldOp::create(b, onlineUpdate(e, state, scores, values, negInf));
  }
  return SmallVector<Value>(loop.getResults());
}

/// Rotary form, part 2: the new rows j <= m, one per stream and trip, keys
/// rotated (and rounded) here as the cache would hold them, folded into
/// `state`.
SmallVector<Value> attendNewRows(KernelEmitter &e, LLVM::GlobalOp rope,
                                 const AttentionArgs &args,
                                 const AttentionShape &s,
                                 const AttentionThread &t, ArrayRef<Value> q,
                                 Value nNew, Value pos0,
                                 SmallVector<Value> state, Value negInf) {
  ImplicitLocOpBuilder &b = e.builder();
  int64_t tpk = s.d / kChunk, streams = kWarps * (32 / tpk);
  Value stream = t.stream, kvHead = t.kvHead, col = t.col;
  Type f64 = b.getF64Type();
  auto fresh = scf::ForOp::create(b, e.c32(0), nNew, e.c32(streams), state);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(fresh.getBody());
    Value j = e.add(fresh.getInductionVar(), stream);
    Value valid = e.ult(j, nNew);
    Value row = e.minu(j, e.sub(nNew, e.c32(1)));
    Value keyHead = e.add(e.mul(row, e.c32(s.kvWidth)), kvHead);
    SmallVector<Value> own =
        loadHalves(e, args.key, e.add(keyHead, col), kChunk);
    Value rowPos = arith::SIToFPOp::create(b, f64, e.add(pos0, row));
    SmallVector<Value> k = roundToHalf(
        e, rotateChunk(e, rope, s.d, args.key, keyHead, col, own, rowPos));
    Value value = loadRaw(e, args.value, e.add(keyHead, col), kChunk);
    Value sc = score(e, q, k, tpk, valid, negInf);
    scf::YieldOp::create(b, onlineUpdate(e, fresh.getRegionIterArgs(), {sc},
                                         {value}, negInf));
  }
  state.assign(fresh.getResults().begin(), fresh.getResults().end());
  return state;
}

/// Merges the KPW streams of each warp: xor offsets TPK .. 16 pair lanes of
/// the same chunk in different streams; afterwards every lane holds its
/// warp's state (max, sum, acc[8]) for its chunk.
SmallVector<Value> mergeStreams(KernelEmitter &e, const AttentionShape &s,
                                ArrayRef<Value> state, Value negInf) {
  ImplicitLocOpBuilder &b = e.builder();
  int64_t tpk = s.d / kChunk;
  Value mx = state[0], l = state[1];
  SmallVector<Value> acc;
  for (int64_t i = 0; i < kChunk; ++i)
    acc.push_back(state[2 + i]);
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
  SmallVector<Value> merged = {mx, l};
  merged.append(acc.begin(), acc.end());
  return merged;
}

/// Combines the warps' states through shared memory and stores the output
/// row: the first TPK lanes of warp w store its D accumulators, lane 0 its
/// (max, sum); after a barrier thread d < D computes out[d].
void combineWarps(KernelEmitter &e, gpu::GPUModuleOp module, StringRef name,
                  const AttentionArgs &args, const AttentionShape &s,
                  const AttentionThread &t, ArrayRef<Value> state,
                  Value negInf) {
  ImplicitLocOpBuilder &b = e.builder();
  int64_t tpk = s.d / kChunk;
  Value h = t.h, m = t.m, tid = t.tid, lane = t.lane, warp = t.warp,
        chunk = t.chunk;
  Value mx = state[0], l = state[1];
  ArrayRef<Value> acc = state.drop_front(2);
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
  Value column = t.outColumn ? t.outColumn : e.add(e.mul(h, e.c32(s.d)), tid);
  Value outIndex = e.add(e.mul(m, e.c32(s.heads * s.d)), column);
  storeHalves(e, args.out, outIndex, {e.fdiv(numer, denom)});
}

/// What an attention kernel does besides attending the cache.
enum class AttentionForm {
  Plain,        // reads the cache only
  Rotary,       // one launch: writes the rotated rows, attends the new
                // rows from the operands (the contract in the file comment)
  RotaryQuery,  // reads the cache only, rotating its query
};

/// The attention kernel's body (see the file comment); `rope` is the
/// rotary forms' table (null in the plain form). In the rotary form the new
/// rows come from `args.key` / `args.value`.
void buildAttention(ImplicitLocOpBuilder &b, gpu::GPUModuleOp module,
                    StringRef name, const AttentionArgs &args,
                    const AttentionShape &s, AttentionForm form,
                    LLVM::GlobalOp rope) {
  KernelEmitter e(b);
  const bool fused = form == AttentionForm::Rotary;
  AttentionThread t = indexThread(e, s);
  Value h = t.h, m = t.m, lane = t.lane, col = t.col;
  // The column this thread stores (tid < D), loaded before the cache is
  // attended so that the store does not wait for it.
  if (args.outOrder) {
    Value c = e.add(e.mul(h, e.c32(s.d)), e.minu(t.tid, e.c32(s.d - 1)));
    t.outColumn = e.loadRO(
        e.i32(), e.gepBytes(args.outOrder, e.mul(e.zext64(c), e.c64(4))), 4);
  }

  Value pos = e.loadRO(
      e.i32(), e.gepBytes(args.positions, e.mul(e.zext64(m), e.c64(4))), 4);
  Value posInRange = e.ult(pos, e.c32(s.seq));

  // Rotary form, part 1. No block of this launch reads the rows it writes
  // from the cache (they come from the operands, below).
  if (fused)
    writeRotatedRows(e, rope, args, s, t, pos, posInRange);

  // Rows read from the cache: [0, nCache); rows taken from the operands
  // (rotary form): [0, nNew), the new rows 0..m at positions pos0 + j.
  Value nCache, nNew, pos0;
  if (!fused) {
    nCache = arith::SelectOp::create(b, posInRange, e.add(pos, e.c32(1)),
                                     e.c32(0));
  } else {
    pos0 = e.loadRO(e.i32(), args.positions, 4);
    Value ok = arith::AndIOp::create(
        b, consecutivePositions(e, args.positions, pos0, lane),
        arith::AndIOp::create(b, e.ult(pos0, e.c32(s.seq)), posInRange));
    // A broken contract reads nothing: out = 0 / 0 = NaN for every row.
    nCache = arith::SelectOp::create(b, ok, pos0, e.c32(0));
    nNew = arith::SelectOp::create(b, ok, e.add(m, e.c32(1)), e.c32(0));
  }

  // q chunk, pre-scaled into the base-2 exponent domain.
  Value qHead = e.mul(e.add(e.mul(m, e.c32(s.heads)), h), e.c32(s.d));
  LLVM::GlobalOp queryRope =
      form == AttentionForm::Plain ? LLVM::GlobalOp() : rope;
  SmallVector<Value> q =
      queryChunk(e, queryRope, s.d, args.query, qHead, col, pos);
  for (Value &v : q)
    v = e.fmul(v, e.cf32(scoreScale(s.d)));

  Value negInf = e.cf32(-std::numeric_limits<double>::infinity());
  SmallVector<Value> state = attendCache(e, args, s, t, q, nCache, negInf);
  if (fused)
    state = attendNewRows(e, rope, args, s, t, q, nNew, pos0, state, negInf);
  combineWarps(e, module, name, args, s, t, mergeStreams(e, s, state, negInf),
               negInf);
}

/// Launch 2 of the plain form: attention of each query row against the
/// cache. With `rope`, launch 2 of the split rotary form: the same kernel
/// with the query rotated by its own position (the keys are read rotated
/// from the cache).
OpLaunch attend(AttentionOp op, OpKernelContext &context,
                const AttentionShape &s, int64_t batch,
                const RopeParams *rope, bool sorted) {
  std::string shape = shapeKey(s);
  std::string name = (rope ? "qf_attention_rotated_query_" + shape + "_" +
                                 ropeKey(*rope)
                           : "qf_attention_" + shape) +
                     (sorted ? "_sorted" : "");
  MLIRContext *ctx = op.getContext();
  SmallVector<OpParam> params = {
      {"query", ParamKind::In, operandArg(ctx, 0)},
      {"key_cache", ParamKind::In, operandArg(ctx, 3)},
      {"value_cache", ParamKind::In, operandArg(ctx, 4)},
      {"positions", ParamKind::In, operandArg(ctx, 5)},
      {"out", ParamKind::Out, resultArg(ctx, 0)}};
  if (sorted)
    params.push_back({"out_order", ParamKind::In, outOrderArg(ctx)});
  if (!context.module.lookupSymbol(name)) {
    ImplicitLocOpBuilder b(op.getLoc(), ctx);
    LLVM::GlobalOp table = rope ? ropeTable(b, context.module, *rope) : nullptr;
    SmallVector<Value> args =
        createOpKernel(b, context.module, name, params, kWarps * 32);
    AttentionArgs a;
    a.query = args[0];
    a.keyCache = args[1];
    a.valueCache = args[2];
    a.positions = args[3];
    a.out = args[4];
    if (sorted)
      a.outOrder = args[5];
    buildAttention(b, context.module, name, a, s,
                   rope ? AttentionForm::RotaryQuery : AttentionForm::Plain,
                   table);
    LLVM::ReturnOp::create(b, ValueRange{});
  }
  int64_t shared = (kWarps * s.d + 2 * kWarps) * 4;
  return makeOpLaunch(name, params, s.heads, batch, kWarps * 32, shared);
}

/// The rotary form: one launch (see the file comment).
OpLaunch rotaryAttend(AttentionOp op, OpKernelContext &context,
                      const AttentionShape &s, const RopeParams &rope,
                      int64_t batch, bool sorted) {
  std::string name = "qf_rotary_attention_h" + std::to_string(s.heads) +
                     "_kv" + std::to_string(s.kvHeads) + "_d" +
                     std::to_string(s.d) + "_s" + std::to_string(s.seq) + "_" +
                     ropeKey(rope) + (sorted ? "_sorted" : "");
  MLIRContext *ctx = op.getContext();
  // The caches are read and written (disjoint rows), so they are not
  // readonly; each is still the only pointer to its buffer.
  SmallVector<OpParam> params = {
      {"query", ParamKind::In, operandArg(ctx, 0)},
      {"key", ParamKind::In, operandArg(ctx, 1)},
      {"value", ParamKind::In, operandArg(ctx, 2)},
      {"key_cache", ParamKind::Out, operandArg(ctx, 3)},
      {"value_cache", ParamKind::Out, operandArg(ctx, 4)},
      {"positions", ParamKind::In, operandArg(ctx, 5)},
      {"out", ParamKind::Out, resultArg(ctx, 0)}};
  if (sorted)
    params.push_back({"out_order", ParamKind::In, outOrderArg(ctx)});
  if (!context.module.lookupSymbol(name)) {
    ImplicitLocOpBuilder b(op.getLoc(), ctx);
    LLVM::GlobalOp table = ropeTable(b, context.module, rope);
    SmallVector<Value> args =
        createOpKernel(b, context.module, name, params, kWarps * 32);
    AttentionArgs a;
    a.query = args[0];
    a.key = args[1];
    a.value = args[2];
    a.keyCache = args[3];
    a.valueCache = args[4];
    a.positions = args[5];
    a.out = args[6];
    if (sorted)
      a.outOrder = args[7];
    buildAttention(b, context.module, name, a, s, AttentionForm::Rotary,
                   table);
    LLVM::ReturnOp::create(b, ValueRange{});
  }
  int64_t shared = (kWarps * s.d + 2 * kWarps) * 4;
  return makeOpLaunch(name, params, s.heads, batch, kWarps * 32, shared);
}

} // namespace

LaunchArgAttr attention::outOrderArg(MLIRContext *ctx) {
  return LaunchArgAttr::get(ctx, LaunchArgKind::ReaderComponent, "inv_perm");
}

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
  // The output in the sorted column order of the act_order matmul that
  // reads it (SortedOutput.h), as either kernel stores it.
  const bool sorted = context.sortsOutput && context.sortsOutput(op, batch);
  // Launch 2 of the plain and split forms: on the tensor cores where the
  // tiled kernel takes the shape, else the kernel above.
  auto cacheAttention = [&](const RopeParams *rope) {
    if (tiledAttentionEnabled() && batch >= kTiledFromBatch)
      if (std::optional<OpLaunch> tiled =
              tiledAttend(op, context, s, batch, rope, sorted))
        return *tiled;
    return attend(op, context, s, batch, rope, sorted);
  };
  if (std::optional<RopeParams> rope = ropeParams(op)) {
    if (failed(checkRope(op, *rope)))
      return failure();
    if (batch >= kRotarySplitFromBatch)
      return SmallVector<OpLaunch>{
          rotaryCacheWrite(op, context, s, *rope, batch),
          cacheAttention(&*rope)};
    return SmallVector<OpLaunch>{
        rotaryAttend(op, context, s, *rope, batch, sorted)};
  }
  return SmallVector<OpLaunch>{cacheWrite(op, context, s, batch),
                               cacheAttention(nullptr)};
}
