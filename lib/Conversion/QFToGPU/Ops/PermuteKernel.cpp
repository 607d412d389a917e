//===- PermuteKernel.cpp - activations into act_order's column order ------===//
//
// An act_order weight is stored with its columns sorted by group
// (format/Layout.h: sorted column j is checkpoint column perm[j]), so the
// tensor-core kernel reads it as a plain weight once the activations are in
// that order too. This kernel writes them into a scratch buffer before the
// matmul, as ExLlama and Marlin do, instead of gathering them inside every
// block of the matmul. perm scatters a row at random, so the row goes
// through shared memory: block (c, m) copies row m there (coalesced, from L2
// after the first block of the row), then writes its chunk of 2048 sorted
// columns (coalesced):
//
//   for (j = tid; j < K; j += 256)                  row[j] = x[m, j]
//   barrier
//   for (j = c * 2048 + tid; j < min(K, (c + 1) * 2048); j += 256)
//     xp[m, j] = row[perm[j]]                        // 16-bit elements
//
// Rows past 48 KB of static shared memory (K > 24576), or past the
// qf-to-gpu option permute-staged-max-k, gather straight from global memory
// instead (each element read once, where staging reads the row once per
// block). One kernel per K serves every batch (M is the grid's y).
//
// The silu_mul variant (`qf_permute_silu_mul_k<K>_g`, an act_order
// down_proj's silu_mul prologue) takes gate and up for x and gathers:
// xp[m, j] = silu(gate[m, perm[j]]) * up[m, perm[j]], rounded to f16 as the
// elementwise kernel rounds it, so exactly the values of a silu_mul launch
// followed by the permute. It does not stage: every block of a row would
// compute the whole row's products (K / 2048 times each), where the gather
// computes each once.
//
//===----------------------------------------------------------------------===//

#include "Ops/PermuteKernel.h"

#include "Ops/OpKernelCommon.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::qf;

namespace {

constexpr int64_t kThreads = 256;

/// Columns one block writes.
constexpr int64_t kChunk = 2048;
/// The longest row shared memory holds (48 KB of static shared memory).
constexpr int64_t kMaxSharedK = 24576;

void buildBody(ImplicitLocOpBuilder &b, gpu::GPUModuleOp module,
               StringRef name, ArrayRef<Value> args, int64_t k, bool shared,
               bool siluMul) {
  KernelEmitter e(b);
  // (x, perm, xp), or (gate, up, perm, xp) for the silu_mul variant.
  Value x = args[0], up = siluMul ? args[1] : Value();
  Value perm = args[siluMul ? 2 : 1], xp = args[siluMul ? 3 : 2];
  Value tid = e.tidX();
  Value rowStart = e.mul(NVVM::BlockIdYOp::create(b, e.i32()), e.c32(k));
  auto elementPtr = [&](Value base, Value index) {
    return e.gepBytes(base, e.mul(e.zext64(index), e.c64(2)));
  };
  // Element `column` of the row as 16 bits: x's, or the silu_mul product.
  auto rowValue = [&](Value column) -> Value {
    Value index = e.add(rowStart, column);
    Value v = e.loadRO(e.i16(), elementPtr(x, index), 2);
    if (!siluMul)
      return v;
    auto widen = [&](Value bits) {
      return e.extf32(e.bitcast(e.f16(), bits));
    };
    Value u = e.loadRO(e.i16(), elementPtr(up, index), 2);
    return e.bitcast(e.i16(), e.truncf16(e.siluMul(widen(v), widen(u))));
  };
  Value row;
  if (shared) {
    row = sharedArray(b, module, (name + "_row").str(), e.i16(), k);
    auto fill = scf::ForOp::create(b, tid, e.c32(k), e.c32(kThreads));
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(fill.getBody());
      Value j = fill.getInductionVar();
      e.store(rowValue(j), sharedElement(e, row, j, 2), 2);
    }
    NVVM::Barrier0Op::create(b);
  }
  Value chunkStart = e.mul(e.ctaidX(), e.c32(kChunk));
  Value chunkEnd = e.minu(e.add(chunkStart, e.c32(kChunk)), e.c32(k));
  auto write =
      scf::ForOp::create(b, e.add(chunkStart, tid), chunkEnd, e.c32(kThreads));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(write.getBody());
  Value j = write.getInductionVar();
  Value source = e.loadRO(
      e.i32(), e.gepBytes(perm, e.zext64(e.mul(j, e.c32(4)))), 4);
  Value value =
      shared ? LLVM::LoadOp::create(b, e.i16(), sharedElement(e, row, source, 2),
                                    2)
                   .getResult()
             : rowValue(source);
  e.store(value, elementPtr(xp, e.add(rowStart, j)), 2);
}

/// The permute launch, plain or silu_mul (emitPermuteLaunch,
/// emitPermuteSiluMulLaunch).
FailureOr<OpLaunch> emitLaunch(Operation *op, gpu::GPUModuleOp module,
                               int64_t rows, int64_t k,
                               ArrayRef<LaunchArgAttr> args,
                               int64_t stagedMaxK, bool siluMul) {
  if (rows * k > std::numeric_limits<int32_t>::max())
    return op->emitOpError() << rows << " x " << k
                             << " activations overflow the permute kernel's "
                                "i32 index",
           failure();
  const bool staged = k <= std::min(stagedMaxK, kMaxSharedK);
  std::string name = std::string(siluMul ? "qf_permute_silu_mul_k"
                                         : "qf_permute_k") +
                     std::to_string(k) + (staged ? "" : "_g");
  SmallVector<OpParam> params;
  if (siluMul)
    params = {{"gate", ParamKind::In, args[0]},
              {"up", ParamKind::In, args[1]},
              {"perm", ParamKind::In, args[2]},
              {"xp", ParamKind::Out, args[3]}};
  else
    params = {{"x", ParamKind::In, args[0]},
              {"perm", ParamKind::In, args[1]},
              {"xp", ParamKind::Out, args[2]}};
  if (!module.lookupSymbol(name)) {
    ImplicitLocOpBuilder b(op->getLoc(), op->getContext());
    SmallVector<Value> kernelArgs =
        createOpKernel(b, module, name, params, kThreads);
    buildBody(b, module, name, kernelArgs, k, staged, siluMul);
    LLVM::ReturnOp::create(b, ValueRange{});
  }
  return makeOpLaunch(name, params, (k + kChunk - 1) / kChunk, rows, kThreads,
                      staged ? k * 2 : 0);
}

} // namespace

FailureOr<OpLaunch> qf::emitPermuteLaunch(Operation *op,
                                          gpu::GPUModuleOp module,
                                          int64_t rows, int64_t k,
                                          ArrayRef<LaunchArgAttr> args,
                                          int64_t stagedMaxK) {
  return emitLaunch(op, module, rows, k, args, stagedMaxK, /*siluMul=*/false);
}

FailureOr<OpLaunch> qf::emitPermuteSiluMulLaunch(Operation *op,
                                                 gpu::GPUModuleOp module,
                                                 int64_t rows, int64_t k,
                                                 ArrayRef<LaunchArgAttr> args) {
  return emitLaunch(op, module, rows, k, args, /*stagedMaxK=*/0,
                    /*siluMul=*/true);
}
