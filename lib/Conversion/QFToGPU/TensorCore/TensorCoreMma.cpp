//===- TensorCoreMma.cpp - One k step on the tensor cores -------------------===//
//
// A pipeline step's ldmatrix loads, decodes and mma.sync (or wgmma on
// sm_90a) into the f32 accumulators.
//===----------------------------------------------------------------------===//

#include "TensorCore/TensorCoreBuilder.h"

#include "Common/KernelCommon.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "qfuse/format/MmaLayout.h"

using namespace mlir;
using namespace mlir::qf;
using namespace mlir::qf::tensor_core;

/// The byte offset, in the warps' scale and zero slots, of group `gi` of the
/// step in `warpSlot`.
Value TensorCoreBuilder::groupSlotBase(Value warpSlot, int64_t gi) {
  return e.mul(e.add(e.mul(warpSlot, e.c32(p.groupsPerStep)), e.c32(gi)),
               e.c32(128));
}

/// Loads the scale (unless deferred) and zero of each n tile j (rows
/// nBase + 8 j + g) of group `gi` of the step: the zero as the pair the
/// decode subtracts, or (bf16 8-bit codes) as the integer z.
void TensorCoreBuilder::loadStepGroup(Value step, Value warpSlot, int64_t gi,
                                      StepGroup &group) {
  group.loaded = true;
  Value groupIndex = groupOfStep(step, gi);
  Value base = groupSlotBase(warpSlot, gi);
  for (int64_t j = 0; j < 4; ++j) {
    Value row = scaleRow(e.add(nBase, e.add(e.c32(8 * j), g)));
    // Lane 4 g + j copied row nBase + 8 j + g's word (issueStep).
    Value copier = e.add(e.mul(g, e.c32(4)), e.c32(j));
    Value slotOff = e.add(base, e.mul(copier, e.c32(4)));
    if (p.scaleRunBytes) {
      // Lane 4 g + j copied the row's run; group gi's scale is at byte
      // gi x scaleBytes of it (the run starts aligned, so the word's byte
      // lanes are the element's).
      int64_t inRun = gi * p.scaleBytes;
      Value runOff = e.add(groupSlotBase(warpSlot, 0),
                           e.add(e.mul(copier, e.c32(p.scaleRunBytes)),
                                 e.c32(inRun & ~int64_t(3))));
      Value sWord = LLVM::LoadOp::create(
          b, e.i32(), smemAt(e.add(e.c32(p.sOff), runOff)), 4);
      group.scale.push_back(scalePair(sWord, e.c32(gi)));
    } else if (!p.deferScale) {
      Value sWord = LLVM::LoadOp::create(
          b, e.i32(), smemAt(e.add(e.c32(p.sOff), slotOff)), 4);
      group.scale.push_back(scalePair(
          sWord, e.add(e.mul(row, e.c32(p.numGroups)), groupIndex)));
    }
    if (p.decode == DecodeFamily::Int4Magic ||
        p.decode == DecodeFamily::Int8Magic) {
      // One word per step (zeroWordPerStep): group 0's slot holds it.
      Value zSlotOff =
          p.zeroWordPerStep
              ? e.add(groupSlotBase(warpSlot, 0), e.mul(copier, e.c32(4)))
              : slotOff;
      Value zWord =
          p.intZeros || p.floatZeros
              ? LLVM::LoadOp::create(b, e.i32(),
                                     smemAt(e.add(e.c32(p.zOff), zSlotOff)), 4)
                    .getResult()
              : Value();
      // Float zero points: the codes decode to q exactly (an integer zero
      // of 0), and z is subtracted once, rounding q - z to the activation
      // type (decodeSlab; in f32 for bf16 8-bit codes, decodeWord).
      Value z = p.floatZeros ? e.c32(0) : zeroOf(zWord, row, groupIndex);
      if (p.floatZeros) {
        Value zf = scaleF32(
            zWord, e.add(e.mul(row, e.c32(p.numGroups)), groupIndex));
        group.zeroF32.push_back(zf);
        group.zeroPair.push_back(pairOf(zf));
      }
      if (spec.bf16 && p.codeBits == 8) {
        group.zeroInt.push_back(z);
      } else {
        group.zeroLo.push_back(zeroBias(z, false));
        if (p.codeBits == 4 && !spec.bf16)
          group.zeroHi.push_back(zeroBias(z, true));
      }
    }
  }
}

/// Folds the partial sums `part` of group `gi` of the step into acc, scaled
/// by the group's deferred column scales.
void TensorCoreBuilder::foldGroupScales(Value step, Value warpSlot,
                                        int64_t gi, const Acc &part,
                                        Acc &acc) {
  Value base = groupSlotBase(warpSlot, gi);
  // Row nBase + r's word was copied by lane 4 (r % 8) + r / 8.
  SmallVector<Value> colScale = columnScales(
      [&](Value row) {
        Value r = e.sub(row, nBase);
        Value copier = e.add(e.mul(e.band(r, e.c32(7)), e.c32(4)),
                             e.shru(r, e.c32(3)));
        return LLVM::LoadOp::create(
                   b, e.i32(),
                   smemAt(e.add(e.c32(p.sOff),
                                e.add(base, e.mul(copier, e.c32(4))))),
                   4)
            .getResult();
      },
      groupOfStep(step, gi));
  for (int64_t mt = 0; mt < p.mTiles; ++mt)
    for (int64_t j = 0; j < 4; ++j)
      for (int64_t i = 0; i < 4; ++i) {
        int64_t idx = (mt * 4 + j) * 4 + i;
        acc[idx] = e.fma(part[idx], colScale[2 * j + i % 2], acc[idx]);
      }
}

/// Loads the lane's words of code tile `kt` of the step: 4 (4-bit codes,
/// w = 2 s + jp), 8 (8-bit codes, w = 4 s + j), 2 (2-bit codes, w = s) or
/// 3 (3-bit codes: the two low-plane words, then the high-plane word).
SmallVector<Value> TensorCoreBuilder::loadTileWords(Value warpSlot,
                                                    int64_t kt) {
  int64_t laneBytesPerTile = p.tileBytes / 32;
  SmallVector<Value> words;
  if (p.codeBits < 4) { // MmaLayout.h: 8 bytes at 8 L, 3-bit + 4 at 256 + 4 L
    Value tileBase = e.add(
        e.c32(p.bOff),
        e.mul(e.add(e.mul(warpSlot, e.c32(p.kTilesPerStep)), e.c32(kt)),
              e.c32(p.tileBytes)));
    Value v = LLVM::LoadOp::create(
        b, e.vNi32(2), smemAt(e.add(tileBase, e.mul(lane, e.c32(8)))), 8);
    words = {e.extract(v, 0), e.extract(v, 1)};
    if (p.codeBits == 3)
      words.push_back(
          LLVM::LoadOp::create(
              b, e.i32(),
              smemAt(e.add(tileBase, e.add(e.c32(256), e.mul(lane, e.c32(4))))),
              4)
              .getResult());
    return words;
  }
  Value bAddr = e.add(
      e.c32(p.bOff),
      e.add(e.mul(e.add(e.mul(warpSlot, e.c32(p.kTilesPerStep)), e.c32(kt)),
                  e.c32(p.tileBytes)),
            e.mul(lane, e.c32(laneBytesPerTile))));
  for (int64_t h = 0; h < laneBytesPerTile / 16; ++h) {
    Value v = LLVM::LoadOp::create(b, e.vNi32(4),
                                   smemAt(e.add(bAddr, e.c32(16 * h))), 16);
    for (int64_t i = 0; i < 4; ++i)
      words.push_back(e.extract(v, i));
  }
  return words;
}

/// Four 8 x 8 b16 matrices of the activation tile at `aBase` by
/// ldmatrix.x4, this lane addressing 16-byte chunk `swizzledChunk` of tile
/// row `row` (issueStep stores chunk c of row r at c ^ (r % 8), so that the
/// 8 rows a matrix reads fall in distinct banks): a struct of four i32.
Value TensorCoreBuilder::loadActivationMatrices(Value aBase, Value row,
                                                Value swizzledChunk) {
  MLIRContext *ctx = b.getContext();
  auto i32x4 = LLVM::LLVMStructType::getLiteral(
      ctx, {e.i32(), e.i32(), e.i32(), e.i32()});
  Value addr = e.add(aBase, e.add(e.mul(row, e.c32(p.blockK * 2)),
                                  e.mul(swizzledChunk, e.c32(16))));
  return NVVM::LdMatrixOp::create(
      b, i32x4, smemAt(addr), b.getI32IntegerAttr(4),
      NVVM::MMALayoutAttr::get(ctx, NVVM::MMALayout::row),
      NVVM::LdStMatrixShapeAttr::get(ctx, 8, 8),
      NVVM::LdStMatrixEltTypeAttr::get(ctx, NVVM::LdStMatrixEltType::B16));
}

/// The A fragments of every m tile for k slab `kslab`: ldmatrix.x4, lanes
/// 0-15 address rows 0-15 of the slab's first 8 columns, lanes 16-31 the
/// next 8. (wgmma reads the activations itself, through a descriptor.)
SmallVector<SmallVector<Value>>
TensorCoreBuilder::loadAFragments(Value aBase, int64_t kslab) {
  SmallVector<SmallVector<Value>> aFrag(p.mTiles);
  for (int64_t mt = 0; mt < (p.wgmma ? 0 : p.mTiles); ++mt) {
    Value r = e.add(e.c32(mt * 16), e.band(lane, e.c32(15)));
    Value chunk = e.add(e.c32(kslab * 2), e.shru(lane, e.c32(4)));
    Value swz = arith::XOrIOp::create(b, chunk, e.band(r, e.c32(7)));
    Value frag = loadActivationMatrices(aBase, r, swz);
    // (mma.sync takes bf16 fragments as i32, f16 ones as half2.)
    for (int64_t i = 0; i < 4; ++i) {
      Value reg = LLVM::ExtractValueOp::create(b, frag, i);
      aFrag[mt].push_back(spec.bf16 ? reg : e.bitcast(e.v2f16(), reg));
    }
  }
  return aFrag;
}

/// Decodes k slab `s` of the tile's words into the unscaled (b0, b1) of n
/// tiles j = 0..3, less the zeros of `group`.
SmallVector<Value> TensorCoreBuilder::decodeSlab(ArrayRef<Value> words,
                                                 int64_t s,
                                                 const StepGroup &group) {
  SmallVector<Value> unscaled;
  if (p.codeBits < 4)
    return decode::tableMmaPlanes(e, lut, words, p.codeBits, s, act());
  if (p.codeBits == 4) {
    for (int64_t jp = 0; jp < 2; ++jp) {
      SmallVector<Value> pairs =
          decodeWord(words[s * 2 + jp], Value(), Value());
      if (p.decode == DecodeFamily::Int4Magic) {
        // q - z exactly: f16 lo - (1024 + z), hi / 16 - (64 + z); bf16
        // (128 + e) - (128 + z) for both. A float z is then subtracted.
        for (int64_t h = 0; h < 2; ++h) {
          int64_t j = 2 * jp + h;
          pairs[2 * h] = e.fsub(pairs[2 * h], group.zeroLo[j]);
          pairs[2 * h + 1] =
              spec.bf16 ? e.fsub(pairs[2 * h + 1], group.zeroLo[j])
                        : e.fma(pairs[2 * h + 1], e.ch2(1.0 / 16),
                                e.fneg(group.zeroHi[j]));
          if (p.floatZeros)
            for (int64_t r = 0; r < 2; ++r)
              pairs[2 * h + r] = e.fsub(pairs[2 * h + r], group.zeroPair[j]);
        }
      }
      unscaled.append(pairs);
    }
  } else {
    for (int64_t j = 0; j < 4; ++j) {
      bool f32Zero = spec.bf16 && p.decode == DecodeFamily::Int8Magic;
      SmallVector<Value> regs = decodeWord(
          words[s * 4 + j], f32Zero ? group.zeroInt[j] : Value(),
          f32Zero && p.floatZeros ? group.zeroF32[j] : Value());
      // q - z: less 1024 + z.
      if (p.decode == DecodeFamily::Int8Magic && !f32Zero)
        for (Value &r : regs) {
          r = e.fsub(r, group.zeroLo[j]);
          if (p.floatZeros)
            r = e.fsub(r, group.zeroPair[j]);
        }
      unscaled.append(regs);
    }
  }
  return unscaled;
}

/// Scales the slab's (b0, b1) of each n tile and multiplies them by every m
/// tile's A fragment into `target` with mma.sync, or (wgmma) appends them to
/// `wgmmaFrags` for issueWgmmas.
void TensorCoreBuilder::multiplySlab(
    ArrayRef<Value> unscaled, const StepGroup &group,
    ArrayRef<SmallVector<Value>> aFrag, Acc &target,
    SmallVectorImpl<std::array<Value, 2>> &wgmmaFrags) {
  auto f32x4 = LLVM::LLVMStructType::getLiteral(
      b.getContext(), {e.f32(), e.f32(), e.f32(), e.f32()});
  for (int64_t j = 0; j < 4; ++j) {
    Value b0 = unscaled[2 * j], b1 = unscaled[2 * j + 1];
    if (!p.deferScale) {
      b0 = e.fmul(b0, group.scale[j]);
      b1 = e.fmul(b1, group.scale[j]);
    }
    if (spec.bf16 || p.wgmma) {
      b0 = e.bitcast(e.i32(), b0);
      b1 = e.bitcast(e.i32(), b1);
    }
    if (p.wgmma) {
      wgmmaFrags.push_back({b0, b1});
      continue;
    }
    NVVM::MMATypes operandType =
        spec.bf16 ? NVVM::MMATypes::bf16 : NVVM::MMATypes::f16;
    for (int64_t mt = 0; mt < p.mTiles; ++mt) {
      int64_t base = (mt * 4 + j) * 4;
      SmallVector<Value> c(target.begin() + base, target.begin() + base + 4);
      auto mma = NVVM::MmaOp::create(
          b, f32x4, aFrag[mt], ValueRange{b0, b1}, c,
          ArrayRef<int64_t>{16, 8, 16}, std::nullopt, std::nullopt,
          std::array<NVVM::MMATypes, 2>{operandType, operandType},
          std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                         NVVM::MMALayout::col});
      for (int64_t i = 0; i < 4; ++i)
        target[base + i] = LLVM::ExtractValueOp::create(b, mma, i);
    }
  }
}

/// Decodes and multiplies K step `step`, held in pipeline slot `slot`.
TensorCoreBuilder::Acc TensorCoreBuilder::computeStep(Value slot, Value step,
                                                      ValueRange accIn) {
  Acc acc(accIn.begin(), accIn.end());
  Value warpSlot = e.add(e.mul(slot, e.c32(p.warps)), warp);
  Value aBase = e.add(e.c32(p.aOff),
                      e.mul(e.add(e.mul(slot, e.c32(p.kGroups)), kg),
                            e.c32(p.aBytes)));
  int64_t kslabsPerGroup = p.perChannel ? 1 << 30 : p.groupSize / 16;
  std::vector<StepGroup> groups(p.groupsPerStep);

  // Deferred group scales: the partial sums of group `partGi` of this step,
  // folded into acc when the group ends.
  bool groupFolds = p.deferScale && !p.perChannel;
  Acc part;
  int64_t partGi = -1;
  auto fold = [&]() {
    if (partGi >= 0)
      foldGroupScales(step, warpSlot, partGi, part, acc);
    partGi = -1;
  };

  // wgmma: the scaled (b0, b1) of n tile j of k slab s at 4 s + j.
  SmallVector<std::array<Value, 2>> wgmmaFrags;
  for (int64_t kt = 0; kt < p.kTilesPerStep; ++kt) {
    SmallVector<Value> words = loadTileWords(warpSlot, kt);
    for (int64_t s = 0; s < 2; ++s) {
      int64_t kslab = kt * 2 + s;
      int64_t gi = p.perChannel || p.groupSize >= p.blockK
                       ? 0
                       : kslab / kslabsPerGroup;
      if (!groups[gi].loaded)
        loadStepGroup(step, warpSlot, gi, groups[gi]);
      if (groupFolds && gi != partGi) {
        fold();
        part.assign(acc.size(), e.cf32(0.0));
        partGi = gi;
      }
      Acc &target = groupFolds ? part : acc;
      SmallVector<SmallVector<Value>> aFrag = loadAFragments(aBase, kslab);
      SmallVector<Value> unscaled = decodeSlab(words, s, groups[gi]);
      multiplySlab(unscaled, groups[gi], aFrag, target, wgmmaFrags);
    }
  }
  fold();
  if (p.wgmma)
    issueWgmmas(aBase, wgmmaFrags, acc);
  return acc;
}

/// The step's warpgroup MMAs. The B fragment registers of n tiles (0, 1)
/// are the A fragment of the warp's tile rows 0-15 (mma.m16n8k16's A
/// layout, which wgmma's register A keeps per warp: a0 = tile 0's b0,
/// a1 = tile 1's b0, a2 = tile 0's b1, a3 = tile 1's b1), tiles (2, 3)
/// that of rows 16-31: two m64nNk16 wgmmas per k slab, N = block_m, their
/// D rows being warp w's 16 rows at 16 w. B is the k slab of the
/// activation tile, [block_m x 64] f16 rows of 128 bytes whose 16-byte
/// chunks issueStep XOR-swizzled by row: wgmma's 128-byte swizzle (the
/// tile starts on 1024 bytes), K-major, 8-row groups 1024 bytes apart.
/// The decode ran before the fence, so no A register changes while the
/// wgmmas read it; the step waits for them before returning (the next
/// step's copies reuse the slot).
void TensorCoreBuilder::issueWgmmas(Value aBase,
                                    ArrayRef<std::array<Value, 2>> frags,
                                    Acc &acc) {
  Value tileAddr = arith::TruncIOp::create(
      b, e.i32(), LLVM::PtrToIntOp::create(b, e.i64(), smemAt(aBase)));
  // Matrix descriptor: start address >> 4 (bits 0-13), leading byte offset
  // (unused for a swizzled K-major tile: 1), stride byte offset 1024 >> 4
  // (bits 32-45), 128-byte swizzle (bits 62-63 = 1).
  const uint64_t descBits = (uint64_t(1) << 16) | (uint64_t(1024 >> 4) << 32) |
                            (uint64_t(1) << 62);
  const int64_t n = p.blockM, half = n / 2;
  const char *type = spec.bf16 ? "bf16" : "f16";
  std::string text;
  {
    llvm::raw_string_ostream os(text);
    os << "{\n.reg .pred p;\nsetp.ne.b32 p, $" << 2 * half + 5
       << ", 0;\nwgmma.mma_async.sync.aligned.m64n" << n << "k16.f32."
       << type << "." << type << " {";
    for (int64_t i = 0; i < half; ++i)
      os << (i ? ", " : "") << "$" << i;
    os << "}, {$" << 2 * half << ", $" << 2 * half + 1 << ", $"
       << 2 * half + 2 << ", $" << 2 * half + 3 << "}, $" << 2 * half + 4
       << ", p, 1, 1, 0;\n}";
  }
  std::string constraints;
  {
    llvm::raw_string_ostream os(constraints);
    for (int64_t i = 0; i < half; ++i)
      os << (i ? "," : "") << "=f";
    for (int64_t i = 0; i < half; ++i)
      os << "," << i;
    os << ",r,r,r,r,l,r";
  }
  SmallVector<Type> fields(half, e.f32());
  auto resultType = LLVM::LLVMStructType::getLiteral(b.getContext(), fields);
  NVVM::WgmmaFenceAlignedOp::create(b);
  for (int64_t s = 0; s < static_cast<int64_t>(frags.size()) / 4; ++s) {
    // Slab s starts 32 bytes (two 16-byte descriptor units) further along
    // each swizzled row.
    Value addr = e.add(tileAddr, e.c32(32 * s));
    Value desc = arith::OrIOp::create(
        b, e.zext64(e.shru(e.band(addr, e.c32(0x3FFFF)), e.c32(4))),
        e.c64(static_cast<int64_t>(descBits)));
    for (int64_t h = 0; h < 2; ++h) {
      const auto &t0 = frags[4 * s + 2 * h], &t1 = frags[4 * s + 2 * h + 1];
      SmallVector<Value> operands(acc.begin() + h * half,
                                  acc.begin() + (h + 1) * half);
      operands.append({t0[0], t1[0], t0[1], t1[1], desc, e.c32(1)});
      Operation *mma = e.ptxEffect(text, constraints, resultType, operands);
      for (int64_t i = 0; i < half; ++i)
        acc[h * half + i] =
            LLVM::ExtractValueOp::create(b, mma->getResult(0), i);
    }
  }
  NVVM::WgmmaGroupSyncAlignedOp::create(b);
  // Fed by a producer, the step's group stays in flight while the next
  // step decodes (consumeSteps); else the slot is refilled next.
  waitWgmmas(acc, p.producer ? 1 : 0);
}

/// Waits until at most `pending` wgmma groups are in flight. Inline PTX:
/// it passes every accumulator through (tied operands), so nothing reads
/// one before the wgmmas that write it are done, which
/// nvvm.wgmma.wait.group.sync.aligned cannot express. (The mma itself takes
/// its A operand from registers, which nvvm.wgmma.mma_async, descriptors
/// only, cannot either.)
void TensorCoreBuilder::waitWgmmas(Acc &acc, int64_t pending) {
  std::string tied;
  {
    llvm::raw_string_ostream os(tied);
    for (size_t i = 0; i < acc.size(); ++i)
      os << (i ? "," : "") << "=f";
    for (size_t i = 0; i < acc.size(); ++i)
      os << "," << i;
  }
  SmallVector<Type> all(acc.size(), e.f32());
  Operation *wait = e.ptxEffect(
      "wgmma.wait_group.sync.aligned " + std::to_string(pending) + ";", tied,
      LLVM::LLVMStructType::getLiteral(b.getContext(), all), acc);
  for (size_t i = 0; i < acc.size(); ++i)
    acc[i] = LLVM::ExtractValueOp::create(b, wait->getResult(0), i);
}
