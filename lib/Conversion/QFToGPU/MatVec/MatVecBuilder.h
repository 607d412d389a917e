//===- MatVecBuilder.h - Emits the matvec kernel's IR -----------*- C++ -*-===//
//
// The builder shared by the matvec generator's files: MatVecWeights.cpp
// (scales, zero points and the code table; weight words to half2 through
// the decoders of Decode/), MatVecBody.cpp (activations, the inner loop,
// the reduction and the epilogue) and MatVecKernel.cpp (the kernel itself).
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_LIB_CONVERSION_QFTOGPU_MATVEC_MATVECBUILDER_H
#define QFUSE_LIB_CONVERSION_QFTOGPU_MATVEC_MATVECBUILDER_H

#include "Common/KernelCommon.h"
#include "Common/KernelEmitter.h"
#include "Decode/WeightDecoders.h"
#include "MatVec/MatVecPlan.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace mlir {
namespace qf {
namespace matvec {

/// The kernel arguments of one packed weight (absent components are null).
struct WeightArgs {
  Value codes, scales, meta, zeros, globalScale;
};

/// Builds the kernel body. Values that depend on one row or one chunk are
/// computed where they are used; the plan holds the compile-time shape.
class MatVecBuilder {
public:
  MatVecBuilder(ImplicitLocOpBuilder &b, const MatmulSpec &spec, const Plan &p,
                gpu::GPUModuleOp module, StringRef name)
      : b(b), e(b), spec(spec), p(p), module(module), name(name) {}

  KernelLaunch build();

private:
  SmallVector<std::string> parameterNames(ArrayRef<int64_t> memberNs);
  void bindArguments(KernelFunction &kernel, ArrayRef<int64_t> memberNs);
  void prefetchWeights();
  void setUpSharedMemory();
  SmallVector<Value> accumulate(Value slice, Value lane, ArrayRef<Value> rows);
  Value groupIndex(Value row, Value group);
  double valueScale() const;
  int64_t gridBlocks(ArrayRef<int64_t> memberNs) const;
  int64_t minBlocksPerSM(int64_t launchBlocks) const;
  Value loadScaleTyped(Value base, Value idx);
  Value zeroAt(const WeightArgs &w, Value row, Value group);
  void computeRowScales();
  Value normalizeWord(Value xWord, Value gammaWord, int64_t m);
  SmallVector<Value> decodeWord(Value word, Value zero);
  Value tableValue(Value index);
  void buildLut();
  Value loadX(Type type, Value elemOffset, unsigned align);
  SmallVector<SmallVector<Value>> loadCodeWords(ArrayRef<Value> chunks,
                                                ArrayRef<Value> rows);
  SmallVector<SmallVector<Value>> loadSparseMeta(ArrayRef<Value> chunks,
                                                 ArrayRef<Value> rows);
  void loadSpanScales(ArrayRef<Value> chunks, ArrayRef<Value> rows,
                      SmallVectorImpl<Value> &scaleVals,
                      SmallVectorImpl<Value> &zeroVals);
  SmallVector<SmallVector<Value>> loadStepActivations(Value kw);
  SmallVector<Value> decodeStep(ArrayRef<Value> rowWords, Value zero,
                                int64_t step);
  SmallVector<Value> sparseSelectors(Value metaWord, int64_t half);
  SmallVector<Value> body(ArrayRef<Value> chunks, ArrayRef<Value> rows,
                          ValueRange acc);
  void reduceAndStore(ArrayRef<Value> acc, Value tid, Value warp, Value lane);
  void storeOutput(Value total, Value upTotal, Value row, Value m);
  /// The weight whose pointers row slot `r` of a warp reads: 1 (up) for
  /// the second half of a gated warp's rows, else 0.
  int64_t weightOf(int64_t r) const {
    return p.gated && r >= p.outRowsPerWarp ? 1 : 0;
  }

  ImplicitLocOpBuilder &b;
  KernelEmitter e;
  const MatmulSpec &spec;
  const Plan &p;
  gpu::GPUModuleOp module;
  std::string name;
  // Kernel arguments: the weight's components, and the up projection's
  // under silu_mul (weights[1]).
  WeightArgs weights[2];
  Value x, normGamma, table, bias, residual, y;
  Value yOrder; // spec.scatterOutput: where y's column n is stored
  Value blockId; // this block's index within its group member's blocks
  Value nRows;   // N of this block's member (spec.n without a group)
  SmallVector<Value> rowScale; // RMSNorm: rsqrt(mean(x[m]^2) + eps), per m
  Value normSmem;              // RMSNorm: shared partial sums of squares
  decode::SharedTable lut;  // shared code table, one copy per bank (Table)
  LLVM::GlobalOp codeTable; // constant code values (NF4, e2m1, inline)
  Value redSmem;            // shared f32 partial sums
  KernelLaunch launch;
};

/// A module-level shared-memory array of `count` elements.
LLVM::GlobalOp sharedArray(OpBuilder &b, gpu::GPUModuleOp module, Location loc,
                           StringRef name, Type element, int64_t count);
/// The generic address of a shared-memory global.
Value sharedAddr(ImplicitLocOpBuilder &b, LLVM::GlobalOp global);

} // namespace matvec
} // namespace qf
} // namespace mlir

#endif // QFUSE_LIB_CONVERSION_QFTOGPU_MATVEC_MATVECBUILDER_H
