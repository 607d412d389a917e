//===- TensorCoreSparse.cpp - 2:4 weights on mma.sp ------------------------===//
//
// The tensor-core kernel's steps for 2:4 weights: mma.sp.m16n8k32 takes
// the sparse operand as A, so the weight rows are M and the batch is N,
// the transpose of the dense kernel (activations as A):
//
//   A   16 weight rows x 32 logical columns, held as their 16 kept values:
//       lane (g, t) holds registers {(g, 2t), (g + 8, 2t), (g, 2t + 8),
//       (g + 8, 2t + 8)} of kept pairs;
//   E   one 32-bit metadata word per lane and k slab serves both m16 tiles
//       of the warp's 32 rows: tile wt reads it with sparsity selector wt
//       from lanes t = 2 wt, 2 wt + 1 (or, Plan::metaSelectorPair off,
//       tile 1 with selector 0 from the word of lane ^ 2);
//   B   32 columns x 8 batch rows, by ldmatrix.x4 from the same swizzled
//       activation tile the dense kernel reads;
//   D   (weight row g, batch rows 2 t, 2 t + 1) and row g + 8, kept as
//       acc[wt * block_m / 2 + 4 bt + i] for weight m tile wt (rows
//       16 wt..) and batch n tile bt, the wgmma kernel's order; after the
//       K loop a warp transposes them by shuffles into the dense kernel's
//       order, so that the split-K and cluster sums and every epilogue
//       (bias, residual, silu_mul, qf.group) are the dense kernel's.
//
// The codes and metadata come in the 2:4 fragment layout
// (qfuse/format/SparseMmaLayout.h): a warp's 32 rows are one tile row,
// and a step of block_k = 64 (128) columns is half (all) of a tile: one
// contiguous range of piece-major codes, of which lane L copies its pieces
// c (bytes 16 (32 c + L)), and its own 8 (16) bytes of metadata. The slot
// keeps the same order, so that a warp's ld.shared.v4 of one piece touches
// every bank once, then the metadata lane by lane.
//
// A lane's kept pair is a byte (int4: the low nibble the first code), two
// (int8, fp8) or four (f16) bytes of a loaded word:
//   int4/uint4: prmt replicates the byte, (x & 0x00F0000F) | 0x64006400 =
//     half2(1024 + lo, 1024 + 16 hi), one fma by (1, 1/16) less
//     (1024 + z, 64 + z) gives q - z exactly;
//   int8/uint8: as the dense decode, the bytes under 0x64 by prmt;
//   fp8e4m3: one cvt.rn.f16x2.e4m3x2; f16: the pair itself.
// The group scale multiplies the pair (half2), as in the dense kernel's
// per-fragment scaling; an mma.sp slab of 32 columns lies in one group.
//
//===----------------------------------------------------------------------===//

#include "TensorCore/TensorCoreBuilder.h"

#include "Common/KernelCommon.h"

using namespace mlir;
using namespace mlir::qf;
using namespace mlir::qf::tensor_core;

/// 16-byte pieces of a lane's kept codes in one step: 1 to 8.
static int64_t piecesPerLane(const Plan &p) { return p.stepLaneBytes / 16; }

/// The byte offset of this warp's 2:4 slot (kept codes, then metadata) of
/// pipeline slot `warpSlot`.
Value TensorCoreBuilder::sparseSlotBase(Value warpSlot) {
  return e.add(e.c32(p.bOff), e.mul(warpSlot, e.c32(32 * (p.stepLaneBytes +
                                                         p.stepMetaBytes))));
}

/// Starts the copies of K step `step` of the warp's tile row: lane L copies
/// its kept codes (16-byte pieces) and metadata (one 8- or 16-byte copy) of
/// the step's tile, the first or second half of them when block_k = 64.
void TensorCoreBuilder::issueSparseCodes(Value warpSlot, Value step) {
  MLIRContext *ctx = b.getContext();
  auto cg = NVVM::LoadCacheModifierKindAttr::get(
      ctx, NVVM::LoadCacheModifierKind::CG);
  auto ca = NVVM::LoadCacheModifierKindAttr::get(
      ctx, NVVM::LoadCacheModifierKind::CA);
  const int64_t stepsPerTile = 128 / p.blockK;
  Value tile = e.zext64(e.add(e.mul(tileRow, e.c32(p.sparseTilesK)),
                              e.divu(step, e.c32(stepsPerTile))));
  Value part = e.remu(step, e.c32(stepsPerTile));
  Value base = sparseSlotBase(warpSlot);
  Value codeSrc = e.add(
      e.mul(tile, e.c64(p.sparseTileBytes)),
      e.zext64(e.add(e.mul(part, e.c32(32 * p.stepLaneBytes)),
                     e.mul(lane, e.c32(16)))));
  for (int64_t c = 0; c < piecesPerLane(p); ++c) {
    Value dst = smemAt(e.add(base, e.mul(e.add(lane, e.c32(32 * c)),
                                         e.c32(16))));
    NVVM::CpAsyncOp::create(b, dst,
                            e.gepBytes(codes, e.add(codeSrc, e.c64(512 * c))),
                            b.getI32IntegerAttr(16), cg, Value());
  }
  // cp.async.cg copies 16 bytes only; the 8 bytes of a block_k = 64 step
  // go through .ca.
  Value metaSrc = e.add(
      e.mul(tile, e.c64(32 * 16)),
      e.zext64(e.add(e.mul(lane, e.c32(16)),
                     e.mul(part, e.c32(p.stepMetaBytes)))));
  Value metaDst = e.add(base, e.add(e.c32(32 * p.stepLaneBytes),
                                    e.mul(lane, e.c32(p.stepMetaBytes))));
  NVVM::CpAsyncOp::create(b, smemAt(metaDst), e.gepBytes(meta, metaSrc),
                          b.getI32IntegerAttr(p.stepMetaBytes),
                          p.stepMetaBytes == 16 ? cg : ca, Value());
}

/// `count` 32-bit words at shared byte offset `addr` (16- or 8-byte
/// aligned): one ld.shared.v4 or .v2.
SmallVector<Value> TensorCoreBuilder::loadSharedWords(Value addr,
                                                      int64_t count) {
  auto type = VectorType::get({count}, e.i32());
  Value v = LLVM::LoadOp::create(b, type, smemAt(addr), 4 * count);
  SmallVector<Value> words;
  for (int64_t i = 0; i < count; ++i)
    words.push_back(e.extract(v, i));
  return words;
}

/// The B fragment of k slab `slab` and batch n tile `bt`: ldmatrix.x4 of
/// the 8 batch rows 8 bt.., matrix i being columns 32 slab + 8 i..; lane L
/// addresses row 8 bt + L % 8 of matrix L / 8.
std::array<Value, 4> TensorCoreBuilder::loadSparseBFragment(Value aBase,
                                                            int64_t slab,
                                                            int64_t bt) {
  Value rowInTile = e.band(lane, e.c32(7));
  Value chunk = e.add(e.c32(slab * 4), e.shru(lane, e.c32(3)));
  // The activation tile's swizzle (issueStep): chunk ^ (row % 8).
  Value swz = arith::XOrIOp::create(b, chunk, rowInTile);
  Value r = e.add(e.c32(bt * 8), rowInTile);
  Value frag = loadActivationMatrices(aBase, r, swz);
  std::array<Value, 4> regs;
  for (int64_t i = 0; i < 4; ++i)
    regs[i] = e.bitcast(e.v2f16(), LLVM::ExtractValueOp::create(b, frag, i));
  return regs;
}

/// The scaled A register r = 2 c + h of m16 tile `wt` (rows 16 wt + 8 h +
/// g, kept pair 2 t + 8 c) in k slab `slab` of the step, from the lane's
/// words `words` (its step run, SparseMmaLayout.h: the pair at code
/// 16 slab + 8 wt + 2 r), scaled by `group`'s scale and zero of n tile
/// j = 2 wt + h (the dense kernel's rows nBase + 8 j + g).
Value TensorCoreBuilder::decodeSparsePair(function_ref<Value(int64_t)> words,
                                          int64_t wt, int64_t r, int64_t slab,
                                          const StepGroup &group) {
  int64_t pairByte = (16 * slab + 8 * wt + 2 * r) * p.codeBits / 8;
  Value x = words(pairByte / 4);
  int64_t inWord = pairByte % 4;
  if (p.decode == DecodeFamily::Half)
    return e.bitcast(e.v2f16(), x);

  int64_t j = 2 * wt + r % 2;
  Value pair;
  switch (p.decode) {
  case DecodeFamily::Int4Magic:
    pair = decode::int4MagicByte(e, x, inWord, group.zeroMix[j]);
    break;
  case DecodeFamily::Int8Magic: {
    bool isSigned = spec.encoding.getFormat() == ElementFormat::Int8;
    pair = e.fsub(decode::int8MagicPair(e, x, inWord / 2, isSigned),
                  group.zeroLo[j]);
    break;
  }
  case DecodeFamily::Fp8Cvt:
    pair = decode::e4m3Pair(
        e, arith::TruncIOp::create(b, e.i16(),
                                   inWord ? e.shru(x, e.c32(16)) : x));
    break;
  case DecodeFamily::Table:
  case DecodeFamily::Half:
    llvm_unreachable("tensorCoreRefusesEncoding refuses 2:4 table formats");
  }
  if (p.floatZeros)
    pair = e.fsub(pair, group.zeroPair[j]);
  return e.fmul(pair, group.scale[j]);
}

/// Decodes and multiplies K step `step` of 2:4 weights, held in pipeline
/// slot `slot`, on mma.sp (accumulators in the order of the file comment).
TensorCoreBuilder::Acc
TensorCoreBuilder::computeSparseStep(Value slot, Value step, ValueRange accIn) {
  Acc acc(accIn.begin(), accIn.end());
  Value warpSlot = e.add(e.mul(slot, e.c32(p.warps)), warp);
  Value aBase = e.add(e.c32(p.aOff),
                      e.mul(e.add(e.mul(slot, e.c32(p.kGroups)), kg),
                            e.c32(p.aBytes)));
  Value slotBase = sparseSlotBase(warpSlot);
  // The lane's metadata words of the step (one per k slab), then its code
  // pieces as the slabs first need them.
  SmallVector<Value> metaWords = loadSharedWords(
      e.add(slotBase, e.add(e.c32(32 * p.stepLaneBytes),
                            e.mul(lane, e.c32(p.stepMetaBytes)))),
      p.stepMetaBytes / 4);
  SmallVector<Value> codeWords(p.stepLaneBytes / 4);
  auto words = [&](int64_t w) {
    if (!codeWords[w]) {
      int64_t piece = w / 4;
      SmallVector<Value> loaded = loadSharedWords(
          e.add(slotBase, e.mul(e.add(lane, e.c32(32 * piece)), e.c32(16))),
          4);
      std::copy(loaded.begin(), loaded.end(), codeWords.begin() + 4 * piece);
    }
    return codeWords[w];
  };
  std::vector<StepGroup> groups(p.groupsPerStep);
  const int64_t half = p.blockM / 2;
  auto f32x4 = LLVM::LLVMStructType::getLiteral(
      b.getContext(), {e.f32(), e.f32(), e.f32(), e.f32()});
  for (int64_t slab = 0; slab < p.blockK / 32; ++slab) {
    int64_t gi = p.groupSize >= p.blockK ? 0 : 32 * slab / p.groupSize;
    StepGroup &group = groups[gi];
    if (spec.encoding.isQuantized() && !group.loaded) {
      loadStepGroup(step, warpSlot, gi, group);
      // int4: (1024 + z, 64 + z), negated, for the decode's one fma.
      if (p.decode == DecodeFamily::Int4Magic)
        for (int64_t j = 0; j < 4; ++j)
          group.zeroMix.push_back(decode::int4MagicByteBias(
              e, group.zeroLo[j], group.zeroHi[j]));
    }
    // Both m tiles' A fragments and metadata (9 or 10 registers) stay live
    // while each batch n tile's B fragment is loaded and used by two
    // mma.sp: at block_m = 128 the B fragments of every n tile would be 64.
    Value metadata[2] = {metaWords[slab], metaWords[slab]};
    if (!p.metaSelectorPair)
      metadata[1] = e.shflXor(metaWords[slab], 2);
    SmallVector<SmallVector<Value>> aRegs(2, SmallVector<Value>(4));
    for (int64_t wt = 0; wt < 2; ++wt)
      for (int64_t r = 0; r < 4; ++r)
        aRegs[wt][r] = decodeSparsePair(words, wt, r, slab, group);
    for (int64_t bt = 0; bt < p.blockM / 8; ++bt) {
      std::array<Value, 4> bFrag = loadSparseBFragment(aBase, slab, bt);
      for (int64_t wt = 0; wt < 2; ++wt) {
        int64_t base = wt * half + 4 * bt;
        SmallVector<Value> cIn(acc.begin() + base, acc.begin() + base + 4);
        int64_t selector = p.metaSelectorPair ? wt : 0;
        auto mma = NVVM::MmaSpOp::create(
            b, f32x4, aRegs[wt], ValueRange(bFrag), cIn, metadata[wt],
            e.c32(selector), ArrayRef<int64_t>{16, 8, 32}, std::nullopt,
            std::array<NVVM::MMATypes, 2>{NVVM::MMATypes::f16,
                                          NVVM::MMATypes::f16});
        for (int64_t i = 0; i < 4; ++i)
          acc[base + i] = LLVM::ExtractValueOp::create(b, mma, i);
      }
    }
  }
  return acc;
}

/// The mma.sp accumulators in the dense kernel's order. Per 8 x 8 block of
/// weight rows 8 j.. and batch rows 8 bt..: mma.sp lane (g, t) holds (row
/// g, batch 2 t + e), the dense lane (g', t') wants (batch g', rows 2 t' and
/// 2 t' + 1), held by lanes 8 t' + g' / 2 and 8 t' + g' / 2 + 4 as their
/// element g' % 2: four shuffles and two selects per block.
TensorCoreBuilder::Acc TensorCoreBuilder::sparseToDenseAcc(const Acc &sparse) {
  const int64_t half = p.blockM / 2;
  Acc dense(sparse.size());
  Value src0 = e.add(e.mul(t4, e.c32(8)), e.shru(g, e.c32(1)));
  Value src1 = e.add(src0, e.c32(4));
  Value odd = arith::CmpIOp::create(b, arith::CmpIPredicate::ne,
                                    e.band(g, e.c32(1)), e.c32(0));
  auto shfl = [&](Value v, Value from) {
    return NVVM::ShflOp::create(b, v.getType(), e.c32(-1), v, from, e.c32(31),
                                NVVM::ShflKind::idx,
                                /*return_value_and_is_valid=*/UnitAttr())
        .getResult();
  };
  auto pick = [&](Value s0, Value s1, Value from) {
    return arith::SelectOp::create(b, odd, shfl(s1, from), shfl(s0, from))
        .getResult();
  };
  for (int64_t j = 0; j < 4; ++j)
    for (int64_t bt = 0; bt < p.blockM / 8; ++bt) {
      int64_t from = (j / 2) * half + 4 * bt + 2 * (j % 2);
      int64_t to = ((bt / 2) * 4 + j) * 4 + 2 * (bt % 2);
      dense[to] = pick(sparse[from], sparse[from + 1], src0);
      dense[to + 1] = pick(sparse[from], sparse[from + 1], src1);
    }
  return dense;
}
