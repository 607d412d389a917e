//===- AttentionTiled.cpp - qf.attention of the cache on the tensor cores -===//
//
// Launch 2 of the plain and the split rotary form (attention that reads
// only the cache) from batch kTiledFromBatch, for D = 64 or 128:
// qf_attention_tiled_*, flash attention on mma.sync.m16n8k16 (f16
// operands, f32 accumulation). Same parameters and contract as the
// CUDA-core kernel (AttentionKernel.cpp), plus the batch M as `rows`.
//
//   block   = (kv head x, run of R query rows from m0 = R ctaid.y), grid
//             (KV, ceil(M / R)), 4 warps. Its M tile is 64 (row, head)
//             pairs: pair i = (row m0 + i / G, head x G + i % G), G = H / KV,
//             R = 64 / G (pairs from R G on, and rows past M, are idle).
//             So each key and value tile the block reads serves G heads
//             and R rows.
//   warp w  = pairs [16 w, 16 w + 16), one m16 tile: its Q fragments stay
//             in registers, its output [16 x D] in f32 accumulators.
//   prologue: the Q tile [64 x D] f16 into shared memory through
//             queryChunk (rotated by the row's position when the op has rope
//             parameters, as the CUDA-core kernel's query); the block's key
//             count n = max over its rows of positions[m] + 1 (0 for a
//             position outside [0, S)), the same in every warp.
//   loop    = key tiles [64 t, 64 t + 64) below n: the K and V tiles
//             [64 x D] by cp.async (16 bytes, .cg: the blocks of a kv head
//             share them through L2) into a two-slot ring, the next tile in
//             flight while this one is used; rows from n on zero-filled.
//             A row's 16-byte chunk c sits at c ^ (row % 8), so the 8 rows
//             an ldmatrix phase reads fall in distinct banks.
//             S = Q K^T, K by ldmatrix (its rows are B's columns);
//             s = S log2(e) / sqrt(D), -inf where key > positions[row] (all
//             keys when that is outside [0, S)), compared only in a tile
//             that reaches past the smallest limit of the warp's rows;
//             per row, on the accumulator fragments (lane 4 g + t holds
//             rows g and g + 8): m' = max(m, quad max of s) (shuffles xor
//             1, 2), mu = m' unless -inf, then 0; p = 2^(s - mu);
//             l = l 2^(m - mu) + sum p (per lane; the quad's lanes are
//             summed at the end); O = O 2^(m - mu) + P V, P rounded to f16
//             (the C fragments of n tiles 2k, 2k + 1 are the A fragment of
//             k slab k), V by ldmatrix.trans.
//   end     = out = O / l rounded to f16, two halves per store; a row
//             without keys has l = 0 and out = 0 / 0 = NaN, as before.
//             Sorted (`_sorted`, an out_order parameter, SortedOutput.h):
//             column c of a row goes to out_order[c], a half per store.
//
// Numerics against the CUDA-core kernel: the same f32 softmax state, scale,
// ex2 and query rounding; Q K^T and P V sum f16 products exactly in f32 on
// the tensor cores, in another order, and P is rounded to f16 before P V
// while l sums the unrounded p, as flash attention does (docs/defaults.md
// states the tolerance).
//
// A block reads the cache rows [0, n) of its rows' largest position: a key
// masked for one row has p = 0, and 0 x inf is NaN, so those rows must
// hold finite values. A prefill chunk's rows (padding included, at
// positions past the prompt) write every row below their positions before
// this launch.
//
//===----------------------------------------------------------------------===//

#include "Ops/AttentionCommon.h"

#include "Common/KernelCommon.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/Support/CommandLine.h"

#include <algorithm>
#include <array>
#include <limits>

using namespace mlir;
using namespace mlir::qf;
using namespace mlir::qf::attention;

// =false keeps the CUDA-core kernel at every batch (bench/prefill-attention).
static llvm::cl::opt<bool> tiledAttentionOption(
    "qf-tiled-attention",
    llvm::cl::desc("attention of the cache from batch 32 on the tensor cores "
                   "(a tiled mma.sync kernel; default on, =false keeps the "
                   "CUDA-core kernel)"),
    llvm::cl::init(true));

bool mlir::qf::attention::tiledAttentionEnabled() {
  return tiledAttentionOption;
}

namespace {

constexpr int64_t kTiledWarps = 4;
constexpr int64_t kThreads = 32 * kTiledWarps;
/// (row, head) pairs per block: one m16 tile per warp.
constexpr int64_t kPairs = 16 * kTiledWarps;
/// Keys per K and V tile.
constexpr int64_t kKeys = 64;

/// The block's shape and its dynamic shared memory: the Q tile, then two
/// slots of (K tile, V tile), all rows of D halves.
struct TiledLayout {
  int64_t d, group, rows; // rows: query rows per block
  int64_t chunks() const { return d / kChunk; }
  int64_t tileBytes() const { return kKeys * d * 2; }
  int64_t qBytes() const { return kPairs * d * 2; }
  int64_t keyOffset(int64_t slot) const {
    return qBytes() + slot * 2 * tileBytes();
  }
  int64_t totalBytes() const { return keyOffset(2); }
};

/// One row's online-softmax state in a lane: the running max and the
/// lane's part of the sum.
struct RowState {
  Value max, sum;
};

class TiledAttention {
public:
  TiledAttention(ImplicitLocOpBuilder &b, gpu::GPUModuleOp module,
                 StringRef name, const AttentionShape &s, const TiledLayout &l,
                 LLVM::GlobalOp rope)
      : b(b), e(b), module(module), name(name), s(s), l(l), rope(rope) {}

  void build(ArrayRef<Value> args);

private:
  /// Pair i of the block: its batch row (clamped to a valid one, for loads),
  /// its head and whether its output is stored.
  struct Pair {
    Value row, head, stored;
  };
  Pair pairOf(Value i);
  Value positionOf(Value row);
  Value blockKeys();
  Value rowLimit(Value i);
  void stageQuery();
  SmallVector<Value> queryFragments();
  void issueTile(Value tile, Value slot);
  SmallVector<Value> scores(Value slot, ArrayRef<Value> qFrag);
  void scaleAndMask(SmallVector<Value> &sc, Value k0);
  SmallVector<Value> softmax(SmallVector<Value> &sc, Value k0,
                             SmallVector<Value> &acc,
                             MutableArrayRef<RowState> rows);
  SmallVector<Value> accumulate(Value slot, ArrayRef<Value> pFrag,
                                SmallVector<Value> acc);
  void storeOutput(ArrayRef<Value> acc, ArrayRef<RowState> rows);
  Value sortedColumn(Value c, int64_t k) {
    Value bytes = e.mul(e.zext64(e.add(c, e.c32(k))), e.c64(4));
    return e.loadRO(e.i32(), e.gepBytes(outOrder, bytes), 4);
  }

  Value smemAt(Value byteOffset);
  Value tileByte(Value base, Value row, Value chunk);
  std::array<Value, 4> ldmatrix(Value byteOffset, bool trans);
  void mma(ArrayRef<Value> a, Value b0, Value b1, MutableArrayRef<Value> c);
  Value pack(Value lo, Value hi);

  ImplicitLocOpBuilder &b;
  KernelEmitter e;
  gpu::GPUModuleOp module;
  std::string name;
  const AttentionShape &s;
  TiledLayout l;
  LLVM::GlobalOp rope;
  Value query, keyCache, valueCache, positions, out, batchRows, outOrder;
  Value smem, tid, lane, warp, g, t4, kv, m0, nKeys;
  Value limit[2];  // the last key of the lane's rows g and g + 8, or -1
  Value warpLimit; // the smallest limit of the warp's 16 rows
};

Value TiledAttention::smemAt(Value byteOffset) {
  auto sharedPtr = LLVM::LLVMPointerType::get(b.getContext(), 3);
  return LLVM::GEPOp::create(b, sharedPtr, e.i8(), smem,
                             ValueRange{byteOffset});
}

/// The byte of 16-byte chunk `chunk` of row `row` in the tile at `base`
/// (the chunks of a row XOR-swizzled by row % 8).
Value TiledAttention::tileByte(Value base, Value row, Value chunk) {
  Value swz = arith::XOrIOp::create(b, chunk, e.band(row, e.c32(7)));
  return e.add(base, e.add(e.mul(row, e.c32(l.d * 2)), e.mul(swz, e.c32(16))));
}

/// ldmatrix.x4 (.trans) of b16 8 x 8 matrices, this lane addressing
/// `byteOffset`: four i32 (two halves each).
std::array<Value, 4> TiledAttention::ldmatrix(Value byteOffset, bool trans) {
  MLIRContext *ctx = b.getContext();
  auto i32x4 = LLVM::LLVMStructType::getLiteral(
      ctx, {e.i32(), e.i32(), e.i32(), e.i32()});
  Value m = NVVM::LdMatrixOp::create(
      b, i32x4, smemAt(byteOffset), b.getI32IntegerAttr(4),
      NVVM::MMALayoutAttr::get(ctx, trans ? NVVM::MMALayout::col
                                          : NVVM::MMALayout::row),
      NVVM::LdStMatrixShapeAttr::get(ctx, 8, 8),
      NVVM::LdStMatrixEltTypeAttr::get(ctx, NVVM::LdStMatrixEltType::B16));
  std::array<Value, 4> regs;
  for (int64_t i = 0; i < 4; ++i)
    regs[i] = LLVM::ExtractValueOp::create(b, m, i);
  return regs;
}

/// c += a b on mma.sync.m16n8k16 (f16 a and b as i32, f32 c).
void TiledAttention::mma(ArrayRef<Value> a, Value b0, Value b1,
                         MutableArrayRef<Value> c) {
  auto f32x4 = LLVM::LLVMStructType::getLiteral(
      b.getContext(), {e.f32(), e.f32(), e.f32(), e.f32()});
  SmallVector<Value> aHalves;
  for (Value v : a)
    aHalves.push_back(e.bitcast(e.v2f16(), v));
  auto op = NVVM::MmaOp::create(
      b, f32x4, aHalves,
      ValueRange{e.bitcast(e.v2f16(), b0), e.bitcast(e.v2f16(), b1)}, c,
      ArrayRef<int64_t>{16, 8, 16}, std::nullopt, std::nullopt,
      std::array<NVVM::MMATypes, 2>{NVVM::MMATypes::f16, NVVM::MMATypes::f16},
      std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                     NVVM::MMALayout::col});
  for (int64_t i = 0; i < 4; ++i)
    c[i] = LLVM::ExtractValueOp::create(b, op, i);
}

/// Two f32 rounded to f16, as one i32 (lo in the low half).
Value TiledAttention::pack(Value lo, Value hi) {
  Value v = LLVM::PoisonOp::create(b, e.v2f16());
  v = LLVM::InsertElementOp::create(b, v, e.truncf16(lo), e.c32(0));
  v = LLVM::InsertElementOp::create(b, v, e.truncf16(hi), e.c32(1));
  return e.bitcast(e.i32(), v);
}

TiledAttention::Pair TiledAttention::pairOf(Value i) {
  Value r = e.divu(i, e.c32(l.group));
  Value m = e.add(m0, r);
  Pair p;
  p.head = e.remu(i, e.c32(l.group));
  p.stored =
      arith::AndIOp::create(b, e.ult(r, e.c32(l.rows)), e.ult(m, batchRows));
  p.row = e.minu(m, e.sub(batchRows, e.c32(1)));
  return p;
}

Value TiledAttention::positionOf(Value row) {
  return e.loadRO(e.i32(),
                  e.gepBytes(positions, e.mul(e.zext64(row), e.c64(4))), 4);
}

/// n: the keys the block reads, max over its rows of positions[m] + 1 (0
/// for a position outside [0, S)). Lane j takes rows j and j + 32; the warp
/// reduces with shuffles, so every warp has n without a barrier.
Value TiledAttention::blockKeys() {
  Value n = e.c32(0);
  for (int64_t r0 = 0; r0 < l.rows; r0 += 32) {
    Value r = e.add(lane, e.c32(r0));
    Value m = e.add(m0, r);
    Value pos = positionOf(e.minu(m, e.sub(batchRows, e.c32(1))));
    Value reads = arith::AndIOp::create(
        b,
        arith::AndIOp::create(b, e.ult(r, e.c32(l.rows)), e.ult(m, batchRows)),
        e.ult(pos, e.c32(s.seq)));
    n = arith::MaxUIOp::create(
        b, n,
        arith::SelectOp::create(b, reads, e.add(pos, e.c32(1)), e.c32(0)));
  }
  for (int64_t off = 16; off >= 1; off /= 2)
    n = arith::MaxUIOp::create(b, n, e.shflXor(n, off));
  return n;
}

/// The last key pair i attends, positions[m]; -1 (no key) when the pair is
/// idle or its position is outside [0, S).
Value TiledAttention::rowLimit(Value i) {
  Pair p = pairOf(i);
  Value pos = positionOf(p.row);
  Value reads = arith::AndIOp::create(b, p.stored, e.ult(pos, e.c32(s.seq)));
  return arith::SelectOp::create(b, reads, pos, e.c32(-1));
}

/// The block's Q tile into shared memory: thread t takes chunks t, t + 128,
/// ... of the [64 x D] tile, each through queryChunk.
void TiledAttention::stageQuery() {
  int64_t trips = kPairs * l.chunks() / kThreads;
  auto loop = scf::ForOp::create(b, e.c32(0), e.c32(trips), e.c32(1));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value c = e.add(tid, e.mul(loop.getInductionVar(), e.c32(kThreads)));
  Value i = e.divu(c, e.c32(l.chunks()));
  Value chunk = e.remu(c, e.c32(l.chunks()));
  Pair p = pairOf(i);
  Value qHead = e.mul(e.add(e.mul(p.row, e.c32(s.heads)),
                            e.add(e.mul(kv, e.c32(l.group)), p.head)),
                      e.c32(s.d));
  SmallVector<Value> q =
      queryChunk(e, rope, s.d, query, qHead, e.mul(chunk, e.c32(kChunk)),
                 positionOf(p.row));
  Value words = LLVM::PoisonOp::create(b, e.vNi32(kChunk / 2));
  for (int64_t w = 0; w < kChunk / 2; ++w)
    words = LLVM::InsertElementOp::create(
        b, words, pack(q[2 * w], q[2 * w + 1]), e.c32(w));
  e.store(words, smemAt(tileByte(e.c32(0), i, chunk)), 16);
}

/// The warp's A fragments of Q, 4 i32 per k slab of 16: lanes 0-15 address
/// rows 0-15 of the slab's first 8 columns, lanes 16-31 the next 8.
SmallVector<Value> TiledAttention::queryFragments() {
  SmallVector<Value> frag;
  Value row = e.add(e.mul(warp, e.c32(16)), e.band(lane, e.c32(15)));
  for (int64_t ks = 0; ks < l.d / 16; ++ks) {
    Value chunk = e.add(e.c32(2 * ks), e.shru(lane, e.c32(4)));
    std::array<Value, 4> regs = ldmatrix(tileByte(e.c32(0), row, chunk), false);
    frag.append(regs.begin(), regs.end());
  }
  return frag;
}

/// Starts the copies of key tile `tile` into slot `slot`: chunk c of the K
/// and of the V tile by thread c % 128; rows from n on are zero-filled
/// (source size 0, source row 0).
void TiledAttention::issueTile(Value tile, Value slot) {
  auto cg = NVVM::LoadCacheModifierKindAttr::get(
      b.getContext(), NVVM::LoadCacheModifierKind::CG);
  Value k0 = e.mul(tile, e.c32(kKeys));
  Value keyBase =
      e.add(e.c32(l.keyOffset(0)), e.mul(slot, e.c32(2 * l.tileBytes())));
  Value valueBase = e.add(keyBase, e.c32(l.tileBytes()));
  Value kvCol = e.mul(kv, e.c32(s.d));
  for (int64_t it = 0; it < kKeys * l.chunks() / kThreads; ++it) {
    Value c = e.add(tid, e.c32(it * kThreads));
    Value row = e.divu(c, e.c32(l.chunks()));
    Value chunk = e.remu(c, e.c32(l.chunks()));
    Value key = e.add(k0, row);
    Value valid = e.ult(key, nKeys);
    Value src = e.add(e.mul(arith::SelectOp::create(b, valid, key, e.c32(0)),
                            e.c32(s.kvWidth)),
                      e.add(kvCol, e.mul(chunk, e.c32(kChunk))));
    Value srcByte = e.mul(e.zext64(src), e.c64(2));
    Value size = arith::SelectOp::create(b, valid, e.c32(16), e.c32(0));
    NVVM::CpAsyncOp::create(b, smemAt(tileByte(keyBase, row, chunk)),
                            e.gepBytes(keyCache, srcByte),
                            b.getI32IntegerAttr(16), cg, size);
    NVVM::CpAsyncOp::create(b, smemAt(tileByte(valueBase, row, chunk)),
                            e.gepBytes(valueCache, srcByte),
                            b.getI32IntegerAttr(16), cg, size);
  }
}

/// S = Q K^T of the tile in `slot`: 8 n tiles of 8 keys x 4 f32. One
/// ldmatrix.x4 gives the B fragments of two k slabs: lane j addresses key
/// row j % 8 of chunk 4 q + j / 8.
SmallVector<Value> TiledAttention::scores(Value slot, ArrayRef<Value> qFrag) {
  SmallVector<Value> sc(kKeys / 2, e.cf32(0.0));
  Value keyBase =
      e.add(e.c32(l.keyOffset(0)), e.mul(slot, e.c32(2 * l.tileBytes())));
  Value rowInTile = e.band(lane, e.c32(7));
  Value chunkInQuad = e.shru(lane, e.c32(3));
  for (int64_t q = 0; q < l.d / 32; ++q)
    for (int64_t j = 0; j < kKeys / 8; ++j) {
      std::array<Value, 4> k =
          ldmatrix(tileByte(keyBase, e.add(e.c32(8 * j), rowInTile),
                            e.add(e.c32(4 * q), chunkInQuad)),
                   false);
      MutableArrayRef<Value> c(sc.data() + 4 * j, 4);
      mma(qFrag.slice(8 * q, 4), k[0], k[1], c);
      mma(qFrag.slice(8 * q + 4, 4), k[2], k[3], c);
    }
  return sc;
}

/// Scales the tile's scores (keys k0 ..) into the base-2 exponent domain,
/// -inf where a key is past its row's limit. Only a tile that reaches past
/// the warp's smallest limit compares (a warp-uniform branch): at long
/// positions that is the last tile or two.
void TiledAttention::scaleAndMask(SmallVector<Value> &sc, Value k0) {
  Value negInf = e.cf32(-std::numeric_limits<double>::infinity());
  for (Value &v : sc)
    v = e.fmul(v, e.cf32(scoreScale(s.d)));
  Value partial = arith::CmpIOp::create(b, arith::CmpIPredicate::sgt,
                                        e.add(k0, e.c32(kKeys - 1)), warpLimit);
  SmallVector<Type> types(sc.size(), e.f32());
  auto branch = scf::IfOp::create(b, types, partial, /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(branch.thenBlock());
  Value firstKey = e.add(k0, e.mul(t4, e.c32(2)));
  SmallVector<Value> masked;
  for (int64_t j = 0; j < kKeys / 8; ++j)
    for (int64_t i = 0; i < 4; ++i) {
      Value key = e.add(firstKey, e.c32(8 * j + i % 2));
      Value valid = arith::CmpIOp::create(b, arith::CmpIPredicate::sle, key,
                                          limit[i / 2]);
      masked.push_back(
          arith::SelectOp::create(b, valid, sc[4 * j + i], negInf));
    }
  scf::YieldOp::create(b, masked);
  b.setInsertionPointToStart(branch.elseBlock());
  scf::YieldOp::create(b, sc);
  sc.assign(branch.getResults().begin(), branch.getResults().end());
}

/// One tile's online-softmax step (keys k0 ..): scales and masks `sc`,
/// updates the rows' state, rescales `acc`, and returns P's A fragments, 4
/// i32 per k slab of 16 keys.
SmallVector<Value> TiledAttention::softmax(SmallVector<Value> &sc, Value k0,
                                           SmallVector<Value> &acc,
                                           MutableArrayRef<RowState> rows) {
  Value negInf = e.cf32(-std::numeric_limits<double>::infinity());
  scaleAndMask(sc, k0);
  Value tileMax[2] = {negInf, negInf};
  for (size_t i = 0; i < sc.size(); ++i)
    tileMax[(i % 4) / 2] =
        arith::MaxNumFOp::create(b, tileMax[(i % 4) / 2], sc[i]);
  Value mu[2], correction[2];
  for (int64_t r = 0; r < 2; ++r) {
    for (int64_t off = 1; off <= 2; off *= 2)
      tileMax[r] =
          arith::MaxNumFOp::create(b, tileMax[r], e.shflXor(tileMax[r], off));
    Value newMax = arith::MaxNumFOp::create(b, rows[r].max, tileMax[r]);
    Value empty =
        arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, newMax, negInf);
    mu[r] = arith::SelectOp::create(b, empty, e.cf32(0.0), newMax);
    correction[r] = exp2Approx(e, e.fsub(rows[r].max, mu[r]));
    rows[r].max = newMax;
    rows[r].sum = e.fmul(rows[r].sum, correction[r]);
  }
  for (size_t i = 0; i < acc.size(); ++i)
    acc[i] = e.fmul(acc[i], correction[(i % 4) / 2]);
  for (size_t i = 0; i < sc.size(); ++i) {
    sc[i] = exp2Approx(e, e.fsub(sc[i], mu[(i % 4) / 2]));
    rows[(i % 4) / 2].sum = e.fadd(rows[(i % 4) / 2].sum, sc[i]);
  }
  SmallVector<Value> pFrag;
  for (int64_t k = 0; k < kKeys / 16; ++k)
    for (int64_t t : {2 * k, 2 * k + 1}) // a0, a1 from tile 2k; a2, a3
      for (int64_t r = 0; r < 2; ++r)
        pFrag.push_back(pack(sc[4 * t + 2 * r], sc[4 * t + 2 * r + 1]));
  return pFrag;
}

/// acc += P V of the tile in `slot`: one ldmatrix.x4.trans gives the B
/// fragments of n tiles 2 jp, 2 jp + 1 (columns of D) for k slab k: lane j
/// addresses key row 16 k + j % 16 of chunk 2 jp + j / 16.
SmallVector<Value> TiledAttention::accumulate(Value slot, ArrayRef<Value> pFrag,
                                              SmallVector<Value> acc) {
  Value valueBase = e.add(e.c32(l.keyOffset(0) + l.tileBytes()),
                          e.mul(slot, e.c32(2 * l.tileBytes())));
  Value rowInSlab = e.band(lane, e.c32(15));
  Value chunkInPair = e.shru(lane, e.c32(4));
  for (int64_t k = 0; k < kKeys / 16; ++k)
    for (int64_t jp = 0; jp < l.d / 16; ++jp) {
      std::array<Value, 4> v =
          ldmatrix(tileByte(valueBase, e.add(e.c32(16 * k), rowInSlab),
                            e.add(e.c32(2 * jp), chunkInPair)),
                   true);
      ArrayRef<Value> a = pFrag.slice(4 * k, 4);
      mma(a, v[0], v[1], MutableArrayRef<Value>(acc.data() + 8 * jp, 4));
      mma(a, v[2], v[3], MutableArrayRef<Value>(acc.data() + 8 * jp + 4, 4));
    }
  return acc;
}

/// out = acc / l for the lane's rows g and g + 8 (l summed over the quad):
/// n tile j's two columns 8 j + 2 t, + 1 as one 4-byte store.
void TiledAttention::storeOutput(ArrayRef<Value> acc, ArrayRef<RowState> rows) {
  for (int64_t r = 0; r < 2; ++r) {
    Value sum = rows[r].sum;
    for (int64_t off = 1; off <= 2; off *= 2)
      sum = e.fadd(sum, e.shflXor(sum, off));
    Pair p = pairOf(e.add(e.mul(warp, e.c32(16)), e.add(g, e.c32(8 * r))));
    OpBuilder::InsertionGuard guard(b);
    auto stored = scf::IfOp::create(b, p.stored, /*withElseRegion=*/false);
    b.setInsertionPointToStart(stored.thenBlock());
    Value headInRow = e.add(e.mul(kv, e.c32(l.group)), p.head);
    Value rowBase = e.mul(p.row, e.c32(s.heads * s.d));
    Value col = e.add(e.mul(headInRow, e.c32(s.d)), e.mul(t4, e.c32(2)));
    for (int64_t j = 0; j < l.d / 8; ++j) {
      Value c = e.add(col, e.c32(8 * j));
      Value halves[2] = {e.fdiv(acc[4 * j + 2 * r], sum),
                         e.fdiv(acc[4 * j + 2 * r + 1], sum)};
      if (!outOrder)
        storeHalves(e, out, e.add(rowBase, c), halves);
      for (int64_t k = 0; outOrder && k < 2; ++k)
        storeHalves(e, out, e.add(rowBase, sortedColumn(c, k)), {halves[k]});
    }
  }
}

/// The kernel: prologue, the loop over key tiles (see the file comment),
/// output.
void TiledAttention::build(ArrayRef<Value> args) {
  query = args[0];
  keyCache = args[1];
  valueCache = args[2];
  positions = args[3];
  out = args[4];
  batchRows = args[5];
  outOrder = args.size() > 6 ? args[6] : Value(); // sorted form only
  smem = dynamicSharedBase(b, module, name + "_smem");
  tid = e.tidX();
  lane = e.band(tid, e.c32(31));
  warp = e.shru(tid, e.c32(5));
  g = e.shru(lane, e.c32(2));
  t4 = e.band(lane, e.c32(3));
  kv = e.ctaidX();
  m0 = e.mul(NVVM::BlockIdYOp::create(b, e.i32()), e.c32(l.rows));
  nKeys = blockKeys();
  Value firstPair = e.add(e.mul(warp, e.c32(16)), g);
  limit[0] = rowLimit(firstPair);
  limit[1] = rowLimit(e.add(firstPair, e.c32(8)));
  warpLimit = arith::MinSIOp::create(b, limit[0], limit[1]);
  for (int64_t off = 16; off >= 1; off /= 2)
    warpLimit = arith::MinSIOp::create(b, warpLimit, e.shflXor(warpLimit, off));
  Value tiles = e.divu(e.add(nKeys, e.c32(kKeys - 1)), e.c32(kKeys));

  issueTile(e.c32(0), e.c32(0));
  NVVM::CpAsyncCommitGroupOp::create(b);
  stageQuery();
  NVVM::Barrier0Op::create(b);
  SmallVector<Value> qFrag = queryFragments();

  Value negInf = e.cf32(-std::numeric_limits<double>::infinity());
  SmallVector<Value> init(l.d / 2, e.cf32(0.0));
  init.append({negInf, negInf, e.cf32(0.0), e.cf32(0.0)});
  auto loop = scf::ForOp::create(b, e.c32(0), tiles, e.c32(1), init);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value t = loop.getInductionVar();
    ValueRange state = loop.getRegionIterArgs();
    // The next tile goes to the other slot, which the barrier at the end of
    // the previous trip freed.
    Value next = e.add(t, e.c32(1));
    {
      OpBuilder::InsertionGuard inner(b);
      auto more = scf::IfOp::create(b, e.ult(next, tiles), false);
      b.setInsertionPointToStart(more.thenBlock());
      issueTile(next, e.band(next, e.c32(1)));
    }
    NVVM::CpAsyncCommitGroupOp::create(b);
    NVVM::CpAsyncWaitGroupOp::create(b, b.getI32IntegerAttr(1));
    NVVM::Barrier0Op::create(b);
    Value slot = e.band(t, e.c32(1));
    SmallVector<Value> acc(state.begin(), state.begin() + l.d / 2);
    RowState rows[2] = {{state[l.d / 2], state[l.d / 2 + 2]},
                        {state[l.d / 2 + 1], state[l.d / 2 + 3]}};
    SmallVector<Value> sc = scores(slot, qFrag);
    SmallVector<Value> pFrag = softmax(sc, e.mul(t, e.c32(kKeys)), acc, rows);
    acc = accumulate(slot, pFrag, acc);
    NVVM::Barrier0Op::create(b);
    acc.append({rows[0].max, rows[1].max, rows[0].sum, rows[1].sum});
    scf::YieldOp::create(b, acc);
  }
  // Nothing may still be copying into shared memory when the block exits
  // (the last group is empty unless no tile was read).
  NVVM::CpAsyncWaitGroupOp::create(b, b.getI32IntegerAttr(0));
  ValueRange res = loop.getResults();
  RowState rows[2] = {{res[l.d / 2], res[l.d / 2 + 2]},
                      {res[l.d / 2 + 1], res[l.d / 2 + 3]}};
  storeOutput(SmallVector<Value>(res.begin(), res.begin() + l.d / 2), rows);
}

} // namespace

std::optional<OpLaunch> attention::tiledAttend(AttentionOp op,
                                               OpKernelContext &context,
                                               const AttentionShape &s,
                                               int64_t batch,
                                               const RopeParams *rope,
                                               bool sorted) {
  TiledLayout l;
  l.d = s.d;
  l.group = s.heads / s.kvHeads;
  l.rows = kPairs / std::max<int64_t>(l.group, 1);
  // Whole 128-byte rows of 8 chunks for the swizzle; D = 256 would not fit
  // its accumulators and Q fragments in the registers. cp.async and
  // mma.sync.m16n8k16 need sm_80.
  TargetAttr target = context.target;
  if ((s.d != 64 && s.d != 128) || l.group > kPairs || !target ||
      target.getSmVersion() < 80 ||
      l.totalBytes() > target.getMaxSharedPerBlock())
    return std::nullopt;
  std::string shape = shapeKey(s);
  std::string name = (rope ? "qf_attention_tiled_rotated_query_" + shape +
                                 "_" + ropeKey(*rope)
                          : "qf_attention_tiled_" + shape) +
                     (sorted ? "_sorted" : "");
  MLIRContext *ctx = op.getContext();
  SmallVector<OpParam> params = {
      {"query", ParamKind::In, operandArg(ctx, 0)},
      {"key_cache", ParamKind::In, operandArg(ctx, 3)},
      {"value_cache", ParamKind::In, operandArg(ctx, 4)},
      {"positions", ParamKind::In, operandArg(ctx, 5)},
      {"out", ParamKind::Out, resultArg(ctx, 0)},
      {"rows", ParamKind::I32, i32Arg(ctx, batch)}};
  if (sorted)
    params.push_back({"out_order", ParamKind::In, outOrderArg(ctx)});
  if (!context.module.lookupSymbol(name)) {
    ImplicitLocOpBuilder b(op.getLoc(), ctx);
    LLVM::GlobalOp table = rope ? ropeTable(b, context.module, *rope) : nullptr;
    SmallVector<Value> args =
        createOpKernel(b, context.module, name, params, kThreads);
    TiledAttention(b, context.module, name, s, l, table).build(args);
    LLVM::ReturnOp::create(b, ValueRange{});
  }
  OpLaunch launch = makeOpLaunch(name, params, s.kvHeads,
                                 (batch + l.rows - 1) / l.rows, kThreads);
  launch.launch.dynamicSharedBytes = l.totalBytes();
  return launch;
}
