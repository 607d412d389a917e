//===- KernelCommon.cpp - pieces every generated kernel shares ------------===//

#include "Common/KernelCommon.h"
#include "qfuse/Conversion/DecodeFamily.h"

#include "qfuse/format/Numerics.h"

#include "llvm/Support/CommandLine.h"

using namespace mlir;
using namespace mlir::qf;

Value KernelFunction::arg(StringRef name) {
  for (size_t i = 0; i < params.size(); ++i)
    if (params[i] == name)
      return fn.getArgument(i);
  return {};
}

LLVM::LLVMFuncOp qf::createKernelEntry(ImplicitLocOpBuilder &b,
                                       gpu::GPUModuleOp module, StringRef name,
                                       ArrayRef<ParamKind> kinds,
                                       int64_t threads) {
  MLIRContext *ctx = b.getContext();
  SmallVector<Type> argTypes;
  for (ParamKind kind : kinds)
    argTypes.push_back(kind == ParamKind::I32   ? Type(b.getI32Type())
                       : kind == ParamKind::F32 ? Type(b.getF32Type())
                                                : Type(LLVM::LLVMPointerType::get(
                                                      ctx, 1)));
  auto fnType =
      LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx), argTypes);
  LLVM::LLVMFuncOp fn;
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(module.getBody());
    fn = LLVM::LLVMFuncOp::create(b, name, fnType);
  }
  fn->setAttr(NVVM::NVVMDialect::getKernelFuncAttrName(), b.getUnitAttr());
  fn->setAttr(NVVM::NVVMDialect::getMaxntidAttrName(),
              b.getDenseI32ArrayAttr({static_cast<int32_t>(threads), 1, 1}));
  for (size_t i = 0; i < kinds.size(); ++i) {
    if (kinds[i] != ParamKind::In && kinds[i] != ParamKind::Out)
      continue;
    fn.setArgAttr(i, LLVM::LLVMDialect::getNoAliasAttrName(), b.getUnitAttr());
    if (kinds[i] == ParamKind::In)
      fn.setArgAttr(i, LLVM::LLVMDialect::getReadonlyAttrName(),
                    b.getUnitAttr());
  }
  Block *entry = fn.addEntryBlock(b);
  b.setInsertionPointToStart(entry);
  return fn;
}

void qf::addGridDependencyControl(gpu::GPUModuleOp module, bool trigger) {
  for (auto fn : module.getOps<LLVM::LLVMFuncOp>()) {
    if (fn.isExternal() ||
        !fn->hasAttr(NVVM::NVVMDialect::getKernelFuncAttrName()))
      continue;
    OpBuilder b(fn.getContext());
    b.setInsertionPointToStart(&fn.getBody().front());
    // Inline PTX with a memory clobber, not nvvm.griddepcontrol: the
    // intrinsic is IntrNoMem, which would let LLVM hoist a load of a
    // readonly argument above the wait.
    for (StringRef text :
         {"griddepcontrol.launch_dependents;", "griddepcontrol.wait;"}) {
      if (!trigger && text.contains("launch_dependents"))
        continue;
      LLVM::InlineAsmOp::create(
          b, fn.getLoc(), TypeRange(), ValueRange(), text, "~{memory}",
          /*has_side_effects=*/true, /*is_align_stack=*/false,
          LLVM::tailcallkind::TailCallKind::None,
          LLVM::AsmDialectAttr::get(b.getContext(), LLVM::AsmDialect::AD_ATT),
          /*operand_attrs=*/nullptr);
    }
  }
}

KernelFunction qf::createKernelFunction(ImplicitLocOpBuilder &b,
                                        gpu::GPUModuleOp module,
                                        StringRef name,
                                        ArrayRef<std::string> params,
                                        int64_t threads) {
  // Matmul kernels write only `y`; every other pointer is read.
  SmallVector<ParamKind> kinds;
  for (const std::string &param : params)
    kinds.push_back(param == "y" ? ParamKind::Out : ParamKind::In);
  return {createKernelEntry(b, module, name, kinds, threads), params};
}

Value qf::dynamicSharedBase(ImplicitLocOpBuilder &b, gpu::GPUModuleOp module,
                            StringRef name) {
  LLVM::GlobalOp global;
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    global = LLVM::GlobalOp::create(
        b, LLVM::LLVMArrayType::get(b.getI8Type(), 0), /*isConstant=*/false,
        LLVM::Linkage::External, name, Attribute(), /*alignment=*/16,
        /*addrSpace=*/3);
  }
  return LLVM::AddressOfOp::create(b, global);
}

SmallVector<uint16_t> qf::constantCodeTableBits(EncodingAttr enc,
                                                 Type valueType) {
  SmallVector<double> values = enc.getCodebookValues();
  if (enc.getFormat() == ElementFormat::FP4E2M1)
    for (int code = 0; code < 16; ++code) // sign << 3 | magnitude index
      values.push_back((code & 8 ? -1.0 : 1.0) *
                       qfuse::format::kE2M1Values[code & 7]);
  const llvm::fltSemantics &semantics =
      valueType.isBF16() ? APFloat::BFloat() : APFloat::IEEEhalf();
  SmallVector<uint16_t> bits;
  for (double v : values) {
    APFloat f(v);
    bool lost;
    f.convert(semantics, APFloat::rmNearestTiesToEven, &lost);
    bits.push_back(
        static_cast<uint16_t>(f.bitcastToAPInt().getZExtValue()));
  }
  return bits;
}

// The shared table stays reachable for A/B runs against the registers.
static llvm::cl::opt<bool> table4InShared(
    "qf-table4-in-shared",
    llvm::cl::desc("4-bit codes of a constant table (NF4, inline codebooks, "
                   "e2m1 with bf16): look them up in the shared-memory "
                   "table instead of the registers (prmt)"),
    llvm::cl::init(false));

bool qf::decodesTable4InRegisters(EncodingAttr enc, bool bf16) {
  return !usesSharedCodeTable(enc) &&
         !decodesE2m1ByBits(enc.getFormat(), bf16) && !table4InShared;
}

bool qf::needsSharedCodeTable(EncodingAttr enc, bool bf16) {
  if (table4InShared)
    return getDecodeFamily(enc.getFormat()) == DecodeFamily::Table &&
           !decodesE2m1ByBits(enc.getFormat(), bf16);
  return usesSharedCodeTable(enc);
}

Value qf::codeTableValue(ImplicitLocOpBuilder &b, gpu::GPUModuleOp module,
                         StringRef kernel, EncodingAttr enc, Value table,
                         Value index, LLVM::GlobalOp &cache, Type valueType) {
  KernelEmitter e(b);
  Value idx64 = e.zext64(index);
  if (enc.getFormat() == ElementFormat::Codebook && enc.getTableName()) {
    Type tt = enc.getTableType();
    int64_t width = tt.isF16() ? 2 : 4;
    Value ptr = e.gepBytes(table, e.mul(idx64, e.c64(width)));
    Value v = e.loadRO(tt, ptr, width);
    if (tt == valueType)
      return v;
    // f16 -> bf16 goes through f32 (exact), then rounds once.
    return e.truncTo(valueType, tt.isF32() ? v : e.extf32(v));
  }
  if (!cache) {
    const llvm::fltSemantics &semantics =
        valueType.isBF16() ? APFloat::BFloat() : APFloat::IEEEhalf();
    SmallVector<APFloat> rounded;
    for (uint16_t bits : constantCodeTableBits(enc, valueType))
      rounded.push_back(APFloat(semantics, APInt(16, bits)));
    int64_t count = rounded.size();
    auto tensorType = RankedTensorType::get({count}, valueType);
    auto arrayType = LLVM::LLVMArrayType::get(valueType, count);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    cache = LLVM::GlobalOp::create(
        b, arrayType, /*isConstant=*/true, LLVM::Linkage::Internal,
        (kernel + "_codes").str(), DenseElementsAttr::get(tensorType, rounded),
        /*alignment=*/16, /*addrSpace=*/1);
  }
  Value base = LLVM::AddressOfOp::create(b, cache);
  return e.loadRO(valueType, e.gepBytes(base, e.mul(idx64, e.c64(2))), 2);
}
