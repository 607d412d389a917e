//===- ArgmaxKernel.cpp - qf.argmax kernel --------------------------------===//
//
// result[m] = index of the largest x[m, i] (compared in f32), ties to the
// lowest index, NaN never chosen; -1 when the row holds only NaN.
//
//   one block of T threads per row m (grid M); the row's V halves are
//   vectors of `width` halves (16 bytes when V % 8 == 0); a trip of the loop
//   loads U vectors per thread (t + u T for u < U: coalesced, all loads in
//   flight before the compares), so a 152k vocabulary is 5 trips of
//   1024 x 4 x 16 bytes.
//   Each thread keeps (best, index), starting at (-inf, INT32_MAX), and
//   takes an element when  x > best || (x == best && i < index):  both
//   compares are ordered, so NaN is never taken, and -inf is taken only
//   over the empty state. Every thread visits indices in increasing order,
//   so within a thread ties keep the first. The same rule merges two
//   states: it is a total order on (value desc, index asc), so the warp xor
//   butterfly leaves every lane with the same winner, and the warp winners
//   (through shared memory, one barrier) are merged the same way by warp 0.
//
//===----------------------------------------------------------------------===//

#include "Ops/OpKernelCommon.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

#include <limits>

using namespace mlir;
using namespace mlir::qf;

namespace {

constexpr int64_t kNone = std::numeric_limits<int32_t>::max();
constexpr int64_t kUnroll = 4;

Best warpBest(KernelEmitter &e, Best s) {
  for (int64_t off = 16; off >= 1; off /= 2)
    s = better(e, s, {e.shflXor(s.value, off), e.shflXor(s.index, off)});
  return s;
}

void buildArgmax(ImplicitLocOpBuilder &b, gpu::GPUModuleOp module,
                 StringRef name, ArrayRef<Value> args, int64_t n, int64_t width,
                 int64_t threads, int64_t unroll) {
  KernelEmitter e(b);
  Value x = args[0], y = args[1];
  int64_t vectors = n / width;
  int64_t perTrip = threads * unroll;
  int64_t trips = (vectors + perTrip - 1) / perTrip;
  bool allValid = vectors % perTrip == 0;
  Value m = e.ctaidX();
  Value tid = e.tidX();
  Value row = e.mul(m, e.c32(n));

  Value negInf = e.cf32(-std::numeric_limits<double>::infinity());
  auto loop = scf::ForOp::create(b, e.c32(0), e.c32(trips), e.c32(1),
                                 ValueRange{negInf, e.c32(kNone)});
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value base = e.add(e.mul(loop.getInductionVar(), e.c32(perTrip)), tid);
    SmallVector<Value> vec, valid;
    SmallVector<SmallVector<Value>> xs;
    for (int64_t u = 0; u < unroll; ++u) {
      Value v = e.add(base, e.c32(u * threads));
      vec.push_back(v);
      valid.push_back(allValid ? Value() : e.ult(v, e.c32(vectors)));
      Value at = allValid ? v : e.minu(v, e.c32(vectors - 1));
      xs.push_back(
          loadHalves(e, x, e.add(row, e.mul(at, e.c32(width))), width));
    }
    Best s{loop.getRegionIterArgs()[0], loop.getRegionIterArgs()[1]};
    for (int64_t u = 0; u < unroll; ++u)
      for (int64_t k = 0; k < width; ++k) {
        Value index = e.add(e.mul(vec[u], e.c32(width)), e.c32(k));
        Best next = better(e, s, {xs[u][k], index});
        if (valid[u]) {
          next.value =
              arith::SelectOp::create(b, valid[u], next.value, s.value);
          next.index =
              arith::SelectOp::create(b, valid[u], next.index, s.index);
        }
        s = next;
      }
    scf::YieldOp::create(b, ValueRange{s.value, s.index});
  }
  Best s = warpBest(e, {loop.getResult(0), loop.getResult(1)});
  int64_t warps = threads / 32;
  Value lane = e.band(tid, e.c32(31));
  Value isLane0 =
      arith::CmpIOp::create(b, arith::CmpIPredicate::eq, lane, e.c32(0));
  Value isThread0 =
      arith::CmpIOp::create(b, arith::CmpIPredicate::eq, tid, e.c32(0));
  auto storeResult = [&](Best best) {
    OpBuilder::InsertionGuard guard(b);
    auto write = scf::IfOp::create(b, isThread0, /*withElseRegion=*/false);
    b.setInsertionPointToStart(write.thenBlock());
    Value none = arith::CmpIOp::create(b, arith::CmpIPredicate::eq, best.index,
                                       e.c32(kNone));
    Value result = arith::SelectOp::create(b, none, e.c32(-1), best.index);
    e.store(result, e.gepBytes(y, e.mul(e.zext64(m), e.c64(4))), 4);
  };
  if (warps == 1) {
    storeResult(s);
    return;
  }
  Value values = sharedArray(b, module, (name + "_values").str(), e.f32(), 32);
  Value indices =
      sharedArray(b, module, (name + "_indices").str(), e.i32(), 32);
  Value warp = e.shru(tid, e.c32(5));
  {
    OpBuilder::InsertionGuard guard(b);
    auto write = scf::IfOp::create(b, isLane0, /*withElseRegion=*/false);
    b.setInsertionPointToStart(write.thenBlock());
    e.store(s.value, sharedElement(e, values, warp, 4), 4);
    e.store(s.index, sharedElement(e, indices, warp, 4), 4);
  }
  NVVM::Barrier0Op::create(b);
  // Warp 0 merges the warp winners: lane l < warps takes winner l, the
  // others the empty state; all 32 lanes run the butterfly.
  auto firstWarp = scf::IfOp::create(
      b, arith::CmpIOp::create(b, arith::CmpIPredicate::eq, warp, e.c32(0)),
      /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(firstWarp.thenBlock());
  Value has = e.ult(lane, e.c32(warps));
  Value slot = e.minu(lane, e.c32(warps - 1));
  Value v =
      LLVM::LoadOp::create(b, e.f32(), sharedElement(e, values, slot, 4), 4);
  Value i =
      LLVM::LoadOp::create(b, e.i32(), sharedElement(e, indices, slot, 4), 4);
  Best w{arith::SelectOp::create(b, has, v, negInf),
         arith::SelectOp::create(b, has, i, e.c32(kNone))};
  storeResult(warpBest(e, w));
}

} // namespace

FailureOr<SmallVector<OpLaunch>>
qf::lowerArgmax(ArgmaxOp op, OpKernelContext &context, int64_t batch) {
  RankedTensorType type = op.getInput().getType();
  if (failed(requireF16(op, "activations", type)))
    return failure();
  int64_t n = type.getDimSize(1);
  if (ShapedType::isDynamic(n))
    return op.emitOpError("needs a static row width for its GPU kernel"),
           failure();
  if (batch * n > std::numeric_limits<int32_t>::max())
    return op.emitOpError() << batch << " x " << n
                            << " elements overflow the kernel's i32 index",
           failure();
  int64_t width = halfVectorWidth(n);
  int64_t vectors = n / width;
  int64_t threads =
      std::min<int64_t>(1024, std::max<int64_t>(32, (vectors + 31) / 32 * 32));
  int64_t unroll = vectors > threads ? kUnroll : 1;
  std::string name = "qf_argmax_n" + std::to_string(n);
  MLIRContext *ctx = op.getContext();
  SmallVector<OpParam> params = {{"x", ParamKind::In, operandArg(ctx, 0)},
                                 {"y", ParamKind::Out, resultArg(ctx, 0)}};
  if (!context.module.lookupSymbol(name)) {
    ImplicitLocOpBuilder b(op.getLoc(), ctx);
    SmallVector<Value> args =
        createOpKernel(b, context.module, name, params, threads);
    buildArgmax(b, context.module, name, args, n, width, threads, unroll);
    LLVM::ReturnOp::create(b, ValueRange{});
  }
  int64_t shared = threads > 32 ? 2 * 32 * 4 : 0;
  return SmallVector<OpLaunch>{
      makeOpLaunch(name, params, batch, 1, threads, shared)};
}
