//===- ArtifactWriter.cpp - write the versioned qfuse artifact --------------===//

#include "ArtifactWriter.h"

#include "ArtifactJson.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "qfuse/Dialect/QF/IR/QFDialect.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Base64.h"

#include <set>

using namespace mlir;
using namespace mlir::qf;
namespace json = llvm::json;

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

// Every string handed to llvm::json below is a std::string: json::Value
// keeps a StringRef by reference, and kernel names are built in locals.


namespace {

/// Collects the artifact's tables while the plan is walked.
class ArtifactBuilder {
public:
  json::Array kernels, weights, tensors, buffers, inputs, outputs;
  std::map<int64_t, json::Array> stepsByBatch;
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
  std::map<std::string, std::pair<json::Array, std::string>> scratchBuffers;

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
    json::Object entry{{"name", it->second}};
    if (!first) {
      entry["source"] = source;
      anyPackedTwice = true;
    }
    entry["shape"] = json::Array{wt.getN(), wt.getK()};
    entry["encoding"] = attrBody(wt.getEncoding());
    entry["layout"] = body;
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
    if (seenTensors.insert(ref.getName().str()).second)
      tensors.push_back(json::Object{
          {"name", ref.getName().str()},
          {"shape", shapeOf(ref.getType())},
          {"dtype", dtypeOf(ref.getType().getElementType())}});
  }
  /// A buffer, or the tensor a qf.tensor_ref names.
  json::Object valueArg(Value v) {
    if (auto ref = v.getDefiningOp<TensorRefOp>()) {
      addTensor(ref);
      return json::Object{{"tensor", ref.getName().str()}};
    }
    return json::Object{{"buffer", bufferNames.nameOf(v)}};
  }
  void addKernel(StringRef name, json::Array params, int64_t shared,
                 int64_t threads) {
    if (seenKernels.insert(name.str()).second)
      kernels.push_back(json::Object{{"name", name.str()},
                                     {"params", std::move(params)},
                                     {"shared_bytes", shared},
                                     {"max_threads", threads}});
  }
  /// One launch step from a `qf.launches` record; `bind` gives each
  /// parameter's argument and type.
  void addLaunch(DictionaryAttr record,
                 function_ref<std::pair<json::Object, std::string>(
                     size_t, StringRef)>
                     bind);
  void addFusedMatmul(FusedMatmulOp fused);
  /// One record of the dequantize + cuBLAS fallback (qf-to-gpu's
  /// lowerFallback, docs/fallback.md); `members` are the fused matmuls its
  /// `member` indexes (the op alone, or its qf.group).
  void addFallbackRecord(FusedMatmulOp fused, ArrayRef<FusedMatmulOp> members,
                         DictionaryAttr record);
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
    DictionaryAttr dict,
    function_ref<std::pair<json::Object, std::string>(size_t, StringRef)>
        bind) {
  auto kernel = cast<SymbolRefAttr>(dict.get("kernel"));
  std::string kernelName = kernel.getLeafReference().str();
  auto params = cast<ArrayAttr>(dict.get("params"));
  auto grid = cast<DenseI64ArrayAttr>(dict.get("grid"));
  auto block = cast<DenseI64ArrayAttr>(dict.get("block"));
  int64_t shared = cast<IntegerAttr>(dict.get("shared_bytes")).getInt();
  int64_t dynamicShared = 0;
  if (auto attr =
          dyn_cast_or_null<IntegerAttr>(dict.get("dynamic_shared_bytes")))
    dynamicShared = attr.getInt();
  int64_t batch = cast<IntegerAttr>(dict.get("batch")).getInt();
  json::Array paramList, args;
  for (auto [i, p] : llvm::enumerate(params.getAsRange<StringAttr>())) {
    auto [arg, type] = bind(i, p.getValue());
    paramList.push_back(
        json::Object{{"name", p.getValue().str()}, {"type", type}});
    args.push_back(std::move(arg));
  }
  addKernel(kernelName, std::move(paramList), shared, block[0]);
  stepsByBatch[batch].push_back(
      json::Object{{"launch", kernelName},
                   {"grid", json::Array{grid[0], grid[1], grid[2]}},
                   {"block", json::Array{block[0], block[1], block[2]}},
                   {"shared_bytes", dynamicShared},
                   {"args", std::move(args)}});
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
  json::Object x = valueArg(fused.getInput());
  json::Object y = valueArg(fused.getResult());
  std::optional<json::Object> residual, bias;
  if (fused.getResidual())
    residual = valueArg(fused.getResidual());
  if (fused.getBias())
    bias = valueArg(fused.getBias());

  if (gemmBatches) {
    // Dense f16 weights: cuBLAS (docs/artifact.md, gemm steps).
    for (int64_t batch : gemmBatches.asArrayRef()) {
      json::Object gemm{{"x", x["buffer"]},
                        {"weight", weightName},
                        {"y", y["buffer"]}};
      if (bias)
        gemm["bias"] = (*bias)["tensor"];
      if (residual)
        gemm["residual"] = (*residual)["buffer"];
      stepsByBatch[batch].push_back(json::Object{{"gemm", std::move(gemm)}});
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
  for (auto dict : launches.getAsRange<DictionaryAttr>()) {
    if (dict.get("step")) {
      addFallbackRecord(fused, members, dict);
      continue;
    }
    // A batch of qf.batch_tilings reads every weight in its own layout: the
    // copy packed in it (qf-to-gpu records the layout on the launch).
    auto layout = dict.getAs<LayoutAttr>("layout");
    std::string launchWeight = layout ? addWeight(ref, layout) : weightName;
    // act_order on the tensor-core kernel reads the permuted activations.
    json::Object input = x;
    if (dict.get("input"))
      input = json::Object{
          {"buffer", permutedInputName(bufferNames.nameOf(fused.getResult()))}};
    addLaunch(dict, [&](size_t, StringRef n) -> std::pair<json::Object,
                                                          std::string> {
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
          return {json::Object{}, "ptr"};
        }
        if (base == "y")
          return {valueArg(member.getResult()), "ptr"};
        if (base == "residual")
          return {valueArg(member.getResidual()), "ptr"};
        if (base == "bias")
          return {valueArg(member.getBias()), "ptr"};
        return {json::Object{{"weight", addWeight(memberRef, layout)},
                             {"component", base.str()}},
                "ptr"};
      }
      if (n == "x")
        return {json::Object(input), "ptr"};
      if (n == "y")
        return {json::Object(y), "ptr"};
      if (n == "residual")
        return {json::Object(*residual), "ptr"};
      if (n == "bias")
        return {json::Object(*bias), "ptr"};
      // RMSNorm prologue: the gamma tensor.
      if (n == "norm")
        return {valueArg(fused.getNorm()), "ptr"};
      // silu_mul: `up_<component>` is a component of the up projection,
      // a separate checkpoint weight.
      if (n.starts_with("up_")) {
        auto upRef = fused.getUp() ? fused.getUp().getDefiningOp<WeightRefOp>()
                                   : WeightRefOp();
        if (!upRef) {
          fused.emitOpError("up weight is not a qf.weight_ref");
          failedAny = true;
          return {json::Object{}, "ptr"};
        }
        return {json::Object{{"weight", addWeight(upRef, layout)},
                             {"component", n.drop_front(3).str()}},
                "ptr"};
      }
      return {json::Object{{"weight", launchWeight}, {"component", n.str()}},
              "ptr"};
    });
  }
}

void ArtifactBuilder::addFallbackRecord(FusedMatmulOp fused,
                                        ArrayRef<FusedMatmulOp> members,
                                        DictionaryAttr record) {
  StringRef step = record.getAs<StringAttr>("step").getValue();
  int64_t index = record.getAs<IntegerAttr>("member").getInt();
  int64_t batch = record.getAs<IntegerAttr>("batch").getInt();
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
  if (step == "gemm") {
    StringRef into = record.getAs<StringAttr>("into").getValue();
    json::Object gemm{{"x", valueArg(member.getInput())["buffer"]},
                      {"weight_buffer", workspaceName(dtype)},
                      {"y", into == "y" ? output : scratch(into)}};
    if (into == "y" && member.getBias())
      gemm["bias"] = valueArg(member.getBias())["tensor"];
    if (into == "y" && member.getResidual())
      gemm["residual"] = valueArg(member.getResidual())["buffer"];
    stepsByBatch[batch].push_back(json::Object{{"gemm", std::move(gemm)}});
    return;
  }
  if (step == "dequantize") {
    WeightRefOp ref = weightOf(record.getAs<StringAttr>("weight").getValue());
    if (!ref) {
      fused.emitOpError("fallback weight is not a qf.weight_ref");
      failedAny = true;
      return;
    }
    std::string weight = addWeight(ref, record.getAs<LayoutAttr>("layout"));
    int64_t &elements = workspaceElements[dtype];
    elements = std::max(elements, ref.getType().getN() * ref.getType().getK());
    addLaunch(record, [&](size_t, StringRef n) -> std::pair<json::Object,
                                                            std::string> {
      if (n == "w")
        return {json::Object{{"buffer", workspaceName(dtype)}}, "ptr"};
      return {json::Object{{"weight", weight}, {"component", n.str()}}, "ptr"};
    });
    stepsByBatch[batch].back().getAsObject()->insert({"op", "qf.dequantize"});
    return;
  }
  // permute, silu_mul and add: launches on the scratch buffers.
  auto args = record.getAs<ArrayAttr>("args");
  addLaunch(record, [&](size_t i, StringRef) -> std::pair<json::Object,
                                                          std::string> {
    auto arg = cast<DictionaryAttr>(args[i]);
    if (auto name = arg.getAs<StringAttr>("scratch"))
      return {json::Object{{"buffer", scratch(name.getValue())}}, "ptr"};
    if (arg.get("output"))
      return {json::Object{{"buffer", output}}, "ptr"};
    if (arg.get("residual"))
      return {valueArg(member.getResidual()), "ptr"};
    if (arg.get("activations"))
      return {valueArg(member.getInput()), "ptr"};
    if (auto component = arg.getAs<StringAttr>("component")) {
      WeightRefOp ref = weightOf("weight");
      if (!ref) {
        fused.emitOpError("permuted weight is not a qf.weight_ref");
        failedAny = true;
        return {json::Object{}, "ptr"};
      }
      return {json::Object{{"weight",
                            addWeight(ref, record.getAs<LayoutAttr>("layout"))},
                           {"component", component.getValue().str()}},
              "ptr"};
    }
    if (auto v = arg.getAs<IntegerAttr>("i32"))
      return {json::Object{{"i32", v.getInt()}}, "i32"};
    fused.emitOpError("unknown fallback argument record");
    failedAny = true;
    return {json::Object{}, "ptr"};
  });
  if (step == "permute") {
    stepsByBatch[batch].back().getAsObject()->insert(
        {"op", "qf.permute_columns"});
    anyLaunchOp = true;
  }
}

void ArtifactBuilder::addDecodeOp(Operation *op, ArrayAttr launches) {
  // A GPTQ block update names its op and grid on every launch: the solver
  // finds its launches and the grid they quantize to there.
  json::Object stepFields;
  if (auto block = dyn_cast<GPTQBlockUpdateOp>(op)) {
    std::string grid;
    llvm::raw_string_ostream os(grid);
    os << Attribute(block.getGrid());
    StringRef body = StringRef(grid);
    body.consume_front("#qf.enc<");
    body.consume_back(">");
    stepFields = json::Object{{"op", op->getName().getStringRef().str()},
                              {"encoding", body.str()}};
    anyLaunchOp = true;
  }
  for (auto dict : launches.getAsRange<DictionaryAttr>()) {
    auto args = dyn_cast_or_null<ArrayAttr>(dict.get("args"));
    auto params = cast<ArrayAttr>(dict.get("params"));
    if (!args || args.size() != params.size()) {
      op->emitOpError("qf.launches record has no args for its parameters");
      failedAny = true;
      return;
    }
    addLaunch(dict, [&](size_t i, StringRef name) -> std::pair<json::Object,
                                                               std::string> {
      auto arg = cast<DictionaryAttr>(args[i]);
      if (auto index = arg.getAs<IntegerAttr>("operand"))
        return {valueArg(op->getOperand(index.getInt())), "ptr"};
      if (auto index = arg.getAs<IntegerAttr>("result"))
        return {valueArg(op->getResult(index.getInt())), "ptr"};
      if (auto v = arg.getAs<IntegerAttr>("i32"))
        return {json::Object{{"i32", v.getInt()}}, "i32"};
      if (auto v = arg.getAs<FloatAttr>("f32"))
        return {json::Object{{"f32", v.getValueAsDouble()}}, "f32"};
      op->emitOpError("unknown argument record for parameter '")
          << name << "'";
      failedAny = true;
      return {json::Object{}, "ptr"};
    });
    int64_t batch = cast<IntegerAttr>(dict.get("batch")).getInt();
    for (const auto &field : stepFields)
      stepsByBatch[batch].back().getAsObject()->insert(
          {field.first, field.second});
  }
}

/// Appends `name` unless `list` has it: the functions of one module (a plan
/// per batch) that read or return the same buffer list it once.
static void appendOnce(json::Array &list, const std::string &name) {
  for (const json::Value &entry : list)
    if (entry.getAsString() == StringRef(name))
      return;
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
    json::Object buffer{{"name", name},
                        {"shape", shapeOf(type)},
                        {"dtype", dtypeOf(type.getElementType())}};
    if (stateBuffers.count(name))
      buffer["state"] = true;
    buffers.push_back(std::move(buffer));
  }
  for (auto &[name, spec] : scratchBuffers)
    buffers.push_back(json::Object{{"name", name},
                                   {"shape", json::Array(spec.first)},
                                   {"dtype", spec.second}});
  for (auto &[dtype, elements] : workspaceElements)
    buffers.push_back(json::Object{{"name", workspaceName(dtype)},
                                   {"shape", json::Array{elements}},
                                   {"dtype", dtype},
                                   {"workspace", true}});
}

} // namespace

FailureOr<json::Value> mlir::qf::buildArtifact(ModuleOp module, StringRef ptx,
                                               const ArtifactOptions &options) {
  ArtifactBuilder builder;
  module.walk([&](func::FuncOp func) {
    if (!func.isExternal())
      builder.addFunction(func);
  });
  if (builder.failedAny)
    return failure();
  builder.addBuffers();

  json::Array plans;
  for (auto &[batch, steps] : builder.stepsByBatch)
    plans.push_back(json::Object{{"batch", batch}, {"steps", std::move(steps)}});

  json::Object module_{{"ptx", ptx.str()}};
  if (!options.cubin.empty())
    module_["cubin_base64"] = llvm::encodeBase64(options.cubin);
  json::Object artifact{
      {"format", "qfuse-artifact"},
      // The oldest version that expresses the file: 5 with the fallback's
      // workspace, 4 where a launch names its op (GPTQ), 3 where a weight is
      // listed in two layouts, else 2.
      {"version", !builder.workspaceElements.empty() ? kArtifactWorkspaceVersion
                  : builder.anyLaunchOp      ? kArtifactLaunchOpVersion
                  : builder.anyPackedTwice   ? kArtifactLayoutsVersion
                                             : kArtifactMinVersion},
      {"producer", options.producer},
      {"target",
       json::Object{{"chip", options.chip}, {"ptx_features", options.features}}},
      {"module", std::move(module_)},
      {"kernels", std::move(builder.kernels)},
      {"weights", std::move(builder.weights)},
      {"tensors", std::move(builder.tensors)},
      {"buffers", std::move(builder.buffers)},
      {"inputs", std::move(builder.inputs)},
      {"outputs", std::move(builder.outputs)},
      {"plans", std::move(plans)}};
  if (auto model = module->getAttrOfType<DictionaryAttr>("qf.model"))
    artifact["model"] = attrToJson(model);
  return json::Value(std::move(artifact));
}
