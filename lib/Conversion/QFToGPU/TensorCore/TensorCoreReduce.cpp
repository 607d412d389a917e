//===- TensorCoreReduce.cpp - Split-K and cluster sums ----------------------===//
//
// The k groups of a block summed through shared memory, and the blocks of
// a thread-block cluster through distributed shared memory.
//===----------------------------------------------------------------------===//

#include "TensorCore/TensorCoreBuilder.h"

#include "Common/KernelCommon.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "qfuse/format/MmaLayout.h"

using namespace mlir;
using namespace mlir::qf;
using namespace mlir::qf::tensor_core;

/// Where this lane parks accumulator `i` for another warp or block to read
/// (the cluster sum, the gate sums of silu_mul): n warp nw's region of the
/// drained pipeline memory, lanes interleaved so the accesses are
/// conflict-free.
Value TensorCoreBuilder::parkedSum(int64_t i) {
  Value idx = e.add(e.mul(nw, e.c32(p.mTiles * 16)), e.c32(i));
  return smemAt(e.mul(e.add(e.mul(idx, e.c32(32)), lane), e.c32(4)));
}

/// Sums the k groups' accumulators into k group 0's, through the (drained)
/// pipeline shared memory.
void TensorCoreBuilder::reduceSplitK(Acc &acc) {
  if (p.kGroups == 1)
    return;
  int64_t per = p.mTiles * 16; // accumulators per lane
  blockBarrier();
  auto slotOf = [&](Value group, int64_t i) {
    Value idx = e.add(
        e.mul(e.add(e.mul(e.sub(group, e.c32(1)), e.c32(p.groupWarps)),
                    columnWarp),
              e.c32(per)),
        e.c32(i));
    return smemAt(e.mul(e.add(e.mul(idx, e.c32(32)), lane), e.c32(4)));
  };
  {
    OpBuilder::InsertionGuard guard(b);
    auto writer = scf::IfOp::create(
        b, arith::CmpIOp::create(b, arith::CmpIPredicate::ne, kg, e.c32(0)),
        false);
    b.setInsertionPointToStart(writer.thenBlock());
    for (int64_t i = 0; i < per; ++i)
      LLVM::StoreOp::create(b, acc[i], slotOf(kg, i), 4);
  }
  blockBarrier();
  // Every warp reads (cheap, shared memory); only group 0 stores.
  for (int64_t other = 1; other < p.kGroups; ++other)
    for (int64_t i = 0; i < per; ++i)
      acc[i] = e.fadd(acc[i], LLVM::LoadOp::create(b, e.f32(),
                                                   slotOf(e.c32(other), i), 4));
}

/// Sums the cluster's blocks (each a K slice) into rank 0's accumulators:
/// every block parks k group 0's sums in its own shared memory, the cluster
/// barrier publishes them, rank 0 reads the others' through distributed
/// shared memory (mapa), and a second barrier keeps them alive until read.
void TensorCoreBuilder::reduceCluster(Acc &acc) {
  if (p.clusterK == 1)
    return;
  MLIRContext *ctx = b.getContext();
  int64_t per = p.mTiles * 16;
  Value isGroup0 =
      arith::CmpIOp::create(b, arith::CmpIPredicate::eq, kg, e.c32(0));
  Value isRank0 =
      arith::CmpIOp::create(b, arith::CmpIPredicate::eq, rank, e.c32(0));
  blockBarrier(); // the in-block partials have been read
  {
    OpBuilder::InsertionGuard guard(b);
    auto writer = scf::IfOp::create(
        b, arith::AndIOp::create(b, isGroup0, e.ult(e.c32(0), rank)), false);
    b.setInsertionPointToStart(writer.thenBlock());
    for (int64_t i = 0; i < per; ++i)
      LLVM::StoreOp::create(b, acc[i], parkedSum(i), 4);
  }
  NVVM::ClusterArriveOp::create(b, UnitAttr::get(ctx));
  NVVM::ClusterWaitOp::create(b, UnitAttr::get(ctx));
  {
    OpBuilder::InsertionGuard guard(b);
    auto reader = scf::IfOp::create(
        b, TypeRange(ValueRange(acc)),
        arith::AndIOp::create(b, isGroup0, isRank0), true);
    b.setInsertionPointToStart(reader.thenBlock());
    auto clusterPtr = LLVM::LLVMPointerType::get(ctx, 7);
    Acc sum(acc.begin(), acc.end());
    for (int64_t r = 1; r < p.clusterK; ++r) {
      // One mapa per rank; the lane's slots are 128 bytes apart.
      Value remote = NVVM::MapaOp::create(b, clusterPtr, parkedSum(0), e.c32(r));
      for (int64_t i = 0; i < per; ++i) {
        Value ptr = LLVM::GEPOp::create(b, clusterPtr, e.i8(), remote,
                                        ValueRange{e.c32(i * 32 * 4)});
        sum[i] = e.fadd(sum[i], LLVM::LoadOp::create(b, e.f32(), ptr, 4));
      }
    }
    scf::YieldOp::create(b, sum);
    b.setInsertionPointToStart(reader.elseBlock());
    scf::YieldOp::create(b, acc);
    for (int64_t i = 0; i < per; ++i)
      acc[i] = reader.getResult(i);
  }
  NVVM::ClusterArriveOp::create(b, UnitAttr::get(ctx));
  NVVM::ClusterWaitOp::create(b, UnitAttr::get(ctx));
}
