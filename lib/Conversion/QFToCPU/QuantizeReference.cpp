//===- QuantizeReference.cpp - qf.quantize -> a CPU function
//---------------===//
//
// The CPU reference of qf.quantize: WeightQuantizer (the IR every quantizer
// of this project is built from) over every unit of every row, N taken from
// the input, so one function serves every row count:
//
//   func.func @qf_cpu_quantize_0(%w: memref<?x4096xf16>,
//                                %codes: memref<?x2048xi8>,
//                                %scales: memref<?x32xf16>,
//                                %status: memref<1xi32>)
//     ok = true
//     [ok = prepareGlobalScale(tensorAmax()); global_scale[0] = ...] NVFP4
//     for n < dim(w, 0), u < unitsPerRow: ok &= quantizeUnit(n, u)
//     status[0] = ok ? 0 : 1   // 1: a non-finite weight or scale
//
// The components are format::quantizeRTN's row-major packed bytes (with
// NVFP4's global_scale, act_order's g_idx and 2:4's meta components; the
// function finds NVFP4's amax itself).
//
//===----------------------------------------------------------------------===//

#include "QuantizeReference.h"

#include "CPUReferenceAttr.h"

#include "qfuse/Conversion/QFToCPU.h"
#include "qfuse/Conversion/WeightQuantizer.h"
#include "qfuse/Dialect/QF/IR/FormatBridge.h"
#include "qfuse/format/Packing.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;
using namespace mlir::qf;

namespace {

/// Builds the function `name` for `enc` over `k` columns of `inputType`.
void buildFunction(ModuleOp cpuModule, Location loc, StringRef name,
                   const qfuse::format::Encoding &enc, int64_t k,
                   Type inputType, SmallVector<std::string> &params) {
  MLIRContext *ctx = cpuModule.getContext();
  auto types = quantizeComponentTypes(ctx, enc, ShapedType::kDynamic, k);
  types.insert(types.begin(),
               {"w", MemRefType::get({ShapedType::kDynamic, k}, inputType)});
  types.push_back({"status", MemRefType::get({1}, IntegerType::get(ctx, 32))});
  SmallVector<Type> argTypes;
  for (auto &[pname, type] : types) {
    params.push_back(pname);
    argTypes.push_back(type);
  }

  ImplicitLocOpBuilder b(loc, ctx);
  b.setInsertionPointToEnd(cpuModule.getBody());
  auto fn = func::FuncOp::create(b, name, b.getFunctionType(argTypes, {}));
  fn->setAttr("llvm.emit_c_interface", b.getUnitAttr());
  Block *entry = fn.addEntryBlock();
  b.setInsertionPointToStart(entry);
  QuantizeBuffers buffers;
  buffers.input = entry->getArgument(0);
  for (auto [i, named] : llvm::enumerate(types))
    buffers.bind(named.first, entry->getArgument(i)); // skips w and status
  Value status = entry->getArguments().back();

  ScalarEmitter e(b);
  WeightQuantizer quantizer(e, enc, k, buffers);
  Value ok = arith::ConstantIntOp::create(b, 1, 1);
  if (enc.globalScale) {
    ok = quantizer.prepareGlobalScale(quantizer.tensorAmax());
    quantizer.storeGlobalScale();
  }
  Value rows = memref::DimOp::create(b, buffers.input, e.idx(0));
  Value units = e.idx(quantizer.unitsPerRow());
  Value allOk = e.forReduce(
      e.idx(0), rows, ok,
      [&](Value n, Value acc) {
        return e.forReduce(e.idx(0), units, acc, [&](Value u, Value acc2) {
          return arith::AndIOp::create(b, acc2, quantizer.quantizeUnit(n, u));
        });
      });
  e.store(e.select(allOk, e.c32(0), e.c32(1)), status, {e.idx(0)});
  func::ReturnOp::create(b);
}

} // namespace

LogicalResult mlir::qf::lowerQuantizeToCPU(QuantizeOp op, ModuleOp cpuModule,
                                           QuantizeFunctions &emitted) {
  WeightType weight = op.getResult().getType();
  qfuse::format::Encoding enc = toFormatEncoding(weight.getEncoding());
  int64_t k = weight.getK();
  if (!weight.getLayout().isRowMajor()) {
    op.emitRemark() << "qf-to-cpu: qf.quantize writes the row-major "
                       "components; the result's layout "
                    << weight.getLayout()
                    << " is a repacking of them (not lowered)";
    return success();
  }
  std::string reason = quantizeUnsupportedReason(enc, k);
  if (!reason.empty()) {
    op.emitRemark() << "qf-to-cpu: qf.quantize to " << weight.getEncoding()
                    << " is not lowered (" << reason
                    << "); format::quantizeRTN quantizes it on the host";
    return success();
  }
  Type inputType = op.getInput().getType().getElementType();
  std::string key;
  llvm::raw_string_ostream os(key);
  os << weight.getEncoding() << "|" << k << "|" << inputType;
  auto it = emitted.byKey.find(key);
  if (it == emitted.byKey.end()) {
    // Skip names a previous run left in @qf_cpu.
    std::string name;
    do
      name = "qf_cpu_quantize_" + std::to_string(emitted.next++);
    while (cpuModule.lookupSymbol(name));
    SmallVector<std::string> params;
    buildFunction(cpuModule, op.getLoc(), name, enc, k, inputType, params);
    it = emitted.byKey.try_emplace(key, name, std::move(params)).first;
  }
  setCPUReference(op, it->second.first, it->second.second);
  return success();
}
