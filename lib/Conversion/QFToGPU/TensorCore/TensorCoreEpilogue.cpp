//===- TensorCoreEpilogue.cpp - Scales, fusions and stores ------------------===//
//
// The output epilogue: deferred scales, bias, residual, silu_mul and the
// stores of the mma.sync and wgmma accumulator layouts.
//===----------------------------------------------------------------------===//

#include "TensorCore/TensorCoreBuilder.h"

#include "Common/KernelCommon.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "qfuse/format/MmaLayout.h"

using namespace mlir;
using namespace mlir::qf;
using namespace mlir::qf::tensor_core;

/// The wgmma kernel's accumulators are transposed: half h (the wgmma of
/// tile rows 16 h..16 h + 15) holds, for each 8-column chunk i of the
/// batch, entry h * block_m / 2 + 4 i + 2 q + c = (weight row
/// nBase + 16 h + 8 q + g, batch row mBase + 8 i + 2 t + c). This returns
/// them with each row's deferred per-channel scale and the inverse global
/// scale applied.
TensorCoreBuilder::Acc TensorCoreBuilder::scaleWgmmaOutputs(const Acc &acc) {
  const int64_t half = p.blockM / 2;
  Value invGlobal;
  if (spec.encoding.getGlobalScale())
    invGlobal = e.fdiv(e.cf32(1.0), e.loadRO(e.f32(), globalScale, 4));
  Acc total(acc.begin(), acc.end());
  for (int64_t h = 0; h < 2; ++h)
    for (int64_t q = 0; q < 2; ++q) {
      Value row = e.add(nBase, e.add(e.c32(16 * h + 8 * q), g));
      Value factor = invGlobal;
      if (p.deferScale) { // per channel: the K loop summed unscaled values
        Value byte = e.mul(e.zext64(scaleRow(row)), e.c64(p.scaleBytes));
        Value word = e.loadRO(
            e.i32(),
            e.gepBytes(scales,
                       arith::AndIOp::create(b, byte, e.c64(~int64_t(3)))),
            4);
        Value s = scaleF32(word, scaleRow(row));
        factor = factor ? e.fmul(s, factor) : s;
      }
      if (!factor)
        continue;
      for (int64_t i = 0; i < p.blockM / 8; ++i)
        for (int64_t c = 0; c < 2; ++c) {
          Value &v = total[h * half + 4 * i + 2 * q + c];
          v = e.fmul(v, factor);
        }
    }
  return total;
}

/// Epilogue of the wgmma kernel (scaleWgmmaOutputs' layout): adjacent
/// registers are adjacent batch rows, so each output element is stored by
/// itself (8 lanes write 16 contiguous bytes of one batch row). Under
/// silu_mul the up warpgroup stores silu(gate) * up from the gate
/// warpgroup's sums (enterStoringThreads).
void TensorCoreBuilder::storeWgmmaOutputs(const Acc &acc) {
  OpBuilder::InsertionGuard guard(b);
  const int64_t half = p.blockM / 2;
  Acc total = scaleWgmmaOutputs(acc);
  // block_m = 128: 128 sums of each weight a lane; the gate's are read one
  // at a time (all of them beside the up's would spill).
  enterStoringThreads(total, /*loadGate=*/false);
  for (int64_t h = 0; h < 2; ++h)
    for (int64_t q = 0; q < 2; ++q) {
      Value row = e.add(nBase, e.add(e.c32(16 * h + 8 * q), g));
      Value biasValue;
      if (spec.hasBias)
        biasValue = e.extf32(e.loadRO(
            act(), e.gepBytes(bias, e.mul(e.zext64(scaleRow(row)), e.c64(2))),
            2));
      OpBuilder::InsertionGuard g2(b);
      if (p.nTail) {
        auto inN = scf::IfOp::create(b, e.ult(row, nOut), false);
        b.setInsertionPointToStart(inN.thenBlock());
      }
      Value column = yOrder ? storedColumn(2 * h + q) : row;
      // The lane's elements lie 8 i + c batch rows below its first: one
      // address each for y and the residual, and a stride (a constant for
      // a lone weight) that the stores take as an immediate, so that no
      // element's address is a register of its own beside the sums.
      Value firstRow = e.add(mBase, e.mul(t4, e.c32(2)));
      auto firstOf = [&](Value base, Value col) {
        return e.gepBytes(
            base, e.mul(e.zext64(e.add(e.mul(firstRow, nOut), col)), e.c64(2)));
      };
      Value yFirst = firstOf(y, column);
      Value residualFirst = spec.hasResidual ? firstOf(residual, row) : Value();
      for (int64_t i = 0; i < p.blockM / 8; ++i)
        for (int64_t c = 0; c < 2; ++c) {
          OpBuilder::InsertionGuard g3(b);
          if (p.m % p.blockM != 0) {
            Value batchRow = e.add(firstRow, e.c32(8 * i + c));
            auto inM =
                scf::IfOp::create(b, e.ult(batchRow, e.c32(p.m)), false);
            b.setInsertionPointToStart(inM.thenBlock());
          }
          Value below =
              e.mul(e.zext64(e.mul(e.c32(8 * i + c), nOut)), e.c64(2));
          const int64_t at = h * half + 4 * i + 2 * q + c;
          Value v = total[at];
          if (spec.gated)
            v = e.siluMul(LLVM::LoadOp::create(b, e.f32(), parkedSum(at), 4),
                          v);
          if (biasValue)
            v = e.fadd(v, biasValue);
          if (residualFirst)
            v = e.fadd(v, e.extf32(e.loadRO(
                              act(), e.gepBytes(residualFirst, below), 2)));
          e.store(e.truncTo(act(), v), e.gepBytes(yFirst, below), 2);
        }
    }
}

/// The accumulators with the deferred per-channel scales (the K loop summed
/// unscaled values) and the inverse global scale applied.
TensorCoreBuilder::Acc TensorCoreBuilder::scaleOutputs(const Acc &acc) {
  SmallVector<Value> channelScale;
  if (p.deferScale && p.perChannel)
    channelScale = columnScales(
        [&](Value row) {
          Value byte = e.mul(e.zext64(scaleRow(row)), e.c64(p.scaleBytes));
          return e.loadRO(
              e.i32(),
              e.gepBytes(scales,
                         arith::AndIOp::create(b, byte, e.c64(~int64_t(3)))),
              4);
        },
        e.c32(0));
  Value invGlobal;
  if (spec.encoding.getGlobalScale())
    invGlobal = e.fdiv(e.cf32(1.0), e.loadRO(e.f32(), globalScale, 4));
  Acc total(acc.begin(), acc.end());
  for (int64_t mt = 0; mt < p.mTiles; ++mt)
    for (int64_t j = 0; j < 4; ++j)
      for (int64_t i = 0; i < 4; ++i) {
        Value &v = total[(mt * 4 + j) * 4 + i];
        if (!channelScale.empty())
          v = e.fmul(v, channelScale[2 * j + i % 2]);
        if (invGlobal)
          v = e.fmul(v, invGlobal);
      }
  return total;
}

/// Moves the builder into the block of the threads that store: k group 0 of
/// cluster rank 0, and under silu_mul its up warps, to which the gate warps
/// hand their sums (parkedSum). Returns those gate sums (empty without
/// silu_mul, or with `loadGate` false: the caller reads each parkedSum
/// where it needs it, so that the gate's sums are never all live beside
/// the up's).
TensorCoreBuilder::Acc
TensorCoreBuilder::enterStoringThreads(const Acc &total, bool loadGate) {
  Value owns = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, kg, e.c32(0));
  if (p.clusterK > 1)
    owns = arith::AndIOp::create(
        b, owns,
        arith::CmpIOp::create(b, arith::CmpIPredicate::eq, rank, e.c32(0)));
  Acc gate;
  if (p.members > 1) {
    // The gate warps of k group 0 park their sums (the split-K partials in
    // the same shared memory have been read: barrier first).
    int64_t per = p.mTiles * 16;
    Value isUp =
        arith::CmpIOp::create(b, arith::CmpIPredicate::eq, member, e.c32(1));
    blockBarrier();
    {
      OpBuilder::InsertionGuard g2(b);
      Value isGate =
          arith::CmpIOp::create(b, arith::CmpIPredicate::eq, member, e.c32(0));
      auto writer =
          scf::IfOp::create(b, arith::AndIOp::create(b, owns, isGate), false);
      b.setInsertionPointToStart(writer.thenBlock());
      storeSums(total, [&](int64_t i) { return parkedSum(i); });
    }
    blockBarrier();
    owns = arith::AndIOp::create(b, owns, isUp);
    auto reader = scf::IfOp::create(b, owns, false);
    b.setInsertionPointToStart(reader.thenBlock());
    if (loadGate)
      gate = loadSums(per, [&](int64_t i) { return parkedSum(i); });
  } else if (p.kGroups > 1 || p.clusterK > 1) {
    auto owner = scf::IfOp::create(b, owns, false);
    b.setInsertionPointToStart(owner.thenBlock());
  }
  return gate;
}

/// Applies silu_mul, bias and residual to n tile j's columns of every m tile
/// and stores them. Columns past N (the padding rows of the last tile row)
/// are not stored, and their bias and residual reads are clamped to the last
/// column. With an odd N a pair is not 4-byte aligned: elements go one at a
/// time.
void TensorCoreBuilder::storeTileColumns(int64_t j, const Acc &total,
                                         const Acc &gate) {
  auto elementOffset = [&](Value row, Value col) {
    return e.mul(e.zext64(e.add(e.mul(row, nOut), col)), e.c64(2));
  };
  auto lastCol = [&](int64_t from) { return e.sub(nOut, e.c32(from)); };
  Value col = e.add(nBase, e.add(e.c32(8 * j), e.mul(t4, e.c32(2))));
  // The (clamped) columns of the pair's two elements.
  SmallVector<Value> cols = {col, e.add(col, e.c32(1))};
  if (p.nTail)
    cols = p.oddN ? SmallVector<Value>{e.minu(cols[0], lastCol(1)),
                                       e.minu(cols[1], lastCol(1))}
                  : SmallVector<Value>{e.minu(col, lastCol(2))};
  // f32 values of the bias or residual pair at (row, cols), or of a
  // bias when `row` is null.
  auto loadPair = [&](Value base, Value row) {
    SmallVector<Value> values;
    auto at = [&](Value c) {
      return row ? elementOffset(row, c) : e.mul(e.zext64(c), e.c64(2));
    };
    if (p.oddN) {
      for (Value c : cols)
        values.push_back(
            e.extf32(e.loadRO(act(), e.gepBytes(base, at(c)), 2)));
      return values;
    }
    Value pair = e.loadRO(actPair(), e.gepBytes(base, at(cols[0])), 4);
    for (int64_t i = 0; i < 2; ++i)
      values.push_back(e.extf32(e.extract(pair, i)));
    return values;
  };
  SmallVector<Value> biasValues;
  if (spec.hasBias)
    biasValues = loadPair(bias, Value());
  for (int64_t mt = 0; mt < p.mTiles; ++mt)
    for (int64_t h = 0; h < 2; ++h) {
      Value row = e.add(mBase, e.add(e.c32(mt * 16 + 8 * h), g));
      OpBuilder::InsertionGuard g2(b);
      Value inRange = e.ult(row, e.c32(p.m));
      if (p.nTail && !p.oddN) // col even, N even: col + 1 < N too
        inRange = arith::AndIOp::create(b, inRange, e.ult(col, nOut));
      auto ifIn = scf::IfOp::create(b, inRange, false);
      b.setInsertionPointToStart(ifIn.thenBlock());
      int64_t base = (mt * 4 + j) * 4 + 2 * h;
      SmallVector<Value> resValues;
      if (spec.hasResidual)
        resValues = loadPair(residual, row);
      SmallVector<Value> out;
      for (int64_t i = 0; i < 2; ++i) {
        Value v = total[base + i];
        if (spec.gated)
          v = e.siluMul(gate.empty() ? LLVM::LoadOp::create(
                                           b, e.f32(), parkedSum(base + i), 4)
                                     : gate[base + i],
                        v);
        if (!biasValues.empty())
          v = e.fadd(v, biasValues[i]);
        if (!resValues.empty())
          v = e.fadd(v, resValues[i]);
        out.push_back(e.truncTo(act(), v));
      }
      // A pair goes as two stores when N is odd (not 4-byte aligned) or
      // its columns are scattered.
      if (p.oddN || yOrder) {
        for (int64_t i = 0; i < 2; ++i) {
          Value c = e.add(col, e.c32(i));
          OpBuilder::InsertionGuard g3(b);
          auto ifCol = scf::IfOp::create(b, e.ult(c, nOut), false);
          b.setInsertionPointToStart(ifCol.thenBlock());
          Value at = yOrder ? storedColumn(2 * j + i) : c;
          e.store(out[i], e.gepBytes(y, elementOffset(row, at)), 2);
        }
        continue;
      }
      Value pair = LLVM::UndefOp::create(b, actPair());
      for (int64_t i = 0; i < 2; ++i)
        pair = LLVM::InsertElementOp::create(b, pair, out[i], e.c32(i));
      e.store(pair, e.gepBytes(y, elementOffset(row, col)), 4);
    }
}

/// Under spec.scatterOutput, loads y_order[n] of every output column n
/// this thread stores, before the main loop, so that the epilogue's
/// scattered stores do not wait for them. Columns past N (a tail tile)
/// read the last one; their stores are skipped.
void TensorCoreBuilder::loadStoredColumns() {
  if (!yOrder)
    return;
  Value last = e.sub(nOut, e.c32(1));
  for (int64_t slot = 0; slot < (p.wgmma ? 4 : 8); ++slot) {
    Value col = p.wgmma ? e.add(nBase, e.add(e.c32(16 * (slot / 2) +
                                                   8 * (slot % 2)),
                                              g))
                        : e.add(nBase, e.add(e.c32(8 * (slot / 2) + slot % 2),
                                              e.mul(t4, e.c32(2))));
    Value byte = e.mul(e.zext64(e.minu(col, last)), e.c64(4));
    storedColumns.push_back(e.loadRO(e.i32(), e.gepBytes(yOrder, byte), 4));
  }
}

/// The column of y that this thread's output column `slot`
/// (storedColumns) is stored at.
Value TensorCoreBuilder::storedColumn(int64_t slot) {
  return storedColumns[slot];
}

/// Epilogue and store of k group 0's accumulators: c0, c1 are (row g,
/// columns 2t, 2t+1) of an m16n8 tile, c2, c3 the same at row g + 8. Each
/// warp first finishes its own weight's sums (deferred per-channel scale,
/// NVFP4 global scale); under silu_mul the gate warps then hand theirs to
/// the up warps, which store silu(gate) * up.
void TensorCoreBuilder::storeOutputs(const Acc &acc) {
  if (p.wgmma)
    return storeWgmmaOutputs(acc);
  OpBuilder::InsertionGuard guard(b);
  Acc total = scaleOutputs(acc);
  // The gate's sums beside the up's where both fit a lane's registers, else
  // each read where it is used (block_m 128: 256 sums; ptxas spilled).
  Acc gate = enterStoringThreads(total, /*loadGate=*/twoSumSetsFit());
  for (int64_t j = 0; j < 4; ++j)
    storeTileColumns(j, total, gate);
}
