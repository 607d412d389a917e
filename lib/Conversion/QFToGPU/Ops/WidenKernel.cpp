//===- WidenKernel.cpp - f16/bf16 widened to f32 on the GPU ---------------===//
//
// One thread per element i, h = src[i] (16 bits):
//
//   bf16:  dst[i] = h << 16
//   f16:   r = bits(cvt.f32.f16(h))                  (exact: -0, subnormals)
//          dst[i] = isNaN(h) ? (h & 0x8000) << 16 | 0x7F800000
//                                | (h & 0x3FF) << 13 : r
//
// The NaN select gives format::halfToFloat's bits whatever the conversion
// makes of a NaN; bf16 is a bit move. DeviceWidenGpuTest compares every
// pattern of both with the host's conversion.
//
//===----------------------------------------------------------------------===//

#include "Ops/WidenKernel.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::qf;

namespace {

constexpr int64_t kThreads = 256;

/// The f32 bits of the f16 bits `raw` (i16), as format::halfToFloat.
Value widenHalf(KernelEmitter &e, ImplicitLocOpBuilder &b, Value raw) {
  Value h = arith::ExtUIOp::create(b, e.i32(), raw);
  Value r = e.bitcast(e.i32(), e.extf32(e.bitcast(e.f16(), raw)));
  Value nan = arith::CmpIOp::create(b, arith::CmpIPredicate::ugt,
                                    e.band(h, e.c32(0x7FFF)), e.c32(0x7C00));
  Value sign =
      arith::ShLIOp::create(b, e.band(h, e.c32(0x8000)), e.c32(16));
  Value payload =
      arith::ShLIOp::create(b, e.band(h, e.c32(0x3FF)), e.c32(13));
  Value quiet = arith::OrIOp::create(
      b, sign, arith::OrIOp::create(b, e.c32(0x7F800000), payload));
  return arith::SelectOp::create(b, nan, quiet, r);
}

void buildBody(ImplicitLocOpBuilder &b, ArrayRef<Value> args, bool bf16) {
  KernelEmitter e(b);
  Value src = args[0], dst = args[1], count = args[2];
  Value i = e.add(e.mul(e.ctaidX(), e.c32(kThreads)), e.tidX());
  auto inRange = scf::IfOp::create(b, e.ult(i, count), false);
  b.setInsertionPointToStart(inRange.thenBlock());
  Value index = e.zext64(i);
  Value raw = e.loadRO(e.i16(), e.gepBytes(src, e.mul(index, e.c64(2))), 2);
  Value bits = bf16 ? arith::ShLIOp::create(
                          b, arith::ExtUIOp::create(b, e.i32(), raw),
                          e.c32(16))
                          .getResult()
                    : widenHalf(e, b, raw);
  e.store(bits, e.gepBytes(dst, e.mul(index, e.c64(4))), 4);
  b.setInsertionPointAfter(inRange);
}

} // namespace

std::string qf::widenKernelName(Type source) {
  return source.isBF16() ? "qf_widen_bf16_to_f32" : "qf_widen_f16_to_f32";
}

OpLaunch qf::emitWidenLaunch(gpu::GPUModuleOp module, Type source,
                             LaunchArgAttr src, LaunchArgAttr dst,
                             Location loc) {
  MLIRContext *ctx = module.getContext();
  std::string name = widenKernelName(source);
  SmallVector<OpParam> params = {{"src", ParamKind::In, src},
                                 {"dst", ParamKind::Out, dst},
                                 {"count", ParamKind::I32, i32Arg(ctx, 0)}};
  if (!module.lookupSymbol(name)) {
    ImplicitLocOpBuilder b(loc, ctx);
    SmallVector<Value> args = createOpKernel(b, module, name, params, kThreads);
    buildBody(b, args, source.isBF16());
    LLVM::ReturnOp::create(b, ValueRange{});
  }
  return makeOpLaunch(name, params, /*gridX=*/1, /*gridY=*/1, kThreads);
}
