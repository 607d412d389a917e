//===- MatVecBody.cpp - Matvec activations, inner loop and epilogue -------===//
//
// The RMSNorm prologue, the unrolled dot-product body,
// the warp/block reduction and the output epilogue of the matvec kernel.
//
//===----------------------------------------------------------------------===//

#include "MatVec/MatVecBuilder.h"

#include "Common/KernelCommon.h"
#include "Common/KernelEmitter.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "qfuse/format/Layout.h"
#include "qfuse/format/Numerics.h"

using namespace mlir;
using namespace mlir::qf;
using namespace mlir::qf::matvec;

/// RMSNorm prologue: rowScale[m] = 1 / sqrt(sum_k x[m, k]^2 / K + eps) for
/// every batch row, in every thread. The block's threads stride over K with
/// `normVecElems`-wide loads, summing in f32; warps reduce with shuffles and
/// combine through shared memory. x is read again by the main loop, from
/// L1/L2: K x batch x 2 bytes, small next to the weight rows.
void MatVecBuilder::computeRowScales() {
  int64_t M = p.m, v = p.normVecElems, threads = p.warps * 32;
  Value tid = e.tidX();
  Type loadType = v == 1 ? Type(e.i16()) : Type(e.vNi32(v / 2));
  SmallVector<Value> init(M, e.cf32(0.0));
  auto loop = scf::ForOp::create(b, tid, e.c32(p.k / v), e.c32(threads), init);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value col = e.mul(loop.getInductionVar(), e.c32(v));
    SmallVector<Value> next;
    for (int64_t m = 0; m < M; ++m) {
      Value off = e.mul(e.zext64(e.add(e.c32(m * p.k), col)), e.c64(2));
      Value bits = e.loadRO(loadType, e.gepBytes(x, off), v * 2);
      Value acc = loop.getRegionIterArgs()[m];
      if (v == 1) {
        Value f = e.extf32(e.bitcast(e.f16(), bits));
        acc = e.fma(f, f, acc);
      } else {
        for (int64_t i = 0; i < v / 2; ++i) {
          Value pair = e.bitcast(e.v2f16(), e.extract(bits, i));
          for (int64_t h = 0; h < 2; ++h) {
            Value f = e.extf32(e.extract(pair, h));
            acc = e.fma(f, f, acc);
          }
        }
      }
      next.push_back(acc);
    }
    scf::YieldOp::create(b, next);
  }
  Value lane = e.band(tid, e.c32(31));
  Value warp = e.shru(tid, e.c32(5));
  auto sharedPtr = LLVM::LLVMPointerType::get(b.getContext(), 3);
  auto slot = [&](Value index) {
    return LLVM::GEPOp::create(b, sharedPtr, e.i8(), normSmem,
                               ValueRange{e.mul(index, e.c32(4))});
  };
  SmallVector<Value> sums(loop.getResults());
  for (Value &sum : sums)
    for (int64_t off = 16; off >= 1; off /= 2)
      sum = e.fadd(sum, e.shflXor(sum, off));
  auto writeIf = scf::IfOp::create(
      b, arith::CmpIOp::create(b, arith::CmpIPredicate::eq, lane, e.c32(0)),
      /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(writeIf.thenBlock());
    for (int64_t m = 0; m < M; ++m)
      LLVM::StoreOp::create(b, sums[m],
                            slot(e.add(e.mul(warp, e.c32(M)), e.c32(m))), 4);
  }
  NVVM::Barrier0Op::create(b);
  rowScale.clear();
  for (int64_t m = 0; m < M; ++m) {
    Value total = e.cf32(0.0);
    for (int64_t w = 0; w < p.warps; ++w)
      total = e.fadd(
          total, LLVM::LoadOp::create(b, e.f32(), slot(e.c32(w * M + m)), 4));
    // 1 / sqrt.rn (not rsqrt.approx): the CPU reference and the separate
    // norm kernel compute the scale to f32 precision.
    Value mean = e.fadd(e.fmul(total, e.cf32(1.0 / static_cast<double>(p.k))),
                        e.cf32(spec.normEps));
    Value root = e.ptx("sqrt.rn.f32 $0, $1;", "=f,f", e.f32(), {mean});
    rowScale.push_back(e.fdiv(e.cf32(1.0), root));
  }
}

/// One f16 pair of activations under the RMSNorm prologue:
/// round_f16(x * rowScale[m] * gamma) per half, in f32, so the values are
/// those a separate qf.rms_norm would have written.
Value MatVecBuilder::normalizeWord(Value xWord, Value gammaWord, int64_t m) {
  Value xh = e.bitcast(e.v2f16(), xWord);
  Value gh = e.bitcast(e.v2f16(), gammaWord);
  Value half[2];
  for (int64_t h = 0; h < 2; ++h)
    half[h] = e.fmul(e.fmul(e.extf32(e.extract(xh, h)), rowScale[m]),
                     e.extf32(e.extract(gh, h)));
  // cvt.rn.f16x2.f32 d, a, b puts a in the upper half.
  return e.ptx("cvt.rn.f16x2.f32 $0, $1, $2;", "=r,f,f", e.i32(),
               {half[1], half[0]});
}

/// Activations at element offset `elem` (m * K + column) of x.
Value MatVecBuilder::loadX(Type type, Value elem, unsigned align) {
  return e.loadRO(type, e.gepBytes(x, e.mul(e.zext64(elem), e.c64(2))),
                  align);
}

/// Loads the code words of every chunk of every row, `k_unroll` x rows
/// vector loads in flight at once.
SmallVector<SmallVector<Value>>
MatVecBuilder::loadCodeWords(ArrayRef<Value> chunks, ArrayRef<Value> rows) {
  int64_t R = p.rowsPerWarp, U = chunks.size();
  int64_t wordsPerLoad = p.vecBytes / 4;
  auto codesType = e.vNi32(wordsPerLoad);
  SmallVector<SmallVector<Value>> words(U * R);
  for (int64_t u = 0; u < U; ++u)
    for (int64_t r = 0; r < R; ++r)
      for (int64_t l = 0; l < p.unitWords; ++l) {
        Value off = e.add(e.mul(e.zext64(rows[r]), e.c64(p.rowBytes)),
                          e.add(e.mul(e.zext64(chunks[u]), e.c64(p.chunkBytes)),
                                e.c64(l * p.vecBytes)));
        Value vec = e.loadRO(
            codesType, e.gepBytes(weights[weightOf(r)].codes, off), p.vecBytes);
        for (int64_t w = 0; w < wordsPerLoad; ++w)
          words[u * R + r].push_back(e.extract(vec, w));
      }
  return words;
}

/// 2:4: the positions of each chunk's kept values, 4 bits per group of 4
/// columns (Packing.h), elemsPerChunk / 2 quads per chunk, as i32 words;
/// empty for a dense weight.
SmallVector<SmallVector<Value>>
MatVecBuilder::loadSparseMeta(ArrayRef<Value> chunks, ArrayRef<Value> rows) {
  int64_t R = p.rowsPerWarp, U = chunks.size();
  SmallVector<SmallVector<Value>> metaWords(U * R);
  if (p.sparse) {
    int64_t metaBytesPerChunk = p.elemsPerChunk / 4;
    int64_t metaRowBytes = (p.k + 7) / 8;
    Type metaType = metaBytesPerChunk == 1   ? e.i8()
                    : metaBytesPerChunk == 2 ? e.i16()
                                             : e.i32();
    int64_t loads = metaBytesPerChunk > 4 ? metaBytesPerChunk / 4 : 1;
    int64_t loadBytes = std::min<int64_t>(metaBytesPerChunk, 4);
    for (int64_t u = 0; u < U; ++u)
      for (int64_t r = 0; r < R; ++r)
        for (int64_t l = 0; l < loads; ++l) {
          Value off =
              e.add(e.mul(e.zext64(rows[r]), e.c64(metaRowBytes)),
                    e.add(e.mul(e.zext64(chunks[u]), e.c64(metaBytesPerChunk)),
                          e.c64(l * 4)));
          Value bits = e.loadRO(
              metaType, e.gepBytes(weights[weightOf(r)].meta, off), loadBytes);
          metaWords[u * R + r].push_back(
              metaType == e.i32() ? bits
                                  : arith::ExtUIOp::create(b, e.i32(), bits));
        }
  }
  return metaWords;
}

/// The f32 scale and the zero of every span of every chunk of every row.
void MatVecBuilder::loadSpanScales(ArrayRef<Value> chunks,
                                   ArrayRef<Value> rows,
                                   SmallVectorImpl<Value> &scaleVals,
                                   SmallVectorImpl<Value> &zeroVals) {
  int64_t R = p.rowsPerWarp, U = chunks.size();
  int64_t spans = p.elemsPerChunk / p.spanElems;
  scaleVals.assign(U * R * spans, Value());
  zeroVals.assign(U * R * spans, Value());
  for (int64_t u = 0; u < U; ++u) {
    Value k0 = e.mul(chunks[u], e.c32(p.elemsPerChunk));
    for (int64_t s = 0; s < spans; ++s) {
      if (!spec.encoding.isQuantized()) {
        for (int64_t r = 0; r < R; ++r)
          scaleVals[(u * R + r) * spans + s] = e.cf32(1.0);
        continue;
      }
      // Groups count logical columns: stored code e is column >= 2e under
      // 2:4, and spans start on even codes (the first kept value of a quad).
      Value group = p.perChannel
                        ? e.c32(0)
                        : e.divu(e.mul(e.add(k0, e.c32(s * p.spanElems)),
                                       e.c32(p.colsPerStored)),
                                 e.c32(spec.encoding.getGroupSize()));
      for (int64_t r = 0; r < R; ++r) {
        const WeightArgs &w = weights[weightOf(r)];
        scaleVals[(u * R + r) * spans + s] =
            e.fmul(loadScaleTyped(w.scales, groupIndex(rows[r], group)),
                   e.cf32(valueScale()));
        zeroVals[(u * R + r) * spans + s] = zeroAt(w, rows[r], group);
      }
    }
  }
}

/// The activations of the step at column `kw` as i32 words (f16 pairs), per
/// batch row; normalized here under the RMSNorm prologue.
SmallVector<SmallVector<Value>> MatVecBuilder::loadStepActivations(Value kw) {
  int64_t M = p.m;
  int64_t xBytesPerStep = p.stepElems * p.colsPerStored * 2;
  auto xType = e.vNi32(xBytesPerStep / 4);
  unsigned xAlign = std::min<int64_t>(xBytesPerStep, 16);
  int64_t xWords = xBytesPerStep / 4;
  Value gammaVec;
  if (p.norm)
    gammaVec = e.loadRO(
        xType, e.gepBytes(normGamma, e.mul(e.zext64(kw), e.c64(2))), xAlign);
  SmallVector<SmallVector<Value>> xw(M);
  for (int64_t m = 0; m < M; ++m) {
    Value xv = loadX(xType, e.add(e.c32(m * p.k), kw), xAlign);
    for (int64_t i = 0; i < xWords; ++i) {
      Value word = e.extract(xv, i);
      if (gammaVec)
        word = normalizeWord(word, e.extract(gammaVec, i), m);
      xw[m].push_back(word);
    }
  }
  return xw;
}

/// 2:4: the prmt selectors that pick the kept columns' activations out of
/// quads 4h .. 4h + 3 of `metaWord` (h = `half`): quad q's nibble a | b << 2
/// -> bytes 2a, 2a+1, 2b, 2b+1 of its two x words, the selector
/// 0x1010 + 0x22 a + 0x2200 b. Four at once by prmt: the a's (each nibble's
/// low 2 bits) and the b's index the byte table 0x76543210 (entry i is
/// 0x10 + 0x22 i), and a third prmt interleaves the two bytes of each quad;
/// prmt reads only its selector's low 16 bits, so quads 1 and 3 take the
/// upper half shifted down. Nine instructions for four quads.
SmallVector<Value> MatVecBuilder::sparseSelectors(Value metaWord,
                                                  int64_t half) {
  Value nibbles = half ? e.shru(metaWord, e.c32(16)) : metaWord;
  Value as = e.band(nibbles, e.c32(0x3333));
  Value bs = e.band(e.shru(nibbles, e.c32(2)), e.c32(0x3333));
  Value table = e.c32(0x76543210);
  Value aBytes = e.prmt(table, table, as);
  Value bBytes = e.prmt(table, table, bs);
  Value quads01 = e.prmt(aBytes, bBytes, 0x5140);
  Value quads23 = e.prmt(aBytes, bBytes, 0x7362);
  return {quads01, e.shru(quads01, e.c32(16)), quads23,
          e.shru(quads23, e.c32(16))};
}

/// Loads and accumulates the chunks `chunks` (one per unrolled step) of the
/// warp's rows. All code words are loaded first so `k_unroll` x rows 16-byte
/// loads are in flight before the first is used.
SmallVector<Value> MatVecBuilder::body(ArrayRef<Value> chunks,
                                       ArrayRef<Value> rows, ValueRange acc) {
  int64_t R = p.rowsPerWarp, M = p.m, U = chunks.size();
  int64_t spans = p.elemsPerChunk / p.spanElems;
  int64_t stepsPerSpan = p.spanElems / p.stepElems;
  int64_t pairsPerStep = p.stepElems / 2;

  // Phase 1: every code load, then scales and zeros.
  SmallVector<SmallVector<Value>> words = loadCodeWords(chunks, rows);
  SmallVector<SmallVector<Value>> metaWords = loadSparseMeta(chunks, rows);
  // 2:4 selectors by (chunk x row slot, quad / 4), made where first used.
  DenseMap<std::pair<int64_t, int64_t>, SmallVector<Value>> selectors;
  SmallVector<Value> scaleVals, zeroVals;
  loadSpanScales(chunks, rows, scaleVals, zeroVals);

  // Phase 2: per step (one word of codes, or up to 8 streamed codes),
  // load the activations' matching pairs for every batch row once and use
  // them for all R weight rows.
  SmallVector<Value> out(acc.begin(), acc.end());
  // Under 2:4 a step's kept values span twice as many logical columns.
  int64_t columnsPerStep = p.stepElems * p.colsPerStored;
  for (int64_t u = 0; u < U; ++u) {
    Value k0 = e.mul(chunks[u], e.c32(p.elemsPerChunk * p.colsPerStored));
    for (int64_t s = 0; s < spans; ++s) {
      SmallVector<Value> hacc(R * M, e.ch2(0.0));
      for (int64_t w = 0; w < stepsPerSpan; ++w) {
        int64_t step = s * stepsPerSpan + w; // within the chunk
        Value kw = e.add(k0, e.c32(step * columnsPerStep));
        SmallVector<SmallVector<Value>> xw = loadStepActivations(kw);
        for (int64_t r = 0; r < R; ++r) {
          SmallVector<Value> pairs = decodeStep(
              words[u * R + r], zeroVals[(u * R + r) * spans + s], step);
          for (size_t j = 0; j < pairs.size(); ++j) {
            Value selector;
            if (p.sparse) {
              int64_t quad = step * pairsPerStep + j;
              SmallVector<Value> &four = selectors[{u * R + r, quad / 4}];
              if (four.empty())
                four = sparseSelectors(metaWords[u * R + r][quad / 8],
                                       (quad % 8) / 4);
              selector = four[quad % 4];
            }
            for (int64_t m = 0; m < M; ++m) {
              Value word =
                  p.sparse ? e.prmt(xw[m][2 * j], xw[m][2 * j + 1], selector)
                           : xw[m][j];
              Value xp = e.bitcast(e.v2f16(), word);
              hacc[r * M + m] = e.fma(pairs[j], xp, hacc[r * M + m]);
            }
          }
        }
      }
      for (int64_t r = 0; r < R; ++r)
        for (int64_t m = 0; m < M; ++m) {
          Value h = hacc[r * M + m];
          Value sum =
              e.fadd(e.extf32(e.extract(h, 0)), e.extf32(e.extract(h, 1)));
          out[r * M + m] =
              e.fma(sum, scaleVals[(u * R + r) * spans + s], out[r * M + m]);
        }
    }
  }
  return out;
}

/// Applies the epilogue to the f32 result of (row, batch m) (and, under
/// silu_mul, the up projection's `upTotal`) and stores it, unless the row
/// is past N.
void MatVecBuilder::storeOutput(Value total, Value upTotal, Value row,
                                Value m) {
  OpBuilder::InsertionGuard guard(b);
  auto inRange = scf::IfOp::create(b, e.ult(row, nRows), false);
  b.setInsertionPointToStart(inRange.thenBlock());
  if (spec.encoding.getGlobalScale()) {
    Value gs = e.loadRO(e.f32(), weights[0].globalScale, 4);
    total = e.fdiv(total, gs);
    if (upTotal)
      upTotal = e.fdiv(upTotal, e.loadRO(e.f32(), weights[1].globalScale, 4));
  }
  if (upTotal)
    total = e.siluMul(total, upTotal);
  if (spec.hasBias) {
    Value off = e.mul(e.zext64(row), e.c64(2));
    total =
        e.fadd(total, e.extf32(e.loadRO(e.f16(), e.gepBytes(bias, off), 2)));
  }
  Value yOff = e.mul(e.zext64(e.add(e.mul(m, nRows), row)), e.c64(2));
  if (spec.hasResidual)
    total = e.fadd(total,
                   e.extf32(e.loadRO(e.f16(), e.gepBytes(residual, yOff), 2)));
  // A scattered output (spec.scatterOutput) goes to column y_order[row].
  if (yOrder) {
    Value column = e.loadRO(
        e.i32(), e.gepBytes(yOrder, e.mul(e.zext64(row), e.c64(4))), 4);
    yOff = e.mul(e.zext64(e.add(e.mul(m, nRows), column)), e.c64(2));
  }
  e.store(e.truncf16(total), e.gepBytes(y, yOff), 2);
}

/// Warp-reduces each accumulator and stores y. With split_k = 1 lane 0 of
/// each warp stores its rows directly; otherwise the split_k warps of a row
/// group are combined through shared memory first.
void MatVecBuilder::reduceAndStore(ArrayRef<Value> acc, Value tid, Value warp,
                                   Value lane) {
  int64_t R = p.rowsPerWarp, M = p.m, RM = R * M;
  SmallVector<Value> sums(acc.begin(), acc.end());
  for (Value &v : sums)
    for (int64_t off = 16; off >= 1; off /= 2)
      v = e.fadd(v, e.shflXor(v, off));
  // Gated: accumulator j < RoM is output j's gate, j + RoM its up.
  int64_t Ro = p.outRowsPerWarp, RoM = Ro * M;
  Value blockRow0 = e.mul(blockId, e.c32(p.outBlockN));
  Value isLane0 =
      arith::CmpIOp::create(b, arith::CmpIPredicate::eq, lane, e.c32(0));

  if (p.splitK == 1) {
    // No barrier and no shared-memory round trip: the warp owns its rows.
    OpBuilder::InsertionGuard guard(b);
    auto storeIf = scf::IfOp::create(b, isLane0, /*withElseRegion=*/false);
    b.setInsertionPointToStart(storeIf.thenBlock());
    Value warpRow0 = e.add(blockRow0, e.mul(warp, e.c32(Ro)));
    for (int64_t j = 0; j < RoM; ++j)
      storeOutput(sums[j], p.gated ? sums[j + RoM] : Value(),
                  e.add(warpRow0, e.c32(j / M)), e.c32(j % M));
    return;
  }

  auto sharedPtr = LLVM::LLVMPointerType::get(b.getContext(), 3);
  auto slot = [&](Value index) {
    return LLVM::GEPOp::create(b, sharedPtr, e.i8(), redSmem,
                               ValueRange{e.mul(index, e.c32(4))});
  };
  auto writeIf = scf::IfOp::create(b, isLane0, /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(writeIf.thenBlock());
    for (int64_t j = 0; j < RM; ++j)
      LLVM::StoreOp::create(b, sums[j],
                            slot(e.add(e.mul(warp, e.c32(RM)), e.c32(j))), 4);
  }
  NVVM::Barrier0Op::create(b);

  // Thread t < rowGroups * RoM owns output (row group t / RoM, entry
  // t % RoM), and under silu_mul reads that output's up entry too.
  Value owns = e.ult(tid, e.c32(p.rowGroups * RoM));
  auto storeIf = scf::IfOp::create(b, owns, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(storeIf.thenBlock());
  Value rg = e.divu(tid, e.c32(RoM));
  Value j = e.remu(tid, e.c32(RoM));
  auto sumSplits = [&](Value entry) {
    Value total = e.cf32(0.0);
    for (int64_t s = 0; s < p.splitK; ++s) {
      Value w = e.add(e.mul(rg, e.c32(p.splitK)), e.c32(s));
      Value v = LLVM::LoadOp::create(
          b, e.f32(), slot(e.add(e.mul(w, e.c32(RM)), entry)), 4);
      total = e.fadd(total, v);
    }
    return total;
  };
  Value total = sumSplits(j);
  Value upTotal = p.gated ? sumSplits(e.add(j, e.c32(RoM))) : Value();
  Value row =
      e.add(e.add(blockRow0, e.mul(rg, e.c32(Ro))), e.divu(j, e.c32(M)));
  storeOutput(total, upTotal, row, e.remu(j, e.c32(M)));
}
