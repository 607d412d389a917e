//===- TensorCoreProducer.cpp - wgmma steps fed by a producer warpgroup ---===//
//
// The warp-specialized wgmma kernel (Plan::producer): a producer warpgroup
// after the k groups' warps issues every cp.async of every step, and the k
// groups' warpgroups only wait for their slot, decode and multiply. Each
// (k group, slot) has two mbarriers:
//   full   completes when the 128 producer threads' copies of the step have
//          landed (cp.async.mbarrier.arrive.noinc, one arrival a thread);
//   empty  completes when the k group's threads are done with the slot
//          (after the step's wgmmas have waited), so the producer refills
//          it.
// Use u of a slot waits for phase u % 2 of its full barrier and, from the
// second use on, phase (u - 1) % 2 of its empty one: a side is never more
// than one phase ahead of the other, so parity names the phase. Nothing
// but the mbarriers orders the two sides, so the consumers run as far as
// their slots are full and the copies run `stages` steps ahead.
//
//===----------------------------------------------------------------------===//

#include "TensorCore/TensorCoreBuilder.h"

#include "Common/KernelCommon.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::qf;
using namespace mlir::qf::tensor_core;

// The named barrier of the k groups' warps once a producer exists (ids
// 1..split_k are the k groups' own).
static constexpr int64_t kConsumerBarrierId = 15;

void TensorCoreBuilder::blockBarrier() {
  if (!p.producer) {
    NVVM::Barrier0Op::create(b);
    return;
  }
  NVVM::BarrierOp::create(b, Type(), e.c32(kConsumerBarrierId),
                          e.c32(p.warps * 32), NVVM::BarrierReductionAttr(),
                          Value());
}

/// The full (or empty) mbarrier of k group `group`'s slot `slot`.
Value TensorCoreBuilder::slotBarrier(Value group, Value slot, bool empty) {
  Value index = e.add(e.mul(group, e.c32(p.stages)), slot);
  return smemAt(
      e.add(e.c32(p.barrierOff),
            e.mul(e.add(e.mul(index, e.c32(2)), e.c32(empty)), e.c32(8))));
}

/// Thread 0 initializes every slot's mbarriers; the block barrier after it
/// publishes them.
void TensorCoreBuilder::initSlotBarriers() {
  {
    OpBuilder::InsertionGuard guard(b);
    auto first = scf::IfOp::create(
        b, arith::CmpIOp::create(b, arith::CmpIPredicate::eq, tid, e.c32(0)),
        false);
    b.setInsertionPointToStart(first.thenBlock());
    for (int64_t group = 0; group < p.kGroups; ++group)
      for (int64_t slot = 0; slot < p.stages; ++slot) {
        NVVM::MBarrierInitOp::create(
            b, slotBarrier(e.c32(group), e.c32(slot), false),
            e.c32(kProducerThreads), Value());
        NVVM::MBarrierInitOp::create(
            b, slotBarrier(e.c32(group), e.c32(slot), true),
            e.c32(p.groupWarps * 32), Value());
      }
  }
  NVVM::Barrier0Op::create(b);
}

/// Waits until the phase of `barrier` with parity `parity` has completed.
/// Inline PTX: nvvm.mbarrier.try_wait.parity is built from PTX text by a
/// pass (convert-nvvm-to-llvm) this pipeline does not run.
void TensorCoreBuilder::waitSlot(Value barrier, Value parity) {
  Value address = arith::TruncIOp::create(
      b, e.i32(), LLVM::PtrToIntOp::create(b, e.i64(), barrier));
  e.ptxEffect("{\n.reg .pred done;\nwaitSlot:\n"
              "mbarrier.try_wait.parity.shared::cta.b64 done, [$0], $1;\n"
              "@!done bra waitSlot;\n}",
              "r,r", Type(), ValueRange{address, parity});
}

/// The producer warpgroup: for every step of every k group, waits for the
/// slot to be empty, issues the k group's activation copies (spread over
/// the 128 threads) and each of its warps' weight copies (producer warp w
/// copies for the k group's warps w, w + 4, lane for lane), and arrives on
/// the slot's full barrier when its copies land.
void TensorCoreBuilder::produceSteps() {
  NVVM::SetMaxRegisterOp::create(
      b, b.getI32IntegerAttr(kProducerRegisters),
      NVVM::SetMaxRegisterActionAttr::get(
          b.getContext(), NVVM::SetMaxRegisterAction::decrease));
  Value thread = e.sub(tid, e.c32(p.warps * 32));
  Value producerWarp = e.shru(thread, e.c32(5));
  int64_t slices = p.kGroups * p.clusterK;
  int64_t maxCount = (p.steps + slices - 1) / slices;
  SmallVector<std::pair<Value, Value>> ranges;
  for (int64_t group = 0; group < p.kGroups; ++group)
    ranges.push_back(stepRange(e.c32(group)));
  // Producer warp w copies for n warp w of every k group and member.
  Value savedWarp = warp, savedRow = tileRow, savedBase = nBase;
  WeightPointers saved = currentWeights();
  setTileRow(producerWarp);
  auto loop = scf::ForOp::create(b, e.c32(0), e.c32(maxCount), e.c32(1));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value it = loop.getInductionVar();
  Value slot = e.remu(it, e.c32(p.stages));
  Value use = e.divu(it, e.c32(p.stages));
  for (int64_t group = 0; group < p.kGroups; ++group) {
    auto [begin, count] = ranges[group];
    OpBuilder::InsertionGuard g2(b);
    auto active = scf::IfOp::create(b, e.ult(it, count), false);
    b.setInsertionPointToStart(active.thenBlock());
    {
      OpBuilder::InsertionGuard g3(b);
      auto refill = scf::IfOp::create(b, e.ult(e.c32(p.stages - 1), it), false);
      b.setInsertionPointToStart(refill.thenBlock());
      waitSlot(slotBarrier(e.c32(group), slot, true),
               e.band(e.add(use, e.c32(1)), e.c32(1)));
    }
    Value step = e.add(begin, it);
    issueActivations(slot, step, e.c32(group), thread, kProducerThreads);
    for (int64_t member = 0; member < p.members; ++member) {
      // The k group's warp nWarps x member + producerWarp (nWarps = 4).
      warp =
          e.add(e.c32(group * p.groupWarps + member * p.nWarps), producerWarp);
      setWeights(member ? upWeights : gateWeights);
      issueWeights(slot, step);
    }
    NVVM::CpAsyncMBarrierArriveOp::create(
        b, slotBarrier(e.c32(group), slot, false), b.getBoolAttr(true));
  }
  warp = savedWarp;
  tileRow = savedRow;
  nBase = savedBase;
  setWeights(saved);
}

/// A k group's warpgroup: its steps two at a time, so that the A
/// fragments of a step in flight and those of the next are different
/// registers (a loop of one step would decode into the registers its
/// previous step's wgmmas are still reading).
TensorCoreBuilder::Acc TensorCoreBuilder::consumeSteps() {
  NVVM::SetMaxRegisterOp::create(
      b, b.getI32IntegerAttr(p.consumerRegisters),
      NVVM::SetMaxRegisterActionAttr::get(
          b.getContext(), NVVM::SetMaxRegisterAction::increase));
  auto [begin, count] = stepRange(kg);
  SmallVector<Value> init(p.mTiles * 16, e.cf32(0.0));
  Value pairs = e.band(count, e.c32(~int64_t(1)));
  auto loop = scf::ForOp::create(b, e.c32(0), pairs, e.c32(2), init);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value it = loop.getInductionVar();
    Acc acc = consumeStep(it, begin, loop.getRegionIterArgs());
    scf::YieldOp::create(b, consumeStep(e.add(it, e.c32(1)), begin, acc));
  }
  // An odd last step; either way every wgmma is waited for inside the
  // branch, since moving an accumulator that a wgmma in flight writes
  // (the branch's result) would make ptxas serialize them all.
  Acc acc(loop.getResults().begin(), loop.getResults().end());
  auto last = scf::IfOp::create(b, TypeRange(ValueRange(acc)),
                                e.ult(pairs, count), true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(last.thenBlock());
  Acc tail = consumeStep(pairs, begin, acc);
  waitWgmmas(tail, 0);
  scf::YieldOp::create(b, tail);
  b.setInsertionPointToStart(last.elseBlock());
  Acc done = acc;
  waitWgmmas(done, 0);
  scf::YieldOp::create(b, done);
  return Acc(last.getResults().begin(), last.getResults().end());
}

/// Step `it` of the k group: waits for its slot to be full, decodes it and
/// issues its wgmmas, then waits for the previous step's (this one's stay
/// in flight) and releases the previous step's slot.
TensorCoreBuilder::Acc TensorCoreBuilder::consumeStep(Value it, Value begin,
                                                      ValueRange accIn) {
  Value slot = e.remu(it, e.c32(p.stages));
  waitSlot(slotBarrier(kg, slot, false),
           e.band(e.divu(it, e.c32(p.stages)), e.c32(1)));
  // The activations landed through the generic proxy; wgmma reads them
  // through the async one.
  NVVM::FenceProxyOp::create(
      b,
      NVVM::ProxyKindAttr::get(b.getContext(), NVVM::ProxyKind::async_shared),
      NVVM::SharedSpaceAttr::get(b.getContext(),
                                 NVVM::SharedSpace::shared_cta));
  Acc acc = computeStep(slot, e.add(begin, it), accIn);
  OpBuilder::InsertionGuard guard(b);
  auto release = scf::IfOp::create(b, e.ult(e.c32(0), it), false);
  b.setInsertionPointToStart(release.thenBlock());
  Value previous = e.remu(e.add(it, e.c32(p.stages - 1)), e.c32(p.stages));
  NVVM::MBarrierArriveOp::create(
      b, Type(), slotBarrier(kg, previous, true), Value(),
      NVVM::MemScopeKindAttr::get(b.getContext(), NVVM::MemScopeKind::CTA));
  return acc;
}
