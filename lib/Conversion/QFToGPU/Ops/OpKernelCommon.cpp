//===- OpKernelCommon.cpp - pieces the decode-op generators share ---------===//

#include "Ops/OpKernelCommon.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

using namespace mlir;
using namespace mlir::qf;

OpLaunch qf::makeOpLaunch(StringRef name, ArrayRef<OpParam> params,
                          int64_t gridX, int64_t gridY, int64_t blockX,
                          int64_t sharedBytes) {
  OpLaunch launch;
  launch.launch.name = name.str();
  for (const OpParam &p : params) {
    StringRef type = p.kind == ParamKind::I32   ? "i32"
                     : p.kind == ParamKind::F32 ? "f32"
                                                : "ptr";
    launch.launch.params.push_back({p.name, type.str()});
    launch.args.push_back(p.arg);
  }
  launch.launch.gridX = gridX;
  launch.launch.gridY = gridY;
  launch.launch.blockX = blockX;
  launch.launch.sharedBytes = sharedBytes;
  return launch;
}

SmallVector<Value> qf::createOpKernel(ImplicitLocOpBuilder &b,
                                      gpu::GPUModuleOp module, StringRef name,
                                      ArrayRef<OpParam> params,
                                      int64_t threads) {
  SmallVector<ParamKind> kinds;
  for (const OpParam &p : params)
    kinds.push_back(p.kind);
  LLVM::LLVMFuncOp fn = createKernelEntry(b, module, name, kinds, threads);
  return SmallVector<Value>(fn.getBody().front().getArguments());
}

LogicalResult qf::requireF16(Operation *op, StringRef what, Type type) {
  Type elt = getElementTypeOrSelf(type);
  if (elt.isF16())
    return success();
  return op->emitOpError() << what
                           << " must be f16 for the GPU kernels (they "
                              "accumulate in f32), got "
                           << elt,
         failure();
}

int64_t qf::halfVectorWidth(int64_t elems) {
  for (int64_t w : {8, 4, 2})
    if (elems % w == 0)
      return w;
  return 1;
}

std::string qf::nameNumber(double value, bool isFloat) {
  // The shortest %g that reads back as the same number (at f32 precision
  // for f32 attributes), so that distinct values never share a name.
  // Whole numbers (theta, factors) print as integers: 500000, not 5ep05.
  char buf[64];
  bool whole = value == std::floor(value) && std::fabs(value) < 1e15;
  for (int precision = 1; !whole && precision <= 17; ++precision) {
    std::snprintf(buf, sizeof(buf), "%.*g", precision, value);
    double back = std::strtod(buf, nullptr);
    if (isFloat ? static_cast<float>(back) == static_cast<float>(value)
                : back == value)
      break;
  }
  if (whole)
    std::snprintf(buf, sizeof(buf), "%.0f", value);
  std::string out;
  for (char c : std::string(buf))
    out += c == '-' ? 'm' : c == '+' ? 'p' : c == '.' ? 'd' : c;
  return out;
}

Value qf::sharedArray(ImplicitLocOpBuilder &b, gpu::GPUModuleOp module,
                      StringRef name, Type element, int64_t count) {
  LLVM::GlobalOp global;
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    global = LLVM::GlobalOp::create(
        b, LLVM::LLVMArrayType::get(element, count), /*isConstant=*/false,
        LLVM::Linkage::Internal, name, Attribute(), /*alignment=*/16,
        /*addrSpace=*/3);
  }
  return LLVM::AddressOfOp::create(b, global);
}

Value qf::sharedElement(KernelEmitter &e, Value base, Value index,
                        int64_t elementBytes) {
  auto sharedPtr = LLVM::LLVMPointerType::get(e.builder().getContext(), 3);
  return LLVM::GEPOp::create(e.builder(), sharedPtr, e.i8(), base,
                             ValueRange{e.mul(index, e.c32(elementBytes))});
}

/// The type a raw load of `width` halves uses: whole 32-bit words, so that
/// NVPTX selects ld.v4.b32 / ld.v2.b32 / ld.b32 (or ld.b16 for one half).
static Type rawType(KernelEmitter &e, int64_t width) {
  if (width == 1)
    return e.f16();
  if (width == 2)
    return e.i32();
  return e.vNi32(width / 2);
}

static Value halfAddress(KernelEmitter &e, Value base, Value index) {
  return e.gepBytes(base, e.mul(e.zext64(index), e.c64(2)));
}

Value qf::loadRaw(KernelEmitter &e, Value base, Value index, int64_t width,
                  bool readOnly) {
  Value ptr = halfAddress(e, base, index);
  Type type = rawType(e, width);
  unsigned align = static_cast<unsigned>(width * 2);
  if (readOnly)
    return e.loadRO(type, ptr, align);
  return LLVM::LoadOp::create(e.builder(), type, ptr, align);
}

void qf::storeRaw(KernelEmitter &e, Value base, Value index, Value raw,
                  int64_t width) {
  e.store(raw, halfAddress(e, base, index), static_cast<unsigned>(width * 2));
}

SmallVector<Value> qf::loadHalves(KernelEmitter &e, Value base, Value index,
                                  int64_t width, bool readOnly) {
  return halvesOf(e, loadRaw(e, base, index, width, readOnly), width);
}

SmallVector<Value> qf::loadWords(KernelEmitter &e, Value base, Value index,
                                 int64_t count) {
  const int64_t perLoad = std::min<int64_t>(count, 4);
  SmallVector<Value> out;
  for (int64_t i = 0; i < count; i += perLoad) {
    Value at =
        e.gepBytes(base, e.zext64(e.mul(e.add(index, e.c32(i)), e.c32(4))));
    if (perLoad == 1) {
      out.push_back(e.loadRO(e.i32(), at, 4));
      continue;
    }
    Value v = e.loadRO(e.vNi32(perLoad), at, perLoad * 4);
    for (int64_t w = 0; w < perLoad; ++w)
      out.push_back(e.extract(v, w));
  }
  return out;
}

SmallVector<Value> qf::halvesOf(KernelEmitter &e, Value raw, int64_t width) {
  SmallVector<Value> out;
  if (width == 1) {
    out.push_back(e.extf32(raw));
    return out;
  }
  for (int64_t w = 0; w < width / 2; ++w) {
    Value word = width == 2 ? raw : e.extract(raw, w);
    Value pair = e.bitcast(e.v2f16(), word);
    out.push_back(e.extf32(e.extract(pair, 0)));
    out.push_back(e.extf32(e.extract(pair, 1)));
  }
  return out;
}

void qf::storeHalves(KernelEmitter &e, Value base, Value index,
                     ArrayRef<Value> values) {
  ImplicitLocOpBuilder &b = e.builder();
  int64_t width = values.size();
  if (width == 1) {
    storeRaw(e, base, index, e.truncf16(values[0]), 1);
    return;
  }
  SmallVector<Value> words;
  for (int64_t w = 0; w < width / 2; ++w) {
    Value pair = LLVM::PoisonOp::create(b, e.v2f16());
    for (int64_t j = 0; j < 2; ++j)
      pair = LLVM::InsertElementOp::create(
          b, e.v2f16(), pair, e.truncf16(values[2 * w + j]), e.c32(j));
    words.push_back(e.bitcast(e.i32(), pair));
  }
  if (width == 2) {
    storeRaw(e, base, index, words.front(), width);
    return;
  }
  VectorType type = e.vNi32(width / 2);
  Value raw = LLVM::PoisonOp::create(b, type);
  for (int64_t w = 0; w < width / 2; ++w)
    raw = LLVM::InsertElementOp::create(b, type, raw, words[w], e.c32(w));
  storeRaw(e, base, index, raw, width);
}

Value qf::exp2Approx(KernelEmitter &e, Value x) {
  return e.ptx("ex2.approx.ftz.f32 $0, $1;", "=f,f", e.f32(), {x});
}

Value qf::warpSum(KernelEmitter &e, Value v) {
  for (int64_t off = 16; off >= 1; off /= 2)
    v = e.fadd(v, e.shflXor(v, off));
  return v;
}

Best qf::better(KernelEmitter &e, Best mine, Best other) {
  ImplicitLocOpBuilder &b = e.builder();
  Value greater = arith::CmpFOp::create(b, arith::CmpFPredicate::OGT,
                                        other.value, mine.value);
  Value equal = arith::CmpFOp::create(b, arith::CmpFPredicate::OEQ, other.value,
                                      mine.value);
  Value lower = arith::CmpIOp::create(b, arith::CmpIPredicate::slt, other.index,
                                      mine.index);
  Value take =
      arith::OrIOp::create(b, greater, arith::AndIOp::create(b, equal, lower));
  return {arith::SelectOp::create(b, take, other.value, mine.value),
          arith::SelectOp::create(b, take, other.index, mine.index)};
}

Value qf::blockSum(KernelEmitter &e, Value v, Value scratch, int64_t warps) {
  Value sum = warpSum(e, v);
  if (warps == 1)
    return sum;
  ImplicitLocOpBuilder &b = e.builder();
  Value tid = e.tidX();
  Value lane = e.band(tid, e.c32(31));
  Value warp = e.shru(tid, e.c32(5));
  Value isLane0 =
      arith::CmpIOp::create(b, arith::CmpIPredicate::eq, lane, e.c32(0));
  auto write = scf::IfOp::create(b, isLane0, /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(write.thenBlock());
    e.store(sum, sharedElement(e, scratch, warp, 4), 4);
  }
  NVVM::Barrier0Op::create(b);
  // Every thread adds the warp sums in the same order: all get the same
  // bits, so a row is scaled by one factor.
  Value total = LLVM::LoadOp::create(b, e.f32(),
                                     sharedElement(e, scratch, e.c32(0), 4), 4);
  for (int64_t w = 1; w < warps; ++w)
    total = e.fadd(
        total, LLVM::LoadOp::create(b, e.f32(),
                                    sharedElement(e, scratch, e.c32(w), 4), 4));
  return total;
}
