//===- TensorCoreBuilder.h - Emits the tensor-core kernel's IR --*- C++ -*-===//
//
// The builder shared by the tensor-core generator's files: the cp.async
// pipeline (TensorCorePipeline.cpp), scales, zero points and the weight
// decode into B fragments through the decoders of Decode/
// (TensorCoreWeights.cpp), the mma.sync / wgmma steps (TensorCoreMma.cpp),
// the 2:4 steps on mma.sp (TensorCoreSparse.cpp), the wgmma steps fed by
// a producer warpgroup (TensorCoreProducer.cpp),
// the split-K and cluster reductions (TensorCoreReduce.cpp), the epilogue
// (TensorCoreEpilogue.cpp) and the kernel (TensorCoreKernel.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_LIB_CONVERSION_QFTOGPU_TENSORCORE_TENSORCOREBUILDER_H
#define QFUSE_LIB_CONVERSION_QFTOGPU_TENSORCORE_TENSORCOREBUILDER_H

#include "Common/KernelCommon.h"
#include "Common/KernelEmitter.h"
#include "Decode/WeightDecoders.h"
#include "TensorCore/TensorCorePlan.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

#include <array>
#include <functional>

namespace mlir {
namespace qf {
namespace tensor_core {

class TensorCoreBuilder {
public:
  TensorCoreBuilder(ImplicitLocOpBuilder &b, const MatmulSpec &spec,
                    const Plan &p, gpu::GPUModuleOp module, StringRef name)
      : b(b), e(b), spec(spec), p(p), module(module), name(name) {}

  KernelLaunch build();

private:
  using Acc = SmallVector<Value>; // [mTile][nTile][4] f32, flattened

  /// The scale and zero values of one scale group of a k step, per n tile.
  /// Float zero points: zeroF32 (f32) and zeroPair (the activation type's
  /// pair), subtracted from the decoded q; zeroLo/zeroHi/zeroInt are then
  /// those of an integer zero of 0.
  struct StepGroup {
    bool loaded = false;
    SmallVector<Value> scale, zeroLo, zeroHi, zeroInt, zeroF32, zeroPair;
    SmallVector<Value> zeroMix; // 2:4 int4: -(1024 + z, 64 + z) per n tile
  };

  /// The weight pointers a warp streams (gate's or up's under silu_mul).
  struct WeightPointers {
    Value codes, scales, meta, zeros;
  };

  SmallVector<std::string> parameterNames();
  void bindArguments(KernelFunction &kernel);
  void indexThreads();
  Value selectMember(KernelFunction &kernel);
  void locateTileRow(Value nBlock);
  void prefetchFirstSteps();
  void setTileRow(Value nWarp);
  WeightPointers currentWeights() { return {codes, scales, meta, zeros}; }
  void setWeights(const WeightPointers &w) {
    codes = w.codes;
    scales = w.scales;
    meta = w.meta;
    zeros = w.zeros;
  }
  void locateClusterRank();
  std::pair<Value, Value> stepRange(Value group);
  Acc accumulateSteps();
  void finishSteps(Acc acc);
  void blockBarrier();
  Value slotBarrier(Value group, Value slot, bool empty);
  void initSlotBarriers();
  void waitSlot(Value barrier, Value parity);
  void produceSteps();
  Acc consumeSteps();
  Value smemAt(Value byteOffset);
  Value smemAt(int64_t byteOffset) { return smemAt(e.c32(byteOffset)); }
  void barrier();
  void issueStep(Value slot, Value step);
  void issueActivations(Value slot, Value step, Value group, Value thread,
                        int64_t threads);
  void issueWeights(Value slot, Value step);
  void issueCodeTiles(Value warpSlot, Value step);
  void issueSmallCodeTiles(Value warpSlot, Value step);
  Acc computeStep(Value slot, Value step, ValueRange acc);
  Value groupSlotBase(Value warpSlot, int64_t gi);
  void loadStepGroup(Value step, Value warpSlot, int64_t gi, StepGroup &group);
  void foldGroupScales(Value step, Value warpSlot, int64_t gi, const Acc &part,
                       Acc &acc);
  SmallVector<Value> loadTileWords(Value warpSlot, int64_t kt);
  Value loadActivationMatrices(Value aBase, Value row, Value swizzledChunk);
  SmallVector<SmallVector<Value>> loadAFragments(Value aBase, int64_t kslab);
  SmallVector<Value> decodeSlab(ArrayRef<Value> words, int64_t s,
                                const StepGroup &group);
  void multiplySlab(ArrayRef<Value> unscaled, const StepGroup &group,
                    ArrayRef<SmallVector<Value>> aFrag, Acc &target,
                    SmallVectorImpl<std::array<Value, 2>> &wgmmaFrags);
  Value scaleByteInWord(Value elementIndex);
  Value scalePair(Value word, Value elementIndex);
  Value pairOf(Value f32);
  Value scaleF32(Value word, Value elementIndex);
  SmallVector<Value> columnScales(function_ref<Value(Value row)> wordOfRow,
                                  Value group);
  Value zeroOf(Value word, Value row, Value group);
  Value zeroBias(Value z, bool high);
  SmallVector<Value> decodeWord(Value w, Value zero, Value floatZero);
  Value tableValue(Value index);
  void buildLut();
  Value groupOfStep(Value step, int64_t gi);
  Value scaleRow(Value row);
  Value sparseSlotBase(Value warpSlot);
  void issueSparseCodes(Value warpSlot, Value step);
  SmallVector<Value> loadSharedWords(Value addr, int64_t count);
  std::array<Value, 4> loadSparseBFragment(Value aBase, int64_t slab,
                                           int64_t bt);
  Value decodeSparsePair(function_ref<Value(int64_t)> words, int64_t wt,
                         int64_t r, int64_t slab, const StepGroup &group);
  Acc computeSparseStep(Value slot, Value step, ValueRange acc);
  Acc sparseToDenseAcc(const Acc &sparse);
  void issueWgmmas(Value aBase, ArrayRef<std::array<Value, 2>> frags, Acc &acc);
  void waitWgmmas(Acc &acc, int64_t pending);
  Acc consumeStep(Value it, Value begin, ValueRange accIn);
  Acc scaleWgmmaOutputs(const Acc &acc);
  void storeWgmmaOutputs(const Acc &acc);
  int64_t sumsPerAccess() const;
  bool twoSumSetsFit() const;
  Value sumSlot(Value region, int64_t i);
  std::function<Value(int64_t)> handOverSlot(Value index);
  int64_t sumOffset(int64_t i) const;
  Value parkedSum(int64_t i);
  void storeSums(ArrayRef<Value> sums, function_ref<Value(int64_t)> slot);
  Acc loadSums(int64_t count, function_ref<Value(int64_t)> slot);
  void addSums(Acc &acc, function_ref<Value(int64_t)> slot);
  std::pair<int64_t, int64_t> splitKSlice(int64_t s, int64_t sums) const;
  void inGroup0(Acc &acc, function_ref<void(Acc &)> add);
  void reduceSplitK(Acc &acc);
  void reduceCluster(Acc &acc);
  Acc scaleOutputs(const Acc &acc);
  Acc enterStoringThreads(const Acc &total, bool loadGate = true);
  void storeTileColumns(int64_t j, const Acc &total, const Acc &gate);
  void storeOutputs(const Acc &acc);
  void loadStoredColumns();
  Value storedColumn(int64_t slot);

  /// The element type of x, the B fragments, bias, residual and y: f16, or
  /// bf16 (spec.bf16), and its pair.
  Type act() { return spec.bf16 ? e.bf16() : e.f16(); }
  VectorType actPair() { return spec.bf16 ? e.v2bf16() : e.v2f16(); }

  ImplicitLocOpBuilder &b;
  KernelEmitter e;
  const MatmulSpec &spec;
  const Plan &p;
  gpu::GPUModuleOp module;
  std::string name;
  Value x, codes, scales, meta, zeros, globalScale, table, bias, residual, y;
  Value yOrder; // spec.scatterOutput: where y's column n is stored
  /// y_order of the columns this thread stores, loaded before the main
  /// loop (loadStoredColumns): the wgmma's rows 16 h + 8 q + g at slot
  /// 2 h + q, mma's columns 8 j + 2 t + i at slot 2 j + i.
  SmallVector<Value> storedColumns;
  Value smem;
  Value tid, lane, warp, nw, kg, g, t4, tgInGroup, rank;
  Value member;     // 0, or 1 for the up warps of silu_mul
  Value columnWarp; // member x nWarps + nw: the warp within its k group
  Value nOut;       // N of this block's qf.group member
  Value mBase, nBase;
  Value blockIndexN; // the block's index among its member's blocks
  WeightPointers gateWeights, upWeights; // up: silu_mul's up weight
  Value tileRow; // the warp's tile row of codes (clamped to the last one)
  decode::SharedTable lut;  // the shared code table (Table), in smem
  LLVM::GlobalOp codeTable; // constant code values (NF4, e2m1, inline)
};

} // namespace tensor_core
} // namespace qf
} // namespace mlir

#endif // QFUSE_LIB_CONVERSION_QFTOGPU_TENSORCORE_TENSORCOREBUILDER_H
