//===- DequantizeKernel.cpp - a packed weight -> a dense [N, K] matrix -----===//
//
// The first half of the fallback for a fused matmul that no fused kernel
// takes at some batch size (docs/fallback.md): this kernel expands the
// packed weight into a row-major [N, K] f16 (bf16) matrix in a workspace
// buffer, and a cuBLAS gemm step multiplies by it. One block of 256 threads
// per weight row n:
//
//   for (s = tid; s < stored; s += 256)       // the stored codes of row n
//     (col, v) = WeightDecoder::decode(n, s)  // column and f32 value
//     w[n, col] = round(v)                    // once, to f16 / bf16
//
// The decode is WeightDecoder's (qfuse/Conversion/WeightDecoder.h), the IR
// the CPU reference runs, so every encoding and layout the dialect accepts
// decodes here too, in qfuse::format::dequantize's operation order; the GPU
// check compares the result with that independent C++ definition. Under 2:4
// a thread owns whole quads (stored codes 2q and 2q + 1): it zeroes the
// quad's four columns, then writes the two it keeps, so no thread races
// another for a column.
//
// The components reach the kernel as bare global pointers (the artifact's
// calling convention) and are wrapped in static memref descriptors for the
// decoder; qf-to-gpu lowers the memref ops with the other kernels.
//
//===----------------------------------------------------------------------===//

#include "Ops/DequantizeKernel.h"

#include "Common/KernelCommon.h"
#include "qfuse/Conversion/WeightDecoder.h"

#include "mlir/Conversion/LLVMCommon/MemRefBuilder.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

using namespace mlir;
using namespace mlir::qf;

namespace {

constexpr int64_t kThreads = 256;

/// A static memref over the global pointer `ptr`, for memref.load/store.
Value wrapPointer(ImplicitLocOpBuilder &b, const LLVMTypeConverter &converter,
                  MemRefType type, Value ptr) {
  Value generic = LLVM::AddrSpaceCastOp::create(
      b, LLVM::LLVMPointerType::get(b.getContext()), ptr);
  Value descriptor =
      MemRefDescriptor::fromStaticShape(b, b.getLoc(), converter, type, generic);
  return UnrealizedConversionCastOp::create(b, TypeRange{type},
                                            ValueRange{descriptor})
      .getResult(0);
}

/// memref.get_global of the encoding's constant table (nf4, fp4e2m1, inline
/// codebooks), created once per kernel as `<name>_table`; null without one.
Value constantTable(ImplicitLocOpBuilder &b, gpu::GPUModuleOp module,
                    StringRef name, EncodingAttr enc) {
  SmallVector<float> values = constantTableValues(enc);
  if (values.empty())
    return {};
  auto type = MemRefType::get({static_cast<int64_t>(values.size())},
                              b.getF32Type());
  std::string global = (name + "_table").str();
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    auto init = DenseElementsAttr::get(
        RankedTensorType::get(type.getShape(), b.getF32Type()),
        ArrayRef<float>(values));
    memref::GlobalOp::create(b, global, b.getStringAttr("private"), type, init,
                             /*constant=*/true, /*alignment=*/nullptr);
  }
  return memref::GetGlobalOp::create(b, type, global);
}

void buildBody(ImplicitLocOpBuilder &b, gpu::GPUModuleOp module,
               StringRef name, WeightType weight, Type outType,
               ArrayRef<std::pair<std::string, MemRefType>> components,
               LLVM::LLVMFuncOp fn) {
  LLVMTypeConverter converter(b.getContext());
  llvm::StringMap<Value> mem;
  for (auto [i, component] : llvm::enumerate(components))
    mem[component.first] = wrapPointer(b, converter, component.second,
                                       fn.getArgument(i));
  auto outMemref =
      MemRefType::get({weight.getN(), weight.getK()}, outType);
  Value w = wrapPointer(b, converter, outMemref,
                        fn.getArgument(components.size()));

  ScalarEmitter e(b);
  WeightBuffers buffers{mem.lookup("codes"),        mem.lookup("scales"),
                        mem.lookup("zeros"),        mem.lookup("global_scale"),
                        mem.lookup("perm"),         mem.lookup("g_idx"),
                        mem.lookup("meta"),
                        mem.lookup("table"),
                        constantTable(b, module, name, weight.getEncoding())};
  WeightDecoder decoder(e, weight, buffers);
  auto toIndex = [&](Value i32) {
    return arith::IndexCastUIOp::create(b, b.getIndexType(), i32);
  };
  Value n = toIndex(NVVM::BlockIdXOp::create(b, b.getI32Type()));
  Value tid = toIndex(NVVM::ThreadIdXOp::create(b, b.getI32Type()));
  auto store = [&](Value col, Value v) {
    e.store(e.truncTo(v, outType), w, {n, col});
  };
  const bool sparse = weight.getEncoding().isSparse24();
  // Dense: one stored code per step; 2:4: one quad (two stored codes).
  int64_t steps = sparse ? weight.getK() / 4 : decoder.storedPerRow();
  auto loop = scf::ForOp::create(b, tid, e.idx(steps), e.idx(kThreads));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(loop.getBody()->getTerminator());
  Value i = loop.getInductionVar();
  if (!sparse) {
    auto [col, value] = decoder.decode(n, i);
    store(col, value);
    return;
  }
  for (int64_t c = 0; c < 4; ++c)
    store(e.add(e.mul(i, e.idx(4)), e.idx(c)), e.cf32(0.0));
  for (int64_t kept = 0; kept < 2; ++kept) {
    auto [col, value] = decoder.decode(n, e.add(e.mul(i, e.idx(2)),
                                                e.idx(kept)));
    store(col, value);
  }
}

} // namespace

KernelLaunch qf::emitDequantizeKernel(gpu::GPUModuleOp module, StringRef name,
                                      WeightType weight, Type outType,
                                      Location loc) {
  SmallVector<std::pair<std::string, MemRefType>> components =
      weightComponentTypes(weight);
  KernelLaunch launch;
  launch.name = name.str();
  for (const auto &component : components)
    launch.params.push_back({component.first, "ptr"});
  launch.params.push_back({"w", "ptr"});
  launch.gridX = weight.getN();
  launch.blockX = kThreads;
  if (module.lookupSymbol(name))
    return launch;

  SmallVector<ParamKind> kinds(components.size(), ParamKind::In);
  kinds.push_back(ParamKind::Out);
  ImplicitLocOpBuilder b(loc, module.getContext());
  LLVM::LLVMFuncOp fn = createKernelEntry(b, module, name, kinds, kThreads);
  buildBody(b, module, name, weight, outType, components, fn);
  LLVM::ReturnOp::create(b, ValueRange{});
  return launch;
}
