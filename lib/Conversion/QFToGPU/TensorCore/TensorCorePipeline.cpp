//===- TensorCorePipeline.cpp - The cp.async pipeline -----------------------===//
//
// Shared-memory addressing, barriers and one pipeline step: the activation
// tile, the code tiles and the scales of a block_k step copied with cp.async.
//===----------------------------------------------------------------------===//

#include "TensorCore/TensorCoreBuilder.h"

#include "Common/KernelCommon.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "qfuse/format/MmaLayout.h"

#include <numeric>

using namespace mlir;
using namespace mlir::qf;
using namespace mlir::qf::tensor_core;

Value TensorCoreBuilder::smemAt(Value byteOffset) {
  auto sharedPtr = LLVM::LLVMPointerType::get(b.getContext(), 3);
  return LLVM::GEPOp::create(b, sharedPtr, e.i8(), smem,
                             ValueRange{byteOffset});
}

/// Synchronizes the warps of this thread's k group: a named barrier per
/// group (ids 1..split_k), since groups may run different step counts.
void TensorCoreBuilder::barrier() {
  if (p.kGroups == 1) {
    NVVM::Barrier0Op::create(b);
    return;
  }
  NVVM::BarrierOp::create(b, Type(), e.add(kg, e.c32(1)),
                          e.c32(p.groupWarps * 32), NVVM::BarrierReductionAttr(),
                          Value());
}

/// Group index of the gi-th scale group of K step `step`. A last step that
/// runs past K takes the last group's scale for the columns past it (their
/// activations are zero).
Value TensorCoreBuilder::groupOfStep(Value step, int64_t gi) {
  if (p.perChannel)
    return e.c32(0);
  Value group =
      p.groupSize <= p.blockK
          ? e.add(e.mul(step, e.c32(p.blockK / p.groupSize)), e.c32(gi))
          : e.divu(e.mul(step, e.c32(p.blockK)), e.c32(p.groupSize));
  return p.kTail ? e.minu(group, e.c32(p.numGroups - 1)) : group;
}

/// The row whose scales and zeros stand for weight row `row`: itself, or
/// the member's last row for the padding rows past N (their outputs are
/// never stored). Every read of a (row, group) entry goes through it, so
/// that the word a lane copies and the element it extracts agree.
Value TensorCoreBuilder::scaleRow(Value row) {
  return p.nTail ? e.minu(row, e.sub(nOut, e.c32(1))) : row;
}

/// Starts the copies of K step `step` into pipeline slot `slot`: the k
/// group's activations, spread over its threads, and this warp's weights.
void TensorCoreBuilder::issueStep(Value slot, Value step) {
  issueActivations(slot, step, kg, tgInGroup, p.groupWarps * 32);
  issueWeights(slot, step);
}

/// Starts the copies of k group `group`'s activations of K step `step` into
/// pipeline slot `slot`: block_m x block_k halves, 16-byte chunks spread
/// over `threads` threads, this one being `thread`; rows past M are
/// zero-filled (source size 0, source address clamped to a valid row).
void TensorCoreBuilder::issueActivations(Value slot, Value step, Value group,
                                         Value thread, int64_t threads) {
  MLIRContext *ctx = b.getContext();
  auto ca = NVVM::LoadCacheModifierKindAttr::get(ctx,
                                                 NVVM::LoadCacheModifierKind::CA);
  Value k0 = e.mul(step, e.c32(p.blockK));
  int64_t chunksPerRow = p.blockK / 8;
  int64_t chunks = p.blockM * chunksPerRow;
  Value aBase = e.add(e.c32(p.aOff),
                      e.mul(e.add(e.mul(slot, e.c32(p.kGroups)), group),
                            e.c32(p.aBytes)));
  // Where each pass of the threads covers whole rows, passes whose rows
  // lie a multiple of 8 (the swizzle's period) apart give a thread chunks
  // of the same column and swizzle, a constant stride apart in shared
  // memory and, with no row past M to clamp, in x too: one address for
  // each of the first `period` passes, the later ones plus constants.
  int64_t rowsPerPass = threads / chunksPerRow;
  bool stridedRows = threads % chunksPerRow == 0;
  int64_t period = stridedRows ? 8 / std::gcd<int64_t>(rowsPerPass, 8) : 0;
  bool wholeRows = p.m % p.blockM == 0;
  for (int64_t i = 0; i * threads < chunks; ++i) {
    auto emitChunk = [&]() {
      int64_t first = stridedRows ? i % period : i;
      int64_t passRows = (i - first) * rowsPerPass;
      Value c = e.add(thread, e.c32(first * threads));
      Value r = e.divu(c, e.c32(chunksPerRow));
      Value col = e.remu(c, e.c32(chunksPerRow));
      Value row = e.add(mBase, r);
      if (!wholeRows && passRows)
        row = e.add(row, e.c32(passRows));
      Value kcol = e.add(k0, e.mul(col, e.c32(8)));
      Value valid = wholeRows ? Value() : e.ult(row, e.c32(p.m));
      Value clamped = wholeRows ? row : e.minu(row, e.c32(p.m - 1));
      if (p.kTail) { // columns past K are zero too (K % 8 == 0)
        Value inK = e.ult(kcol, e.c32(p.k));
        valid = valid ? arith::AndIOp::create(b, valid, inK).getResult() : inK;
        kcol = e.minu(kcol, e.c32(p.k - 8));
      }
      Value src = e.gepBytes(
          x, e.mul(e.zext64(e.add(e.mul(clamped, e.c32(p.k)), kcol)),
                   e.c64(2)));
      Value swz = arith::XOrIOp::create(b, col, e.band(r, e.c32(7)));
      Value dstOff = e.add(aBase, e.add(e.mul(r, e.c32(p.blockK * 2)),
                                        e.mul(swz, e.c32(16))));
      if (passRows) {
        dstOff = e.add(dstOff, e.c32(passRows * p.blockK * 2));
        if (wholeRows)
          src = e.gepBytes(src, e.c64(passRows * p.k * 2));
      }
      Value size = valid ? arith::SelectOp::create(b, valid, e.c32(16),
                                                   e.c32(0))
                                 .getResult()
                         : Value();
      // .ca: every block of an SM reads the same activation slice for its
      // k group, so L1 serves the repeats; codes stream through .cg.
      NVVM::CpAsyncOp::create(b, smemAt(dstOff), src, b.getI32IntegerAttr(16),
                              ca, size);
    };
    if ((i + 1) * threads <= chunks) {
      emitChunk();
    } else {
      OpBuilder::InsertionGuard guard(b);
      auto inRange = scf::IfOp::create(
          b, e.ult(thread, e.c32(chunks - i * threads)), false);
      b.setInsertionPointToStart(inRange.thenBlock());
      emitChunk();
    }
  }
}

/// Starts the copies of this warp's code tiles, scales and zeros of K step
/// `step` into pipeline slot `slot`, each lane its own fragments' share.
void TensorCoreBuilder::issueWeights(Value slot, Value step) {
  auto ca = NVVM::LoadCacheModifierKindAttr::get(
      b.getContext(), NVVM::LoadCacheModifierKind::CA);
  Value warpSlot = e.add(e.mul(slot, e.c32(p.warps)), warp);
  if (p.sparse24)
    issueSparseCodes(warpSlot, step);
  else
    issueCodeTiles(warpSlot, step);
  if (!spec.encoding.isQuantized()) // 2:4 f16: no scales
    return;
  // Scales and zeros: the aligned 32-bit word holding row
  // nBase + 8 (lane % 4) + lane / 4's entry (the runtime allocates weight
  // components in whole 16-byte units, so no word runs past the buffer).
  Value row = scaleRow(e.add(nBase, e.add(e.mul(t4, e.c32(8)), g)));
  if (p.scaleRunBytes) {
    // The row's scales of the step, one run (loadStepGroup reads it back).
    Value first = e.mul(e.zext64(e.add(e.mul(row, e.c32(p.numGroups)),
                                       groupOfStep(step, 0))),
                        e.c64(p.scaleBytes));
    Value dst = e.add(groupSlotBase(warpSlot, 0),
                      e.mul(lane, e.c32(p.scaleRunBytes)));
    NVVM::CpAsyncOp::create(b, smemAt(e.add(e.c32(p.sOff), dst)),
                            e.gepBytes(scales, first),
                            b.getI32IntegerAttr(p.scaleRunBytes), ca, Value());
  }
  for (int64_t gi = 0; gi < p.groupsPerStep; ++gi) {
    Value group = groupOfStep(step, gi);
    Value slotOff = e.add(e.mul(e.add(e.mul(warpSlot, e.c32(p.groupsPerStep)),
                                      e.c32(gi)),
                                e.c32(128)),
                          e.mul(lane, e.c32(4)));
    Value sByte = e.mul(e.zext64(e.add(e.mul(row, e.c32(p.numGroups)), group)),
                        e.c64(p.scaleBytes));
    Value sWord = arith::AndIOp::create(b, sByte, e.c64(~int64_t(3)));
    if (!p.scaleRunBytes)
      NVVM::CpAsyncOp::create(b, smemAt(e.add(e.c32(p.sOff), slotOff)),
                              e.gepBytes(scales, sWord),
                              b.getI32IntegerAttr(4), ca, Value());
    if (p.intZeros && (gi == 0 || !p.zeroWordPerStep)) {
      Value zByte =
          e.add(e.mul(e.zext64(row), e.c64(p.zeroRowBytes)),
                e.zext64(e.shru(e.mul(group, e.c32(p.codeBits)), e.c32(3))));
      Value zWord = arith::AndIOp::create(b, zByte, e.c64(~int64_t(3)));
      NVVM::CpAsyncOp::create(b, smemAt(e.add(e.c32(p.zOff), slotOff)),
                              e.gepBytes(zeros, zWord), b.getI32IntegerAttr(4),
                              ca, Value());
    } else if (p.floatZeros) {
      // Float zero points are [N, G] of the scale type, like the scales:
      // the same word of the zeros.
      NVVM::CpAsyncOp::create(b, smemAt(e.add(e.c32(p.zOff), slotOff)),
                              e.gepBytes(zeros, sWord), b.getI32IntegerAttr(4),
                              ca, Value());
    }
  }
}

/// Starts the copies of this warp's code tiles of K step `step` into its
/// slot `warpSlot`: 4-bit codes 16 bytes per lane and tile, 8-bit codes 32
/// (two copies), each lane its own fragments; 2- and 3-bit codes, whose
/// lanes own 8 (+ 4) bytes of a tile, as 16-byte chunks spread over the
/// lanes (issueSmallCodeTiles).
void TensorCoreBuilder::issueCodeTiles(Value warpSlot, Value step) {
  if (p.codeBits < 4)
    return issueSmallCodeTiles(warpSlot, step);
  MLIRContext *ctx = b.getContext();
  auto cg = NVVM::LoadCacheModifierKindAttr::get(ctx,
                                                 NVVM::LoadCacheModifierKind::CG);
  Value firstTile = e.mul(step, e.c32(p.kTilesPerStep));
  int64_t laneBytesPerTile = p.tileBytes / 32;
  for (int64_t kt = 0; kt < p.kTilesPerStep; ++kt)
    for (int64_t h = 0; h < laneBytesPerTile / 16; ++h) {
      Value inTile = e.add(e.mul(lane, e.c32(laneBytesPerTile)), e.c32(16 * h));
      // A last step past the padded K zero-fills its missing tiles.
      Value tk = e.add(firstTile, e.c32(kt));
      Value size;
      if (p.kTail) {
        size = arith::SelectOp::create(b, e.ult(tk, e.c32(p.kTiles)),
                                       e.c32(16), e.c32(0));
        tk = e.minu(tk, e.c32(p.kTiles - 1));
      }
      Value tile = e.add(e.mul(tileRow, e.c32(p.kTiles)), tk);
      Value src = e.gepBytes(
          codes, e.add(e.mul(e.zext64(tile), e.c64(p.tileBytes)),
                       e.zext64(inTile)));
      Value dst = smemAt(e.add(
          e.c32(p.bOff),
          e.add(e.mul(e.add(e.mul(warpSlot, e.c32(p.kTilesPerStep)),
                            e.c32(kt)),
                      e.c32(p.tileBytes)),
                inTile)));
      NVVM::CpAsyncOp::create(b, dst, src, b.getI32IntegerAttr(16), cg, size);
    }
}

/// 2- and 3-bit codes: a warp's tiles of one step are contiguous in the
/// codes (tile row, then k tile) and in its slot, block_k / 32 x 256 (384)
/// bytes, so they move as 16-byte chunks, chunk c by lane c % 32; chunk c
/// is bytes [16 c % tileBytes, + 16) of the step's tile 16 c / tileBytes.
void TensorCoreBuilder::issueSmallCodeTiles(Value warpSlot, Value step) {
  auto cg = NVVM::LoadCacheModifierKindAttr::get(
      b.getContext(), NVVM::LoadCacheModifierKind::CG);
  Value firstTile = e.mul(step, e.c32(p.kTilesPerStep));
  int64_t chunksPerTile = p.tileBytes / 16;
  int64_t chunks = p.kTilesPerStep * chunksPerTile;
  Value slotBase = e.add(
      e.c32(p.bOff), e.mul(warpSlot, e.c32(p.kTilesPerStep * p.tileBytes)));
  for (int64_t i = 0; i * 32 < chunks; ++i) {
    auto emitChunk = [&]() {
      Value c = e.add(lane, e.c32(i * 32));
      Value inTile = e.mul(e.remu(c, e.c32(chunksPerTile)), e.c32(16));
      // A last step past the padded K zero-fills its missing tiles.
      Value tk = e.add(firstTile, e.divu(c, e.c32(chunksPerTile)));
      Value size;
      if (p.kTail) {
        size = arith::SelectOp::create(b, e.ult(tk, e.c32(p.kTiles)),
                                       e.c32(16), e.c32(0));
        tk = e.minu(tk, e.c32(p.kTiles - 1));
      }
      Value tile = e.add(e.mul(tileRow, e.c32(p.kTiles)), tk);
      Value src = e.gepBytes(
          codes, e.add(e.mul(e.zext64(tile), e.c64(p.tileBytes)),
                       e.zext64(inTile)));
      Value dst = smemAt(e.add(slotBase, e.mul(c, e.c32(16))));
      NVVM::CpAsyncOp::create(b, dst, src, b.getI32IntegerAttr(16), cg, size);
    };
    if ((i + 1) * 32 <= chunks) {
      emitChunk();
    } else {
      OpBuilder::InsertionGuard guard(b);
      auto inRange = scf::IfOp::create(
          b, e.ult(lane, e.c32(chunks - i * 32)), false);
      b.setInsertionPointToStart(inRange.thenBlock());
      emitChunk();
    }
  }
}
