//===- QFToGPU.cpp - fused qf matmuls -> NVVM kernels -----------------------===//
//
// Emits one kernel per (fused matmul, batch size) into gpu.module
// @qf_kernels, and the kernels of the other decode-layer ops (OpKernels.h),
// records the launches on each op (`qf.launches`), and lowers the kernels'
// scf and arith to the LLVM dialect so gpu-module-to-binary can serialize
// them. A batch listed in the op's `qf.batch_tilings` (qf-select-tiling)
// gets the kernel of its own tiling, reading the weight in that entry's
// layout (qf-choose-layout); its launch records the layout so that the
// artifact binds the weight's copy in it. Matmuls on dense f16 weights become cuBLAS steps (`qf.gemm_batches`):
// they are the fp16 baseline a user compares against.
//
//===----------------------------------------------------------------------===//

#include "qfuse/Conversion/Passes.h"

#include "KernelsToLLVM.h"
#include "LaunchRecord.h"
#include "MatVec/MatVecKernel.h"
#include "MatmulBatches.h"
#include "MatmulInput.h"
#include "Ops/DequantizeKernel.h"
#include "Ops/OpKernelCommon.h"
#include "Ops/OpKernels.h"
#include "Ops/PermuteKernel.h"
#include "Ops/QuantizeKernel.h"
#include "PlanCheck.h"
#include "SortedOutput.h"
#include "TensorCore/TensorCoreKernel.h"
#include "qfuse/Conversion/TensorCoreSupport.h"
#include "qfuse/Dialect/QF/IR/KnownTargets.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/Debug.h"

#include <map>

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

/// The batch sizes an op with `rows` rows runs at: its own when static.
SmallVector<int64_t> batchesFor(int64_t rows, ArrayRef<int64_t> batches) {
  if (ShapedType::isDynamic(rows))
    return SmallVector<int64_t>(batches.begin(), batches.end());
  return {rows};
}

/// A dense f16/bf16 weight without sparsity: no packed format to decode.
bool isDenseUnquantized(WeightType w) {
  EncodingAttr enc = w.getEncoding();
  return (enc.getFormat() == ElementFormat::F16 ||
          enc.getFormat() == ElementFormat::BF16) &&
         enc.getSparsity() == Sparsity::Dense;
}

struct QFToGPUPass : public qf::impl::QFToGPUBase<QFToGPUPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<FusedMatmulOp> ops;
    SmallVector<Operation *> decodeOps;
    SmallVector<QuantizeOp> quantizeOps;
    module.walk([&](Operation *op) {
      if (auto fused = dyn_cast<FusedMatmulOp>(op))
        ops.push_back(fused);
      else if (isDecodeOp(op))
        decodeOps.push_back(op);
      else if (auto quantize = dyn_cast<QuantizeOp>(op))
        quantizeOps.push_back(quantize);
    });
    if (ops.empty() && decodeOps.empty() && quantizeOps.empty())
      return;
    target = getKnownTarget(module.getContext(), chip);
    if (!target) {
      module.emitError() << "qf-to-gpu: unsupported chip '" << chip
                         << "'; expected " << knownTargetNames();
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
    auto sortsOutput = [this](Operation *op, int64_t batch) {
      return static_cast<bool>(sortedReaderOf(op, batch));
    };
    OpKernelContext context{gpuModule, target, sortsOutput};
    for (Operation *op : decodeOps) {
      if (failed(lowerDecode(op, context, batches)))
        anyFailed = true;
    }
    llvm::StringMap<std::string> quantizeKernels;
    for (QuantizeOp op : quantizeOps)
      lowerQuantize(op, gpuModule, quantizeKernels);
    if (anyFailed)
      return signalPassFailure();
    if (failed(lowerKernelsToLLVM(gpuModule))) {
      gpuModule.emitError("qf-to-gpu: lowering generated kernels to the LLVM "
                          "dialect failed");
      return signalPassFailure();
    }
    // griddepcontrol is sm_90's (PTX ISA 7.8), and so is the bulk prefetch.
    GridDependencyOptions gdc;
    gdc.enabled = gridDependency && target.getSmVersion() >= 90;
    gdc.trigger = gridDependencyTrigger == "start" ? GridDependencyTrigger::Start
                  : gridDependencyTrigger == "late" ? GridDependencyTrigger::Late
                                                    : GridDependencyTrigger::None;
    gdc.prefetch = gridDependencyPrefetch;
    addGridDependencyControl(gpuModule, gdc);
  }

  /// Kernels already emitted, by everything that determines their code, so
  /// that the 32 layers of a model share one kernel per projection shape.
  llvm::StringMap<KernelLaunch> emitted;

  /// Kernel names are qf_matvec_<variant>_m<batch>, one variant per
  /// distinct (encoding, layout, tiling, shape, epilogue).
  llvm::StringMap<int64_t> variants;
  /// qf_dequant_<variant>: numbered apart, so that the fused kernels keep
  /// their names whether or not a batch runs the fallback.
  llvm::StringMap<int64_t> dequantVariants;
  /// The #qf.target of the `chip` option.
  TargetAttr target;
  /// runsFusedAt's answers, by op and batch.
  std::map<std::pair<Operation *, int64_t>, bool> runsFused;
  /// When each of the op's qf.launches runs (lowerOne's op): parallel to
  /// them, kAlways unless marked; written as `qf.launch_guards` when any is
  /// not (an act_order group, docs/act-order.md).
  enum LaunchGuard : int32_t { kAlways = 0, kPermsEqual = 1, kPermsDiffer = 2 };
  SmallVector<int32_t> launchGuards;

  /// Marks launches [from, end) of `launches` as running under `guard`.
  void markGuard(ArrayRef<Attribute> launches, size_t from,
                 LaunchGuard guard) {
    launchGuards.resize(launches.size(), kAlways);
    for (size_t i = from; i < launches.size(); ++i)
      launchGuards[i] = guard;
  }

  static std::string variantKey(const MatmulSpec &spec) {
    std::string key;
    llvm::raw_string_ostream os(key);
    os << spec.encoding << "|" << spec.layout << "|" << spec.tiling << "|"
       << spec.n << "x" << spec.k << "|" << spec.target.getChip() << "|"
       << spec.bf16 << spec.hasBias << spec.hasResidual << spec.gated
       << spec.scatterOutput << "|"
       << (spec.hasNorm ? std::to_string(spec.normEps) : "-") << "|";
    llvm::interleave(spec.groupNs, os, ",");
    return key;
  }

  /// Records the launches of a decode-layer op for every batch it runs at.
  LogicalResult lowerDecode(Operation *op, OpKernelContext &context,
                            ArrayRef<int64_t> batches) {
    auto rowsOf = [](Value v) {
      auto type = cast<RankedTensorType>(v.getType());
      return type.getRank() == 0 ? 1 : type.getDimSize(0);
    };
    // The row count is that of the activation: the first result (argmax's
    // [M] ids included).
    int64_t rows = rowsOf(op->getResult(0));
    OpBuilder b(op->getContext());
    SmallVector<Attribute> records;
    for (int64_t batch : batchesFor(rows, batches)) {
      FailureOr<SmallVector<OpLaunch>> launches =
          lowerDecodeOp(op, context, batch);
      if (failed(launches))
        return failure();
      for (const OpLaunch &launch : *launches)
        records.push_back(
            launchRecord(b, launch.launch, batch, {/*args=*/launch.args}));
    }
    op->setAttr("qf.launches", b.getArrayAttr(records));
    return success();
  }

  LogicalResult lowerOne(FusedMatmulOp op, gpu::GPUModuleOp gpuModule,
                         ArrayRef<int64_t> batches) {
    auto emitError = [&]() { return op.emitOpError(); };
    // The tensor-core kernel reads and writes f16 or bf16 activations; the
    // matvec and the cuBLAS steps f16 only: bf16 bits must never reach a
    // kernel that reads them as f16. (qf-to-cpu lowers both.)
    Type actType = op.getInput().getType().getElementType();
    if (!actType.isBF16() && failed(requireF16(op, "activations", actType)))
      return failure();
    if (isDenseUnquantized(op.getWeight().getType()))
      return lowerDense(op, gpuModule, batches);
    if (!op.getTiling())
      return emitError() << "has no tiling; run qf-select-tiling first";
    // The matvec generator fuses the RMSNorm prologue; the tensor-core
    // kernel does not (it takes the epilogues, silu_mul and qf.group).
    if (isTensorCoreKernel(op.getTiling()->getKernel()) && op.getNorm() &&
        !op.hasPermutedNorm())
      return emitError() << "the tensor-core (mma) kernel does not fuse "
                            "an RMSNorm prologue; it runs only with the "
                            "matvec tiling (M <= 8)";
    // qf.group (qf-fuse-shared-input): the first member launches one kernel
    // for all, with its tiling; the others record no launch.
    SmallVector<FusedMatmulOp> members = groupMembers(op);
    if (!members.empty() && members.front() != op) {
      op->setAttr("qf.launches", OpBuilder(op).getArrayAttr({}));
      return success();
    }
    if (failed(verifyGroup(members)))
      return failure();
    SmallVector<int64_t> ms =
        batchesFor(op.getInput().getType().getDimSize(0), batches);
    llvm::DenseMap<int64_t, BatchKernel> perBatch = getBatchKernels(op);

    OpBuilder b(op.getContext());
    SmallVector<Attribute> launches;
    launchGuards.clear();
    for (int64_t batch : ms) {
      FailureOr<MatmulSpec> spec = batchSpec(op, perBatch, batch);
      if (failed(spec) ||
          failed(lowerBatch(op, members, *spec, batch, gpuModule, launches)))
        return failure();
    }
    op->setAttr("qf.launches", b.getArrayAttr(launches));
    if (llvm::any_of(launchGuards, [](int32_t g) { return g != kAlways; })) {
      launchGuards.resize(launches.size(), kAlways);
      op->setAttr("qf.launch_guards", b.getDenseI32ArrayAttr(launchGuards));
    }
    return success();
  }

  /// A matmul on a dense f16/bf16 weight: cuBLAS runs it, so there is
  /// nothing to generate, and only what a gemm step can do is taken. f16
  /// without an epilogue records its batches (`qf.gemm_batches`); another
  /// dtype or silu_mul runs the fallback's steps.
  LogicalResult lowerDense(FusedMatmulOp op, gpu::GPUModuleOp gpuModule,
                           ArrayRef<int64_t> batches) {
    if (op.getNorm())
      return op.emitOpError() << "on a dense weight is a cuBLAS step, which "
                                 "cannot fuse an RMSNorm prologue";
    const bool bf16 = op.getInput().getType().getElementType().isBF16();
    WeightType weightType = op.getWeight().getType();
    OpBuilder b(op.getContext());
    SmallVector<int64_t> ms =
        batchesFor(op.getInput().getType().getDimSize(0), batches);
    if (!bf16 && weightType.getEncoding().getFormat() == ElementFormat::F16 &&
        op.getActivation() == EpilogueActivation::None) {
      op->setAttr("qf.gemm_batches", b.getDenseI64ArrayAttr(ms));
      return success();
    }
    // Another dtype or a silu_mul epilogue: the fallback converts the
    // weight into the activations' type and runs the same gemm steps.
    SmallVector<Attribute> launches;
    for (int64_t batch : ms)
      if (failed(lowerFallback(op, {}, weightType.getLayout(), gpuModule, batch,
                               launches)))
        return failure();
    op->setAttr("qf.launches", b.getArrayAttr(launches));
    return success();
  }

  /// Lowers batch `batch` of `op` (the first of its qf.group `members`, if
  /// it has one) with the tiling and layout `spec` holds: the fused kernel,
  /// emitted once per variant, or the fallback; appends its launches.
  LogicalResult lowerBatch(FusedMatmulOp op, ArrayRef<FusedMatmulOp> members,
                           MatmulSpec spec, int64_t batch,
                           gpu::GPUModuleOp gpuModule,
                           SmallVectorImpl<Attribute> &launches) {
    if (spec.tiling.getKernel() == KernelKind::DequantGemm)
      return lowerFallback(op, members, spec.layout, gpuModule, batch,
                           launches);
    const bool tensorCore = isTensorCoreKernel(spec.tiling.getKernel());
    if (op.getInput().getType().getElementType().isBF16() && !tensorCore)
      return refuseBf16(op, spec.tiling, batch);
    completeSpec(op, members, batch, spec);
    spec.scatterOutput = static_cast<bool>(sortedReaderOf(op, batch));
    // act_order, on either kernel: a launch of its own permutes the
    // activations into the weight's sorted column order (PermuteKernel.cpp),
    // and the kernel reads the weight as a plain one: cheaper than a gather
    // through perm in every matvec block (docs/act-order.md). A group's (or
    // gate/up's) weights
    // share the first one's permutation under the contract that their
    // perms are equal, which only the weights can tell: those launches run
    // when the runtime finds them equal, the fallback below otherwise.
    // With an RMSNorm or silu_mul prologue (qf-fuse-act-order-norm,
    // qf-fuse-act-order-silu-mul) that launch writes the permuted
    // activations itself (MatmulInput.h): no permute.
    const bool shared = !members.empty() || spec.gated;
    const bool permuted =
        spec.encoding.getActOrder() && !spec.encoding.isSparse24();
    std::optional<std::string> refusal = fusedRefusal(op, spec);
    if (refusal) {
      op.emitRemark() << "M = " << batch
                      << " runs the dequantize + cuBLAS fallback (the "
                      << (tensorCore ? "tensor-core" : "matvec")
                      << " generator cannot take " << spec.tiling << ": "
                      << *refusal << ")";
      return lowerFallback(op, members, spec.layout, gpuModule, batch,
                           launches);
    }
    const size_t first = launches.size();
    // The matmul that writes the input wrote it in sorted order already.
    const bool presorted = permuted && readsPresorted(op, batch);
    if (permuted && !presorted &&
        failed(recordPermutedInput(op, spec.layout, gpuModule, batch,
                                   permuteStagedMaxK, launches)))
      return failure();
    FailureOr<KernelLaunch> kernel = getOrEmitKernel(op, spec, gpuModule);
    if (failed(kernel))
      return failure();
    LaunchExtras extras;
    // The weight's copy in another layout (docs/artifact.md).
    if (spec.layout != op.getWeight().getType().getLayout())
      extras.layout = spec.layout;
    extras.permutedInput = permuted && !presorted;
    OpBuilder b(op.getContext());
    launches.push_back(launchRecord(b, *kernel, batch, extras));
    if (!(permuted && shared))
      return success();
    // Perms that differ: the dequantize + cuBLAS fallback, whose dequantize
    // scatters each weight's columns by its own perm (exact for any perms).
    markGuard(launches, first, kPermsEqual);
    const size_t fallback = launches.size();
    if (failed(lowerFallback(op, members, spec.layout, gpuModule, batch,
                             launches)))
      return failure();
    markGuard(launches, fallback, kPermsDiffer);
    return success();
  }

  /// Why the fused kernel cannot take `spec` (a batch of `op`), so that
  /// the fallback runs it, or none. An act_order weight's `spec` becomes
  /// the plain one its kernel reads once the input is permuted.
  std::optional<std::string> fusedRefusal(FusedMatmulOp op, MatmulSpec &spec) {
    // act_order + 2:4 is not sorted (a tuning entry may still ask for a
    // fused kernel): the fallback takes it.
    if (spec.encoding.getActOrder() && spec.encoding.isSparse24())
      return std::string(kUnsortedActOrder);
    if (spec.encoding.getActOrder()) {
      spec.encoding = withoutActOrder(spec.encoding);
      spec.hasNorm = false;
    }
    // A limit of the generator that selection did not model: the
    // fallback takes the batch (its RMSNorm prologue a norm launch of its
    // own). Without fallback-on-limits the generator's own diagnostic
    // stands.
    if (fallbackOnLimits)
      return whyGeneratorRefuses(spec, op.getLoc());
    return std::nullopt;
  }

  /// Whether `op` (no qf.group) runs its fused kernel at `batch`.
  bool runsFusedAt(FusedMatmulOp op, int64_t batch) {
    auto [known, inserted] = runsFused.try_emplace({op, batch}, false);
    if (!inserted || !op.getTiling())
      return known->second;
    FailureOr<MatmulSpec> spec = batchSpec(op, getBatchKernels(op), batch);
    if (failed(spec) || spec->tiling.getKernel() == KernelKind::DequantGemm)
      return false;
    completeSpec(op, {}, batch, *spec);
    return known->second = !fusedRefusal(op, *spec);
  }

  /// The act_order matmul `op` writes its result for in sorted column order
  /// at `batch` (SortedOutput.h), or null.
  FusedMatmulOp sortedReaderOf(Operation *op, int64_t batch) {
    if (!actOrderSortedOutput)
      return {};
    auto check = [this](FusedMatmulOp r, int64_t m) {
      return runsFusedAt(r, m);
    };
    return sortedOutputReader(op, batch, check, sortedAttentionMaxBatch);
  }

  /// Whether `op`'s input comes in its weight's sorted column order at
  /// `batch`.
  bool readsPresorted(FusedMatmulOp op, int64_t batch) {
    if (!actOrderSortedOutput)
      return false;
    auto check = [this](FusedMatmulOp r, int64_t m) {
      return runsFusedAt(r, m);
    };
    return readsSortedInput(op, batch, check, sortedAttentionMaxBatch);
  }

  /// Fails batch `batch` of `op`, whose bf16 activations only the
  /// tensor-core kernel reads, saying why that kernel is not the one its
  /// `tiling` selects.
  LogicalResult refuseBf16(FusedMatmulOp op, TilingAttr tiling, int64_t batch) {
    WeightType w = op.getWeight().getType();
    std::optional<std::string> why =
        tensorCoreRefusesEncoding(w.getEncoding(), target.getSmVersion());
    if (!why)
      why = tensorCoreRefusesShape(w.getEncoding(), w.getN(), w.getK());
    if (!why && op.getNorm())
      why = "it does not fuse the RMSNorm prologue";
    InFlightDiagnostic diag = op.emitOpError()
                              << "has bf16 activations, which only the "
                                 "tensor-core (mma) kernel reads; batch "
                              << batch << " has the tiling " << tiling;
    if (why)
      diag << " (the tensor-core kernel cannot take it: " << *why << ")";
    return failure();
  }

  /// The rest of `spec` for batch `batch` of `op`: dtype, shape, target,
  /// prologue and epilogue, and the N of the other `members` of its group.
  void completeSpec(FusedMatmulOp op, ArrayRef<FusedMatmulOp> members,
                    int64_t batch, MatmulSpec &spec) {
    WeightType w = op.getWeight().getType();
    spec.bf16 = op.getInput().getType().getElementType().isBF16();
    spec.m = batch;
    spec.n = w.getN();
    spec.k = w.getK();
    spec.target = target;
    spec.prefetchBeforeWait = gridDependency && gridDependencyPrefetch &&
                              target.getSmVersion() >= 90;
    spec.hasBias = static_cast<bool>(op.getBias());
    spec.hasResidual = static_cast<bool>(op.getResidual());
    spec.hasNorm = static_cast<bool>(op.getNorm());
    if (spec.hasNorm)
      spec.normEps = op.getNormEps()->convertToFloat();
    spec.gated = op.getActivation() == EpilogueActivation::SiluMul;
    for (FusedMatmulOp other : members.drop_front(members.empty() ? 0 : 1))
      spec.groupNs.push_back(other.getWeight().getType().getN());
  }

  /// The kernel of `spec` (qf_matvec_, qf_mma_ or qf_wgmma_<variant>_m<M>),
  /// emitted into `gpuModule` the first time and shared after that.
  FailureOr<KernelLaunch> getOrEmitKernel(FusedMatmulOp op,
                                          const MatmulSpec &spec,
                                          gpu::GPUModuleOp gpuModule) {
    auto emitError = [&]() { return op.emitOpError(); };
    const bool tensorCore = isTensorCoreKernel(spec.tiling.getKernel());
    std::string variant = variantKey(spec);
    int64_t index =
        variants.try_emplace(variant, variants.size()).first->second;
    std::string name =
        (spec.tiling.getKernel() == KernelKind::WGMMA ? "qf_wgmma_"
         : tensorCore                                 ? "qf_mma_"
                                                      : "qf_matvec_") +
        std::to_string(index) + "_m" + std::to_string(spec.m);
    auto it = emitted.find(name);
    if (it == emitted.end()) {
      FailureOr<KernelLaunch> emittedLaunch =
          tensorCore ? emitTensorCoreKernel(gpuModule, name, spec, emitError)
                     : emitMatVecKernel(gpuModule, name, spec, emitError);
      if (failed(emittedLaunch))
        return failure();
      it = emitted.try_emplace(name, *emittedLaunch).first;
    }
    return it->second;
  }

  /// A batch no fused kernel takes (#qf.tiling<dequant_gemm>,
  /// docs/fallback.md). Per weight (each member of the op's qf.group; gate
  /// and up under silu_mul), in order: a dequantize launch of the weight,
  /// read in `layout`, into the workspace, and a `gemm` record (cuBLAS,
  /// with the member's bias and residual). Under silu_mul the two gemms
  /// write the scratch buffers `gate` and `up`, and an elementwise launch
  /// writes silu(gate) * up to the output, or to scratch `act` that an add
  /// launch then sums with the residual. The artifact writer binds the
  /// records (`step`, `member`, `into`; args `{scratch}`, `{output}`,
  /// `{residual}`). An RMSNorm (silu_mul) prologue is a launch first, into
  /// scratch `normed` (`activated`), which the gemms read.
  LogicalResult lowerFallback(FusedMatmulOp op,
                              ArrayRef<FusedMatmulOp> members,
                              LayoutAttr layout, gpu::GPUModuleOp gpuModule,
                              int64_t batch,
                              SmallVectorImpl<Attribute> &launches) {
    MLIRContext *ctx = op.getContext();
    Type act = op.getInput().getType().getElementType();
    const bool gated = op.getActivation() == EpilogueActivation::SiluMul;
    if (gated && !act.isF16())
      return op.emitOpError()
             << "batch " << batch
             << " runs the dequantize + cuBLAS fallback, whose silu_mul "
                "kernel reads f16 activations only";
    if (failed(recordFallbackInput(op, layout, gpuModule, batch, launches)))
      return failure();
    OpBuilder b(ctx);
    SmallVector<FusedMatmulOp> outputs(members.begin(), members.end());
    if (outputs.empty())
      outputs.push_back(op);
    for (auto [i, member] : llvm::enumerate(outputs)) {
      SmallVector<StringRef> roles;
      if (gated)
        roles = {"gate", "up"};
      else
        roles = {"y"};
      for (StringRef role : roles) {
        auto stored = cast<WeightType>(
            (role == "up" ? member.getUp() : member.getWeight()).getType());
        WeightType w = WeightType::get(ctx, stored.getN(), stored.getK(),
                                       stored.getEncoding(), layout);
        std::string key;
        llvm::raw_string_ostream os(key);
        os << "dequant|" << w << "|" << act;
        std::string name =
            "qf_dequant_" +
            std::to_string(dequantVariants
                               .try_emplace(key, dequantVariants.size())
                               .first->second);
        KernelLaunch launch =
            emitDequantizeKernel(gpuModule, name, w, act, op.getLoc());
        LaunchExtras dequantize;
        dequantize.layout = layout;
        dequantize.step = "dequantize";
        dequantize.member = i;
        dequantize.weight = role == "up" ? "up" : "weight";
        launches.push_back(launchRecord(b, launch, batch, dequantize));
        launches.push_back(FallbackGemmAttr::get(
            ctx, batch, b.getStringAttr(role), static_cast<int64_t>(i)));
      }
      if (!gated)
        continue;
      int64_t n = member.getWeight().getType().getN();
      auto scratch = [&](StringRef name) {
        return LaunchArgAttr::get(ctx, LaunchArgKind::Scratch, name);
      };
      auto output = LaunchArgAttr::get(ctx, LaunchArgKind::Output);
      const bool residual = static_cast<bool>(member.getResidual());
      SmallVector<std::pair<Elementwise, SmallVector<LaunchArgAttr>>> steps;
      steps.push_back({Elementwise::SiluMul,
                       {scratch("gate"), scratch("up"),
                        residual ? scratch("act") : output}});
      if (residual)
        steps.push_back(
            {Elementwise::Add,
             {scratch("act"), LaunchArgAttr::get(ctx, LaunchArgKind::Residual),
              output}});
      // The act_order reader's sorted order (SortedOutput.h): the product
      // gathered through its perm.
      const bool sorted = static_cast<bool>(sortedReaderOf(member, batch));
      for (auto &[kind, args] : steps) {
        if (sorted)
          args.insert(args.begin() + 2,
                      LaunchArgAttr::get(ctx, LaunchArgKind::ReaderComponent,
                                         "perm"));
        FailureOr<OpLaunch> launch =
            sorted ? emitPermuteSiluMulLaunch(op, gpuModule, batch, n, args)
                   : emitElementwiseLaunch(op, gpuModule, kind, batch, n,
                                           args);
        if (failed(launch))
          return failure();
        LaunchExtras extras;
        extras.args = launch->args;
        extras.step = kind == Elementwise::SiluMul ? "silu_mul" : "add";
        extras.member = i;
        launches.push_back(launchRecord(b, launch->launch, batch, extras));
      }
    }
    return success();
  }
};

} // namespace
