//===- qfuse-compile.cpp - .mlir -> qfuse artifact, in one command ----------===//
//
// Runs the whole pipeline: import upstream quant types, canonicalize, fuse
// dequantization into matmuls, fold neighbours into them (the qf-fuse-*
// passes chosen with --fuse), select tiling, choose packed layouts,
// generate NVVM kernels, serialize them to PTX, assemble a cubin with ptxas
// where the CUDA toolkit is present, and write the artifact of
// docs/artifact.md. A --chip list runs the whole pipeline once per chip,
// the chips side by side on threads (the tiling differs per chip), and
// writes one artifact set holding every chip's artifact.
//
//===----------------------------------------------------------------------===//

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/Threading.h"

#include "../../lib/Target/ArtifactWriter.h"
#include "FusionSelection.h"
#include "Ptxas.h"
#include "qfuse/Conversion/Passes.h"
#include "qfuse/Dialect/QF/IR/KnownTargets.h"
#include "qfuse/Dialect/QF/IR/QFDialect.h"
#include "qfuse/Dialect/QF/Transforms/CostModel.h"
#include "qfuse/Dialect/QF/Transforms/Passes.h"

using namespace mlir;
namespace cl = llvm::cl;

static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<input .mlir>"),
                                      cl::init("-"));
static cl::opt<std::string> outputFile("o", cl::desc("Output file"),
                                       cl::value_desc("file"), cl::init("-"));
static cl::opt<std::string> chipList(
    "chip",
    cl::desc("Target chip: sm_80, sm_89, sm_90, or sm_90a (Hopper only: the "
             "wgmma kernel for batches from 128); see #qf.target. A comma-"
             "separated list (sm_80,sm_90,sm_90a) compiles once per chip "
             "into one artifact set, whose variant for the device the "
             "runtime runs (docs/artifact.md). Default sm_90, one plain "
             "artifact; the Python frontend (python3 -m qfuse) defaults to "
             "sm_80,sm_90,sm_90a"),
    cl::value_desc("chip[,chip...]"), cl::init("sm_90"));
static cl::opt<std::string> features("features", cl::desc("PTX features"),
                                     cl::init("+ptx80"));
static cl::list<int64_t>
    batchSizes("batch-sizes", cl::desc("Batch sizes for a dynamic M"),
               cl::CommaSeparated);
static cl::opt<int64_t> tensorCoreMinBatch(
    "tensor-core-min-batch",
    cl::desc("Smallest batch that runs the tensor-core kernel where it takes "
             "the weight (default 0: measured per weight size and format, "
             "docs/defaults.md; N > 0: below 8 only on weights of at least "
             "--tensor-core-small-min-weights; 9: the matvec up to 8)"),
    cl::init(qf::kTensorCoreMinM));
static cl::opt<int64_t> tensorCoreSmallMinWeights(
    "tensor-core-small-min-weights",
    cl::desc("Below 8, the fewest weights that --tensor-core-min-batch moves"),
    cl::init(qf::kTensorCoreSmallBatchMinWeights));
static cl::opt<int64_t> dequantGemmMinBatch(
    "dequant-gemm-min-batch",
    cl::desc("Smallest batch that runs the dequantize + cuBLAS fallback "
             "instead of the mma.sync kernel (default 512, measured on the "
             "H200, docs/fallback.md; 0: only where no fused kernel takes "
             "the weight)"),
    cl::init(qf::kDequantGemmMinM));
static cl::opt<int64_t> wgmmaMinRows(
    "wgmma-min-rows",
    cl::desc("sm_90a: the fewest weight rows that run the wgmma kernel at "
             "batches 128 to 511 (default 2048, measured on the H200, "
             "docs/defaults.md; every weight from 512)"),
    cl::init(qf::kWgmmaMinRows));
static cl::opt<bool> mmaTieBreak(
    "mma-tie-break",
    cl::desc("Among mma.sync tilings predicted within 1% of the fastest, "
             "take the one with the least blocks' work (default off, the "
             "first, until it is timed on the zoo; docs/cost-model.md)"),
    cl::init(false), cl::Hidden);
static cl::opt<int64_t> permuteStagedMaxK(
    "permute-staged-max-k",
    cl::desc("act_order's permute kernel stages rows of at most this many "
             "elements in shared memory, longer ones gather (default 24576, "
             "what static shared memory holds; 0: always; docs/act-order.md)"),
    cl::init(24576), cl::Hidden);
static cl::opt<bool> actOrderSortedOutput(
    "act-order-sorted-output",
    cl::desc("Up to batch 16, a gated gate/up kernel (or attention) whose "
             "output only an act_order matmul reads stores it in that "
             "matmul's sorted column order (default on; docs/act-order.md)"),
    cl::init(true), cl::Hidden);
static cl::opt<int64_t> sortedAttentionMaxBatch(
    "sorted-attention-max-batch",
    cl::desc("Attention stores an act_order o_proj's input sorted up to this "
             "batch (default 16; from 32 the tiled kernel; docs/act-order.md)"),
    cl::init(16), cl::Hidden);
static cl::opt<bool> gridDependency(
    "grid-dependency",
    cl::desc("On sm_90 and later, start every kernel with "
             "griddepcontrol.wait so that the runtime launches it as a "
             "programmatic dependent of the kernel before it (default on; "
             "docs/artifact.md)"),
    cl::init(true), cl::Hidden);
enum class TriggerPoint { None, Start, Late };
static cl::opt<TriggerPoint> gridDependencyTrigger(
    "grid-dependency-trigger",
    cl::desc("With --grid-dependency: where a kernel releases the next one "
             "(griddepcontrol.launch_dependents); docs/artifact.md"),
    cl::values(clEnumValN(TriggerPoint::None, "none",
                          "when it ends (default)"),
               clEnumValN(TriggerPoint::Start, "start", "at its start"),
               clEnumValN(TriggerPoint::Late, "late",
                          "after its main loop (else before its first "
                          "global store)")),
    cl::init(TriggerPoint::None), cl::Hidden);
static cl::opt<bool> gridDependencyPrefetch(
    "grid-dependency-prefetch",
    cl::desc("With --grid-dependency: kernels that can prefetch their "
             "weights into L2 before they wait for the kernel ahead "
             "(the matvec, the tensor-core kernel: docs/artifact.md) do"),
    cl::init(false), cl::Hidden);
static cl::opt<std::string> tuningDb("tuning-db",
                                     cl::desc("Tuning database (JSON)"),
                                     cl::init(""));
static cl::opt<std::string> listTilings(
    "list-tilings",
    cl::desc("Print the candidate tilings of a weight type (e.g. "
             "'!qf.weight<4096x4096, #qf.enc<int4, group = 128, scale = "
             "f16>>') at each --batch-sizes entry (default 1) on --chip, as "
             "the tuning mode measures them: one #qf.tiling per line, the "
             "default (what a compile without a tuning database picks) "
             "first, then the kernel families' candidates by rank (mma by "
             "the time model's predicted time); reads no input"),
    cl::value_desc("weight type"), cl::init(""));
static cl::opt<int64_t> listTop(
    "list-top",
    cl::desc("With --list-tilings: at most this many candidates per kernel "
             "family (matvec, mma, wgmma, dequant_gemm; 0: all)"),
    cl::init(8));
static cl::opt<bool> listGated(
    "list-gated",
    cl::desc("With --list-tilings: a silu_mul matmul whose gate and up "
             "weights both have the given type (its tuning-database entry "
             "has n = 2 x the rows)"),
    cl::init(false));
enum class Emit { Artifact, MLIR, PTX };
static cl::opt<Emit> emit(
    "emit", cl::desc("What to write"), cl::init(Emit::Artifact),
    cl::values(clEnumValN(Emit::Artifact, "artifact", "the artifact (JSON)"),
               clEnumValN(Emit::MLIR, "mlir", "the IR after the pipeline"),
               clEnumValN(Emit::PTX, "ptx", "the kernels' PTX")));
static cl::opt<std::string>
    ptxasPath("ptxas", cl::desc("ptxas to assemble a cubin (default: "
                                "$CUDA_HOME/bin, /usr/local/cuda/bin, PATH)"),
              cl::init(""));
static cl::opt<bool> noCubin("no-cubin", cl::desc("Embed PTX only"),
                            cl::init(false));

static cl::opt<std::string> fuse(
    "fuse",
    cl::desc("Fusion passes to run after qf-fuse-dequant-matmul: a comma-"
             "separated subset of rmsnorm (qf-fuse-rmsnorm-prologue), "
             "gated-mlp (qf-fuse-gated-mlp), epilogue (qf-fuse-epilogue), "
             "shared-input (qf-fuse-shared-input), act-order-norm "
             "(qf-fuse-act-order-norm), act-order-silu-mul "
             "(qf-fuse-act-order-silu-mul), rotary-attention "
             "(qf-fuse-rotary-attention); 'default', 'all' or 'none'"),
    cl::init("default"));

/// The one static leading dimension of the public functions' 2-D (and
/// higher) tensor arguments, or nullopt when they have none or several.
static std::optional<int64_t> getStaticBatch(ModuleOp module) {
  std::optional<int64_t> batch;
  bool mixed = false;
  module.walk([&](func::FuncOp func) {
    if (func.isPrivate())
      return;
    for (Type type : func.getArgumentTypes()) {
      auto tensor = dyn_cast<RankedTensorType>(type);
      if (!tensor || tensor.getRank() < 2 || tensor.isDynamicDim(0))
        continue;
      if (batch && *batch != tensor.getDimSize(0))
        mixed = true;
      batch = tensor.getDimSize(0);
    }
  });
  if (mixed)
    return std::nullopt;
  return batch;
}

/// The pass pipeline for `module`, one per chip: the fusions --fuse selects
/// for its batches, then tiling, layout and lowering to PTX for that chip;
/// or an error message.
static FailureOr<SmallVector<std::string>>
buildPipelines(ModuleOp module, ArrayRef<std::string> chips,
               std::string &error) {
  // The smallest batch is the decode step that dominates generation: the
  // tiling is chosen for it (its tuned one), and the matvec batches share
  // it. Batches from --tensor-core-min-batch up run the tensor-core kernel
  // where it takes the weight: qf-select-tiling gives each its own tiling
  // (qf.batch_tilings) and qf-choose-layout its own weight layout, so every
  // batch runs its best kernel (the weight is then on the device in both
  // layouts). A list with no batch <= 8 plans its largest batch.
  int64_t largest = 1, smallest = 0;
  std::string batches;
  for (int64_t b : batchSizes) {
    largest = std::max(largest, b);
    smallest = smallest ? std::min(smallest, b) : b;
    batches += (batches.empty() ? "" : ",") + std::to_string(b);
  }
  if (batches.empty()) {
    batches = "1";
    // No list: a module whose matrix arguments all have one static batch
    // (a layer compiled for M = 32, say) is that batch for the fusion
    // choices below; any other is planned for batch 1.
    if (std::optional<int64_t> m = getStaticBatch(module))
      smallest = largest = *m;
  }
  const int64_t selectBatch =
      smallest && smallest <= qf::kMatvecMaxM ? smallest : largest;
  // The fusion the tensor-core kernel cannot take (the RMSNorm prologue) is
  // dropped when the largest batch needs that kernel.
  const int64_t fusionBatch = largest;
  SmallVector<std::string> pipelines;
  llvm::StringSet<> noted;
  for (const std::string &chip : chips) {
    SmallVector<std::string> notes;
    qf::TargetAttr target = qf::getKnownTarget(module.getContext(), chip);
    FailureOr<SmallVector<StringRef>> fusions = qfuse::selectFusions(
        fuse, smallest ? smallest : 1, fusionBatch,
        target && target.isArchSpecific(), notes, error);
    if (failed(fusions))
      return failure();
    for (const std::string &note : notes)
      if (noted.insert(note).second)
        llvm::errs() << "qfuse-compile: note: " << note << "\n";
    std::string fusionPasses;
    for (StringRef pass : *fusions)
      fusionPasses += pass.str() + ",";
    pipelines.push_back(
        "qf-import-quant,canonicalize,qf-fuse-dequant-matmul," + fusionPasses +
        "qf-select-tiling{batch=" + std::to_string(selectBatch) +
        " batch-sizes=" + batches +
        (tuningDb.empty() ? "" : " tuning-db=" + tuningDb) + " chip=" + chip +
        " tensor-core-min-m=" + std::to_string(tensorCoreMinBatch) +
        " tensor-core-small-min-weights=" +
        std::to_string(tensorCoreSmallMinWeights) +
        " dequant-gemm-min-m=" + std::to_string(dequantGemmMinBatch) +
        " wgmma-min-rows=" + std::to_string(wgmmaMinRows) +
        " mma-tie-break=" + (mmaTieBreak ? "true" : "false") +
        "},qf-choose-layout,qf-to-gpu{chip=" + chip + " features=" +
        features + " batch-sizes=" + batches +
        " fallback-on-limits=true permute-staged-max-k=" +
        std::to_string(permuteStagedMaxK) + " act-order-sorted-output=" +
        (actOrderSortedOutput ? "true" : "false") + " sorted-attention-max-batch=" +
        std::to_string(sortedAttentionMaxBatch) + " grid-dependency=" + (gridDependency ? "true" : "false") +
        " grid-dependency-trigger=" +
        (gridDependencyTrigger == TriggerPoint::Start  ? "start"
         : gridDependencyTrigger == TriggerPoint::Late ? "late"
                                                       : "none") +
        " grid-dependency-prefetch=" +
        (gridDependencyPrefetch ? "true" : "false") +
        "},gpu-module-to-binary{format=isa}");
  }
  return pipelines;
}

/// The chips of --chip, each known (#qf.target) and listed once; or an
/// error message.
static FailureOr<SmallVector<std::string>> parseChips(MLIRContext *context,
                                                      std::string &error) {
  SmallVector<StringRef> items;
  StringRef(chipList).split(items, ',');
  SmallVector<std::string> chips;
  for (StringRef item : items) {
    item = item.trim();
    if (!qf::getKnownTarget(context, item)) {
      error = "unknown --chip '" + item.str() + "'; expected " +
              qf::knownTargetNames() +
              " (or a comma-separated list of them)";
      return failure();
    }
    if (llvm::is_contained(chips, item)) {
      error = "--chip lists '" + item.str() +
              "' twice; an artifact set holds one artifact per chip";
      return failure();
    }
    chips.push_back(item.str());
  }
  if (chips.size() > 1 && emit != Emit::Artifact) {
    error = "--emit=mlir and --emit=ptx take one --chip; a list (" +
            chipList + ") makes an artifact set";
    return failure();
  }
  return chips;
}

/// The module compiled for `chip` as --emit asks: MLIR, PTX or the artifact
/// (with a cubin when ptxas is found); failure after a diagnostic.
static FailureOr<std::string> renderOutput(ModuleOp module, StringRef chip) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (emit == Emit::MLIR) {
    module.print(os);
    return text;
  }
  FailureOr<std::string> ptx = qf::extractKernelPTX(module);
  if (failed(ptx))
    return failure();
  if (emit == Emit::PTX)
    return *ptx;
  qf::ArtifactOptions options;
  options.chip = chip.str();
  options.features = features;
  if (!noCubin) {
    std::string ptxas = qfuse::compile::findPtxas(ptxasPath);
    if (ptxas.empty()) {
      llvm::errs() << "qfuse-compile: note: no ptxas found; the artifact "
                      "carries PTX only (the driver JIT-compiles it)\n";
    } else {
      std::string error;
      FailureOr<std::string> cubin =
          qfuse::compile::assemble(ptxas, chip, *ptx, error);
      if (failed(cubin)) {
        llvm::errs() << "qfuse-compile: " << error << "\n";
        return failure();
      }
      options.cubin = std::move(*cubin);
    }
  }
  FailureOr<qfuse::format::artifact::Artifact> artifact =
      qf::buildArtifact(module, *ptx, options);
  if (failed(artifact))
    return failure();
  return qfuse::format::artifact::printArtifact(*artifact);
}

/// Runs `pipeline` on `module` and renders the result for `chip`; failure
/// after a diagnostic.
static FailureOr<std::string> compileVariant(ModuleOp module, StringRef chip,
                                             StringRef pipeline) {
  // The pipeline string is relative to the module PassManager's anchor.
  PassManager pm(module.getContext());
  if (failed(parsePassPipeline(pipeline, pm, llvm::errs())) ||
      failed(pm.run(module)))
    return failure();
  return renderOutput(module, chip);
}

/// One chip of a --chip list, compiled on a thread in a context of its own:
/// it parses the input again, so no IR or context state is shared between
/// chips, and its diagnostics are kept for main to print in chip order.
struct ChipCompile {
  std::string chip, pipeline;
  std::string diagnostics;
  FailureOr<std::string> text = failure();

  void run(const DialectRegistry &registry, StringRef source) {
    MLIRContext context(registry);
    context.loadAllAvailableDialects();
    llvm::SourceMgr sourceMgr;
    sourceMgr.AddNewSourceBuffer(
        llvm::MemoryBuffer::getMemBuffer(source, inputFile), llvm::SMLoc());
    llvm::raw_string_ostream os(diagnostics);
    SourceMgrDiagnosticHandler handler(sourceMgr, &context, os);
    OwningOpRef<ModuleOp> module =
        parseSourceFile<ModuleOp>(sourceMgr, &context);
    if (module)
      text = compileVariant(*module, chip, pipeline);
  }
};

/// Runs `pipelines` (one per chip of `chips`) and renders each result. One
/// chip compiles `module` itself; a list compiles the chips side by side,
/// each on its own thread and context (the tiling differs per chip), up to
/// the machine's hardware threads, so a three-chip artifact set takes about
/// the time of its slowest chip. The texts in chip order, or failure after
/// the diagnostics.
static FailureOr<SmallVector<std::string>>
compileVariants(OwningOpRef<ModuleOp> module, ArrayRef<std::string> chips,
                ArrayRef<std::string> pipelines,
                const DialectRegistry &registry, StringRef source) {
  if (chips.size() == 1) {
    FailureOr<std::string> text =
        compileVariant(*module, chips.front(), pipelines.front());
    if (failed(text))
      return failure();
    return SmallVector<std::string>{std::move(*text)};
  }
  std::vector<ChipCompile> jobs(chips.size());
  for (size_t i = 0; i < chips.size(); ++i)
    jobs[i].chip = chips[i], jobs[i].pipeline = pipelines[i];
  const unsigned workers = std::max(
      1u, std::min<unsigned>(chips.size(),
                             llvm::hardware_concurrency().compute_thread_count()));
  {
    llvm::StdThreadPool pool(llvm::hardware_concurrency(workers));
    for (ChipCompile &job : jobs)
      pool.async([&job, &registry, source] { job.run(registry, source); });
    pool.wait();
  }
  // Chips mostly fail (or remark) alike: each text of diagnostics once.
  SmallVector<std::string> texts;
  llvm::StringMap<std::string> printedFor;
  bool ok = true;
  for (ChipCompile &job : jobs) {
    auto [seen, fresh] = printedFor.try_emplace(job.diagnostics, job.chip);
    if (fresh)
      llvm::errs() << job.diagnostics;
    else if (!job.diagnostics.empty())
      llvm::errs() << "qfuse-compile: " << job.chip
                   << ": the same diagnostics as " << seen->second << "\n";
    if (succeeded(job.text)) {
      texts.push_back(std::move(*job.text));
      continue;
    }
    llvm::errs() << "qfuse-compile: compiling for " << job.chip << " failed\n";
    ok = false;
  }
  if (!ok)
    return failure();
  return texts;
}

/// Writes the output; a file goes to a temporary name first and is renamed
/// when complete, so an interrupted compile never leaves a file that looks
/// finished. Returns the exit code.
static int writeOutput(StringRef text) {
  if (llvm::Error error = llvm::writeToOutput(
          outputFile, [&](llvm::raw_ostream &os) -> llvm::Error {
            os << text;
            return llvm::Error::success();
          })) {
    llvm::errs() << "qfuse-compile: cannot write '" << outputFile
                 << "': " << llvm::toString(std::move(error)) << "\n";
    return 1;
  }
  return 0;
}

/// --list-tilings: the candidates of the weight type at each batch, or an
/// error. Returns the exit code.
static int printTilingCandidates(MLIRContext &context, StringRef chip) {
  auto fail = [](const Twine &message) {
    llvm::errs() << "qfuse-compile: --list-tilings: " << message << "\n";
    return 1;
  };
  std::string message;
  Type type;
  {
    ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
      if (message.empty())
        message = diag.str();
      return success();
    });
    type = parseType(listTilings, &context);
  }
  auto weight = dyn_cast_or_null<qf::WeightType>(type);
  if (!weight)
    return fail("expected a weight type such as '!qf.weight<4096x4096, "
                "#qf.enc<int4, group = 128, scale = f16>>', got '" +
                listTilings + "'" + (message.empty() ? "" : ": " + message));
  if (listTop < 0)
    return fail("--list-top must be 0 (all) or positive, got " +
                Twine(static_cast<int64_t>(listTop)));
  SmallVector<int64_t> batches(batchSizes.begin(), batchSizes.end());
  if (batches.empty())
    batches.push_back(1);
  for (int64_t m : batches)
    if (m <= 0)
      return fail("--batch-sizes must be positive, got " + Twine(m));
  // The target qf-select-tiling builds from the same options.
  qf::TilingTarget target =
      qf::getTilingTarget(qf::getKnownTarget(&context, chip),
                          tensorCoreMinBatch, dequantGemmMinBatch);
  if (target.tensorCoreMinM < 0 || tensorCoreSmallMinWeights < 0 ||
      wgmmaMinRows < 0)
    return fail("--tensor-core-min-batch, --tensor-core-small-min-weights and "
                "--wgmma-min-rows must not be negative");
  target.tensorCoreSmallBatchMinWeights = tensorCoreSmallMinWeights;
  target.wgmmaMinRows = wgmmaMinRows;
  target.mmaTieBreak = mmaTieBreak;
  qf::WeightType keyed = weight;
  if (listGated)
    keyed = qf::WeightType::get(&context, 2 * weight.getN(), weight.getK(),
                                weight.getEncoding(), weight.getLayout());

  std::string text;
  llvm::raw_string_ostream os(text);
  for (int64_t m : batches) {
    SmallVector<qf::TilingCandidate> candidates =
        qf::listTilingCandidates(m, keyed, target, listGated, listTop);
    os << "// m = " << m << ", n = " << keyed.getN() << ", k = "
       << keyed.getK() << ", " << weight
       << (listGated ? " x 2 (gate and up, silu_mul)" : "") << ", " << chip
       << ": " << candidates.size() << " candidate(s)\n";
    for (const qf::TilingCandidate &c : candidates) {
      os << c.tiling << "  // m = " << m << ", "
         << qf::stringifyKernelKind(c.tiling.getKernel());
      if (c.predictedUs > 0)
        os << llvm::formatv(", {0:F2} us predicted", c.predictedUs);
      if (c.isDefault)
        os << ", default";
      os << "\n";
    }
  }
  if (llvm::Error error = llvm::writeToOutput(
          outputFile, [&](llvm::raw_ostream &out) -> llvm::Error {
            out << text;
            return llvm::Error::success();
          })) {
    llvm::errs() << "qfuse-compile: cannot write '" << outputFile
                 << "': " << llvm::toString(std::move(error)) << "\n";
    return 1;
  }
  return 0;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  registerAllPasses();
  qf::registerQFPasses();
  qf::registerQFConversionPasses();
  cl::ParseCommandLineOptions(argc, argv, "qfuse compiler: .mlir -> artifact\n");

  DialectRegistry registry;
  registry.insert<qf::QFDialect>();
  registerAllDialects(registry);
  registerAllExtensions(registry);
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  registerAllGPUToLLVMIRTranslations(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();

  std::string error;
  FailureOr<SmallVector<std::string>> chips = parseChips(&context, error);
  if (failed(chips)) {
    llvm::errs() << "qfuse-compile: " << error << "\n";
    return 1;
  }

  if (!listTilings.empty()) {
    if (chips->size() != 1) {
      llvm::errs() << "qfuse-compile: --list-tilings takes one --chip\n";
      return 1;
    }
    return printTilingCandidates(context, chips->front());
  }

  auto input = openInputFile(inputFile, &error);
  if (!input) {
    llvm::errs() << "qfuse-compile: " << error << "\n";
    return 1;
  }
  // Kept for the chips of a list, which parse it again in contexts of their
  // own.
  const StringRef source = input->getBuffer();
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  SourceMgrDiagnosticHandler diagHandler(sourceMgr, &context);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1;

  FailureOr<SmallVector<std::string>> pipelines =
      buildPipelines(*module, *chips, error);
  if (failed(pipelines)) {
    llvm::errs() << "qfuse-compile: " << error << "\n";
    return 1;
  }
  FailureOr<SmallVector<std::string>> texts =
      compileVariants(std::move(module), *chips, *pipelines, registry, source);
  if (failed(texts))
    return 1;
  // One chip writes today's plain artifact; a list, the set of them.
  return writeOutput(texts->size() == 1
                         ? texts->front()
                         : qfuse::format::artifact::printArtifactSet(
                               {texts->begin(), texts->end()}));
}
