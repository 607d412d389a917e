//===- QFOpAttributes.cpp - The qf.* attributes the passes leave on ops ---===//
//
// State the pipeline records on ops between passes, verified here once for
// every pass that reads it:
//
//   qf.batch_tilings  [#qf.batch_tiling<...>, ...]   qf-select-tiling,
//                     on a qf.fused_matmul; one entry per batch
//   qf.group          i64 >= 0                        qf-fuse-shared-input,
//                     on the qf.fused_matmul members of one launch
//   qf.launches       [#qf.launch<...> | #qf.fallback_gemm<...>, ...]
//                     qf-to-gpu, the launches the artifact writer records
//
// and the launch attributes' own parsers and verifiers.
//
//===----------------------------------------------------------------------===//

#include "qfuse/Dialect/QF/IR/QFDialect.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;
using namespace mlir::qf;

namespace {

LogicalResult verifyBatchTilings(Operation *op, Attribute value) {
  if (!isa<FusedMatmulOp>(op))
    return op->emitOpError("qf.batch_tilings belongs on a qf.fused_matmul");
  auto entries = dyn_cast<ArrayAttr>(value);
  if (!entries)
    return op->emitOpError("qf.batch_tilings must be an array of "
                           "#qf.batch_tiling<...>, got ")
           << value;
  llvm::DenseSet<int64_t> batches;
  for (Attribute entry : entries) {
    auto tiling = dyn_cast<BatchTilingAttr>(entry);
    if (!tiling)
      return op->emitOpError("qf.batch_tilings entry ")
             << entry << " must be a #qf.batch_tiling<...>";
    if (!batches.insert(tiling.getBatch()).second)
      return op->emitOpError("qf.batch_tilings gives batch ")
             << tiling.getBatch() << " twice";
  }
  return success();
}

LogicalResult verifyGroup(Operation *op, Attribute value) {
  if (!isa<FusedMatmulOp>(op))
    return op->emitOpError("qf.group belongs on a qf.fused_matmul");
  auto id = dyn_cast<IntegerAttr>(value);
  if (!id || !id.getType().isInteger(64) || id.getInt() < 0)
    return op->emitOpError("qf.group must be a non-negative i64, got ")
           << value;
  return success();
}

LogicalResult verifyLaunches(Operation *op, Attribute value) {
  auto entries = dyn_cast<ArrayAttr>(value);
  if (!entries)
    return op->emitOpError("qf.launches must be an array, got ") << value;
  for (Attribute entry : entries)
    if (!isa<LaunchAttr, FallbackGemmAttr>(entry))
      return op->emitOpError("qf.launches entry ")
             << entry << " must be a #qf.launch<...> or #qf.fallback_gemm<...>";
  return success();
}

} // namespace

//===----------------------------------------------------------------------===//
// LaunchArgAttr
//===----------------------------------------------------------------------===//

namespace {

/// What value a parameter bound as `kind` carries.
enum class ArgValue { Integer, Real, Name, None };

ArgValue argValueOf(LaunchArgKind kind) {
  switch (kind) {
  case LaunchArgKind::Operand:
  case LaunchArgKind::Result:
  case LaunchArgKind::I32:
    return ArgValue::Integer;
  case LaunchArgKind::F32:
    return ArgValue::Real;
  case LaunchArgKind::Activations:
  case LaunchArgKind::Component:
  case LaunchArgKind::ReaderComponent:
  case LaunchArgKind::Scratch:
    return ArgValue::Name;
  case LaunchArgKind::Output:
  case LaunchArgKind::Residual:
    return ArgValue::None;
  }
  llvm_unreachable("unknown launch argument kind");
}

} // namespace

Attribute LaunchArgAttr::parse(AsmParser &parser, Type) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef kindName;
  if (parser.parseLess() || parser.parseKeyword(&kindName))
    return {};
  std::optional<LaunchArgKind> kind = symbolizeLaunchArgKind(kindName);
  if (!kind) {
    parser.emitError(loc) << "unknown argument kind '" << kindName
                          << "'; expected operand, result, i32, f32, "
                             "activations, component, scratch, output, "
                             "residual or reader_component";
    return {};
  }
  std::optional<int64_t> integer;
  FloatAttr real;
  StringAttr name;
  MLIRContext *ctx = parser.getContext();
  switch (argValueOf(*kind)) {
  case ArgValue::Integer: {
    int64_t value;
    if (parser.parseInteger(value))
      return {};
    integer = value;
    break;
  }
  case ArgValue::Real: {
    double value;
    if (parser.parseFloat(value))
      return {};
    real = FloatAttr::get(Float32Type::get(ctx), value);
    break;
  }
  case ArgValue::Name: {
    std::string value;
    if (parser.parseString(&value))
      return {};
    name = StringAttr::get(ctx, value);
    break;
  }
  case ArgValue::None:
    break;
  }
  if (parser.parseGreater())
    return {};
  return parser.getChecked<LaunchArgAttr>(loc, ctx, *kind, integer, real,
                                          name);
}

void LaunchArgAttr::print(AsmPrinter &printer) const {
  printer << "<" << stringifyLaunchArgKind(getKind());
  if (getInteger())
    printer << " " << *getInteger();
  if (getReal()) {
    printer << " ";
    printer.printAttributeWithoutType(getReal());
  }
  if (getName())
    printer << " \"" << getName().getValue() << "\"";
  printer << ">";
}

LogicalResult
LaunchArgAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                      LaunchArgKind kind, std::optional<int64_t> integer,
                      FloatAttr real, StringAttr name) {
  const ArgValue value = argValueOf(kind);
  if (integer.has_value() != (value == ArgValue::Integer) ||
      static_cast<bool>(real) != (value == ArgValue::Real) ||
      static_cast<bool>(name) != (value == ArgValue::Name))
    return emitError() << stringifyLaunchArgKind(kind) << " takes "
                       << (value == ArgValue::Integer ? "an integer"
                           : value == ArgValue::Real  ? "an f32"
                           : value == ArgValue::Name  ? "a name"
                                                      : "no value");
  if (integer && kind != LaunchArgKind::I32 && *integer < 0)
    return emitError() << stringifyLaunchArgKind(kind)
                       << " index must be non-negative, got " << *integer;
  if (integer && kind == LaunchArgKind::I32 &&
      (*integer < INT32_MIN || *integer > INT32_MAX))
    return emitError() << "i32 value " << *integer << " is out of range";
  if (real && !real.getType().isF32())
    return emitError() << "f32 value must be an f32, got " << real;
  return success();
}

//===----------------------------------------------------------------------===//
// LaunchAttr, FallbackGemmAttr
//===----------------------------------------------------------------------===//

LogicalResult
LaunchAttr::verify(function_ref<InFlightDiagnostic()> emitError, ArrayAttr args,
                   int64_t batch, DenseI64ArrayAttr block,
                   int64_t dynamicSharedBytes, DenseI64ArrayAttr grid,
                   StringAttr input, SymbolRefAttr kernel, LayoutAttr layout,
                   std::optional<int64_t> member, ArrayAttr params,
                   int64_t sharedBytes, StringAttr step, StringAttr weight) {
  if (batch <= 0)
    return emitError() << "batch must be positive, got " << batch;
  if (grid.size() != 3 || block.size() != 3)
    return emitError() << "grid and block are array<i64: x, y, z>, got " << grid
                       << " and " << block;
  if (sharedBytes < 0 || dynamicSharedBytes < 0)
    return emitError() << "shared memory must be non-negative";
  if (!llvm::all_of(params, llvm::IsaPred<StringAttr>))
    return emitError() << "params must be parameter names, got " << params;
  if (args) {
    if (args.size() != params.size())
      return emitError() << args.size() << " args for " << params.size()
                         << " params (expected one per parameter)";
    for (Attribute arg : args)
      if (!isa<LaunchArgAttr>(arg))
        return emitError() << "argument " << arg << " must be a #qf.arg<...>";
  }
  if (input && input.getValue() != "permuted")
    return emitError() << "input must be \"permuted\", got " << input;
  // The fallback's launches (qf-to-gpu's lowerFallback) say which step they
  // are and which member of the op's qf.group they serve.
  if (step && !llvm::is_contained({"dequantize", "silu_mul", "add", "permute",
                                   "rms_norm", "silu_mul_prologue"},
                                  step.getValue()))
    return emitError() << "step must be \"dequantize\", \"silu_mul\", "
                          "\"add\", \"permute\", \"rms_norm\" or "
                          "\"silu_mul_prologue\", got "
                       << step;
  if (static_cast<bool>(step) != member.has_value())
    return emitError() << "step and member come together (a fallback "
                          "launch and the qf.group member it serves)";
  if (member && *member < 0)
    return emitError() << "member must be non-negative, got " << *member;
  const bool dequantize = step && step.getValue() == "dequantize";
  if (dequantize != static_cast<bool>(weight) ||
      (weight && !llvm::is_contained({"weight", "up"}, weight.getValue())))
    return emitError() << "a dequantize step names its weight, \"weight\" "
                          "or \"up\" (and no other launch does)";
  return success();
}

LogicalResult
FallbackGemmAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                         int64_t batch, StringAttr into, int64_t member) {
  if (batch <= 0)
    return emitError() << "batch must be positive, got " << batch;
  if (!llvm::is_contained({"y", "gate", "up"}, into.getValue()))
    return emitError() << "into must be \"y\", \"gate\" or \"up\", got "
                       << into;
  if (member < 0)
    return emitError() << "member must be non-negative, got " << member;
  return success();
}

/// `qf.launch_guards` (qf-to-gpu, an act_order qf.group or gate/up): one
/// entry per `qf.launches` record, 0 (always), 1 (when the weights' perms
/// are equal) or 2 (when they differ).
static LogicalResult verifyLaunchGuards(Operation *op, Attribute value) {
  auto guards = dyn_cast<DenseI32ArrayAttr>(value);
  if (!guards)
    return op->emitOpError() << "qf.launch_guards must be an array<i32>, got "
                             << value;
  auto launches = op->getAttrOfType<ArrayAttr>("qf.launches");
  if (!launches || launches.size() != static_cast<size_t>(guards.size()))
    return op->emitOpError()
           << "qf.launch_guards needs one entry per qf.launches record";
  for (int32_t g : guards.asArrayRef())
    if (g < 0 || g > 2)
      return op->emitOpError() << "qf.launch_guards entries are 0 (always), "
                                  "1 (perms equal) or 2 (perms differ), got "
                               << g;
  return success();
}

LogicalResult QFDialect::verifyOperationAttribute(Operation *op,
                                                  NamedAttribute attribute) {
  StringRef name = attribute.getName().getValue();
  if (name == "qf.batch_tilings")
    return verifyBatchTilings(op, attribute.getValue());
  if (name == "qf.group")
    return verifyGroup(op, attribute.getValue());
  if (name == "qf.launches")
    return verifyLaunches(op, attribute.getValue());
  if (name == "qf.launch_guards")
    return verifyLaunchGuards(op, attribute.getValue());
  return success();
}
