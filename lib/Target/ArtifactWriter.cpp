//===- ArtifactWriter.cpp - write the versioned qfuse artifact --------------===//

#include "ArtifactWriter.h"

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

namespace {

/// The body of an attribute's full form: `#qf.enc<int4, ...>` -> `int4, ...`.
std::string attrBody(Attribute attr) {
  std::string text;
  llvm::raw_string_ostream os(text);
  attr.print(os);
  size_t open = text.find('<');
  if (open == std::string::npos || text.back() != '>')
    return text;
  return text.substr(open + 1, text.size() - open - 2);
}

json::Array shapeOf(RankedTensorType type) {
  json::Array shape;
  for (int64_t d : type.getShape()) {
    if (ShapedType::isDynamic(d))
      shape.push_back("M");
    else
      shape.push_back(d);
  }
  return shape;
}

std::string dtypeOf(Type t) {
  if (t.isF16())
    return "f16";
  if (t.isBF16())
    return "bf16";
  if (t.isF32())
    return "f32";
  if (t.isInteger(32))
    return "i32";
  return "unknown";
}

/// Names every activation the plan touches: function arguments by their
/// `qf.name` argument attribute (else `<function>.input<i>`), fused results
/// by `<weight>.out`.
class BufferNames {
public:
  std::string nameOf(Value v) {
    auto it = names.find(v.getAsOpaquePointer());
    if (it != names.end())
      return it->second;
    std::string name;
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      auto func = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
      StringAttr given =
          func ? func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "qf.name")
               : StringAttr();
      // Unnamed arguments are named after their function, so that modules
      // with several functions keep distinct buffers.
      name = given ? given.str()
                   : (func ? func.getSymName().str() + "." : std::string()) +
                         "input" + std::to_string(arg.getArgNumber());
    } else if (auto fused = v.getDefiningOp<FusedMatmulOp>()) {
      auto ref = fused.getWeight().getDefiningOp<WeightRefOp>();
      name = (ref ? ref.getName().str() : "matmul") + ".out";
    } else {
      name = "value" + std::to_string(names.size());
    }
    names[v.getAsOpaquePointer()] = name;
    order.push_back(v);
    return name;
  }
  ArrayRef<Value> values() const { return order; }

private:
  std::map<const void *, std::string> names;
  SmallVector<Value> order;
};

} // namespace

FailureOr<json::Value> mlir::qf::buildArtifact(ModuleOp module, StringRef ptx,
                                               const ArtifactOptions &options) {
  json::Array kernels, weights, tensors, buffers, inputs, outputs;
  std::map<int64_t, json::Array> stepsByBatch;
  std::set<std::string> seenKernels, seenWeights;
  BufferNames bufferNames;
  bool failedAny = false;

  module.walk([&](func::FuncOp func) {
    if (func.isExternal())
      return;
    for (BlockArgument arg : func.getArguments())
      inputs.push_back(bufferNames.nameOf(arg));
    func.walk([&](Operation *op) {
      if (isa<WeightRefOp, TensorRefOp, func::ReturnOp>(op))
        return;
      auto fused = dyn_cast<FusedMatmulOp>(op);
      if (!fused) {
        if (op->getDialect() && op->getDialect()->getNamespace() == "qf") {
          op->emitOpError("has no GPU lowering yet; qfuse-compile lowers "
                          "qf.fused_matmul (run the fusion passes)");
          failedAny = true;
        }
        return;
      }
      auto launches = fused->getAttrOfType<ArrayAttr>("qf.launches");
      auto ref = fused.getWeight().getDefiningOp<WeightRefOp>();
      if (!launches || !ref) {
        fused.emitOpError(!ref ? "weight is not a qf.weight_ref"
                               : "has no qf.launches: run qf-to-gpu");
        failedAny = true;
        return;
      }
      std::string weightName = ref.getName().str();
      WeightType wt = ref.getType();
      if (seenWeights.insert(weightName).second)
        weights.push_back(json::Object{
            {"name", weightName},
            {"shape", json::Array{wt.getN(), wt.getK()}},
            {"encoding", attrBody(wt.getEncoding())},
            {"layout", attrBody(wt.getLayout())}});
      std::string xName = bufferNames.nameOf(fused.getInput());
      std::string yName = bufferNames.nameOf(fused.getResult());
      std::string residualName =
          fused.getResidual() ? bufferNames.nameOf(fused.getResidual()) : "";
      std::string biasName;
      if (fused.getBias()) {
        auto biasRef = fused.getBias().getDefiningOp<TensorRefOp>();
        if (!biasRef) {
          fused.emitOpError("bias must come from a qf.tensor_ref");
          failedAny = true;
          return;
        }
        biasName = biasRef.getName().str();
        tensors.push_back(json::Object{
            {"name", biasName},
            {"shape", shapeOf(biasRef.getType())},
            {"dtype", dtypeOf(biasRef.getType().getElementType())}});
      }
      for (auto dict : launches.getAsRange<DictionaryAttr>()) {
        auto kernel = cast<SymbolRefAttr>(dict.get("kernel"));
        std::string kernelName = kernel.getLeafReference().str();
        auto params = cast<ArrayAttr>(dict.get("params"));
        auto grid = cast<DenseI64ArrayAttr>(dict.get("grid"));
        auto block = cast<DenseI64ArrayAttr>(dict.get("block"));
        int64_t shared = cast<IntegerAttr>(dict.get("shared_bytes")).getInt();
        int64_t dynamicShared = 0;
        if (auto attr = dyn_cast_or_null<IntegerAttr>(
                dict.get("dynamic_shared_bytes")))
          dynamicShared = attr.getInt();
        int64_t batch = cast<IntegerAttr>(dict.get("batch")).getInt();
        json::Array paramList, args;
        for (auto p : params.getAsRange<StringAttr>()) {
          StringRef n = p.getValue();
          paramList.push_back(json::Object{{"name", n}, {"type", "ptr"}});
          if (n == "x")
            args.push_back(json::Object{{"buffer", xName}});
          else if (n == "y")
            args.push_back(json::Object{{"buffer", yName}});
          else if (n == "residual")
            args.push_back(json::Object{{"buffer", residualName}});
          else if (n == "bias")
            args.push_back(json::Object{{"tensor", biasName}});
          else
            args.push_back(
                json::Object{{"weight", weightName}, {"component", n}});
        }
        if (seenKernels.insert(kernelName).second)
          kernels.push_back(json::Object{{"name", kernelName},
                                         {"params", std::move(paramList)},
                                         {"shared_bytes", shared},
                                         {"max_threads", block[0]}});
        stepsByBatch[batch].push_back(json::Object{
            {"launch", kernelName},
            {"grid", json::Array{grid[0], grid[1], grid[2]}},
            {"block", json::Array{block[0], block[1], block[2]}},
            {"shared_bytes", dynamicShared},
            {"args", std::move(args)}});
      }
    });
    for (Value v : func.front().getTerminator()->getOperands())
      outputs.push_back(bufferNames.nameOf(v));
  });
  if (failedAny)
    return failure();

  for (Value v : bufferNames.values()) {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!type)
      continue;
    buffers.push_back(json::Object{{"name", bufferNames.nameOf(v)},
                                   {"shape", shapeOf(type)},
                                   {"dtype", dtypeOf(type.getElementType())}});
  }
  json::Array plans;
  for (auto &[batch, steps] : stepsByBatch)
    plans.push_back(json::Object{{"batch", batch}, {"steps", std::move(steps)}});

  json::Object module_{{"ptx", ptx.str()}};
  if (!options.cubin.empty())
    module_["cubin_base64"] = llvm::encodeBase64(options.cubin);
  return json::Value(json::Object{
      {"format", "qfuse-artifact"},
      {"version", kArtifactVersion},
      {"producer", options.producer},
      {"target",
       json::Object{{"chip", options.chip}, {"ptx_features", options.features}}},
      {"module", std::move(module_)},
      {"kernels", std::move(kernels)},
      {"weights", std::move(weights)},
      {"tensors", std::move(tensors)},
      {"buffers", std::move(buffers)},
      {"inputs", std::move(inputs)},
      {"outputs", std::move(outputs)},
      {"plans", std::move(plans)}});
}
