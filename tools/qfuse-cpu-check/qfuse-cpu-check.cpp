//===- qfuse-cpu-check.cpp - fused matmuls on the CPU against the C++ reference -===//
//
// Runs the front of qfuse-compile's pipeline (import-quant, canonicalize,
// fuse, select-tiling, choose-layout) so that every weight has the layout
// the GPU kernel reads, then qf-to-cpu, JIT-compiles the reference functions
// with mlir::ExecutionEngine, and for every fused matmul and batch size:
//
//   1. quantizes fresh random fp16 weights with qfuse_format's RTN and
//      repacks them into the weight type's layout (qfuse::format::repack),
//   2. fills x (and norm, bias, residual) with random values, y with NaN,
//   3. runs the JIT function on those raw buffers,
//   4. compares y with qfuse::format::referenceMatmul on the dequantized
//      weight (double accumulation) plus the epilogue in double.
//
// Every lowered qf.quantize is checked byte for byte against
// qfuse::format::quantizeRTN (QuantizeCheck.cpp).
//
// One line per (op, batch); exit status 1 if any case fails. `--perturb=P`
// corrupts parameter P on the JIT side only, so tests can show that the
// check catches a wrong buffer.
//
//===----------------------------------------------------------------------===//

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Quant/IR/Quant.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"

#include "qfuse/Conversion/Passes.h"
#include "qfuse/Conversion/QFToCPU.h"
#include "qfuse/Dialect/QF/IR/QFDialect.h"
#include "qfuse/Dialect/QF/Transforms/Passes.h"
#include "qfuse/format/Encoding.h"
#include "qfuse/format/Layout.h"
#include "qfuse/format/Numerics.h"
#include "qfuse/format/Packing.h"
#include "qfuse/format/Reference.h"

#include "QuantizeCheck.h"
#include "ReferenceBuffers.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <random>

using namespace mlir;
namespace cl = llvm::cl;
namespace fmt = qfuse::format;

static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<input .mlir>"),
                                      cl::init("-"));
static cl::list<int64_t>
    batchSizes("batch-sizes",
               cl::desc("Batch sizes M to run each op with a dynamic M at "
                        "(default 1); an op with a static M runs at its M"),
               cl::CommaSeparated);
static cl::opt<uint64_t> seed("seed", cl::desc("Random seed"), cl::init(1));
static cl::opt<std::string>
    perturb("perturb",
            cl::desc("Testing: corrupt this parameter (x, codes, scales, "
                     "zeros, meta, perm, g_idx, table, bias, ...) on the JIT "
                     "side only; the check must then fail"),
            cl::init(""));
static cl::opt<int64_t> tilingBatch(
    "tiling-batch",
    cl::desc("Batch qf-select-tiling chooses kernels (and so weight layouts) "
             "for (default: the largest of --batch-sizes, as qfuse-compile)"),
    cl::init(0));
static cl::opt<bool> fuseShared(
    "fuse-shared",
    cl::desc("Run qf-fuse-gated-mlp, qf-fuse-shared-input, "
             "qf-fuse-act-order-norm and qf-fuse-act-order-silu-mul before "
             "tiling (gate/up under silu_mul and q/k/v groups, act_order "
             "included, with the RMSNorm or silu_mul that feeds act_order "
             "ones as their prologue)"),
    cl::init(false));
static cl::opt<bool> sharedPerms(
    "shared-perms",
    cl::desc("act_order weights of one K get the same column order (one "
             "g_idx per input, as GPTQ desc_act); default: one per weight"),
    cl::init(false));
static cl::opt<bool> printIR("print-ir",
                             cl::desc("Print the reference functions before "
                                      "lowering them to LLVM"),
                             cl::init(false));

namespace {

using namespace qfuse::cpucheck;

/// One fused matmul to check: its op facts and its quantized weight.
struct Case {
  std::string label; ///< "@func" or "@func#i"
  std::string function;
  SmallVector<std::string> params;
  SmallVector<MemRefType> paramTypes;
  qf::WeightType weight;
  fmt::Encoding encoding;
  fmt::Layout layout;
  int64_t staticM = ShapedType::kDynamic;
  Type act;
  bool hasNorm = false, hasBias = false, hasResidual = false, siluMul = false;
  /// The silu_mul prologue: x is the gate, `x_up` the up.
  bool siluMulPrologue = false;
  double normEps = 0.0;
  explicit Case(Location loc) : loc(loc) {}
  Location loc;                ///< the op, for diagnostics
  std::vector<float> dense;    ///< dequantized [N, K], while it is checked
  fmt::TensorMap packed;       ///< components in the kernel layout
  /// silu_mul: the up projection, a second weight of the same type, whose
  /// components the function takes as `up_<component>`.
  std::vector<float> upDense;
  fmt::TensorMap upPacked;
};

/// Strips "#qf.enc<" ... ">" (or "#qf.layout<") from an attribute's text.
std::string attrBody(Attribute attr) {
  std::string text;
  llvm::raw_string_ostream os(text);
  attr.print(os);
  size_t open = text.find('<');
  return text.substr(open + 1, text.size() - open - 2);
}

/// Quantizes seeded random fp16 weights (never zero) of `c`'s type into
/// `dense` (dequantized) and `packed`.
bool prepareOneWeight(Case &c, uint64_t weightSeed, std::vector<float> &dense,
                      fmt::TensorMap &packed, std::string &error) {
  int64_t n = c.weight.getN(), k = c.weight.getK();
  std::mt19937_64 rng(weightSeed);
  std::normal_distribution<float> dist(0.0f, 0.02f);
  std::vector<float> w(size_t(n * k));
  for (float &v : w) {
    float h = fmt::halfToFloat(fmt::floatToHalf(dist(rng)));
    v = h != 0.0f ? h : 0.0009765625f;
  }
  fmt::QuantizeOptions options;
  std::vector<float> table;
  if (c.encoding.format == fmt::ElementFormat::Codebook &&
      c.encoding.hasNamedTable()) {
    // Any sorted set of distinct values will do (as runtime/src/Check.cpp),
    // representable in the table type.
    int entries = 1 << c.encoding.indexBits;
    for (int i = 0; i < entries; ++i)
      table.push_back(fmt::roundToScalarType(-1.0f + 2.0f * i / (entries - 1),
                                             c.encoding.tableType));
    options.table = table.data();
  }
  std::vector<int32_t> gIdx;
  if (c.encoding.actOrder) {
    // desc_act: columns visited in a random order, groups along that order.
    std::vector<int32_t> order(static_cast<size_t>(k));
    for (int64_t i = 0; i < k; ++i)
      order[i] = int32_t(i);
    // --shared-perms: one order per K (and seed), so that gate and up or
    // q, k and v share it; else the weight's own.
    std::mt19937_64 permRng(seed ^ (0x9E3779B97F4A7C15ull * uint64_t(k)));
    std::shuffle(order.begin(), order.end(), sharedPerms ? permRng : rng);
    int64_t group = c.encoding.isPerChannel() ? k : c.encoding.groupSize;
    gIdx.resize(size_t(k));
    for (int64_t i = 0; i < k; ++i)
      gIdx[order[i]] = int32_t(i / group);
    options.gIdx = gIdx.data();
  }
  fmt::Unpacked u;
  fmt::TensorMap rowMajor;
  if (!fmt::quantizeRTN(c.encoding, w.data(), n, k, u, error, options) ||
      !fmt::pack(c.encoding, u, n, k, rowMajor, error) ||
      !fmt::dequantize(c.encoding, u, n, k, dense, error))
    return false;
  return fmt::repack(c.encoding, c.layout, rowMajor, n, k, packed, error);
}

/// The weight of `c`, and under silu_mul its up projection (another seed).
bool prepareWeight(Case &c, uint64_t weightSeed, std::string &error) {
  return prepareOneWeight(c, weightSeed, c.dense, c.packed, error) &&
         (!c.siluMul || prepareOneWeight(c, weightSeed ^ 0x5eed, c.upDense,
                                         c.upPacked, error));
}

/// Corrupts a buffer: every third element gets bit 6 of its most
/// significant byte flipped (an exponent bit of a float, a code bit), which
/// no scale-invariant step (RMSNorm) undoes; an i32 `perm` (or silu_mul's
/// `up_perm`) is rotated by one instead, so that it stays a permutation.
void corrupt(Buffer &buf) {
  unsigned eb = elementBytes(buf.type.getElementType());
  size_t count = buf.bytes.size() / eb;
  // Indices stay in range: rotated by one element.
  StringRef name = buf.name;
  name.consume_front("up_");
  if (name == fmt::kPerm || name == fmt::kGIdx) {
    std::rotate(buf.bytes.begin(), buf.bytes.begin() + eb, buf.bytes.end());
    return;
  }
  for (size_t i = 0; i < count; i += 3)
    buf.bytes[i * eb + eb - 1] ^= 0x40;
}

struct Result {
  double maxAbs = 0, maxRef = 0, rel = 0;
  bool unwritten = false;
};

/// Runs one case at batch m; returns false (with `error`) if it could not
/// run, otherwise fills `r`.
bool runCase(ExecutionEngine &engine, Case &c, int64_t m, std::mt19937_64 &rng,
             Result &r, std::string &error) {
  qf::WeightType w = c.weight;
  int64_t nW = w.getN(), k = w.getK();
  int64_t nOut = nW;
  std::vector<float> x, xUp, norm, bias, residual;
  std::vector<Buffer> buffers(c.params.size());
  for (size_t i = 0; i < c.params.size(); ++i) {
    Buffer &buf = buffers[i];
    buf.name = c.params[i];
    buf.type = c.paramTypes[i];
    SmallVector<int64_t> shape = concreteShape(buf.type, m);
    int64_t count = 1;
    for (int64_t d : shape)
      count *= d;
    size_t bytes = size_t(count) * elementBytes(buf.type.getElementType());
    if (buf.name == "x")
      buf.bytes = randomAct(count, c.act, -1.0f, 1.0f, rng, x);
    else if (buf.name == "x_up")
      buf.bytes = randomAct(count, c.act, -1.0f, 1.0f, rng, xUp);
    else if (buf.name == "norm")
      buf.bytes = randomAct(count, c.act, 0.5f, 1.5f, rng, norm);
    else if (buf.name == "bias")
      buf.bytes = randomAct(count, c.act, -0.5f, 0.5f, rng, bias);
    else if (buf.name == "residual")
      buf.bytes = randomAct(count, c.act, -1.0f, 1.0f, rng, residual);
    else if (buf.name == "y")
      buf.bytes.assign(bytes, 0xFF); // f16 and bf16 0xFFFF are NaNs
    else {
      StringRef component = buf.name;
      bool isUp = component.consume_front("up_");
      const fmt::TensorMap &packed = isUp ? c.upPacked : c.packed;
      auto it = packed.find(component.str());
      if (it == packed.end()) {
        error = "the function takes '" + buf.name +
                "', which the packed weight does not have";
        return false;
      }
      buf.bytes = it->second.data;
    }
    if (buf.bytes.size() != bytes) {
      error = llvm::formatv("parameter '{0}' has {1} bytes; the function "
                            "expects {2} ({3} at M = {4})",
                            buf.name, buf.bytes.size(), bytes,
                            buf.type, m)
                  .str();
      return false;
    }
    if (buf.name == perturb)
      corrupt(buf);
    buf.desc.allocated = buf.desc.aligned = buf.bytes.data();
    int64_t stride = 1;
    for (int64_t d = int64_t(shape.size()) - 1; d >= 0; --d) {
      buf.desc.sizesAndStrides[d] = shape[d];
      buf.desc.sizesAndStrides[shape.size() + d] = stride;
      stride *= shape[d];
    }
  }
  SmallVector<void *> descPtrs, args;
  for (Buffer &buf : buffers)
    descPtrs.push_back(&buf.desc);
  for (void *&p : descPtrs)
    args.push_back(&p);
  if (llvm::Error err =
          engine.invokePacked("_mlir_ciface_" + c.function, args)) {
    error = "running " + c.function + ": " + llvm::toString(std::move(err));
    return false;
  }

  // Reference: RMSNorm (or the silu_mul prologue) in double, rounded to
  // the activation type (as a separate qf.rms_norm's or qf.silu_mul's
  // result), the matmul with double accumulation, then bias, silu_mul and
  // residual in double.
  std::vector<float> xs = x;
  if (c.siluMulPrologue)
    for (size_t i = 0; i < xs.size(); ++i) {
      double g = x[i];
      xs[i] = fromAct(toAct(float(g / (1.0 + std::exp(-g)) * xUp[i]), c.act),
                      c.act);
    }
  if (c.hasNorm) {
    for (int64_t mi = 0; mi < m; ++mi) {
      double sum = 0;
      for (int64_t ki = 0; ki < k; ++ki)
        sum += double(x[mi * k + ki]) * x[mi * k + ki];
      double rs = 1.0 / std::sqrt(sum / double(k) + c.normEps);
      for (int64_t ki = 0; ki < k; ++ki)
        xs[mi * k + ki] = fromAct(
            toAct(float(x[mi * k + ki] * rs * norm[ki]), c.act), c.act);
    }
  }
  std::vector<float> acc = fmt::referenceMatmul(xs.data(), c.dense.data(), m,
                                                nW, k);
  std::vector<float> upAcc;
  if (c.siluMul)
    upAcc = fmt::referenceMatmul(xs.data(), c.upDense.data(), m, nW, k);
  std::vector<float> ref(size_t(m * nOut)), y(size_t(m * nOut));
  const std::vector<uint8_t> &yBytes = buffers.back().bytes;
  for (int64_t mi = 0; mi < m; ++mi)
    for (int64_t ni = 0; ni < nOut; ++ni) {
      double v = acc[mi * nW + ni];
      if (c.hasBias)
        v += bias[ni];
      if (c.siluMul) {
        double up = upAcc[mi * nW + ni];
        v = v / (1.0 + std::exp(-v)) * up;
      }
      if (c.hasResidual)
        v += residual[mi * nOut + ni];
      size_t i = size_t(mi * nOut + ni);
      ref[i] = float(v);
      y[i] = fromAct(uint16_t(yBytes[2 * i] | (yBytes[2 * i + 1] << 8)), c.act);
      r.unwritten |= std::isnan(y[i]);
      r.maxAbs = std::max(r.maxAbs, double(std::fabs(y[i] - ref[i])));
      r.maxRef = std::max(r.maxRef, double(std::fabs(ref[i])));
    }
  if (r.unwritten)
    r.maxAbs = INFINITY;
  r.rel = fmt::relativeError(y, ref);
  return true;
}

} // namespace

/// The front of qfuse-compile's pipeline, so each weight gets the layout the
/// GPU kernel reads; then the CPU reference.
static LogicalResult lowerToReference(MLIRContext &context, ModuleOp module,
                                      ArrayRef<int64_t> batches) {
  PassManager pm(&context);
  pm.addPass(qf::createQFImportQuant());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(qf::createQFFuseDequantMatmul());
  if (fuseShared) {
    pm.addPass(qf::createQFFuseGatedMLP());
    pm.addPass(qf::createQFFuseSharedInput());
    pm.addPass(qf::createQFFuseActOrderNorm());
    pm.addPass(qf::createQFFuseActOrderSiluMul());
  }
  qf::QFSelectTilingOptions tiling;
  tiling.batch = tilingBatch > 0
                     ? tilingBatch
                     : *std::max_element(batches.begin(), batches.end());
  pm.addPass(qf::createQFSelectTiling(tiling));
  pm.addPass(qf::createQFChooseLayout());
  pm.addPass(qf::createQFToCPU());
  return pm.run(module);
}

/// The ops, in program order, with everything the check needs; false (with
/// an error on the op) when qf-to-cpu left an op without its reference.
static bool collectCases(ModuleOp module, std::vector<Case> &cases) {
  std::string error;
  ModuleOp cpuModule = module.lookupSymbol<ModuleOp>(qf::kCPUModuleName);
  llvm::StringMap<int> perFunction;
  bool setupFailed = false;
  module.walk([&](qf::FusedMatmulOp op) {
    auto ref = op->getAttrOfType<DictionaryAttr>(qf::kCPUReferenceAttrName);
    if (!ref) {
      op.emitError() << "qfuse-cpu-check: qf-to-cpu left no '"
                     << qf::kCPUReferenceAttrName << "' on this op";
      setupFailed = true;
      return;
    }
    auto parent = op->getParentOfType<func::FuncOp>();
    Case c{op.getLoc()};
    std::string where = parent ? "@" + parent.getSymName().str() : "@module";
    int index = perFunction[where]++;
    c.label = index ? where + "#" + std::to_string(index) : where;
    auto fnRef = ref.getAs<SymbolRefAttr>("function");
    c.function = fnRef.getLeafReference().str();
    for (Attribute p : ref.getAs<ArrayAttr>("params"))
      c.params.push_back(cast<StringAttr>(p).str());
    auto fn = cpuModule.lookupSymbol<func::FuncOp>(c.function);
    for (Type t : fn.getArgumentTypes())
      c.paramTypes.push_back(cast<MemRefType>(t));
    c.weight = op.getWeight().getType();
    c.act = op.getInput().getType().getElementType();
    c.staticM = op.getInput().getType().getDimSize(0);
    c.hasNorm = static_cast<bool>(op.getNorm());
    if (c.hasNorm)
      c.normEps = op.getNormEps()->convertToDouble();
    c.hasBias = static_cast<bool>(op.getBias());
    c.hasResidual = static_cast<bool>(op.getResidual());
    c.siluMul = op.getActivation() == qf::EpilogueActivation::SiluMul;
    c.siluMulPrologue = op.hasSiluMulPrologue();
    if (!fmt::parseEncoding(attrBody(c.weight.getEncoding()), c.encoding,
                            error) ||
        !fmt::parseLayout(attrBody(c.weight.getLayout()), c.layout, error)) {
      op.emitError() << "qfuse-cpu-check: " << error;
      setupFailed = true;
      return;
    }
    cases.push_back(std::move(c));
  });
  return !setupFailed;
}

/// Clones `cpuModule`, lowers the clone to LLVM and compiles it; null (with
/// a message) on failure.
static std::unique_ptr<ExecutionEngine> compileReference(MLIRContext &context,
                                                         ModuleOp cpuModule) {
  OwningOpRef<ModuleOp> jitModule = cast<ModuleOp>(cpuModule->clone());
  if (printIR)
    jitModule->print(llvm::outs());
  PassManager lower(&context);
  qf::buildQFCPUToLLVMPipeline(lower);
  if (failed(lower.run(*jitModule)))
    return nullptr;
  ExecutionEngineOptions engineOptions;
  auto transformer = makeOptimizingTransformer(2, 0, nullptr);
  engineOptions.transformer = transformer;
  auto engine = ExecutionEngine::create(*jitModule, engineOptions);
  if (!engine) {
    llvm::errs() << "qfuse-cpu-check: JIT: "
                 << llvm::toString(engine.takeError()) << "\n";
    return nullptr;
  }
  return std::move(*engine);
}

/// Checks case `c` at each of its batches, printing a line per batch; false
/// (with a message) when a batch cannot run.
static bool checkCase(ExecutionEngine &engine, Case &c,
                      ArrayRef<int64_t> batches, std::mt19937_64 &rng,
                      int &total, int &failedCases) {
  std::string error;
  SmallVector<int64_t> ms;
  if (ShapedType::isDynamic(c.staticM))
    ms.assign(batches.begin(), batches.end());
  else
    ms.push_back(c.staticM);
  for (int64_t m : ms) {
    Result r;
    if (!runCase(engine, c, m, rng, r, error)) {
      llvm::errs() << "qfuse-cpu-check: " << c.label << ": " << error
                   << "\n";
      return false;
    }
    // The output is rounded once to f16 (u = 2^-11) or bf16 (2^-8); f32
    // decoding and accumulation add far less. Pass: rel_err (||y - ref|| /
    // ||ref||) <= 2u and every |y - ref| <= 4u * max|ref|.
    double u = c.act.isBF16() ? 1.0 / 256 : 1.0 / 2048;
    bool pass = !r.unwritten && r.rel <= 2 * u && r.maxAbs <= 4 * u * r.maxRef;
    ++total;
    failedCases += !pass;
    llvm::outs() << llvm::formatv(
        "{0} {1} {2}x{3} #qf.enc<{4}> #qf.layout<{5}> m={6} "
        "max_abs_err={7:e2} rel_err={8:e2}{9}{10}\n",
        pass ? "PASS" : "FAIL", c.label, c.weight.getN(), c.weight.getK(),
        fmt::printEncoding(c.encoding), fmt::printLayout(c.layout), m,
        r.maxAbs, r.rel, r.unwritten ? " (NaN: outputs not written)" : "",
        llvm::is_contained(c.params, perturb.getValue())
            ? " (perturbed " + perturb + ")"
            : std::string());
  }
  return true;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::ParseCommandLineOptions(
      argc, argv,
      "qfuse CPU reference check: runs every fused matmul of a .mlir file "
      "through qf-to-cpu and the MLIR ExecutionEngine, against the C++ "
      "reference\n");
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  auto start = std::chrono::steady_clock::now();

  DialectRegistry registry;
  registry.insert<qf::QFDialect, func::FuncDialect, arith::ArithDialect,
                  scf::SCFDialect, memref::MemRefDialect, math::MathDialect,
                  tensor::TensorDialect, quant::QuantDialect,
                  cf::ControlFlowDialect, LLVM::LLVMDialect>();
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  MLIRContext context(registry);
  context.printOpOnDiagnostic(false);

  std::string error;
  auto input = openInputFile(inputFile, &error);
  if (!input) {
    llvm::errs() << "qfuse-cpu-check: " << error << "\n";
    return 2;
  }
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  SourceMgrDiagnosticHandler diagHandler(sourceMgr, &context);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return 2;

  SmallVector<int64_t> batches(batchSizes.begin(), batchSizes.end());
  if (batches.empty())
    batches.push_back(1);
  for (int64_t b : batches)
    if (b < 1) {
      llvm::errs() << "qfuse-cpu-check: --batch-sizes: batch " << b
                   << " is not positive\n";
      return 2;
    }

  if (failed(lowerToReference(context, *module, batches)))
    return 2;

  std::vector<Case> cases;
  std::vector<qfuse::cpucheck::QuantizeCase> quantizeCases;
  if (!collectCases(*module, cases) ||
      !qfuse::cpucheck::collectQuantizeCases(*module, quantizeCases))
    return 2;
  auto takes = [](const auto &c) {
    return llvm::is_contained(c.params, perturb.getValue());
  };
  if (!perturb.empty() && llvm::none_of(cases, takes) &&
      llvm::none_of(quantizeCases, takes)) {
    llvm::errs() << "qfuse-cpu-check: --perturb=" << perturb
                 << ": no checked function takes a parameter of that name\n";
    return 2;
  }

  std::unique_ptr<ExecutionEngine> engine = compileReference(
      context, module->lookupSymbol<ModuleOp>(qf::kCPUModuleName));
  if (!engine)
    return 2;

  // One op at a time: its weight is quantized, checked at every batch and
  // released before the next.
  int total = 0, failedCases = 0;
  std::mt19937_64 rng(seed);
  for (auto [index, c] : llvm::enumerate(cases)) {
    if (!prepareWeight(c, seed * 1000003 + index, error)) {
      emitError(c.loc) << "qfuse-cpu-check: preparing the weight: " << error;
      return 2;
    }
    if (!checkCase(*engine, c, batches, rng, total, failedCases))
      return 2;
    c.dense = {};
    c.packed = {};
    c.upDense = {};
    c.upPacked = {};
  }
  for (auto [index, c] : llvm::enumerate(quantizeCases))
    if (!qfuse::cpucheck::checkQuantizeCase(*engine, c, seed * 7919 + index,
                                            perturb, total, failedCases))
      return 2;
  double seconds = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - start)
                       .count();
  llvm::outs() << llvm::formatv("qfuse-cpu-check: {0} cases, {1} passed, {2} "
                                "failed ({3:f1} s)\n",
                                total, total - failedCases, failedCases,
                                seconds);
  return failedCases ? 1 : 0;
}
