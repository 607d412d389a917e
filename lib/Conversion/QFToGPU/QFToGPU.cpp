//===- QFToGPU.cpp - fused qf matmuls -> NVVM kernels -----------------------===//
//
// Emits one kernel per (fused matmul, batch size) into gpu.module
// @qf_kernels, records the launch on the op, and lowers the kernels' scf and
// arith to the LLVM dialect so gpu-module-to-binary can serialize them.
//
//===----------------------------------------------------------------------===//

#include "qfuse/Conversion/Passes.h"

#include "MatVecKernel.h"
#include "TensorCoreKernel.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/LLVMCommon/ConversionTarget.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Transforms/DialectConversion.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "qf-to-gpu"

namespace mlir {
namespace qf {
#define GEN_PASS_DEF_QFTOGPU
#include "qfuse/Conversion/Passes.h.inc"
} // namespace qf
} // namespace mlir

using namespace mlir;
using namespace mlir::qf;

namespace {

constexpr StringLiteral kKernelModuleName = "qf_kernels";

/// The gpu.module holding every generated kernel, created on first use.
gpu::GPUModuleOp getOrCreateKernelModule(ModuleOp module, StringRef chip,
                                         StringRef features) {
  if (auto existing = module.lookupSymbol<gpu::GPUModuleOp>(kKernelModuleName))
    return existing;
  OpBuilder b(module.getBodyRegion());
  b.setInsertionPointToEnd(module.getBody());
  MLIRContext *ctx = module.getContext();
  auto target = NVVM::NVVMTargetAttr::get(ctx, /*optLevel=*/3,
                                          "nvptx64-nvidia-cuda", chip, features);
  auto gpuModule = gpu::GPUModuleOp::create(b, module.getLoc(),
                                            kKernelModuleName,
                                            b.getArrayAttr({target}));
  module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                  b.getUnitAttr());
  return gpuModule;
}

/// scf/arith/cf inside the kernels -> LLVM dialect. Kernel values are all
/// LLVM-compatible (i32, f32, vectors, pointers), so no casts remain.
LogicalResult lowerKernelsToLLVM(gpu::GPUModuleOp gpuModule) {
  MLIRContext *ctx = gpuModule.getContext();
  {
    RewritePatternSet patterns(ctx);
    populateSCFToControlFlowConversionPatterns(patterns);
    ConversionTarget target(*ctx);
    target.addIllegalDialect<scf::SCFDialect>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    if (failed(applyPartialConversion(gpuModule, target, std::move(patterns))))
      return failure();
  }
  LLVMTypeConverter converter(ctx);
  RewritePatternSet patterns(ctx);
  arith::populateArithToLLVMConversionPatterns(converter, patterns);
  cf::populateControlFlowToLLVMConversionPatterns(converter, patterns);
  LLVMConversionTarget target(*ctx);
  target.addLegalDialect<NVVM::NVVMDialect>();
  target.addLegalOp<gpu::GPUModuleOp>();
  return applyPartialConversion(gpuModule, target, std::move(patterns));
}

struct QFToGPUPass : public qf::impl::QFToGPUBase<QFToGPUPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<FusedMatmulOp> ops;
    module.walk([&](FusedMatmulOp op) { ops.push_back(op); });
    if (ops.empty())
      return;
    if (chip != "sm_80" && chip != "sm_90" && chip != "sm_90a") {
      module.emitError() << "qf-to-gpu: unsupported chip '" << chip
                         << "'; expected sm_80, sm_90 or sm_90a";
      return signalPassFailure();
    }
    gpu::GPUModuleOp gpuModule =
        getOrCreateKernelModule(module, chip, features);
    SmallVector<int64_t> batches(batchSizes.begin(), batchSizes.end());
    if (batches.empty())
      batches.push_back(1);

    bool anyFailed = false;
    for (FusedMatmulOp op : ops) {
      if (failed(lowerOne(op, gpuModule, batches)))
        anyFailed = true;
    }
    if (anyFailed)
      return signalPassFailure();
    if (failed(lowerKernelsToLLVM(gpuModule))) {
      gpuModule.emitError("qf-to-gpu: lowering generated kernels to the LLVM "
                          "dialect failed");
      return signalPassFailure();
    }
  }

  /// Kernels already emitted, by everything that determines their code, so
  /// that the 32 layers of a model share one kernel per projection shape.
  llvm::StringMap<KernelLaunch> emitted;

  /// Kernel names are qf_matvec_<variant>_m<batch>, one variant per
  /// distinct (encoding, layout, tiling, shape, epilogue).
  llvm::StringMap<int64_t> variants;

  static std::string variantKey(const MatVecSpec &spec) {
    std::string key;
    llvm::raw_string_ostream os(key);
    os << spec.encoding << "|" << spec.layout << "|" << spec.tiling << "|"
       << spec.n << "x" << spec.k << "|" << spec.smVersion << "|"
       << spec.hasBias << spec.hasResidual;
    return key;
  }

  LogicalResult lowerOne(FusedMatmulOp op, gpu::GPUModuleOp gpuModule,
                         ArrayRef<int64_t> batches) {
    auto emitError = [&]() { return op.emitOpError(); };
    if (!op.getTiling())
      return emitError() << "has no tiling; run qf-select-tiling first";
    if (op.getNorm() || op.getActivation() != EpilogueActivation::None)
      return emitError() << "the matvec generator does not fuse "
                         << (op.getNorm() ? "an RMSNorm prologue"
                                          : "a silu_mul epilogue")
                         << " yet";
    WeightType w = op.getWeight().getType();
    int64_t m = op.getInput().getType().getDimSize(0);
    SmallVector<int64_t> ms;
    if (ShapedType::isDynamic(m))
      ms.assign(batches.begin(), batches.end());
    else
      ms.push_back(m);

    OpBuilder b(op.getContext());
    SmallVector<Attribute> launches;
    for (int64_t batch : ms) {
      MatVecSpec spec;
      spec.encoding = w.getEncoding();
      spec.layout = w.getLayout();
      spec.tiling = *op.getTiling();
      spec.m = batch;
      spec.n = w.getN();
      spec.k = w.getK();
      spec.smVersion = chip == "sm_80" ? 80 : 90;
      spec.hasBias = static_cast<bool>(op.getBias());
      spec.hasResidual = static_cast<bool>(op.getResidual());
      std::string variant = variantKey(spec);
      int64_t index =
          variants.try_emplace(variant, variants.size()).first->second;
      bool tensorCore = spec.tiling.getKernel() == KernelKind::MMA;
      std::string name = (tensorCore ? "qf_mma_" : "qf_matvec_") +
                         std::to_string(index) + "_m" + std::to_string(batch);
      auto it = emitted.find(name);
      if (it == emitted.end()) {
        FailureOr<KernelLaunch> emittedLaunch =
            tensorCore ? emitTensorCoreKernel(gpuModule, name, spec, emitError)
                       : emitMatVecKernel(gpuModule, name, spec, emitError);
        if (failed(emittedLaunch))
          return failure();
        it = emitted.try_emplace(name, *emittedLaunch).first;
      }
      const KernelLaunch *launch = &it->second;
      SmallVector<Attribute> params;
      for (const KernelParam &param : launch->params)
        params.push_back(b.getStringAttr(param.name));
      launches.push_back(b.getDictionaryAttr({
          b.getNamedAttr("batch", b.getI64IntegerAttr(batch)),
          b.getNamedAttr("kernel", SymbolRefAttr::get(
                                       b.getStringAttr(kKernelModuleName),
                                       {FlatSymbolRefAttr::get(
                                           b.getStringAttr(launch->name))})),
          b.getNamedAttr("grid", b.getDenseI64ArrayAttr(
                                     {launch->gridX, launch->gridY,
                                      launch->gridZ})),
          b.getNamedAttr("block",
                         b.getDenseI64ArrayAttr({launch->blockX, 1, 1})),
          b.getNamedAttr("shared_bytes",
                         b.getI64IntegerAttr(launch->sharedBytes)),
          b.getNamedAttr("dynamic_shared_bytes",
                         b.getI64IntegerAttr(launch->dynamicSharedBytes)),
          b.getNamedAttr("params", b.getArrayAttr(params)),
      }));
    }
    op->setAttr("qf.launches", b.getArrayAttr(launches));
    return success();
  }
};

} // namespace
