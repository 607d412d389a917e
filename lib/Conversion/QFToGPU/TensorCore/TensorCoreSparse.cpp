//===- TensorCoreSparse.cpp - 2:4 weights on mma.sp ------------------------===//
//
// The tensor-core kernel's steps for 2:4 weights: mma.sp.m16n8k32 takes
// the sparse operand as A, so the weight rows are M and the batch is N,
// the transpose of the dense kernel (activations as A):
//
//   A   16 weight rows x 32 logical columns, held as their 16 kept values
//       (the m16n8k16 A layout over kept values): lane (g, t) holds kept
//       pairs 2 t and 2 t + 8 of rows g and g + 8, registers
//       {(g, 2t), (g + 8, 2t), (g, 2t + 8), (g + 8, 2t + 8)};
//   E   the 2-bit positions of the kept values, sparsity selector 0: lane
//       4 g + t (t = 0, 1) gives the quads of columns 16 t..16 t + 15 of
//       row g in bits 0-15 and of row g + 8 in bits 16-31: exactly two
//       bytes of the stored metadata of each row (Packing.h: quad 2 j in
//       the low nibble of byte j, the first position in its low 2 bits);
//   B   32 columns x 8 batch rows, by ldmatrix.x4 from the same swizzled
//       activation tile the dense kernel reads;
//   D   (weight row g, batch rows 2 t, 2 t + 1) and row g + 8, kept as
//       acc[wt * block_m / 2 + 4 bt + i] for weight m tile wt (rows
//       16 wt..) and batch n tile bt, the wgmma kernel's order; after the
//       K loop a warp transposes them by shuffles into the dense kernel's
//       order, so that the split-K and cluster sums and every epilogue
//       (bias, residual, silu_mul, qf.group) are the dense kernel's.
//
// The codes stay in the checkpoint's row-major order (Packing.h): a step
// copies block_k / 2 kept codes and block_k / 8 metadata bytes of each of
// the warp's 32 rows (lane L row L) into its slot, rows of stepRowBytes
// whose 16-byte chunks are XOR-swizzled by row, so that the 8 rows a warp's
// lanes read at once fall in distinct banks.
//
// A lane's kept pair is one byte (int4: the low nibble the first code), two
// (int8, fp8) or four (f16) bytes:
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

#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::qf;
using namespace mlir::qf::tensor_core;

/// 16-byte chunks of a row's kept codes in one step: 1, 2, 4 or 8.
static int64_t chunksPerRow(const Plan &p) { return p.stepRowBytes / 16; }

/// The XOR swizzle of the 16-byte chunks of slot row `row`: rows
/// 8 / chunks apart share banks, so the bits of row % 8 above them pick the
/// chunk's place.
Value TensorCoreBuilder::sparseChunkSwizzle(Value row) {
  int64_t chunks = chunksPerRow(p);
  if (chunks == 1)
    return e.c32(0);
  int64_t shift = llvm::Log2_64(8 / chunks);
  return e.shru(e.band(row, e.c32(7)), e.c32(shift));
}

/// The byte offset of this warp's 2:4 slot (kept codes, then metadata) of
/// pipeline slot `warpSlot`.
Value TensorCoreBuilder::sparseSlotBase(Value warpSlot) {
  return e.add(e.c32(p.bOff),
               e.mul(warpSlot, e.c32(32 * (p.stepRowBytes + p.stepMetaBytes))));
}

/// Starts the copies of K step `step` of the warp's 32 rows: lane L copies
/// row L's kept codes (16-byte chunks) and metadata (one 8- or 16-byte
/// copy). Rows past N copy row N - 1 (their outputs are never stored).
void TensorCoreBuilder::issueSparseCodes(Value warpSlot, Value step) {
  MLIRContext *ctx = b.getContext();
  auto cg = NVVM::LoadCacheModifierKindAttr::get(
      ctx, NVVM::LoadCacheModifierKind::CG);
  auto ca = NVVM::LoadCacheModifierKindAttr::get(
      ctx, NVVM::LoadCacheModifierKind::CA);
  Value row = e.zext64(scaleRow(e.add(nBase, lane)));
  Value base = sparseSlotBase(warpSlot);
  Value swz = sparseChunkSwizzle(lane);
  Value rowCodes =
      e.add(e.mul(row, e.c64(p.rowBytes)),
            e.zext64(e.mul(step, e.c32(p.stepRowBytes))));
  for (int64_t c = 0; c < chunksPerRow(p); ++c) {
    Value dst = smemAt(e.add(
        base, e.add(e.mul(lane, e.c32(p.stepRowBytes)),
                    e.mul(arith::XOrIOp::create(b, e.c32(c), swz),
                          e.c32(16)))));
    NVVM::CpAsyncOp::create(b, dst,
                            e.gepBytes(codes, e.add(rowCodes, e.c64(16 * c))),
                            b.getI32IntegerAttr(16), cg, Value());
  }
  // cp.async.cg copies 16 bytes only; the 8 bytes of a block_k = 64 step
  // go through .ca.
  Value metaSrc =
      e.add(e.mul(row, e.c64(p.metaRowBytes)),
            e.zext64(e.mul(step, e.c32(p.stepMetaBytes))));
  Value metaDst =
      e.add(base, e.add(e.c32(32 * p.stepRowBytes),
                        e.mul(lane, e.c32(p.stepMetaBytes))));
  NVVM::CpAsyncOp::create(b, smemAt(metaDst), e.gepBytes(meta, metaSrc),
                          b.getI32IntegerAttr(p.stepMetaBytes),
                          p.stepMetaBytes == 16 ? cg : ca, Value());
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

/// The metadata register of weight m tile `wt` and k slab `slab`: bytes
/// 4 slab + 2 (t % 2) of rows 16 wt + g (bits 0-15) and 16 wt + 8 + g
/// (bits 16-31). Lanes t = 2, 3 load the same and are not read (selector 0).
Value TensorCoreBuilder::loadSparseMetadata(Value slotBase, int64_t wt,
                                            int64_t slab) {
  Value metaBase = e.add(slotBase, e.c32(32 * p.stepRowBytes));
  Value inRow = e.add(e.c32(4 * slab), e.mul(e.band(t4, e.c32(1)), e.c32(2)));
  auto half = [&](int64_t h) {
    Value row = e.add(e.c32(16 * wt + 8 * h), g);
    Value addr =
        e.add(metaBase, e.add(e.mul(row, e.c32(p.stepMetaBytes)), inRow));
    Value v = LLVM::LoadOp::create(b, e.i16(), smemAt(addr), 2);
    return arith::ExtUIOp::create(b, e.i32(), v).getResult();
  };
  return arith::OrIOp::create(
      b, half(0), arith::ShLIOp::create(b, half(1), e.c32(16)));
}

/// The scaled A register of kept pair 2 t + 8 c of row 16 wt + 8 h + g in
/// k slab `slab`, decoded from the slot and scaled by `group`'s scale and
/// zero of n tile j = 2 wt + h (the dense kernel's rows nBase + 8 j + g).
Value TensorCoreBuilder::decodeSparsePair(Value slotBase, Value swz,
                                          int64_t wt, int64_t h, int64_t slab,
                                          int64_t c, const StepGroup &group) {
  // The pair's byte offset in the row's step: (16 slab + 8 c + 2 t) codes.
  int64_t constBytes = (16 * slab + 8 * c) * p.codeBits / 8;
  int64_t pairBytes = p.codeBits / 4;
  Value row = e.add(e.c32(16 * wt + 8 * h), g);
  Value chunk = arith::XOrIOp::create(b, e.c32(constBytes / 16), swz);
  Value addr = e.add(
      slotBase,
      e.add(e.add(e.mul(row, e.c32(p.stepRowBytes)), e.mul(chunk, e.c32(16))),
            e.add(e.c32(constBytes % 16), e.mul(t4, e.c32(pairBytes)))));
  Type loadType = b.getIntegerType(8 * pairBytes);
  Value x = LLVM::LoadOp::create(b, loadType, smemAt(addr), pairBytes);
  if (pairBytes < 4)
    x = arith::ExtUIOp::create(b, e.i32(), x);
  if (p.decode == DecodeFamily::Half)
    return e.bitcast(e.v2f16(), x);

  int64_t j = 2 * wt + h;
  Value pair;
  switch (p.decode) {
  case DecodeFamily::Int4Magic:
    pair = decode::int4MagicByte(e, x, group.zeroMix[j]);
    break;
  case DecodeFamily::Int8Magic: {
    bool isSigned = spec.encoding.getFormat() == ElementFormat::Int8;
    pair = e.fsub(decode::int8MagicPair(e, x, isSigned), group.zeroLo[j]);
    break;
  }
  case DecodeFamily::Fp8Cvt:
    pair = decode::e4m3Pair(e, arith::TruncIOp::create(b, e.i16(), x));
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
  Value swz = sparseChunkSwizzle(g);
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
    // Both m tiles' A fragments and metadata (10 registers) stay live while
    // each batch n tile's B fragment is loaded and used by two mma.sp: at
    // block_m = 128 the B fragments of every n tile would be 64.
    SmallVector<Value> metadata;
    SmallVector<SmallVector<Value>> aRegs(2, SmallVector<Value>(4));
    for (int64_t wt = 0; wt < 2; ++wt) {
      metadata.push_back(loadSparseMetadata(slotBase, wt, slab));
      for (int64_t c = 0; c < 2; ++c)
        for (int64_t h = 0; h < 2; ++h)
          aRegs[wt][2 * c + h] =
              decodeSparsePair(slotBase, swz, wt, h, slab, c, group);
    }
    for (int64_t bt = 0; bt < p.blockM / 8; ++bt) {
      std::array<Value, 4> bFrag = loadSparseBFragment(aBase, slab, bt);
      for (int64_t wt = 0; wt < 2; ++wt) {
        int64_t base = wt * half + 4 * bt;
        SmallVector<Value> cIn(acc.begin() + base, acc.begin() + base + 4);
        auto mma = NVVM::MmaSpOp::create(
            b, f32x4, aRegs[wt], ValueRange(bFrag), cIn, metadata[wt],
            /*sparsitySelector=*/e.c32(0), ArrayRef<int64_t>{16, 8, 32},
            std::nullopt,
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
