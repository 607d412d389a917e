//===- QFToCPU.cpp - fused qf matmuls -> a CPU reference in scf/arith -------===//
//
// Emits one func.func per distinct fused matmul into `module @qf_cpu`,
// computing y = epilogue(prologue(x) . dequant(W)^T) from the same packed
// buffers the GPU kernel reads, and records the function and its parameter
// order on the op. The functions are written for clarity, not speed: a row
// of W is decoded once into an f32 scratch row, then dotted with every
// (f32) activation row.
//
//   func.func @qf_cpu_matmul_0(%x: memref<?x1536xf16>,
//                              %codes: memref<256x768xi8>,
//                              %scales: memref<256x12xf16>,
//                              %y: memref<?x256xf16>)
//       attributes {llvm.emit_c_interface} {
//     xs = f32(x) (RMSNorm or silu_mul prologue applied when fused, rounded
//          to x's type)
//     scf.for %n = 0 to 256 {
//       row[k] = dequant(W[n, k]) for every k          (WeightDecoder)
//       scf.for %m = 0 to M {
//         acc = sum_k xs[m, k] * row[k]                (f32, in k order)
//         y[m, n] = round(epilogue(acc))
//       }
//     }
//   }
//
//===----------------------------------------------------------------------===//

#include "qfuse/Conversion/Passes.h"
#include "qfuse/Conversion/QFToCPU.h"

#include "CPUReferenceAttr.h"
#include "QuantizeReference.h"
#include "qfuse/Conversion/WeightDecoder.h"
#include "qfuse/Dialect/QF/IR/FormatBridge.h"

#include "qfuse/format/MmaLayout.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Transforms/Passes.h"
#include "qfuse/format/Numerics.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "qf-to-cpu"

namespace mlir {
namespace qf {
#define GEN_PASS_DEF_QFTOCPU
#include "qfuse/Conversion/Passes.h.inc"
} // namespace qf
} // namespace mlir

using namespace mlir;
using namespace mlir::qf;

void mlir::qf::buildQFCPUToLLVMPipeline(OpPassManager &pm) {
  // bf16 extf/truncf become integer ops, so no soft-float calls remain.
  arith::ArithExpandOpsPassOptions expand;
  expand.includeBf16 = true;
  pm.addPass(arith::createArithExpandOpsPass(expand));
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

namespace {

/// Everything about one fused matmul that determines its reference code.
struct RefSpec {
  WeightType weight;
  RankedTensorType input, result;
  Type normType, biasType; ///< element types, null when absent
  bool hasResidual = false;
  bool siluMul = false;
  /// The silu_mul prologue: the input is silu(x) * x_up.
  bool siluMulPrologue = false;
  float normEps = 0.0f;

  int64_t k() const { return weight.getK(); }
  int64_t nOut() const { return weight.getN(); }
  /// M when static, ShapedType::kDynamic otherwise.
  int64_t m() const { return input.getDimSize(0); }

  std::string key() const {
    std::string s;
    llvm::raw_string_ostream os(s);
    os << input << "|" << weight << "|" << result << "|" << normType << "|"
       << biasType << "|" << hasResidual << siluMul << siluMulPrologue << "|"
       << normEps;
    return s;
  }
};

/// Checks what the reference cannot take (every encoding the dialect
/// accepts is lowered; only layouts without a defined byte order are not).
LogicalResult checkSupported(FusedMatmulOp op, const RefSpec &spec) {
  LayoutAttr layout = spec.weight.getLayout();
  EncodingAttr enc = spec.weight.getEncoding();
  if (layout.isRowMajor())
    return success();
  unsigned bits = enc.getCodeBits();
  if (isSparseMmaLayout(layout) && enc.isSparse24()) {
    if (!qfuse::format::isSparseMmaCodeBits(bits))
      return op.emitOpError()
             << "qf-to-cpu: the 2:4 fragment layout " << layout
             << " is defined for 4-, 8- and 16-bit kept values "
                "(SparseMmaLayout.h); got "
             << bits << "-bit codes";
    return success(); // any N, K: whole tiles, padded
  }
  if (isMmaFragmentLayout(layout)) {
    // act_order weights are stored in it with columns sorted by group.
    if (!qfuse::format::isMmaCodeBits(bits) || enc.isSparse24())
      return op.emitOpError()
             << "qf-to-cpu: the mma fragment layout " << layout
             << " is defined for dense 2-, 3-, 4- and 8-bit codes "
                "(MmaLayout.h); got "
             << bits << "-bit codes" << (enc.isSparse24() ? " with 2:4" : "");
    return success(); // any N, K: whole tiles, padded (MmaLayout.h)
  }
  if (bits != 4 || layout.getTileN() != 1 || layout.getInterleave() > 1)
    return op.emitOpError()
           << "qf-to-cpu: the tiled layout has a defined byte order only for "
              "4-bit codes with tile_n = 1 (Layout.h) or tile_n = tile_k = 32 "
              "(MmaLayout.h), without interleave; got "
           << layout << " over " << bits << "-bit codes";
  int64_t stored = enc.isSparse24() ? spec.k() / 2 : spec.k();
  if (stored % 8 != 0)
    return op.emitOpError()
           << "qf-to-cpu: the tiled layout reorders whole 32-bit words of "
              "codes, but a row holds "
           << stored << " codes (K = " << spec.k() << ")";
  return success();
}

/// Writes the reference function of one spec.
class ReferenceBuilder {
public:
  ReferenceBuilder(ModuleOp cpuModule, StringRef name, const RefSpec &spec)
      : cpuModule(cpuModule), name(name), spec(spec) {}

  /// Builds the function; returns its parameter names in order.
  SmallVector<std::string> build(Location loc);

private:
  Value param(StringRef n) const {
    auto it = args.find(n);
    return it == args.end() ? Value() : it->second;
  }
  /// The constant f32 table of nf4, fp4 and inline codebooks, else null.
  Value constantTable(ImplicitLocOpBuilder &b);
  /// xs[m, k] = f32(x[m, k]), or with the RMSNorm prologue
  /// f32(round(x[m, k] * rsqrt(mean(x[m]^2) + eps) * norm[k])), or with the
  /// silu_mul prologue f32(round(silu(x[m, k]) * x_up[m, k])).
  void widenActivations(ScalarEmitter &e, Value xs, Value m);
  /// row[k] = W[n, k] for every k (0 where 2:4 pruned it).
  void decodeRow(ScalarEmitter &e, WeightDecoder &decoder, Value n, Value row);
  /// The function's parameters in order, with the memref type of their raw
  /// bytes (qfuse::format component shapes, Packing.h).
  SmallVector<std::pair<std::string, Type>> parameterTypes();
  /// y[m, n] = epilogue(xs[m] . W[n]) for every output n and batch row m;
  /// `zero` is the index 0 of the function's entry.
  void computeOutputs(ScalarEmitter &e, Value zero, Value xs, Value mDim,
                      Value gateRow, Value upRow, Value table);

  ModuleOp cpuModule;
  std::string name;
  const RefSpec &spec;
  llvm::StringMap<Value> args;
};

Value ReferenceBuilder::constantTable(ImplicitLocOpBuilder &b) {
  SmallVector<float> values = constantTableValues(spec.weight.getEncoding());
  if (values.empty())
    return {};
  auto type = MemRefType::get({static_cast<int64_t>(values.size())},
                              b.getF32Type());
  std::string globalName = name + "_table";
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(cpuModule.getBody());
    auto init = DenseElementsAttr::get(
        RankedTensorType::get(type.getShape(), b.getF32Type()),
        ArrayRef<float>(values));
    memref::GlobalOp::create(b, globalName, b.getStringAttr("private"), type,
                             init, /*constant=*/true, /*alignment=*/nullptr);
  }
  return memref::GetGlobalOp::create(b, type, globalName);
}

void ReferenceBuilder::widenActivations(ScalarEmitter &e, Value xs, Value m) {
  Value x = param("x"), norm = param("norm"), xUp = param("x_up");
  Type act = spec.input.getElementType();
  Value zero = e.idx(0), kEnd = e.idx(spec.k());
  e.forLoop(zero, m, [&](Value mi) {
    Value rscale;
    if (norm) {
      Value sumSq = e.forReduce(zero, kEnd, e.cf32(0.0), [&](Value k, Value acc) {
        Value v = e.loadF32(x, {mi, k}, act);
        return e.fadd(acc, e.fmul(v, v));
      });
      Value mean = e.fdiv(sumSq, e.cf32(static_cast<double>(spec.k())));
      Value root = math::SqrtOp::create(e.builder(),
                                        e.fadd(mean, e.cf32(spec.normEps)));
      rscale = e.fdiv(e.cf32(1.0), root);
    }
    e.forLoop(zero, kEnd, [&](Value k) {
      Value v = e.loadF32(x, {mi, k}, act);
      if (norm) {
        v = e.fmul(e.fmul(v, rscale), e.loadF32(norm, {k}, spec.normType));
        // Rounded to the activation type, as a separate qf.rms_norm's
        // result is (and the GPU prologue does): fusing must not change
        // the matmul's input.
        v = arith::ExtFOp::create(e.builder(), e.f32(), e.truncTo(v, act));
      }
      if (xUp) {
        // silu(g) = g / (1 + exp(-g)), times up, rounded as a separate
        // qf.silu_mul's result is (and the GPU's prologue launch writes).
        ImplicitLocOpBuilder &b = e.builder();
        Value expNeg = math::ExpOp::create(b, arith::NegFOp::create(b, v));
        v = e.fmul(e.fdiv(v, e.fadd(e.cf32(1.0), expNeg)),
                   e.loadF32(xUp, {mi, k}, act));
        v = arith::ExtFOp::create(b, e.f32(), e.truncTo(v, act));
      }
      e.store(v, xs, {mi, k});
    });
  });
}

void ReferenceBuilder::decodeRow(ScalarEmitter &e, WeightDecoder &decoder,
                                 Value n, Value row) {
  Value zero = e.idx(0);
  if (spec.weight.getEncoding().isSparse24())
    e.forLoop(zero, e.idx(spec.k()),
              [&](Value k) { e.store(e.cf32(0.0), row, {k}); });
  e.forLoop(zero, e.idx(decoder.storedPerRow()), [&](Value s) {
    auto [col, value] = decoder.decode(n, s);
    e.store(value, row, {col});
  });
}

SmallVector<std::pair<std::string, Type>>
ReferenceBuilder::parameterTypes() {
  Type act = spec.input.getElementType();
  int64_t n = spec.weight.getN(), k = spec.k(), m = spec.m();
  SmallVector<std::pair<std::string, Type>> params;
  auto add = [&](StringRef pname, ArrayRef<int64_t> shape, Type elt) {
    params.push_back({pname.str(), MemRefType::get(shape, elt)});
  };
  add("x", {m, k}, act);
  if (spec.siluMulPrologue)
    add("x_up", {m, k}, act);
  if (spec.normType)
    add("norm", {k}, spec.normType);
  // The packed components of one weight; the up projection of silu_mul
  // has the same ones, named with an `up_` prefix.
  auto addWeight = [&](StringRef prefix) {
    for (auto &[pname, type] : weightComponentTypes(spec.weight, prefix))
      params.push_back({pname, type});
  };
  addWeight("");
  if (spec.siluMul)
    addWeight("up_");
  if (spec.biasType)
    add("bias", {n}, spec.biasType);
  if (spec.hasResidual)
    add("residual", {m, spec.nOut()}, act);
  add("y", {m, spec.nOut()}, act);
  return params;
}

void ReferenceBuilder::computeOutputs(ScalarEmitter &e, Value zero, Value xs,
                                      Value mDim, Value gateRow, Value upRow,
                                      Value table) {
  ImplicitLocOpBuilder &b = e.builder();
  Type act = spec.input.getElementType();
  auto buffersOf = [&](StringRef prefix) {
    auto get = [&](StringRef component) {
      return param((prefix + component).str());
    };
    return WeightBuffers{get("codes"),        get("scales"), get("zeros"),
                         get("global_scale"), get("perm"),   get("g_idx"),
                         get("meta"),         get("table"),  table};
  };
  WeightDecoder decoder(e, spec.weight, buffersOf(""));
  std::optional<WeightDecoder> upDecoder;
  if (spec.siluMul)
    upDecoder.emplace(e, spec.weight, buffersOf("up_"));
  Value nOut = e.idx(spec.nOut());
  Value kEnd = e.idx(spec.k());
  e.forLoop(zero, nOut, [&](Value ni) {
    decodeRow(e, decoder, ni, gateRow);
    if (spec.siluMul)
      decodeRow(e, *upDecoder, ni, upRow);
    e.forLoop(zero, mDim, [&](Value mi) {
      auto dot = [&](Value row) {
        return e.forReduce(zero, kEnd, e.cf32(0.0), [&](Value ki, Value acc) {
          return e.fadd(acc, e.fmul(e.load(xs, {mi, ki}), e.load(row, {ki})));
        });
      };
      Value v = dot(gateRow);
      if (Value bias = param("bias"))
        v = e.fadd(v, e.loadF32(bias, {ni}, spec.biasType));
      if (spec.siluMul) {
        Value up = dot(upRow);
        // silu(g) = g / (1 + exp(-g))
        Value expNeg = math::ExpOp::create(b, arith::NegFOp::create(b, v));
        Value silu = e.fdiv(v, e.fadd(e.cf32(1.0), expNeg));
        v = e.fmul(silu, up);
      }
      if (Value residual = param("residual"))
        v = e.fadd(v, e.loadF32(residual, {mi, ni}, act));
      e.store(e.truncTo(v, act), param("y"), {mi, ni});
    });
  });
}

SmallVector<std::string> ReferenceBuilder::build(Location loc) {
  MLIRContext *ctx = cpuModule.getContext();
  int64_t k = spec.k();
  SmallVector<std::pair<std::string, Type>> params = parameterTypes();
  SmallVector<Type> types;
  for (auto &p : params)
    types.push_back(p.second);
  ImplicitLocOpBuilder b(loc, ctx);
  b.setInsertionPointToEnd(cpuModule.getBody());
  auto fn = func::FuncOp::create(b, name, b.getFunctionType(types, {}));
  fn->setAttr("llvm.emit_c_interface", b.getUnitAttr());
  Block *entry = fn.addEntryBlock();
  b.setInsertionPointToStart(entry);
  SmallVector<std::string> names;
  for (auto [i, p] : llvm::enumerate(params)) {
    args[p.first] = entry->getArgument(i);
    names.push_back(p.first);
  }

  ScalarEmitter e(b);
  Value zero = e.idx(0);
  Value mDim = memref::DimOp::create(b, param("x"), zero);
  auto xsType = MemRefType::get({ShapedType::kDynamic, k}, e.f32());
  Value xs = memref::AllocOp::create(b, xsType, ValueRange{mDim});
  widenActivations(e, xs, mDim);

  auto rowType = MemRefType::get({k}, e.f32());
  Value gateRow = memref::AllocOp::create(b, rowType);
  Value upRow = spec.siluMul ? memref::AllocOp::create(b, rowType) : Value();
  Value table = constantTable(b);
  computeOutputs(e, zero, xs, mDim, gateRow, upRow, table);
  memref::DeallocOp::create(b, xs);
  memref::DeallocOp::create(b, gateRow);
  if (upRow)
    memref::DeallocOp::create(b, upRow);
  func::ReturnOp::create(b);
  return names;
}

/// The nested module holding every generated function, created on first use.
ModuleOp getOrCreateCPUModule(ModuleOp module) {
  if (auto existing = module.lookupSymbol<ModuleOp>(kCPUModuleName))
    return existing;
  OpBuilder b(module.getBodyRegion());
  b.setInsertionPointToEnd(module.getBody());
  return ModuleOp::create(b, module.getLoc(), StringRef(kCPUModuleName));
}

struct QFToCPUPass : public qf::impl::QFToCPUBase<QFToCPUPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<FusedMatmulOp> ops;
    SmallVector<QuantizeOp> quantizeOps;
    module.walk([&](Operation *op) {
      if (auto fused = dyn_cast<FusedMatmulOp>(op))
        ops.push_back(fused);
      else if (auto quantize = dyn_cast<QuantizeOp>(op))
        quantizeOps.push_back(quantize);
    });
    if (ops.empty() && quantizeOps.empty())
      return;
    ModuleOp cpuModule = getOrCreateCPUModule(module);
    bool anyFailed = false;
    for (FusedMatmulOp op : ops)
      if (failed(lowerOne(op, cpuModule)))
        anyFailed = true;
    for (QuantizeOp op : quantizeOps)
      if (failed(lowerQuantizeToCPU(op, cpuModule, quantizeFunctions)))
        anyFailed = true;
    if (anyFailed)
      return signalPassFailure();
    // The builder creates constants where it needs them; fold and share them.
    OpPassManager pm(ModuleOp::getOperationName());
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createCSEPass());
    if (lowerToLLVM)
      buildQFCPUToLLVMPipeline(pm);
    if (failed(runPipeline(pm, cpuModule))) {
      cpuModule.emitError("qf-to-cpu: simplifying or lowering the reference "
                          "functions to the LLVM dialect failed");
      return signalPassFailure();
    }
  }

  /// Functions already emitted, by RefSpec::key, with their parameters.
  llvm::StringMap<std::pair<std::string, SmallVector<std::string>>> emitted;
  int64_t nextIndex = 0;
  QuantizeFunctions quantizeFunctions;

  LogicalResult lowerOne(FusedMatmulOp op, ModuleOp cpuModule) {
    RefSpec spec;
    spec.weight = op.getWeight().getType();
    spec.input = op.getInput().getType();
    spec.result = op.getResult().getType();
    if (op.getNorm()) {
      spec.normType = op.getNorm().getType().getElementType();
      spec.normEps = op.getNormEps()->convertToFloat();
    }
    if (op.getBias())
      spec.biasType = op.getBias().getType().getElementType();
    spec.hasResidual = static_cast<bool>(op.getResidual());
    spec.siluMul = op.getActivation() == EpilogueActivation::SiluMul;
    spec.siluMulPrologue = op.hasSiluMulPrologue();
    if (failed(checkSupported(op, spec)))
      return failure();

    std::string key = spec.key();
    auto it = emitted.find(key);
    if (it == emitted.end()) {
      // Skip names a previous run left in @qf_cpu.
      std::string name;
      do
        name = "qf_cpu_matmul_" + std::to_string(nextIndex++);
      while (cpuModule.lookupSymbol(name));
      LLVM_DEBUG(llvm::dbgs() << "qf-to-cpu: " << name << " for " << key
                              << "\n");
      ReferenceBuilder builder(cpuModule, name, spec);
      SmallVector<std::string> params = builder.build(op.getLoc());
      it = emitted.try_emplace(key, name, std::move(params)).first;
    }
    setCPUReference(op, it->second.first, it->second.second);
    return success();
  }
};

} // namespace
