//===- ArtifactWriter.cpp - write the versioned qfuse artifact --------------===//
//
// Walks each plan function of a compiled module and fills the artifact's
// schema (docs/artifact.md): the decode ops' launches, the buffers, the
// version the file needs. A fused matmul's steps: ArtifactMatmul.cpp.
//
//===----------------------------------------------------------------------===//

#include "ArtifactWriter.h"

#include "ArtifactBuilder.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "qfuse/Dialect/QF/IR/QFDialect.h"
#include "llvm/ADT/StringExtras.h"

#include <set>

using namespace mlir;
using namespace mlir::qf;

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

/// Whether the body of `.entry <name>(` in `ptx` waits for the grids before
/// it (griddepcontrol.wait, qf-to-gpu's grid-dependency).
static bool entryWaitsForPriorGrids(StringRef ptx, StringRef name) {
  size_t start = ptx.find((".entry " + name + "(").str());
  if (start == StringRef::npos)
    return false;
  StringRef body = ptx.drop_front(start + 1);
  return body.take_front(body.find(".entry ")).contains("griddepcontrol.wait");
}

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
  // The rows' min/max of per-channel GPTQ: the solver finds it by its op.
  if (isa<RowMinMaxOp>(op)) {
    stepOp = op->getName().getStringRef().str();
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
      case LaunchArgKind::ReaderComponent: // attention's out_order
        return {readerComponent(op, record.getBatch(),
                                arg.getName().getValue()),
                kPtr};
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
    if (auto quantize = dyn_cast<QuantizeOp>(op)) {
      // Without a launch, qf-to-gpu said why: the host quantizes it.
      if (auto launches = op->getAttrOfType<ArrayAttr>("qf.launches"))
        addQuantizeOp(quantize, launches);
      return;
    }
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
    if (!isa<WeightType>(v.getType())) // a qf.quantize result: no buffer
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
  // The oldest version that expresses the file: 7 with perm-guarded steps
  // (act_order groups), 6 with qf.quantize launches, 5 with the fallback's
  // workspace, 4 where a launch names its op (GPTQ), 3 where a weight is
  // listed in two layouts, else 2.
  artifact.version = builder.anyPermGuard ? qfuse::format::kArtifactPermGuardVersion
                     : builder.anyQuantizeOp ? qfuse::format::kArtifactQuantizeVersion
                     : !builder.workspaceElements.empty()
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
  for (schema::Kernel &kernel : artifact.kernels)
    kernel.gridDependency = entryWaitsForPriorGrids(ptx, kernel.name);
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
