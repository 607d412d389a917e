//===- ArtifactQuantize.cpp - qf.quantize launches in the artifact
//---------===//
//
// A qf.quantize launch step (version 6) says what it computes, so that the
// runtime's DeviceQuantizer can find the kernel for an (encoding, K, input
// dtype) and launch it on any number of rows (one block per row):
//
//   {"launch": "qf_quantize_0_k4096_f16", "op": "qf.quantize",
//    "encoding": "int4, group = 128, scale = f16", "grid": [N, 1, 1],
//    "args": [w: the input buffer [N, K], amax (NVFP4): "qf_quantize_amax",
//             codes/scales/zeros/global_scale/g_idx/meta: scratch buffers
//             "<kernel>.<component>", status: "qf_quantize_status"]}
//
//===----------------------------------------------------------------------===//

#include "ArtifactBuilder.h"
#include "ArtifactVocabulary.h"

#include "qfuse/Conversion/WeightQuantizer.h"
#include "qfuse/Dialect/QF/IR/FormatBridge.h"

using namespace mlir;
using namespace mlir::qf;
using namespace mlir::qf::artifact;
namespace schema = qfuse::format::artifact;

void ArtifactBuilder::addQuantizeOp(QuantizeOp op, ArrayAttr launches) {
  WeightType weight = op.getResult().getType();
  std::string text;
  llvm::raw_string_ostream os(text);
  os << Attribute(weight.getEncoding());
  StringRef body = StringRef(text);
  body.consume_front("#qf.enc<");
  body.consume_back(">");
  llvm::StringMap<MemRefType> components;
  for (auto &[name, type] : quantizeComponentTypes(
           op.getContext(), toFormatEncoding(weight.getEncoding()),
           weight.getN(), weight.getK()))
    components[name] = type;
  auto scratchOf = [&](const std::string &name, ArrayRef<int64_t> shape,
                       Type element) {
    std::vector<schema::Dim> dims;
    for (int64_t d : shape)
      dims.push_back({d, false});
    scratchBuffers[name] = {dims, dtypeOf(element)};
    // What the plan computes: the quantize artifact's outputs.
    if (!llvm::is_contained(outputs, name))
      outputs.push_back(name);
    return bufferArg(name);
  };
  // Components are the first launch's (qf.quantize's) outputs; a later
  // launch (the layout gather) reads them.
  std::string quantizeKernel;
  for (Attribute entry : launches) {
    auto record = dyn_cast<LaunchAttr>(entry);
    ArrayAttr args = record ? record.getArgs() : ArrayAttr();
    if (!args) {
      op->emitOpError("qf.launches record has no args for its parameters");
      failedAny = true;
      return;
    }
    std::string kernel = record.getKernelName().str();
    if (quantizeKernel.empty())
      quantizeKernel = kernel;
    addLaunch(record, [&](size_t i, StringRef name) -> BoundArg {
      auto arg = cast<LaunchArgAttr>(args[i]);
      switch (arg.getKind()) {
      case LaunchArgKind::Operand:
        return {valueArg(op.getInput()), kPtr};
      case LaunchArgKind::Component: {
        MemRefType type = components.lookup(arg.getName().getValue());
        if (type)
          return {scratchOf(quantizeKernel + "." +
                                arg.getName().getValue().str(),
                            type.getShape(), type.getElementType()),
                  kPtr};
        break;
      }
      case LaunchArgKind::I32:
        return {immediateArg(schema::Arg::Kind::I32, *arg.getInteger()),
                schema::ParamType::I32};
      case LaunchArgKind::Scratch: { // the status word, NVFP4's amax
        std::string word = arg.getName().getValue().str();
        scratchBuffers[word] = {{{1, false}},
                                word == kQuantizeAmaxBuffer ? "f32" : "i32"};
        return {bufferArg(word), kPtr};
      }
      default:
        break;
      }
      op->emitOpError() << "parameter '" << name << "' of a qf.quantize "
                        << "launch cannot be bound to " << arg;
      failedAny = true;
      return {schema::Arg(), kPtr};
    });
    schema::Step &step = stepsByBatch[record.getBatch()].back();
    step.op = op->getName().getStringRef().str();
    step.encoding = body.str();
    anyQuantizeOp = true;
  }
}
