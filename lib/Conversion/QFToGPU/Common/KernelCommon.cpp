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

namespace {

constexpr StringLiteral kGridDependencyTag = "qf.grid_dependency";

/// Inline PTX with a memory clobber: the intrinsics (nvvm.griddepcontrol)
/// are IntrNoMem, which would let LLVM hoist a load of a readonly argument
/// above the wait.
LLVM::InlineAsmOp createAsm(OpBuilder &b, Location loc, StringRef text,
                            StringRef constraints, ValueRange operands) {
  return LLVM::InlineAsmOp::create(
      b, loc, TypeRange(), operands, text, constraints,
      /*has_side_effects=*/true, /*is_align_stack=*/false,
      LLVM::tailcallkind::TailCallKind::None,
      LLVM::AsmDialectAttr::get(b.getContext(), LLVM::AsmDialect::AD_ATT),
      /*operand_attrs=*/nullptr);
}

void mark(ImplicitLocOpBuilder &b, StringRef what) {
  createAsm(b, b.getLoc(), "", "~{memory}", {})
      ->setAttr(kGridDependencyTag, b.getStringAttr(what));
}

StringRef tagOf(Operation *op) {
  auto tag = op->getAttrOfType<StringAttr>(kGridDependencyTag);
  return tag ? tag.getValue() : StringRef();
}

/// Whether `op` writes global memory: the point a late trigger goes before
/// in a kernel without a marked one.
bool storesGlobal(Operation *op) {
  auto isGlobal = [](Value ptr) {
    auto type = dyn_cast<LLVM::LLVMPointerType>(ptr.getType());
    return type && type.getAddressSpace() == 1;
  };
  if (auto store = dyn_cast<LLVM::StoreOp>(op))
    return isGlobal(store.getAddr());
  if (auto rmw = dyn_cast<LLVM::AtomicRMWOp>(op))
    return isGlobal(rmw.getPtr());
  if (auto asmOp = dyn_cast<LLVM::InlineAsmOp>(op))
    return asmOp.getAsmString().contains("st.global") ||
           asmOp.getAsmString().contains("red.global") ||
           asmOp.getAsmString().contains("atom.global");
  return false;
}

void fillIn(LLVM::LLVMFuncOp fn, const GridDependencyOptions &options) {
  SmallVector<Operation *> waits, triggers;
  Operation *firstStore = nullptr;
  fn.walk([&](Operation *op) {
    StringRef tag = tagOf(op);
    if (tag == "wait")
      waits.push_back(op);
    else if (tag == "trigger")
      triggers.push_back(op);
    else if (tag.empty() && !firstStore && storesGlobal(op))
      firstStore = op;
  });
  auto replace = [](Operation *marker, StringRef text) {
    OpBuilder b(marker);
    createAsm(b, marker->getLoc(), text, "~{memory}", {});
  };
  OpBuilder start(fn.getContext());
  start.setInsertionPointToStart(&fn.getBody().front());
  if (options.trigger == GridDependencyTrigger::Start)
    createAsm(start, fn.getLoc(), "griddepcontrol.launch_dependents;",
              "~{memory}", {});
  if (waits.empty())
    createAsm(start, fn.getLoc(), "griddepcontrol.wait;", "~{memory}", {});
  for (Operation *w : waits)
    replace(w, "griddepcontrol.wait;");
  if (options.trigger == GridDependencyTrigger::Late) {
    for (Operation *t : triggers)
      replace(t, "griddepcontrol.launch_dependents;");
    if (triggers.empty() && firstStore)
      replace(firstStore, "griddepcontrol.launch_dependents;");
  }
}

} // namespace

void qf::markGridDependencyWait(ImplicitLocOpBuilder &b) { mark(b, "wait"); }

void qf::markGridDependencyTrigger(ImplicitLocOpBuilder &b) {
  mark(b, "trigger");
}

void qf::prefetchL2BeforeWait(ImplicitLocOpBuilder &b, Value ptr, Value begin,
                              Value end) {
  KernelEmitter e(b);
  // Inward to 16 bytes: the instruction takes whole 16-byte units, and a
  // unit outside the range could lie outside the allocation.
  Value first = e.band(e.add(begin, e.c64(15)), e.c64(~int64_t(15)));
  Value last = e.band(end, e.c64(~int64_t(15)));
  Value any = arith::CmpIOp::create(b, arith::CmpIPredicate::ugt, last, first);
  auto ifOp = scf::IfOp::create(b, TypeRange(), any, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  Value bytes = arith::TruncIOp::create(b, e.i32(), e.sub(last, first));
  createAsm(b, b.getLoc(), "cp.async.bulk.prefetch.L2.global [$0], $1;",
            "l,r", ValueRange{e.gepBytes(ptr, first), bytes})
      ->setAttr(kGridDependencyTag, b.getStringAttr("prefetch"));
}

void qf::addGridDependencyControl(gpu::GPUModuleOp module,
                                  const GridDependencyOptions &options) {
  const bool keepPrefetches = options.enabled && options.prefetch;
  SmallVector<Operation *> erased;
  for (auto fn : module.getOps<LLVM::LLVMFuncOp>()) {
    if (fn.isExternal())
      continue;
    if (options.enabled &&
        fn->hasAttr(NVVM::NVVMDialect::getKernelFuncAttrName()))
      fillIn(fn, options);
    // The marks are filled in now (or not wanted); kept prefetches lose
    // their tag, which LLVM IR has no place for.
    fn.walk([&](Operation *op) {
      StringRef tag = tagOf(op);
      if (tag == "prefetch" && keepPrefetches)
        op->removeAttr(kGridDependencyTag);
      else if (!tag.empty())
        erased.push_back(op);
    });
  }
  for (Operation *op : erased)
    op->erase();
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
    llvm::cl::desc("4-bit codes of a constant table (NF4, inline "
                   "codebooks): look them up in the shared-memory table "
                   "instead of the registers (prmt)"),
    llvm::cl::init(false));

bool qf::decodesTable4InRegisters(EncodingAttr enc) {
  return !usesSharedCodeTable(enc) &&
         !decodesE2m1BySignMagnitude(enc.getFormat()) && !table4InShared;
}

bool qf::needsSharedCodeTable(EncodingAttr enc) {
  if (table4InShared)
    return getDecodeFamily(enc.getFormat()) == DecodeFamily::Table &&
           !decodesE2m1BySignMagnitude(enc.getFormat());
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
