//===- TensorCoreReduce.cpp - Split-K and cluster sums ----------------------===//
//
// The k groups of a block summed through shared memory, and the blocks of
// a thread-block cluster through distributed shared memory.
//===----------------------------------------------------------------------===//

#include "TensorCore/TensorCoreBuilder.h"

#include "Common/KernelCommon.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "qfuse/format/MmaLayout.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::qf;
using namespace mlir::qf::tensor_core;

/// Sums a lane moves in one shared-memory access: 4 (16 bytes) from
/// block_m 32, where a lane has 32 sums or more, else 1. Quads take 4
/// adjacent registers each, and ptxas spilled with them: a gated kernel
/// (silu_mul) around the division's slow path, kernels of block_m 16
/// (which gain little), and wgmma with 4 k groups (512 threads, 64 sums a
/// lane in 128 registers), so those keep single sums too.
int64_t TensorCoreBuilder::sumsPerAccess() const {
  return spec.gated || p.mTiles * 16 < 32 || !twoSumSetsFit() ? 1 : 4;
}

/// Whether a lane's sums, as many again (the gate's under silu_mul, or
/// partial sums loaded for a reduction) and 32 registers for the rest fit
/// the registers a thread may have with the whole block on one SM.
bool TensorCoreBuilder::twoSumSetsFit() const {
  int64_t registers = std::min<int64_t>(255, 65536 / p.threads);
  return 2 * p.mTiles * 16 + 32 <= registers;
}

/// Where this lane keeps accumulator `i` of region `region` (one warp's
/// mTiles x 16 sums a lane): w = sumsPerAccess() consecutive sums of a lane
/// in 4 w contiguous bytes, lanes interleaved by 4 w bytes, so that a warp's
/// accesses cover contiguous bytes (conflict-free); a single sum stays
/// addressable (the gate's, read one at a time).
Value TensorCoreBuilder::sumSlot(Value region, int64_t i) {
  int64_t w = sumsPerAccess();
  Value run = e.add(e.mul(region, e.c32(p.mTiles * 16 / w)), e.c32(i / w));
  Value lanes = e.add(e.mul(run, e.c32(32)), lane);
  return smemAt(e.add(e.mul(lanes, e.c32(4 * w)), e.c32(i % w * 4)));
}

/// Bytes from sum 0 to sum `i` of one lane's region in sumSlot's layout.
int64_t TensorCoreBuilder::sumOffset(int64_t i) const {
  int64_t w = sumsPerAccess();
  return i / w * 32 * 4 * w + i % w * 4;
}

/// Where this lane parks accumulator `i` for another warp to read (the gate
/// sums of silu_mul): n warp nw's region of the drained pipeline memory.
Value TensorCoreBuilder::parkedSum(int64_t i) { return sumSlot(nw, i); }

/// Stores `sums` at `slot(i)`, sumsPerAccess() at a time.
void TensorCoreBuilder::storeSums(ArrayRef<Value> sums,
                                  function_ref<Value(int64_t)> slot) {
  int64_t w = sumsPerAccess();
  VectorType run = VectorType::get({w}, e.f32());
  for (size_t i = 0; i < sums.size(); i += w) {
    if (w == 1) {
      LLVM::StoreOp::create(b, sums[i], slot(i), 4);
      continue;
    }
    Value v = LLVM::PoisonOp::create(b, run);
    for (int64_t c = 0; c < w; ++c)
      v = LLVM::InsertElementOp::create(b, run, v, sums[i + c], e.c32(c));
    LLVM::StoreOp::create(b, v, slot(i), 4 * w);
  }
}

/// Loads `count` sums from `slot(i)`, sumsPerAccess() at a time.
TensorCoreBuilder::Acc
TensorCoreBuilder::loadSums(int64_t count, function_ref<Value(int64_t)> slot) {
  int64_t w = sumsPerAccess();
  VectorType run = VectorType::get({w}, e.f32());
  Acc sums;
  for (int64_t i = 0; i < count; i += w) {
    if (w == 1) {
      sums.push_back(LLVM::LoadOp::create(b, e.f32(), slot(i), 4));
      continue;
    }
    Value v = LLVM::LoadOp::create(b, run, slot(i), 4 * w);
    for (int64_t c = 0; c < w; ++c)
      sums.push_back(e.extract(v, c));
  }
  return sums;
}

/// Adds the sums at `slot(i)` to `acc`, an access at a time (a load, then
/// its adds), so that few loaded sums are live at once.
void TensorCoreBuilder::addSums(Acc &acc, function_ref<Value(int64_t)> slot) {
  int64_t w = sumsPerAccess();
  for (size_t i = 0; i < acc.size(); i += w) {
    Acc part = loadSums(w, [&](int64_t c) { return slot(i + c); });
    for (int64_t c = 0; c < w; ++c)
      acc[i + c] = e.fadd(acc[i + c], part[c]);
  }
}

/// Where this lane keeps each accumulator in hand-over slot `index` - 1,
/// `index` >= 1: k group `index`'s partials, or in rank 0 cluster rank
/// `index`'s sums (tensorCoreHandOverSlots).
std::function<Value(int64_t)> TensorCoreBuilder::handOverSlot(Value index) {
  Value region =
      e.add(e.mul(e.sub(index, e.c32(1)), e.c32(p.groupWarps)), columnWarp);
  return [this, region](int64_t i) { return sumSlot(region, i); };
}

/// The sums [first, second) of a lane that k group `s` adds for the
/// others (reduceSplitK): an even share of whole accesses.
std::pair<int64_t, int64_t> TensorCoreBuilder::splitKSlice(int64_t s,
                                                           int64_t sums) const {
  int64_t w = sumsPerAccess(), accesses = sums / w;
  return {s * accesses / p.kGroups * w, (s + 1) * accesses / p.kGroups * w};
}

/// Runs `add` on k group 0's sums and takes its result there; the other
/// k groups keep `acc`.
void TensorCoreBuilder::inGroup0(Acc &acc, function_ref<void(Acc &)> add) {
  OpBuilder::InsertionGuard guard(b);
  auto group0 = scf::IfOp::create(
      b, TypeRange(ValueRange(acc)),
      arith::CmpIOp::create(b, arith::CmpIPredicate::eq, kg, e.c32(0)), true);
  b.setInsertionPointToStart(group0.thenBlock());
  Acc sum(acc.begin(), acc.end());
  add(sum);
  scf::YieldOp::create(b, sum);
  b.setInsertionPointToStart(group0.elseBlock());
  scf::YieldOp::create(b, acc);
  for (size_t i = 0; i < acc.size(); ++i)
    acc[i] = group0.getResult(i);
}

/// Sums the k groups' accumulators into k group 0's, through the (drained)
/// pipeline shared memory, the adds spread over the k groups: k groups
/// 1.. store their partials; k group s adds slice s (splitKSlice) of
/// every k group's but 0's, s >= 1 back into its own slot, 0 into its
/// registers; after a barrier k group 0 adds the other slices, one load a
/// sum. k group 0 loads about 2 sums for each of its own, where adding
/// every k group's partials took kGroups - 1, and the other k groups no
/// longer repeat that work on the same shared memory.
void TensorCoreBuilder::reduceSplitK(Acc &acc) {
  if (p.kGroups == 1)
    return;
  int64_t sums = acc.size();
  // Adds k group k's partials of slice `range` into `sum`.
  auto addSlice = [&](Acc &sum, int64_t k, std::pair<int64_t, int64_t> range) {
    auto [first, end] = range;
    std::function<Value(int64_t)> slot = handOverSlot(e.c32(k));
    Acc part(sum.begin() + first, sum.begin() + end);
    addSums(part, [&](int64_t i) { return slot(first + i); });
    std::copy(part.begin(), part.end(), sum.begin() + first);
  };
  blockBarrier();
  {
    OpBuilder::InsertionGuard guard(b);
    auto writer = scf::IfOp::create(
        b, arith::CmpIOp::create(b, arith::CmpIPredicate::ne, kg, e.c32(0)),
        false);
    b.setInsertionPointToStart(writer.thenBlock());
    storeSums(acc, handOverSlot(kg));
  }
  blockBarrier();
  // With two k groups, k group 1's slice is in its slot already.
  for (int64_t s = 1; s < p.kGroups && p.kGroups > 2; ++s) {
    auto [first, end] = splitKSlice(s, sums);
    if (first == end)
      continue;
    OpBuilder::InsertionGuard guard(b);
    auto adder = scf::IfOp::create(
        b, arith::CmpIOp::create(b, arith::CmpIPredicate::eq, kg, e.c32(s)),
        false);
    b.setInsertionPointToStart(adder.thenBlock());
    Acc sum(acc);
    for (int64_t k = 1; k < p.kGroups; ++k)
      if (k != s)
        addSlice(sum, k, {first, end});
    std::function<Value(int64_t)> own = handOverSlot(e.c32(s));
    storeSums(ArrayRef(sum).slice(first, end - first),
              [&](int64_t i) { return own(first + i); });
  }
  inGroup0(acc, [&](Acc &sum) {
    for (int64_t k = 1; k < p.kGroups; ++k)
      addSlice(sum, k, splitKSlice(0, sums));
  });
  if (p.kGroups > 2)
    blockBarrier();
  inGroup0(acc, [&](Acc &sum) {
    for (int64_t s = 1; s < p.kGroups; ++s)
      addSlice(sum, s, splitKSlice(s, sums));
  });
}

/// Sums the cluster's blocks (each a K slice) into rank 0's accumulators:
/// once rank 0's pipeline memory is drained (a relaxed cluster barrier),
/// ranks 1.. store k group 0's sums into slots there through distributed
/// shared memory, a second barrier (release) publishes them, and rank 0
/// adds its slots. Pulling the sums from the ranks took a release barrier
/// (a GPU-wide membar) on both sides of the reads (docs/tensor-core.md,
/// "Cluster sums").
void TensorCoreBuilder::reduceCluster(Acc &acc) {
  if (p.clusterK == 1)
    return;
  MLIRContext *ctx = b.getContext();
  Value isGroup0 =
      arith::CmpIOp::create(b, arith::CmpIPredicate::eq, kg, e.c32(0));
  Value isRank0 =
      arith::CmpIOp::create(b, arith::CmpIPredicate::eq, rank, e.c32(0));
  blockBarrier(); // the in-block partials have been read
  NVVM::ClusterArriveRelaxedOp::create(b, UnitAttr::get(ctx));
  NVVM::ClusterWaitOp::create(b, UnitAttr::get(ctx));
  {
    OpBuilder::InsertionGuard guard(b);
    auto sender = scf::IfOp::create(
        b,
        arith::AndIOp::create(
            b, isGroup0,
            arith::CmpIOp::create(b, arith::CmpIPredicate::ne, rank, e.c32(0))),
        false);
    b.setInsertionPointToStart(sender.thenBlock());
    // One mapa; sum i is sumOffset(i) bytes past sum 0.
    auto clusterPtr = LLVM::LLVMPointerType::get(ctx, 7);
    Value remote =
        NVVM::MapaOp::create(b, clusterPtr, handOverSlot(rank)(0), e.c32(0));
    storeSums(acc, [&](int64_t i) -> Value {
      return LLVM::GEPOp::create(b, clusterPtr, e.i8(), remote,
                                 ValueRange{e.c32(sumOffset(i))});
    });
  }
  NVVM::ClusterArriveOp::create(b, UnitAttr::get(ctx));
  NVVM::ClusterWaitOp::create(b, UnitAttr::get(ctx));
  {
    OpBuilder::InsertionGuard guard(b);
    auto reader = scf::IfOp::create(
        b, TypeRange(ValueRange(acc)),
        arith::AndIOp::create(b, isGroup0, isRank0), true);
    b.setInsertionPointToStart(reader.thenBlock());
    Acc sum(acc.begin(), acc.end());
    for (int64_t r = 1; r < p.clusterK; ++r)
      addSums(sum, handOverSlot(e.c32(r)));
    scf::YieldOp::create(b, sum);
    b.setInsertionPointToStart(reader.elseBlock());
    scf::YieldOp::create(b, acc);
    for (size_t i = 0; i < acc.size(); ++i)
      acc[i] = reader.getResult(i);
  }
}
