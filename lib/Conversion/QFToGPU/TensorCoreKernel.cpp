//===- TensorCoreKernel.cpp - fused dequant-GEMM on mma.sync --------------===//
//
// The kernel for batches past the matvec (M >= 9 up to prefill sizes, and
// every batch of bf16 activations, which the matvec does not read):
// mma.sync.m16n8k16 with f16 or bf16 activations and f32 accumulation, the
// 4-bit or 8-bit weights decoded in registers straight into B fragments of
// the activation type.
//
//   warp       = 32 output features (4 n tiles of 8) x block_m batch rows
//                (block_m / 16 m tiles), over a slice of K
//   block      = (block_n / 32) n warps x split_k k groups; the k groups of
//                a block cover disjoint K slices and are summed through
//                shared memory at the end (no atomics, no second kernel)
//   silu_mul   = each k group has two warps per n warp, one streaming the
//                gate weight (`up_*`-less parameters) and one the up weight
//                over the same rows and the same activations; the gate
//                warps hand their sums to the up warps through shared
//                memory, which store silu(gate) * up
//   qf.group   = members (q/k/v) share x: grid y covers every member's
//                N / block_n blocks in order, each block takes its member's
//                weight, epilogue operands and output (`.i` parameters)
//   grid       = (ceil(M / block_m), N / block_n, cluster_k), M fastest so
//                that the blocks reading one weight tile run together (L2
//                reuse); with cluster_k > 1 (sm_90) the z blocks form a
//                thread-block cluster, each a K slice, and rank 0 sums the
//                others' results through distributed shared memory
//
// Every block_k-wide step goes through a `stages`-deep cp.async pipeline in
// dynamic shared memory:
//   A   [block_m x block_k] f16 per k group, rows zero-filled past M, 16-byte
//       chunks XOR-swizzled by row so that ldmatrix.x4 is conflict-free;
//   B   per warp, block_k / 32 tiles of 512 bytes in the fragment layout
//       (qfuse/format/MmaLayout.h): lane L copies and later reads back bytes
//       [16 L, 16 L + 16) of each tile, its own fragments;
//   scales (and integer zeros) per warp: lane L copies the 32-bit word that
//       holds the scale of row 8 (L % 4) + L / 4, the row whose fragment
//       lane 4 (L / 4) + j reads for n tile j.
//
// Decoding a 32-bit word of 4-bit codes gives the two B registers of two n
// tiles:
//   int4/uint4: (w & 0x000F000F) | 0x64006400 = half2(1024 + e0, 1024 + e1),
//     minus half2(1024 + z), exact; the high nibbles through an fma by 1/16;
//   nf4, fp4e2m1, 4-bit codebooks: a 16-entry table replicated across the 32
//     shared-memory banks (value c at word 32 c + lane), paired by prmt.
// With bf16 activations the same words decode into bf16 pairs: int4/uint4
//   under 0x4300 (bf16x2(128 + e), the high nibbles shifted down first: bit
//   7 is bf16's exponent), NF4/fp4/codebooks from a bf16 table.
// A word of 8-bit codes is one n tile's two B registers:
//   int8/uint8: prmt places each byte under 0x64, half2(1024 + u), minus
//     half2(1024 + z) (int8: the sign bit flipped first, z = 128), exact;
//   fp8 e4m3: one cvt.rn.f16x2.e4m3x2 per register, exact.
//   bf16: 128 + 255 does not fit bf16, so bytes go under the f32 2^23 and
//   q - z is formed in f32; fp8 widens through f32; pairs are packed by
//   cvt.rn.bf16x2.f32 (exact: at most 8 significant bits).
// Then mma.sync accumulates in f32, with the scale applied one of two ways:
//   per fragment: one half2 multiply of B by the group's scale (the same
//     rounding as an fp16 dequantize);
//   deferred: B stays the unscaled value (q - z, exact in f16), each scale
//     group accumulates into fresh registers, and the partial sums are
//     folded in with one f32 fma per accumulator and the scale of its
//     column. That trades the 8 half2 multiplies per 16 k for 4 mTiles fmas
//     per group, so it is chosen for long groups and few m tiles (decode
//     batches: the multiplies are a fifth of the issue slots there), and
//     per-channel scales fold once, after the K loop.
//
//===----------------------------------------------------------------------===//

#include "TensorCoreKernel.h"

#include "KernelCommon.h"
#include "KernelEmitter.h"
#include "TensorCorePlan.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "qfuse/format/MmaLayout.h"

using namespace mlir;
using namespace mlir::qf;
using namespace mlir::qf::tensor_core;

namespace {

class TensorCoreBuilder {
public:
  TensorCoreBuilder(ImplicitLocOpBuilder &b, const MatVecSpec &spec,
                    const Plan &p, gpu::GPUModuleOp module, StringRef name)
      : b(b), e(b), spec(spec), p(p), module(module), name(name) {}

  KernelLaunch build();

private:
  using Acc = SmallVector<Value>; // [mTile][nTile][4] f32, flattened

  Value smemAt(Value byteOffset);
  Value smemAt(int64_t byteOffset) { return smemAt(e.c32(byteOffset)); }
  void barrier();
  void issueStep(Value slot, Value step);
  Acc computeStep(Value slot, Value step, ValueRange acc);
  Value scalePair(Value word, Value elementIndex);
  Value scaleF32(Value word, Value elementIndex);
  SmallVector<Value> columnScales(function_ref<Value(Value row)> wordOfRow,
                                  Value group);
  Value zeroOf(Value word, Value row, Value group);
  Value zeroBias(Value z, bool high);
  SmallVector<Value> decodeWord(Value w, Value zero);
  Value packBf16(Value lo, Value hi);
  Value tableValue(Value index);
  void buildLut();
  Value groupOfStep(Value step, int64_t gi);
  Value scaleRow(Value row);
  void issueWgmmas(Value aBase, ArrayRef<std::array<Value, 2>> frags,
                   Acc &acc);
  void storeWgmmaOutputs(const Acc &acc);
  Value parkedSum(int64_t i);
  void reduceSplitK(Acc &acc);
  void reduceCluster(Acc &acc);
  void storeOutputs(const Acc &acc);

  /// The element type of x, the B fragments, bias, residual and y: f16, or
  /// bf16 (spec.bf16), and its pair.
  Type act() { return spec.bf16 ? e.bf16() : e.f16(); }
  VectorType actPair() { return spec.bf16 ? e.v2bf16() : e.v2f16(); }

  ImplicitLocOpBuilder &b;
  KernelEmitter e;
  const MatVecSpec &spec;
  const Plan &p;
  gpu::GPUModuleOp module;
  std::string name;
  Value x, codes, scales, zeros, globalScale, table, bias, residual, y;
  Value smem;
  Value tid, lane, warp, nw, kg, g, t4, tgInGroup, rank;
  Value member;    // 0, or 1 for the up warps of silu_mul
  Value columnWarp; // member x nWarps + nw: the warp within its k group
  Value nOut;      // N of this block's qf.group member
  Value mBase, nBase;
  Value tileRow; // the warp's tile row of codes (clamped to the last one)
  Value laneBytes;
  LLVM::GlobalOp codeTable;
};

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

/// Starts the copies of K step `step` into pipeline slot `slot`.
void TensorCoreBuilder::issueStep(Value slot, Value step) {
  MLIRContext *ctx = b.getContext();
  auto cg = NVVM::LoadCacheModifierKindAttr::get(ctx,
                                                 NVVM::LoadCacheModifierKind::CG);
  auto ca = NVVM::LoadCacheModifierKindAttr::get(ctx,
                                                 NVVM::LoadCacheModifierKind::CA);
  Value k0 = e.mul(step, e.c32(p.blockK));
  // A: the k group's block_m x block_k activations, 16-byte chunks spread
  // over the group's threads; rows past M are zero-filled (source size 0,
  // source address clamped to a valid row).
  int64_t chunksPerRow = p.blockK / 8;
  int64_t chunks = p.blockM * chunksPerRow;
  int64_t groupThreads = p.groupWarps * 32;
  Value aBase = e.add(e.c32(p.aOff),
                      e.mul(e.add(e.mul(slot, e.c32(p.kGroups)), kg),
                            e.c32(p.aBytes)));
  for (int64_t i = 0; i * groupThreads < chunks; ++i) {
    auto emitChunk = [&]() {
      Value c = e.add(tgInGroup, e.c32(i * groupThreads));
      Value r = e.divu(c, e.c32(chunksPerRow));
      Value col = e.remu(c, e.c32(chunksPerRow));
      Value row = e.add(mBase, r);
      Value kcol = e.add(k0, e.mul(col, e.c32(8)));
      Value valid = e.ult(row, e.c32(p.m));
      Value clamped = e.minu(row, e.c32(p.m - 1));
      if (p.kTail) { // columns past K are zero too (K % 8 == 0)
        valid = arith::AndIOp::create(b, valid, e.ult(kcol, e.c32(p.k)));
        kcol = e.minu(kcol, e.c32(p.k - 8));
      }
      Value src = e.gepBytes(
          x, e.mul(e.zext64(e.add(e.mul(clamped, e.c32(p.k)), kcol)),
                   e.c64(2)));
      Value swz = arith::XOrIOp::create(b, col, e.band(r, e.c32(7)));
      Value dst = smemAt(e.add(aBase, e.add(e.mul(r, e.c32(p.blockK * 2)),
                                            e.mul(swz, e.c32(16)))));
      Value size = arith::SelectOp::create(b, valid, e.c32(16), e.c32(0));
      // .ca: every block of an SM reads the same activation slice for its
      // k group, so L1 serves the repeats; codes stream through .cg.
      NVVM::CpAsyncOp::create(b, dst, src, b.getI32IntegerAttr(16), ca, size);
    };
    if ((i + 1) * groupThreads <= chunks) {
      emitChunk();
    } else {
      OpBuilder::InsertionGuard guard(b);
      auto inRange = scf::IfOp::create(
          b, e.ult(tgInGroup, e.c32(chunks - i * groupThreads)), false);
      b.setInsertionPointToStart(inRange.thenBlock());
      emitChunk();
    }
  }
  // B: this warp's fragment tiles, 16 bytes per lane each (32 for 8-bit
  // codes, as two copies).
  Value warpSlot = e.add(e.mul(slot, e.c32(p.warps)), warp);
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
  // Scales and zeros: the aligned 32-bit word holding row
  // nBase + 8 (lane % 4) + lane / 4's entry (the runtime allocates weight
  // components in whole 16-byte units, so no word runs past the buffer).
  Value row = scaleRow(e.add(nBase, e.add(e.mul(t4, e.c32(8)), g)));
  for (int64_t gi = 0; gi < p.groupsPerStep; ++gi) {
    Value group = groupOfStep(step, gi);
    Value slotOff = e.add(e.mul(e.add(e.mul(warpSlot, e.c32(p.groupsPerStep)),
                                      e.c32(gi)),
                                e.c32(128)),
                          e.mul(lane, e.c32(4)));
    Value sByte = e.mul(e.zext64(e.add(e.mul(row, e.c32(p.numGroups)), group)),
                        e.c64(p.scaleBytes));
    Value sWord = arith::AndIOp::create(b, sByte, e.c64(~int64_t(3)));
    NVVM::CpAsyncOp::create(b, smemAt(e.add(e.c32(p.sOff), slotOff)),
                            e.gepBytes(scales, sWord), b.getI32IntegerAttr(4),
                            ca, Value());
    if (p.intZeros) {
      Value zByte =
          e.add(e.mul(e.zext64(row), e.c64(p.zeroRowBytes)),
                e.zext64(e.shru(e.mul(group, e.c32(p.codeBits)), e.c32(3))));
      Value zWord = arith::AndIOp::create(b, zByte, e.c64(~int64_t(3)));
      NVVM::CpAsyncOp::create(b, smemAt(e.add(e.c32(p.zOff), slotOff)),
                              e.gepBytes(zeros, zWord), b.getI32IntegerAttr(4),
                              ca, Value());
    }
  }
}

/// The scale stored at element `elementIndex` of the scales tensor, whose
/// aligned word is `word`, as a pair of the activation type with both lanes
/// equal.
Value TensorCoreBuilder::scalePair(Value word, Value elementIndex) {
  // Rounded to f16 (bf16) once: exact for f16 and E4M3 (bf16, E8M0) scales,
  // where LLVM folds the extension and truncation away.
  Value h =
      e.bitcast(e.i16(), e.truncTo(act(), scaleF32(word, elementIndex)));
  Value h32 = arith::ExtUIOp::create(b, e.i32(), h);
  return e.bitcast(actPair(),
                   arith::OrIOp::create(
                       b, h32, arith::ShLIOp::create(b, h32, e.c32(16))));
}

/// The scale stored at element `elementIndex` of the scales tensor, whose
/// aligned word is `word`, exactly as an f32.
Value TensorCoreBuilder::scaleF32(Value word, Value elementIndex) {
  Type st = spec.encoding.getScaleType();
  if (st.isF32())
    return e.bitcast(e.f32(), word);
  Value shift = e.mul(e.band(e.mul(elementIndex, e.c32(p.scaleBytes)),
                             e.c32(3)),
                      e.c32(8));
  Value bits = e.shru(word, shift);
  if (st.isF16())
    return e.extf32(
        e.bitcast(b.getF16Type(), arith::TruncIOp::create(b, e.i16(), bits)));
  if (st.isBF16())
    return e.bitcast(e.f32(), arith::ShLIOp::create(b, bits, e.c32(16)));
  if (isa<Float8E8M0FNUType>(st))
    return e.bitcast(e.f32(), arith::ShLIOp::create(
                                  b, e.band(bits, e.c32(0xFF)), e.c32(23)));
  // E4M3: exact through the f16 pair conversion.
  Value byte = arith::TruncIOp::create(b, e.i16(), e.band(bits, e.c32(0xFF)));
  Value h2 = e.ptx("cvt.rn.f16x2.e4m3x2 $0, $1;", "=r,h", e.i32(), {byte});
  return e.extf32(
      e.bitcast(b.getF16Type(), arith::TruncIOp::create(b, e.i16(), h2)));
}

/// The f32 scales of the accumulator columns this lane holds: entry
/// 2 j + c is row nBase + 8 j + 2 t + c (c0/c2 and c1/c3 of n tile j).
/// `wordOfRow` gives the aligned 32-bit word holding a row's scale.
SmallVector<Value>
TensorCoreBuilder::columnScales(function_ref<Value(Value row)> wordOfRow,
                                Value group) {
  SmallVector<Value> result;
  for (int64_t j = 0; j < 4; ++j)
    for (int64_t c = 0; c < 2; ++c) {
      Value row = e.add(nBase, e.add(e.c32(8 * j),
                                     e.add(e.mul(t4, e.c32(2)), e.c32(c))));
      result.push_back(
          scaleF32(wordOfRow(row),
                   e.add(e.mul(scaleRow(row), e.c32(p.numGroups)), group)));
    }
  return result;
}

/// The integer zero point of (row, group): z from the packed zeros word, or
/// the symmetric formats' implied 8 (int4) and 128 (int8, whose sign bit
/// decodeWord flips).
Value TensorCoreBuilder::zeroOf(Value word, Value row, Value group) {
  if (!p.intZeros)
    return e.c32(p.codeBits == 8 ? 128 : 8);
  Value bit = e.mul(group, e.c32(p.codeBits));
  Value byteIdx =
      e.add(e.mul(row, e.c32(p.zeroRowBytes)), e.shru(bit, e.c32(3)));
  Value shift = e.add(e.mul(e.band(byteIdx, e.c32(3)), e.c32(8)),
                      e.band(bit, e.c32(7)));
  return e.band(e.shru(word, shift), e.c32((1 << p.codeBits) - 1));
}

/// The pair the decoder subtracts from the raw codes of zero point z:
/// f16: half2(1024 + z), or half2(64 + z) for the high nibbles, which decode
/// as 1024 + 16 e and are scaled by 1/16 first; bf16 4-bit codes:
/// bf16x2(128 + z) (both nibbles decode as 128 + e). bf16 8-bit codes
/// subtract in f32 (decodeWord).
Value TensorCoreBuilder::zeroBias(Value z, bool high) {
  // half(1024 + z) = 0x6400 | z (ulp 1); half(64 + z) = 0x5400 + 16 z
  // (ulp 1/16); bf16(128 + z) = 0x4300 | z (ulp 1, z < 128).
  Value hbits;
  if (spec.bf16)
    hbits = arith::OrIOp::create(b, z, e.c32(0x4300));
  else
    hbits = high ? e.add(arith::ShLIOp::create(b, z, e.c32(4)), e.c32(0x5400))
                 : arith::OrIOp::create(b, z, e.c32(0x6400));
  return e.bitcast(actPair(),
                   arith::OrIOp::create(
                       b, hbits, arith::ShLIOp::create(b, hbits, e.c32(16))));
}

/// The bf16x2 (lo, hi) of two f32 values (exact for the values decoded
/// here, which have at most 8 significant bits).
Value TensorCoreBuilder::packBf16(Value lo, Value hi) {
  return e.bitcast(e.v2bf16(), e.ptx("cvt.rn.bf16x2.f32 $0, $1, $2;",
                                     "=r,f,f", e.i32(), {hi, lo}));
}

/// The B registers of one code word, in the fragment order of MmaLayout.h.
/// 4-bit codes give four: (b0, b1) of n tile 2 jp, then (b0, b1) of n tile
/// 2 jp + 1; int4/uint4 come back raw (f16 lo: 1024 + e, hi: 1024 + 16 e;
/// bf16: 128 + e), for computeStep to remove each tile's zero point; table
/// formats as values. 8-bit codes give (b0, b1) of one n tile: int8/uint8
/// raw (f16: 1024 + u) or, with bf16 activations, already q - z (`zero`
/// is z, an i32), fp8 as values.
SmallVector<Value> TensorCoreBuilder::decodeWord(Value w, Value zero) {
  SmallVector<Value> pairs;
  auto h2 = [&](Value i) { return e.bitcast(actPair(), i); };
  if (p.decode == Decode::Int8Magic) {
    // u = the unsigned byte (int8: sign flipped, u = q + 128).
    Value u = p.intZeros ? w : arith::XOrIOp::create(b, w, e.c32(0x80808080));
    if (spec.bf16) {
      // bf16 holds 128 + u only up to u = 127: each byte goes under the f32
      // 2^23 (0x4B000000 | u = 2^23 + u), minus 2^23 + z is q - z exactly,
      // and a pair of them rounds (exactly, |q - z| <= 255) into bf16x2.
      Value magic = e.c32(0x4B000000);
      Value bias = e.bitcast(
          e.f32(), arith::OrIOp::create(b, zero, e.c32(0x4B000000)));
      auto value = [&](uint32_t v) {
        return e.fsub(e.bitcast(e.f32(), e.prmt(u, magic, 0x7540 + v)), bias);
      };
      pairs.push_back(packBf16(value(0), value(1)));
      pairs.push_back(packBf16(value(2), value(3)));
      return pairs;
    }
    // Bytes (v0, v1) and (v2, v3) under 0x64: half2(1024 + u).
    Value magic = e.c32(0x64646464);
    pairs.push_back(h2(e.prmt(u, magic, 0x4140)));
    pairs.push_back(h2(e.prmt(u, magic, 0x4342)));
    return pairs;
  }
  if (p.decode == Decode::Fp8) {
    for (int64_t half = 0; half < 2; ++half) {
      Value bits = arith::TruncIOp::create(
          b, e.i16(), half ? e.shru(w, e.c32(16)) : w);
      Value f16x2 =
          e.ptx("cvt.rn.f16x2.e4m3x2 $0, $1;", "=r,h", e.i32(), {bits});
      if (!spec.bf16) {
        pairs.push_back(h2(f16x2));
        continue;
      }
      // Every E4M3 value is an f16, an f32 and a bf16: widen, then pack.
      Value v = e.bitcast(e.v2f16(), f16x2);
      pairs.push_back(
          packBf16(e.extf32(e.extract(v, 0)), e.extf32(e.extract(v, 1))));
    }
    return pairs;
  }
  if (p.decode == Decode::Int4Magic) {
    // Element 2i sits in nibble slot i, 2i + 1 in slot i + 4 (kNibbleOrder):
    // lo(w) = (e0, e1), hi(w) = (e2, e3), lo(w >> 8) = (e4, e5), ...
    Value w8 = e.shru(w, e.c32(8));
    for (Value src : {w, w8}) {
      if (spec.bf16) {
        // bf16's 7 mantissa bits hold a nibble at bits 0..3 only (bit 7 is
        // the exponent's): the high nibbles are shifted down first.
        pairs.push_back(h2(e.andOr(src, 0x000F000F, 0x43004300)));
        pairs.push_back(
            h2(e.andOr(e.shru(src, e.c32(4)), 0x000F000F, 0x43004300)));
        continue;
      }
      pairs.push_back(h2(e.andOr(src, 0x000F000F, 0x64006400)));
      pairs.push_back(h2(e.andOr(src, 0x00F000F0, 0x64006400)));
    }
    return pairs;
  }
  // Table formats, same nibble order: pair i = (slot i, slot i + 4).
  auto sharedPtr = LLVM::LLVMPointerType::get(b.getContext(), 3);
  auto lookup = [&](int64_t slot) {
    int64_t shift = 4 * slot - 7; // nibble bits -> bits 7..10 (c * 128)
    Value moved = shift >= 0 ? e.shru(w, e.c32(shift))
                             : arith::ShLIOp::create(b, w, e.c32(-shift));
    Value off = e.add(e.add(e.band(moved, e.c32(15 << 7)), laneBytes),
                      e.c32(p.lutOff));
    Value ptr = LLVM::GEPOp::create(b, sharedPtr, e.i8(), smem,
                                    ValueRange{off});
    return LLVM::LoadOp::create(b, e.i32(), ptr, 4).getResult();
  };
  for (int64_t i = 0; i < 4; ++i)
    pairs.push_back(h2(e.prmt(lookup(i), lookup(i + 4), 0x5410)));
  return pairs;
}

Value TensorCoreBuilder::tableValue(Value index) {
  return codeTableValue(b, module, name, spec.encoding, table, index,
                        codeTable, act());
}

/// Fills the shared table: word c * 32 + l holds value(c) for lane l.
void TensorCoreBuilder::buildLut() {
  auto loop = scf::ForOp::create(b, tid, e.c32(16 * 32), e.c32(p.threads));
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value i = loop.getInductionVar();
    Value value = tableValue(e.shru(i, e.c32(5)));
    Value entry =
        arith::ExtUIOp::create(b, e.i32(), e.bitcast(e.i16(), value));
    LLVM::StoreOp::create(
        b, entry, smemAt(e.add(e.c32(p.lutOff), e.mul(i, e.c32(4)))), 4);
  }
  NVVM::Barrier0Op::create(b);
}

/// Decodes and multiplies K step `step`, held in pipeline slot `slot`.
TensorCoreBuilder::Acc TensorCoreBuilder::computeStep(Value slot, Value step,
                                                      ValueRange accIn) {
  MLIRContext *ctx = b.getContext();
  Acc acc(accIn.begin(), accIn.end());
  Value warpSlot = e.add(e.mul(slot, e.c32(p.warps)), warp);
  Value aBase = e.add(e.c32(p.aOff),
                      e.mul(e.add(e.mul(slot, e.c32(p.kGroups)), kg),
                            e.c32(p.aBytes)));
  auto i32x4 = LLVM::LLVMStructType::getLiteral(
      ctx, {e.i32(), e.i32(), e.i32(), e.i32()});
  auto f32x4 = LLVM::LLVMStructType::getLiteral(
      ctx, {e.f32(), e.f32(), e.f32(), e.f32()});
  int64_t kslabsPerGroup = p.perChannel ? 1 << 30 : p.groupSize / 16;

  // Per scale group of the step: scale (unless deferred) and zero of each
  // n tile j (rows nBase + 8 j + g), decoded once: the zero as the pair
  // the decode subtracts, or (bf16 8-bit codes) as the integer z.
  SmallVector<SmallVector<Value>> scaleOf(p.groupsPerStep),
      zeroLoOf(p.groupsPerStep), zeroHiOf(p.groupsPerStep),
      zeroIntOf(p.groupsPerStep);
  SmallVector<bool> loaded(p.groupsPerStep, false);
  auto slotBase = [&](int64_t gi) {
    return e.mul(e.add(e.mul(warpSlot, e.c32(p.groupsPerStep)), e.c32(gi)),
                 e.c32(128));
  };
  auto groupValues = [&](int64_t gi) {
    if (loaded[gi])
      return;
    loaded[gi] = true;
    Value group = groupOfStep(step, gi);
    Value base = slotBase(gi);
    for (int64_t j = 0; j < 4; ++j) {
      Value row = scaleRow(e.add(nBase, e.add(e.c32(8 * j), g)));
      // Lane 4 g + j copied row nBase + 8 j + g's word (issueStep).
      Value slotOff = e.add(base, e.mul(e.add(e.mul(g, e.c32(4)), e.c32(j)),
                                        e.c32(4)));
      if (!p.deferScale) {
        Value sWord = LLVM::LoadOp::create(
            b, e.i32(), smemAt(e.add(e.c32(p.sOff), slotOff)), 4);
        scaleOf[gi].push_back(
            scalePair(sWord, e.add(e.mul(row, e.c32(p.numGroups)), group)));
      }
      if (p.decode == Decode::Int4Magic || p.decode == Decode::Int8Magic) {
        Value zWord =
            p.intZeros ? LLVM::LoadOp::create(
                             b, e.i32(), smemAt(e.add(e.c32(p.zOff), slotOff)),
                             4)
                             .getResult()
                       : Value();
        Value z = zeroOf(zWord, row, group);
        if (spec.bf16 && p.codeBits == 8) {
          zeroIntOf[gi].push_back(z);
        } else {
          zeroLoOf[gi].push_back(zeroBias(z, false));
          if (p.codeBits == 4 && !spec.bf16)
            zeroHiOf[gi].push_back(zeroBias(z, true));
        }
      }
    }
  };

  // Deferred group scales: the partial sums of group `partGi` of this step,
  // folded into acc when the group ends.
  bool groupFolds = p.deferScale && !p.perChannel;
  Acc part;
  int64_t partGi = -1;
  auto fold = [&]() {
    if (partGi < 0)
      return;
    Value base = slotBase(partGi);
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
        groupOfStep(step, partGi));
    for (int64_t mt = 0; mt < p.mTiles; ++mt)
      for (int64_t j = 0; j < 4; ++j)
        for (int64_t i = 0; i < 4; ++i) {
          int64_t idx = (mt * 4 + j) * 4 + i;
          acc[idx] = e.fma(part[idx], colScale[2 * j + i % 2], acc[idx]);
        }
    partGi = -1;
  };

  // wgmma: the scaled (b0, b1) of n tile j of k slab s at 4 s + j.
  SmallVector<std::array<Value, 2>> wgmmaFrags;
  int64_t laneBytesPerTile = p.tileBytes / 32;
  for (int64_t kt = 0; kt < p.kTilesPerStep; ++kt) {
    Value bAddr = e.add(
        e.c32(p.bOff),
        e.add(e.mul(e.add(e.mul(warpSlot, e.c32(p.kTilesPerStep)), e.c32(kt)),
                    e.c32(p.tileBytes)),
              e.mul(lane, e.c32(laneBytesPerTile))));
    // The lane's words of the tile: 4 (4-bit codes, w = 2 s + jp) or 8
    // (8-bit codes, w = 4 s + j).
    SmallVector<Value> words;
    for (int64_t h = 0; h < laneBytesPerTile / 16; ++h) {
      Value v = LLVM::LoadOp::create(b, e.vNi32(4),
                                     smemAt(e.add(bAddr, e.c32(16 * h))), 16);
      for (int64_t i = 0; i < 4; ++i)
        words.push_back(e.extract(v, i));
    }
    for (int64_t s = 0; s < 2; ++s) {
      int64_t kslab = kt * 2 + s;
      int64_t gi = p.perChannel || p.groupSize >= p.blockK
                       ? 0
                       : kslab / kslabsPerGroup;
      groupValues(gi);
      if (groupFolds && gi != partGi) {
        fold();
        part.assign(acc.size(), e.cf32(0.0));
        partGi = gi;
      }
      Acc &target = groupFolds ? part : acc;
      // A fragments of every m tile: ldmatrix.x4, lanes 0-15 address rows
      // 0-15 of the k slab's first 8 columns, lanes 16-31 the next 8.
      // (wgmma reads the activations itself, through a descriptor.)
      SmallVector<SmallVector<Value>> aFrag(p.mTiles);
      for (int64_t mt = 0; mt < (p.wgmma ? 0 : p.mTiles); ++mt) {
        Value r = e.add(e.c32(mt * 16), e.band(lane, e.c32(15)));
        Value chunk = e.add(e.c32(kslab * 2), e.shru(lane, e.c32(4)));
        Value swz = arith::XOrIOp::create(b, chunk, e.band(r, e.c32(7)));
        Value addr = e.add(aBase, e.add(e.mul(r, e.c32(p.blockK * 2)),
                                        e.mul(swz, e.c32(16))));
        Value frag = NVVM::LdMatrixOp::create(
            b, i32x4, smemAt(addr), b.getI32IntegerAttr(4),
            NVVM::MMALayoutAttr::get(ctx, NVVM::MMALayout::row),
            NVVM::LdStMatrixShapeAttr::get(ctx, 8, 8),
            NVVM::LdStMatrixEltTypeAttr::get(ctx,
                                             NVVM::LdStMatrixEltType::B16));
        // (mma.sync takes bf16 fragments as i32, f16 ones as half2.)
        for (int64_t i = 0; i < 4; ++i) {
          Value reg = LLVM::ExtractValueOp::create(b, frag, i);
          aFrag[mt].push_back(spec.bf16 ? reg : e.bitcast(e.v2f16(), reg));
        }
      }
      // The unscaled (b0, b1) of n tiles j = 0..3 of this slab.
      SmallVector<Value> unscaled;
      if (p.codeBits == 4) {
        for (int64_t jp = 0; jp < 2; ++jp) {
          SmallVector<Value> pairs = decodeWord(words[s * 2 + jp], Value());
          if (p.decode == Decode::Int4Magic) {
            // q - z exactly: f16 lo - (1024 + z), hi / 16 - (64 + z); bf16
            // (128 + e) - (128 + z) for both.
            for (int64_t h = 0; h < 2; ++h) {
              int64_t j = 2 * jp + h;
              pairs[2 * h] = e.fsub(pairs[2 * h], zeroLoOf[gi][j]);
              pairs[2 * h + 1] =
                  spec.bf16 ? e.fsub(pairs[2 * h + 1], zeroLoOf[gi][j])
                            : e.fma(pairs[2 * h + 1], e.ch2(1.0 / 16),
                                    e.fneg(zeroHiOf[gi][j]));
            }
          }
          unscaled.append(pairs);
        }
      } else {
        for (int64_t j = 0; j < 4; ++j) {
          bool f32Zero = spec.bf16 && p.decode == Decode::Int8Magic;
          SmallVector<Value> regs = decodeWord(
              words[s * 4 + j], f32Zero ? zeroIntOf[gi][j] : Value());
          if (p.decode == Decode::Int8Magic && !f32Zero) // q - z: - (1024 + z)
            for (Value &r : regs)
              r = e.fsub(r, zeroLoOf[gi][j]);
          unscaled.append(regs);
        }
      }
      for (int64_t j = 0; j < 4; ++j) {
        Value b0 = unscaled[2 * j], b1 = unscaled[2 * j + 1];
        if (!p.deferScale) {
          b0 = e.fmul(b0, scaleOf[gi][j]);
          b1 = e.fmul(b1, scaleOf[gi][j]);
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
          SmallVector<Value> c(target.begin() + base,
                               target.begin() + base + 4);
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
  e.ptxEffect("wgmma.fence.sync.aligned;", "", Type(), {});
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
  e.ptxEffect("wgmma.commit_group.sync.aligned;", "", Type(), {});
  // The wait passes every accumulator through (tied operands), so nothing
  // reads one before the wgmmas that write it are done; the pipeline slot
  // is refilled only after it too.
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
      "wgmma.wait_group.sync.aligned 0;", tied,
      LLVM::LLVMStructType::getLiteral(b.getContext(), all), acc);
  for (size_t i = 0; i < acc.size(); ++i)
    acc[i] = LLVM::ExtractValueOp::create(b, wait->getResult(0), i);
}

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
  NVVM::Barrier0Op::create(b);
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
  NVVM::Barrier0Op::create(b);
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
  NVVM::Barrier0Op::create(b); // the in-block partials have been read
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

/// Epilogue and store of k group 0's accumulators: c0, c1 are (row g,
/// columns 2t, 2t+1) of an m16n8 tile, c2, c3 the same at row g + 8. Each
/// warp first finishes its own weight's sums (deferred per-channel scale,
/// NVFP4 global scale); under silu_mul the gate warps then hand theirs to
/// the up warps, which store silu(gate) * up.
/// Epilogue of the wgmma kernel, whose accumulators are transposed: half h
/// (the wgmma of tile rows 16 h..16 h + 15) holds, for each 8-column chunk
/// i of the batch, entry 4 i + 2 q + c = (weight row nBase + 16 h + 8 q + g,
/// batch row mBase + 8 i + 2 t + c). Adjacent registers are adjacent batch
/// rows, so each output element is stored by itself (8 lanes write 16
/// contiguous bytes of one batch row).
void TensorCoreBuilder::storeWgmmaOutputs(const Acc &acc) {
  OpBuilder::InsertionGuard guard(b);
  const int64_t half = p.blockM / 2;
  // k group 0 (of cluster rank 0) holds the sums (reduceSplitK and
  // reduceCluster added the other k slices into it).
  if (p.kGroups > 1 || p.clusterK > 1) {
    Value owns =
        arith::CmpIOp::create(b, arith::CmpIPredicate::eq, kg, e.c32(0));
    if (p.clusterK > 1)
      owns = arith::AndIOp::create(
          b, owns,
          arith::CmpIOp::create(b, arith::CmpIPredicate::eq, rank, e.c32(0)));
    auto owner = scf::IfOp::create(b, owns, false);
    b.setInsertionPointToStart(owner.thenBlock());
  }
  Value invGlobal;
  if (spec.encoding.getGlobalScale())
    invGlobal = e.fdiv(e.cf32(1.0), e.loadRO(e.f32(), globalScale, 4));
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
      for (int64_t i = 0; i < p.blockM / 8; ++i)
        for (int64_t c = 0; c < 2; ++c) {
          Value batchRow =
              e.add(mBase, e.add(e.c32(8 * i + c), e.mul(t4, e.c32(2))));
          OpBuilder::InsertionGuard g3(b);
          auto inM = scf::IfOp::create(b, e.ult(batchRow, e.c32(p.m)), false);
          b.setInsertionPointToStart(inM.thenBlock());
          Value v = acc[h * half + 4 * i + 2 * q + c];
          if (factor)
            v = e.fmul(v, factor);
          if (biasValue)
            v = e.fadd(v, biasValue);
          Value off =
              e.mul(e.zext64(e.add(e.mul(batchRow, nOut), row)), e.c64(2));
          if (spec.hasResidual)
            v = e.fadd(v, e.extf32(e.loadRO(act(), e.gepBytes(residual, off),
                                            2)));
          e.store(e.truncTo(act(), v), e.gepBytes(y, off), 2);
        }
    }
}

void TensorCoreBuilder::storeOutputs(const Acc &acc) {
  if (p.wgmma)
    return storeWgmmaOutputs(acc);
  OpBuilder::InsertionGuard guard(b);
  // Deferred per-channel scales: the K loop summed unscaled values.
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
    NVVM::Barrier0Op::create(b);
    {
      OpBuilder::InsertionGuard g2(b);
      Value isGate =
          arith::CmpIOp::create(b, arith::CmpIPredicate::eq, member, e.c32(0));
      auto writer =
          scf::IfOp::create(b, arith::AndIOp::create(b, owns, isGate), false);
      b.setInsertionPointToStart(writer.thenBlock());
      for (int64_t i = 0; i < per; ++i)
        LLVM::StoreOp::create(b, total[i], parkedSum(i), 4);
    }
    NVVM::Barrier0Op::create(b);
    owns = arith::AndIOp::create(b, owns, isUp);
    auto reader = scf::IfOp::create(b, owns, false);
    b.setInsertionPointToStart(reader.thenBlock());
    for (int64_t i = 0; i < per; ++i)
      gate.push_back(LLVM::LoadOp::create(b, e.f32(), parkedSum(i), 4));
  } else if (p.kGroups > 1 || p.clusterK > 1) {
    auto owner = scf::IfOp::create(b, owns, false);
    b.setInsertionPointToStart(owner.thenBlock());
  }
  // Columns past N (the padding rows of the last tile row) are not stored,
  // and their bias and residual reads are clamped to the last column. With
  // an odd N a pair is not 4-byte aligned: elements go one at a time.
  auto elementOffset = [&](Value row, Value col) {
    return e.mul(e.zext64(e.add(e.mul(row, nOut), col)), e.c64(2));
  };
  auto lastCol = [&](int64_t from) { return e.sub(nOut, e.c32(from)); };
  for (int64_t j = 0; j < 4; ++j) {
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
          if (!gate.empty())
            v = e.siluMul(gate[base + i], v);
          if (!biasValues.empty())
            v = e.fadd(v, biasValues[i]);
          if (!resValues.empty())
            v = e.fadd(v, resValues[i]);
          out.push_back(e.truncTo(act(), v));
        }
        if (p.oddN) {
          for (int64_t i = 0; i < 2; ++i) {
            Value c = e.add(col, e.c32(i));
            OpBuilder::InsertionGuard g3(b);
            auto ifCol = scf::IfOp::create(b, e.ult(c, nOut), false);
            b.setInsertionPointToStart(ifCol.thenBlock());
            e.store(out[i], e.gepBytes(y, elementOffset(row, c)), 2);
          }
          continue;
        }
        Value pair = LLVM::UndefOp::create(b, actPair());
        for (int64_t i = 0; i < 2; ++i)
          pair = LLVM::InsertElementOp::create(b, pair, out[i], e.c32(i));
        e.store(pair, e.gepBytes(y, elementOffset(row, col)), 4);
      }
  }
}

KernelLaunch TensorCoreBuilder::build() {
  EncodingAttr enc = spec.encoding;
  // Parameters, in the matvec's order; the runtime binds them by name.
  SmallVector<std::string> names = {"x"};
  SmallVector<std::string> weightParams = {"codes", "scales"};
  if (p.intZeros)
    weightParams.push_back("zeros");
  if (enc.getGlobalScale())
    weightParams.push_back("global_scale");
  names.append(weightParams.begin(), weightParams.end());
  if (enc.getFormat() == ElementFormat::Codebook && enc.getTableName())
    names.push_back("table");
  if (spec.gated) // the up projection's components (silu_mul)
    for (const std::string &c : weightParams)
      names.push_back("up_" + c);
  if (spec.hasBias)
    names.push_back("bias");
  if (spec.hasResidual)
    names.push_back("residual");
  names.push_back("y");
  // qf.group members 1..: their own weight, epilogue operands and output.
  SmallVector<std::string> memberParams = weightParams;
  if (spec.hasBias)
    memberParams.push_back("bias");
  if (spec.hasResidual)
    memberParams.push_back("residual");
  memberParams.push_back("y");
  for (size_t i = 1; i < p.memberNs.size(); ++i)
    for (const std::string &c : memberParams)
      names.push_back(c + "." + std::to_string(i));

  KernelFunction kernel =
      createKernelFunction(b, module, name, names, p.threads);
  LLVM::LLVMFuncOp fn = kernel.fn;
  if (p.clusterK > 1) // .reqnctapercluster: the launch needs no attribute
    fn->setAttr(NVVM::NVVMDialect::getClusterDimAttrName(),
                b.getDenseI32ArrayAttr(
                    {1, 1, static_cast<int32_t>(p.clusterK)}));
  auto arg = [&](StringRef n) { return kernel.arg(n); };
  x = arg("x");
  codes = arg("codes");
  scales = arg("scales");
  zeros = arg("zeros");
  globalScale = arg("global_scale");
  table = arg("table");
  bias = arg("bias");
  residual = arg("residual");
  y = arg("y");
  // Dynamic shared memory: an extern array sized at launch.
  smem = dynamicSharedBase(b, module, name + "_smem");

  tid = e.tidX();
  lane = e.band(tid, e.c32(31));
  warp = e.shru(tid, e.c32(5));
  kg = e.divu(warp, e.c32(p.groupWarps));
  columnWarp = e.remu(warp, e.c32(p.groupWarps));
  nw = e.remu(columnWarp, e.c32(p.nWarps));
  member = e.divu(columnWarp, e.c32(p.nWarps));
  g = e.shru(lane, e.c32(2));
  t4 = e.band(lane, e.c32(3));
  tgInGroup = e.sub(tid, e.mul(kg, e.c32(p.groupWarps * 32)));
  mBase = e.mul(e.ctaidX(), e.c32(p.blockM));
  Value nBlock = NVVM::BlockIdYOp::create(b, e.i32());
  nOut = e.c32(p.n);
  // The up warps of silu_mul stream the up weight (warp-uniform select).
  if (spec.gated) {
    Value isUp =
        arith::CmpIOp::create(b, arith::CmpIPredicate::eq, member, e.c32(1));
    auto pick = [&](Value &v, StringRef c) {
      if (v)
        v = LLVM::SelectOp::create(b, isUp, arg(("up_" + c).str()), v);
    };
    pick(codes, "codes");
    pick(scales, "scales");
    pick(zeros, "zeros");
    pick(globalScale, "global_scale");
  }
  // qf.group: the block's member, from blockIdx.y; its pointers and N
  // replace member 0's (uniform per block, so no divergence).
  if (p.memberNs.size() > 1) {
    Value start = e.c32(0);
    int64_t blocks = 0;
    Value ctaid = nBlock;
    for (size_t i = 1; i < p.memberNs.size(); ++i) {
      blocks += blocksOf(p.memberNs[i - 1], p.blockN);
      std::string suffix = "." + std::to_string(i);
      Value isMember = arith::CmpIOp::create(b, arith::CmpIPredicate::uge,
                                             ctaid, e.c32(blocks));
      auto pick = [&](Value &v, StringRef c) {
        if (v)
          v = LLVM::SelectOp::create(b, isMember, arg((c + suffix).str()), v);
      };
      pick(codes, "codes");
      pick(scales, "scales");
      pick(zeros, "zeros");
      pick(globalScale, "global_scale");
      pick(bias, "bias");
      pick(residual, "residual");
      pick(y, "y");
      nOut = arith::SelectOp::create(b, isMember, e.c32(p.memberNs[i]), nOut);
      start = arith::SelectOp::create(b, isMember, e.c32(blocks), start);
    }
    nBlock = e.sub(ctaid, start);
  }
  tileRow = e.add(e.mul(nBlock, e.c32(p.nWarps)), nw);
  nBase = e.mul(tileRow, e.c32(kTile));
  // A last block that reaches past the member's last tile row: its extra
  // warps stream (again) the last tile row, so that every copy stays in
  // the codes buffer, and store nothing (their columns are past N).
  if (p.blockTail)
    tileRow = e.minu(
        tileRow, e.sub(e.divu(e.add(nOut, e.c32(kTile - 1)), e.c32(kTile)),
                       e.c32(1)));
  if (p.lut) {
    buildLut();
    laneBytes = e.mul(lane, e.c32(4));
  }

  // This k group's steps [begin, end): an even share of K / block_k among
  // the cluster_k x split_k slices (block rank, then k group).
  rank = p.clusterK > 1 ? NVVM::BlockIdZOp::create(b, e.i32()).getResult()
                        : e.c32(0);
  Value slice = e.add(e.mul(rank, e.c32(p.kGroups)), kg);
  int64_t slices = p.kGroups * p.clusterK;
  Value stepBegin = e.divu(e.mul(slice, e.c32(p.steps)), e.c32(slices));
  Value stepEnd =
      e.divu(e.mul(e.add(slice, e.c32(1)), e.c32(p.steps)), e.c32(slices));
  Value count = e.sub(stepEnd, stepBegin);

  // Prologue: stages - 1 steps in flight (every group has at least one step;
  // commit groups are issued even when empty so the wait counts line up).
  for (int64_t s = 0; s + 1 < p.stages; ++s) {
    {
      OpBuilder::InsertionGuard guard(b);
      auto ifIssue = scf::IfOp::create(b, e.ult(e.c32(s), count), false);
      b.setInsertionPointToStart(ifIssue.thenBlock());
      issueStep(e.c32(s), e.add(stepBegin, e.c32(s)));
    }
    NVVM::CpAsyncCommitGroupOp::create(b);
  }

  SmallVector<Value> init(p.mTiles * 16, e.cf32(0.0));
  auto loop = scf::ForOp::create(b, e.c32(0), count, e.c32(1), init);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value it = loop.getInductionVar();
    NVVM::CpAsyncWaitGroupOp::create(b, b.getI32IntegerAttr(p.stages - 2));
    barrier();
    Value next = e.add(it, e.c32(p.stages - 1));
    {
      OpBuilder::InsertionGuard g2(b);
      auto ifIssue = scf::IfOp::create(b, e.ult(next, count), false);
      b.setInsertionPointToStart(ifIssue.thenBlock());
      issueStep(e.remu(next, e.c32(p.stages)), e.add(stepBegin, next));
    }
    NVVM::CpAsyncCommitGroupOp::create(b);
    Acc acc = computeStep(e.remu(it, e.c32(p.stages)), e.add(stepBegin, it),
                          loop.getRegionIterArgs());
    scf::YieldOp::create(b, acc);
  }
  NVVM::CpAsyncWaitGroupOp::create(b, b.getI32IntegerAttr(0));
  Acc acc(loop.getResults().begin(), loop.getResults().end());
  reduceSplitK(acc);
  reduceCluster(acc);
  storeOutputs(acc);
  LLVM::ReturnOp::create(b, ValueRange{});

  KernelLaunch launch;
  launch.name = name;
  for (const std::string &n : names)
    launch.params.push_back({n, "ptr"});
  launch.gridX = p.mBlocks;
  launch.gridY = p.nBlocks;
  launch.gridZ = p.clusterK;
  launch.blockX = p.threads;
  launch.sharedBytes = 0;
  launch.dynamicSharedBytes = p.total;
  return launch;
}

} // namespace

FailureOr<KernelLaunch>
mlir::qf::emitTensorCoreKernel(gpu::GPUModuleOp module, StringRef name,
                               const MatVecSpec &spec,
                               function_ref<InFlightDiagnostic()> emitError) {
  FailureOr<Plan> plan = makePlan(spec, emitError);
  if (failed(plan))
    return failure();
  ImplicitLocOpBuilder b(module.getLoc(), module.getContext());
  b.setInsertionPointToEnd(module.getBody());
  TensorCoreBuilder builder(b, spec, *plan, module, name);
  return builder.build();
}
