//===- QFOpAttributes.cpp - The qf.* attributes the passes leave on ops ---===//
//
// State the pipeline records on ops between passes, verified here once for
// every pass that reads it:
//
//   qf.batch_tilings  [#qf.batch_tiling<...>, ...]   qf-select-tiling,
//                     on a qf.fused_matmul; one entry per batch
//   qf.group          i64 >= 0                        qf-fuse-shared-input,
//                     on the qf.fused_matmul members of one launch
//   qf.launches       [{batch, kernel, grid, block, shared_bytes,
//                       dynamic_shared_bytes, params, args?, layout?,
//                       step?, member?}] and the fallback's
//                     {batch, step = "gemm", member, into}
//                     qf-to-gpu, the launches the artifact writer records
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

/// One qf.launches record: every field present with its type.
LogicalResult verifyLaunch(Operation *op, Attribute entry) {
  auto record = dyn_cast<DictionaryAttr>(entry);
  auto fail = [&](StringRef what) {
    return op->emitOpError("qf.launches entry ") << entry << " " << what;
  };
  if (!record)
    return fail("must be a dictionary");
  // The fallback's records (qf-to-gpu, docs/fallback.md) say which step
  // they are and which member of the op's qf.group they serve; a gemm
  // record launches no kernel of ours.
  if (Attribute step = record.get("step")) {
    auto name = dyn_cast<StringAttr>(step);
    if (!name || !llvm::is_contained({"dequantize", "gemm", "silu_mul", "add",
                                      "permute"},
                                     name.getValue()))
      return fail("has a 'step' that is not \"dequantize\", \"gemm\", "
                  "\"silu_mul\", \"add\" or \"permute\"");
    if (!record.getAs<IntegerAttr>("member"))
      return fail("needs an integer 'member' (its qf.group member)");
    if (name.getValue() == "gemm") {
      if (!record.getAs<IntegerAttr>("batch"))
        return fail("needs an integer 'batch'");
      auto into = record.getAs<StringAttr>("into");
      if (!into || !llvm::is_contained({"y", "gate", "up"}, into.getValue()))
        return fail("needs 'into': \"y\", \"gate\" or \"up\"");
      return success();
    }
  }
  for (StringRef key : {"batch", "shared_bytes", "dynamic_shared_bytes"})
    if (!record.getAs<IntegerAttr>(key))
      return fail(("needs an integer '" + key + "'").str());
  if (!record.getAs<SymbolRefAttr>("kernel"))
    return fail("needs 'kernel', a symbol reference to its kernel");
  for (StringRef key : {"grid", "block"}) {
    auto dims = record.getAs<DenseI64ArrayAttr>(key);
    if (!dims || dims.size() != 3)
      return fail(("needs '" + key + "' as array<i64: x, y, z>").str());
  }
  auto params = record.getAs<ArrayAttr>("params");
  if (!params || !llvm::all_of(params, llvm::IsaPred<StringAttr>))
    return fail("needs 'params', an array of parameter names");
  if (Attribute args = record.get("args"))
    if (!isa<ArrayAttr>(args) ||
        !llvm::all_of(cast<ArrayAttr>(args), llvm::IsaPred<DictionaryAttr>))
      return fail("has 'args' that is not an array of dictionaries");
  if (Attribute layout = record.get("layout"); layout && !isa<LayoutAttr>(layout))
    return fail("has a 'layout' that is not a #qf.layout");
  if (Attribute input = record.get("input");
      input && input != StringAttr::get(op->getContext(), "permuted"))
    return fail("has an 'input' other than \"permuted\"");
  return success();
}

LogicalResult verifyLaunches(Operation *op, Attribute value) {
  auto entries = dyn_cast<ArrayAttr>(value);
  if (!entries)
    return op->emitOpError("qf.launches must be an array, got ") << value;
  for (Attribute entry : entries)
    if (failed(verifyLaunch(op, entry)))
      return failure();
  return success();
}

} // namespace

LogicalResult QFDialect::verifyOperationAttribute(Operation *op,
                                                  NamedAttribute attribute) {
  StringRef name = attribute.getName().getValue();
  if (name == "qf.batch_tilings")
    return verifyBatchTilings(op, attribute.getValue());
  if (name == "qf.group")
    return verifyGroup(op, attribute.getValue());
  if (name == "qf.launches")
    return verifyLaunches(op, attribute.getValue());
  return success();
}
