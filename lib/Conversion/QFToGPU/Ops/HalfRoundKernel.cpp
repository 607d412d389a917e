//===- HalfRoundKernel.cpp - bf16 rounded to f16 on the GPU ---------------===//
//
// One thread per element i:
//
//   h = src[i]                                        (bf16 bits)
//   r = cvt.rn.f16.f32(f32(h))                        (exact widening)
//   r = isNaN(h) ? sign | 0x7E00 | (h & 0x3F) << 3 : r
//   dst[i] = r;  if (!isInf(h) && isInf(r)) status[0] = 1
//
// The NaN select gives format::floatToHalf's quiet NaN (its top payload
// bits) whatever the conversion makes of a NaN; every other value is the
// conversion's round to nearest even, subnormals and overflow to inf
// included, as floatToHalf's. DeviceHalfRoundGpuTest compares every bf16
// pattern with the host's roundToHalves.
//
//===----------------------------------------------------------------------===//

#include "Ops/HalfRoundKernel.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::qf;

namespace {

constexpr int64_t kThreads = 256;

void buildBody(ImplicitLocOpBuilder &b, ArrayRef<Value> args) {
  KernelEmitter e(b);
  Value src = args[0], dst = args[1], status = args[2], count = args[3];
  auto cmp = [&](arith::CmpIPredicate p, Value x, Value y) {
    return arith::CmpIOp::create(b, p, x, y).getResult();
  };
  Value i = e.add(e.mul(e.ctaidX(), e.c32(kThreads)), e.tidX());
  auto inRange =
      scf::IfOp::create(b, cmp(arith::CmpIPredicate::ult, i, count), false);
  b.setInsertionPointToStart(inRange.thenBlock());
  Value offset = e.mul(e.zext64(i), e.c64(2));
  Value raw = e.loadRO(e.i16(), e.gepBytes(src, offset), 2);
  Value h = arith::ExtUIOp::create(b, e.i32(), raw);
  Value half = e.bitcast(e.i16(), e.truncf16(e.extf32(e.bitcast(e.bf16(), raw))));
  Value r = arith::ExtUIOp::create(b, e.i32(), half);
  Value magnitude = e.band(h, e.c32(0x7FFF));
  Value nan = cmp(arith::CmpIPredicate::ugt, magnitude, e.c32(0x7F80));
  Value quiet = arith::OrIOp::create(
      b, e.band(h, e.c32(0x8000)),
      arith::OrIOp::create(
          b, e.c32(0x7E00),
          arith::ShLIOp::create(b, e.band(h, e.c32(0x3F)), e.c32(3))));
  r = arith::SelectOp::create(b, nan, quiet, r);
  e.store(arith::TruncIOp::create(b, e.i16(), r), e.gepBytes(dst, offset), 2);
  Value overflow = arith::AndIOp::create(
      b, cmp(arith::CmpIPredicate::ult, magnitude, e.c32(0x7F80)),
      cmp(arith::CmpIPredicate::eq, e.band(r, e.c32(0x7FFF)), e.c32(0x7C00)));
  auto failed = scf::IfOp::create(b, overflow, false);
  b.setInsertionPointToStart(failed.thenBlock());
  e.store(e.c32(1), status, 4);
  b.setInsertionPointAfter(inRange);
}

} // namespace

std::string qf::halfRoundKernelName() { return "qf_round_bf16_to_f16"; }

OpLaunch qf::emitHalfRoundLaunch(gpu::GPUModuleOp module, LaunchArgAttr src,
                                 LaunchArgAttr dst, LaunchArgAttr status,
                                 Location loc) {
  MLIRContext *ctx = module.getContext();
  std::string name = halfRoundKernelName();
  SmallVector<OpParam> params = {{"src", ParamKind::In, src},
                                 {"dst", ParamKind::Out, dst},
                                 {"status", ParamKind::Out, status},
                                 {"count", ParamKind::I32, i32Arg(ctx, 0)}};
  if (!module.lookupSymbol(name)) {
    ImplicitLocOpBuilder b(loc, ctx);
    SmallVector<Value> args = createOpKernel(b, module, name, params, kThreads);
    buildBody(b, args);
    LLVM::ReturnOp::create(b, ValueRange{});
  }
  return makeOpLaunch(name, params, /*gridX=*/1, /*gridY=*/1, kThreads);
}
