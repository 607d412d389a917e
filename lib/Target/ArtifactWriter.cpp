//===- ArtifactWriter.cpp - write the versioned qfuse artifact --------------===//

#include "ArtifactWriter.h"

#include "ArtifactVocabulary.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "qfuse/Dialect/QF/IR/QFDialect.h"
#include "llvm/ADT/StringExtras.h"

#include <set>

using namespace mlir;
using namespace mlir::qf;
namespace schema = qfuse::format::artifact;

FailureOr<std::string> mlir::qf::extractKernelPTX(ModuleOp module) {
  auto binary = module.lookupSymbol<gpu::BinaryOp>("qf_kernels");
  if (!binary)
    return module.emitError("no gpu.binary @qf_kernels: run qf-to-gpu and "
                            "gpu-module-to-binary{format=isa} first"),
           failure();
  for (Attribute attr : binary.getObjects()) {
    auto object = dyn_cast<gpu::ObjectAttr>(attr);
    if (object && object.getFormat() == gpu::CompilationTarget::Assembly)
      return object.getObject().getValue().str();
  }
  return binary.emitError("gpu.binary @qf_kernels holds no PTX object"),
         failure();
}

using namespace mlir::qf::artifact;

namespace {

constexpr schema::ParamType kPtr = schema::ParamType::Ptr;

/// A launch argument and the type of the kernel parameter it binds.
using BoundArg = std::pair<schema::Arg, schema::ParamType>;

/// Collects the artifact's tables while the plan is walked.
class ArtifactBuilder {
public:
  std::vector<schema::Kernel> kernels;
  std::vector<schema::Weight> weights;
  std::vector<schema::Tensor> tensors;
  std::vector<schema::Buffer> buffers;
  std::vector<std::string> inputs, outputs;
  std::map<int64_t, std::vector<schema::Step>> stepsByBatch;
  BufferNames bufferNames;
  /// Buffers the kernels keep across runs (KV caches).
  std::set<std::string> stateBuffers;
  bool failedAny = false;

  void addFunction(func::FuncOp func);
  void addBuffers();

  /// True once a checkpoint tensor is listed in two layouts: the artifact
  /// then needs version 3 ("source").
  bool anyPackedTwice = false;
  /// A launch step names the op it runs (version 4).
  bool anyLaunchOp = false;
  /// The fallback's workspaces (version 5): the most elements a dequantize
  /// writes, by dtype ("f16", "bf16"); one buffer each, shared by every
  /// fallback step of every plan.
  std::map<std::string, int64_t> workspaceElements;
  /// The fallback's scratch activations: name -> (shape, dtype).
  std::map<std::string, std::pair<std::vector<schema::Dim>, std::string>>
      scratchBuffers;

private:
  std::set<std::string> seenKernels, seenTensors;
  /// (checkpoint tensor, layout body) -> the `weights` entry packed so.
  std::map<std::pair<std::string, std::string>, std::string> weightEntries;
  std::set<std::string> weightSources;

  /// The `weights` entry of `ref`'s checkpoint tensor in `layout` (default:
  /// the type's), added on first use; returns its name. The first layout of
  /// a checkpoint tensor keeps the tensor's name; each further layout is an
  /// entry `<tensor>@<layout>` with "source": <tensor> (docs/artifact.md):
  ///
  ///   {"name": "w", ..., "layout": "tiled, tile_n = 1, tile_k = 32"},
  ///   {"name": "w@tiled_n32_k32", "source": "w", ...,
  ///    "layout": "tiled, tile_n = 32, tile_k = 32"}
  std::string addWeight(WeightRefOp ref, LayoutAttr layout = {}) {
    WeightType wt = ref.getType();
    if (!layout)
      layout = wt.getLayout();
    std::string source = ref.getName().str();
    std::string body = attrBody(layout);
    auto [it, inserted] = weightEntries.try_emplace({source, body});
    if (!inserted)
      return it->second;
    bool first = weightSources.insert(source).second;
    it->second = first ? source : source + "@" + layoutTag(layout);
    schema::Weight entry;
    entry.name = it->second;
    if (!first) {
      entry.source = source;
      anyPackedTwice = true;
    }
    entry.n = wt.getN();
    entry.k = wt.getK();
    entry.encoding = attrBody(wt.getEncoding());
    entry.layout = body;
    weights.push_back(std::move(entry));
    return it->second;
  }
  /// A short name for a layout: `row_major`, `tiled_n32_k32`.
  static std::string layoutTag(LayoutAttr layout) {
    if (layout.isRowMajor())
      return "row_major";
    std::string tag = "tiled_n" + std::to_string(layout.getTileN()) + "_k" +
                      std::to_string(layout.getTileK());
    if (layout.getInterleave() != 1)
      tag += "_i" + std::to_string(layout.getInterleave());
    return tag;
  }
  void addTensor(TensorRefOp ref) {
    if (!seenTensors.insert(ref.getName().str()).second)
      return;
    schema::Tensor tensor;
    tensor.name = ref.getName().str();
    llvm::append_range(tensor.shape, ref.getType().getShape());
    tensor.dtype = dtypeOf(ref.getType().getElementType());
    tensors.push_back(std::move(tensor));
  }
  /// A buffer, or the tensor a qf.tensor_ref names.
  schema::Arg valueArg(Value v) {
    if (auto ref = v.getDefiningOp<TensorRefOp>()) {
      addTensor(ref);
      schema::Arg arg;
      arg.kind = schema::Arg::Kind::Tensor;
      arg.name = ref.getName().str();
      return arg;
    }
    return bufferArg(bufferNames.nameOf(v));
  }
  void addKernel(StringRef name, std::vector<schema::KernelParam> params,
                 int64_t shared, int64_t threads) {
    if (!seenKernels.insert(name.str()).second)
      return;
    schema::Kernel kernel;
    kernel.name = name.str();
    kernel.params = std::move(params);
    kernel.sharedBytes = shared;
    kernel.maxThreads = threads;
    kernels.push_back(std::move(kernel));
  }
  /// One launch step from a `qf.launches` record; `bind` gives each
  /// parameter's argument and type.
  void addLaunch(LaunchAttr record,
                 function_ref<BoundArg(size_t, StringRef)> bind);
  void addFusedMatmul(FusedMatmulOp fused);
  /// One record of the dequantize + cuBLAS fallback (qf-to-gpu's
  /// lowerFallback, docs/fallback.md): a #qf.fallback_gemm, or a #qf.launch
  /// with a `step`; `members` are the fused matmuls its `member` indexes
  /// (the op alone, or its qf.group).
  void addFallbackRecord(FusedMatmulOp fused, ArrayRef<FusedMatmulOp> members,
                         Attribute record);
  void addDecodeOp(Operation *op, ArrayAttr launches);
  static std::string workspaceName(StringRef dtype) {
    return "qf.workspace." + dtype.str();
  }
  /// The scratch buffer of the activations permuted for the act_order
  /// weight of the matmul whose output is `output`.
  static std::string permutedInputName(StringRef output) {
    return output.str() + ".permuted_input";
  }
};

void ArtifactBuilder::addLaunch(
    LaunchAttr record, function_ref<BoundArg(size_t, StringRef)> bind) {
  std::string kernelName = record.getKernelName().str();
  ArrayRef<int64_t> grid = record.getGrid().asArrayRef();
  ArrayRef<int64_t> block = record.getBlock().asArrayRef();
  std::vector<schema::KernelParam> paramList;
  schema::Step step;
  for (auto [i, p] :
       llvm::enumerate(record.getParams().getAsRange<StringAttr>())) {
    auto [arg, type] = bind(i, p.getValue());
    paramList.push_back({p.getValue().str(), type});
    step.args.push_back(std::move(arg));
  }
  addKernel(kernelName, std::move(paramList), record.getSharedBytes(),
            block[0]);
  step.kind = schema::Step::Kind::Launch;
  step.target = kernelName;
  step.grid = {grid[0], grid[1], grid[2]};
  step.block = {block[0], block[1], block[2]};
  step.sharedBytes = record.getDynamicSharedBytes();
  stepsByBatch[record.getBatch()].push_back(std::move(step));
}

void ArtifactBuilder::addFusedMatmul(FusedMatmulOp fused) {
  auto ref = fused.getWeight().getDefiningOp<WeightRefOp>();
  auto launches = fused->getAttrOfType<ArrayAttr>("qf.launches");
  auto gemmBatches = fused->getAttrOfType<DenseI64ArrayAttr>("qf.gemm_batches");
  if (!ref || (!launches && !gemmBatches)) {
    fused.emitOpError(!ref ? "weight is not a qf.weight_ref"
                           : "has no qf.launches: run qf-to-gpu");
    failedAny = true;
    return;
  }
  if (fused.getBias() && !fused.getBias().getDefiningOp<TensorRefOp>()) {
    fused.emitOpError("bias must come from a qf.tensor_ref");
    failedAny = true;
    return;
  }
  std::string weightName = addWeight(ref);
  schema::Arg x = valueArg(fused.getInput());
  schema::Arg y = valueArg(fused.getResult());
  std::optional<schema::Arg> residual, bias;
  if (fused.getResidual())
    residual = valueArg(fused.getResidual());
  if (fused.getBias())
    bias = valueArg(fused.getBias());

  if (gemmBatches) {
    // Dense f16 weights: cuBLAS (docs/artifact.md, gemm steps).
    for (int64_t batch : gemmBatches.asArrayRef()) {
      schema::Step step;
      step.kind = schema::Step::Kind::Gemm;
      step.gemm.x = x.name;
      step.gemm.weight = weightName;
      step.gemm.y = y.name;
      if (bias)
        step.gemm.bias = bias->name;
      if (residual)
        step.gemm.residual = residual->name;
      stepsByBatch[batch].push_back(std::move(step));
    }
    return;
  }
  SmallVector<FusedMatmulOp> members = {fused};
  if (auto group = fused->getAttr("qf.group")) {
    members.clear();
    for (auto other : fused->getBlock()->getOps<FusedMatmulOp>())
      if (other->getAttr("qf.group") == group)
        members.push_back(other);
  }
  for (Attribute entry : launches) {
    auto record = dyn_cast<LaunchAttr>(entry);
    if (!record || record.getStep()) {
      addFallbackRecord(fused, members, entry);
      continue;
    }
    // A batch of qf.batch_tilings reads every weight in its own layout: the
    // copy packed in it (qf-to-gpu records the layout on the launch).
    LayoutAttr layout = record.getLayout();
    std::string launchWeight = layout ? addWeight(ref, layout) : weightName;
    // act_order on the tensor-core kernel reads the permuted activations.
    schema::Arg input = x;
    if (record.getInput())
      input =
          bufferArg(permutedInputName(bufferNames.nameOf(fused.getResult())));
    addLaunch(record, [&](size_t, StringRef n) -> BoundArg {
      // qf.group (qf-fuse-shared-input): `<name>.<i>` is member i's (the
      // i-th fused matmul of the group in the block) output, epilogue
      // operand or weight component.
      size_t dot = n.rfind('.');
      unsigned index = 0;
      if (dot != StringRef::npos &&
          !n.drop_front(dot + 1).getAsInteger(10, index)) {
        StringRef base = n.take_front(dot);
        auto group = fused->getAttr("qf.group");
        FusedMatmulOp member;
        unsigned seen = 0;
        if (group)
          for (auto other : fused->getBlock()->getOps<FusedMatmulOp>())
            if (other->getAttr("qf.group") == group && seen++ == index)
              member = other;
        auto memberRef =
            member ? member.getWeight().getDefiningOp<WeightRefOp>()
                   : WeightRefOp();
        if (!memberRef) {
          fused.emitOpError() << "kernel parameter '" << n
                              << "' names no qf.group member with a "
                                 "qf.weight_ref";
          failedAny = true;
          return {schema::Arg(), kPtr};
        }
        if (base == "y")
          return {valueArg(member.getResult()), kPtr};
        if (base == "residual")
          return {valueArg(member.getResidual()), kPtr};
        if (base == "bias")
          return {valueArg(member.getBias()), kPtr};
        return {weightArg(addWeight(memberRef, layout), base.str()), kPtr};
      }
      if (n == "x")
        return {input, kPtr};
      if (n == "y")
        return {y, kPtr};
      if (n == "residual")
        return {*residual, kPtr};
      if (n == "bias")
        return {*bias, kPtr};
      // RMSNorm prologue: the gamma tensor.
      if (n == "norm")
        return {valueArg(fused.getNorm()), kPtr};
      // silu_mul: `up_<component>` is a component of the up projection,
      // a separate checkpoint weight.
      if (n.starts_with("up_")) {
        auto upRef = fused.getUp() ? fused.getUp().getDefiningOp<WeightRefOp>()
                                   : WeightRefOp();
        if (!upRef) {
          fused.emitOpError("up weight is not a qf.weight_ref");
          failedAny = true;
          return {schema::Arg(), kPtr};
        }
        return {weightArg(addWeight(upRef, layout), n.drop_front(3).str()),
                kPtr};
      }
      return {weightArg(launchWeight, n.str()), kPtr};
    });
  }
}

void ArtifactBuilder::addFallbackRecord(FusedMatmulOp fused,
                                        ArrayRef<FusedMatmulOp> members,
                                        Attribute record) {
  auto gemmRecord = dyn_cast<FallbackGemmAttr>(record);
  auto launch = dyn_cast<LaunchAttr>(record);
  StringRef step = gemmRecord ? "gemm" : launch.getStep().getValue();
  int64_t index = gemmRecord ? gemmRecord.getMember() : *launch.getMember();
  int64_t batch = gemmRecord ? gemmRecord.getBatch() : launch.getBatch();
  if (index < 0 || index >= static_cast<int64_t>(members.size())) {
    fused.emitOpError() << "fallback record names member " << index
                        << " of a qf.group of " << members.size();
    failedAny = true;
    return;
  }
  FusedMatmulOp member = members[index];
  auto type = member.getResult().getType();
  std::string dtype = dtypeOf(type.getElementType());
  std::string output = bufferNames.nameOf(member.getResult());
  // Scratch activations: the fallback's [M, N] gate, up and act, and the
  // [M, K] activations permuted for an act_order weight.
  auto scratch = [&](StringRef what) {
    bool input = what == "permuted";
    std::string name = input ? permutedInputName(output)
                             : output + ".fallback_" + what.str();
    scratchBuffers.try_emplace(
        name, shapeOf(input ? member.getInput().getType() : type), dtype);
    return name;
  };
  auto weightOf = [&](StringRef which) -> WeightRefOp {
    Value v = which == "up" ? member.getUp() : member.getWeight();
    return v ? v.getDefiningOp<WeightRefOp>() : WeightRefOp();
  };
  if (gemmRecord) {
    StringRef into = gemmRecord.getInto().getValue();
    schema::Step gemm;
    gemm.kind = schema::Step::Kind::Gemm;
    gemm.gemm.x = valueArg(member.getInput()).name;
    gemm.gemm.weightBuffer = workspaceName(dtype);
    gemm.gemm.y = into == "y" ? output : scratch(into);
    if (into == "y" && member.getBias())
      gemm.gemm.bias = valueArg(member.getBias()).name;
    if (into == "y" && member.getResidual())
      gemm.gemm.residual = valueArg(member.getResidual()).name;
    stepsByBatch[batch].push_back(std::move(gemm));
    return;
  }
  if (step == "dequantize") {
    WeightRefOp ref = weightOf(launch.getWeight().getValue());
    if (!ref) {
      fused.emitOpError("fallback weight is not a qf.weight_ref");
      failedAny = true;
      return;
    }
    std::string weight = addWeight(ref, launch.getLayout());
    int64_t &elements = workspaceElements[dtype];
    elements = std::max(elements, ref.getType().getN() * ref.getType().getK());
    addLaunch(launch, [&](size_t, StringRef n) -> BoundArg {
      if (n == "w")
        return {bufferArg(workspaceName(dtype)), kPtr};
      return {weightArg(weight, n.str()), kPtr};
    });
    stepsByBatch[batch].back().op = "qf.dequantize";
    return;
  }
  // permute, silu_mul and add: launches on the scratch buffers.
  ArrayAttr args = launch.getArgs();
  if (!args) {
    fused.emitOpError() << "fallback " << step
                        << " launch has no args for its parameters";
    failedAny = true;
    return;
  }
  addLaunch(launch, [&](size_t i, StringRef) -> BoundArg {
    auto arg = cast<LaunchArgAttr>(args[i]);
    switch (arg.getKind()) {
    case LaunchArgKind::Scratch:
      return {bufferArg(scratch(arg.getName().getValue())), kPtr};
    case LaunchArgKind::Output:
      return {bufferArg(output), kPtr};
    case LaunchArgKind::Residual:
      return {valueArg(member.getResidual()), kPtr};
    case LaunchArgKind::Activations:
      return {valueArg(member.getInput()), kPtr};
    case LaunchArgKind::Component: {
      WeightRefOp ref = weightOf("weight");
      if (!ref) {
        fused.emitOpError("permuted weight is not a qf.weight_ref");
        failedAny = true;
        return {schema::Arg(), kPtr};
      }
      return {weightArg(addWeight(ref, launch.getLayout()),
                        arg.getName().getValue().str()),
              kPtr};
    }
    case LaunchArgKind::I32:
      return {immediateArg(schema::Arg::Kind::I32, *arg.getInteger()),
              schema::ParamType::I32};
    case LaunchArgKind::Operand:
    case LaunchArgKind::Result:
    case LaunchArgKind::F32:
      break;
    }
    fused.emitOpError() << "a fallback launch cannot bind " << arg;
    failedAny = true;
    return {schema::Arg(), kPtr};
  });
  if (step == "permute") {
    stepsByBatch[batch].back().op = "qf.permute_columns";
    anyLaunchOp = true;
  }
}

void ArtifactBuilder::addDecodeOp(Operation *op, ArrayAttr launches) {
  // A GPTQ block update names its op and grid on every launch: the solver
  // finds its launches and the grid they quantize to there.
  std::string stepOp, stepEncoding;
  if (auto block = dyn_cast<GPTQBlockUpdateOp>(op)) {
    std::string grid;
    llvm::raw_string_ostream os(grid);
    os << Attribute(block.getGrid());
    StringRef body = StringRef(grid);
    body.consume_front("#qf.enc<");
    body.consume_back(">");
    stepOp = op->getName().getStringRef().str();
    stepEncoding = body.str();
    anyLaunchOp = true;
  }
  for (Attribute entry : launches) {
    auto record = dyn_cast<LaunchAttr>(entry);
    ArrayAttr args = record ? record.getArgs() : ArrayAttr();
    if (!args) {
      op->emitOpError("qf.launches record has no args for its parameters");
      failedAny = true;
      return;
    }
    addLaunch(record, [&](size_t i, StringRef name) -> BoundArg {
      auto arg = cast<LaunchArgAttr>(args[i]);
      switch (arg.getKind()) {
      case LaunchArgKind::Operand:
        return {valueArg(op->getOperand(*arg.getInteger())), kPtr};
      case LaunchArgKind::Result:
        return {valueArg(op->getResult(*arg.getInteger())), kPtr};
      case LaunchArgKind::I32:
        return {immediateArg(schema::Arg::Kind::I32, *arg.getInteger()),
                schema::ParamType::I32};
      case LaunchArgKind::F32: {
        schema::Arg f32;
        f32.kind = schema::Arg::Kind::F32;
        f32.floatValue =
            static_cast<float>(arg.getReal().getValueAsDouble());
        return {f32, schema::ParamType::F32};
      }
      case LaunchArgKind::Activations:
      case LaunchArgKind::Component:
      case LaunchArgKind::Scratch:
      case LaunchArgKind::Output:
      case LaunchArgKind::Residual:
        break;
      }
      op->emitOpError() << "parameter '" << name << "' of a decode op "
                        << "cannot be bound to " << arg;
      failedAny = true;
      return {schema::Arg(), kPtr};
    });
    int64_t batch = record.getBatch();
    stepsByBatch[batch].back().op = stepOp;
    stepsByBatch[batch].back().encoding = stepEncoding;
  }
}

/// Appends `name` unless `list` has it: the functions of one module (a plan
/// per batch) that read or return the same buffer list it once.
static void appendOnce(std::vector<std::string> &list,
                       const std::string &name) {
  if (!llvm::is_contained(list, name))
    list.push_back(name);
}

void ArtifactBuilder::addFunction(func::FuncOp func) {
  for (BlockArgument arg : func.getArguments())
    appendOnce(inputs, bufferNames.nameOf(arg));
  Operation *terminator = func.front().getTerminator();
  for (auto [i, v] : llvm::enumerate(terminator->getOperands()))
    if (auto given = func.getResultAttrOfType<StringAttr>(i, "qf.name"))
      bufferNames.preassign(v, given.getValue());

  func.walk([&](Operation *op) {
    if (isa<WeightRefOp, TensorRefOp, func::ReturnOp>(op))
      return;
    if (auto fused = dyn_cast<FusedMatmulOp>(op))
      return addFusedMatmul(fused);
    if (auto attention = dyn_cast<AttentionOp>(op)) {
      stateBuffers.insert(bufferNames.nameOf(attention.getKeyCache()));
      stateBuffers.insert(bufferNames.nameOf(attention.getValueCache()));
    }
    auto launches = op->getAttrOfType<ArrayAttr>("qf.launches");
    if (launches)
      return addDecodeOp(op, launches);
    if (op->getDialect() && op->getDialect()->getNamespace() == "qf") {
      op->emitOpError("has no GPU lowering (no qf.launches): run qf-to-gpu "
                      "and the fusion passes first");
      failedAny = true;
    }
  });
  for (Value v : terminator->getOperands())
    appendOnce(outputs, bufferNames.nameOf(v));
}

void ArtifactBuilder::addBuffers() {
  std::set<std::string> seen;
  for (Value v : bufferNames.values()) {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    std::string name = bufferNames.nameOf(v);
    if (!type || !seen.insert(name).second)
      continue;
    schema::Buffer buffer;
    buffer.name = name;
    buffer.shape = shapeOf(type);
    buffer.dtype = dtypeOf(type.getElementType());
    buffer.state = stateBuffers.count(name) != 0;
    buffers.push_back(std::move(buffer));
  }
  for (auto &[name, spec] : scratchBuffers) {
    schema::Buffer buffer;
    buffer.name = name;
    buffer.shape = spec.first;
    buffer.dtype = spec.second;
    buffers.push_back(std::move(buffer));
  }
  for (auto &[dtype, elements] : workspaceElements) {
    schema::Buffer buffer;
    buffer.name = workspaceName(dtype);
    buffer.shape = {schema::Dim{elements, false}};
    buffer.dtype = dtype;
    buffer.workspace = true;
    buffers.push_back(std::move(buffer));
  }
}

} // namespace

FailureOr<schema::Artifact>
mlir::qf::buildArtifact(ModuleOp module, StringRef ptx,
                        const ArtifactOptions &options) {
  ArtifactBuilder builder;
  module.walk([&](func::FuncOp func) {
    if (!func.isExternal())
      builder.addFunction(func);
  });
  if (builder.failedAny)
    return failure();
  builder.addBuffers();

  schema::Artifact artifact;
  // The oldest version that expresses the file: 5 with the fallback's
  // workspace, 4 where a launch names its op (GPTQ), 3 where a weight is
  // listed in two layouts, else 2.
  artifact.version = !builder.workspaceElements.empty()
                         ? kArtifactWorkspaceVersion
                     : builder.anyLaunchOp    ? kArtifactLaunchOpVersion
                     : builder.anyPackedTwice ? kArtifactLayoutsVersion
                                              : kArtifactMinVersion;
  artifact.producer = options.producer;
  artifact.chip = options.chip;
  artifact.ptxFeatures = options.features;
  artifact.modulePtx = ptx.str();
  artifact.moduleCubin.assign(options.cubin.begin(), options.cubin.end());
  artifact.kernels = std::move(builder.kernels);
  artifact.weights = std::move(builder.weights);
  artifact.tensors = std::move(builder.tensors);
  artifact.buffers = std::move(builder.buffers);
  artifact.inputs = std::move(builder.inputs);
  artifact.outputs = std::move(builder.outputs);
  for (auto &[batch, steps] : builder.stepsByBatch)
    artifact.plans.push_back({batch, std::move(steps)});
  if (auto model = module->getAttrOfType<DictionaryAttr>("qf.model")) {
    artifact.model.present = true;
    artifact.model.json = modelJson(model);
  }
  return artifact;
}
