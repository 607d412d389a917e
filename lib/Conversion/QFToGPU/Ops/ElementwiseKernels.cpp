//===- ElementwiseKernels.cpp - qf.add and qf.silu_mul kernels ------------===//
//
// Both ops are elementwise over [M, H] f16: the M rows are contiguous, so the
// kernel sees one flat array of M * H halves and walks it in vectors of the
// widest f16 width dividing H (16 bytes when H % 8 == 0), grid-stride:
//
//   for (v = blockIdx.x * 256 + threadIdx.x; v < n; v += gridDim.x * 256)
//     y[v] = f(lhs[v], rhs[v])          // per vector of `width` halves
//
// n (the vector count, M * H / width) is an i32 immediate, so one kernel per
// op kind and vector width serves every layer and every batch size:
//   add:      y = lhs + rhs                        (in f32, rounded once)
//   silu_mul: y = gate / (1 + exp(-gate)) * up     (in f32)
//
//===----------------------------------------------------------------------===//

#include "Ops/OpKernelCommon.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::qf;

namespace {

constexpr int64_t kThreads = 256;
/// Enough blocks to fill an H200 several times over; larger tensors loop.
constexpr int64_t kMaxBlocks = 1024;

void buildBody(ImplicitLocOpBuilder &b, ArrayRef<Value> args, Elementwise kind,
               int64_t width) {
  KernelEmitter e(b);
  Value lhs = args[0], rhs = args[1], y = args[2], n = args[3];
  Value first = e.add(e.mul(e.ctaidX(), e.c32(kThreads)), e.tidX());
  Value stride = e.mul(NVVM::GridDimXOp::create(b, e.i32()), e.c32(kThreads));
  auto loop = scf::ForOp::create(b, first, n, stride);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value elem = e.mul(loop.getInductionVar(), e.c32(width));
  SmallVector<Value> a = loadHalves(e, lhs, elem, width);
  SmallVector<Value> c = loadHalves(e, rhs, elem, width);
  SmallVector<Value> out;
  for (int64_t i = 0; i < width; ++i)
    out.push_back(kind == Elementwise::Add ? e.fadd(a[i], c[i])
                                           : e.siluMul(a[i], c[i]));
  storeHalves(e, y, elem, out);
}

FailureOr<SmallVector<OpLaunch>> lowerElementwise(Operation *op,
                                                  Elementwise kind,
                                                  OpKernelContext &context,
                                                  int64_t batch) {
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  if (failed(requireF16(op, "activations", type)))
    return failure();
  int64_t h = type.getDimSize(1);
  if (ShapedType::isDynamic(h))
    return op->emitOpError() << "needs a static row width for its GPU kernel",
           failure();
  MLIRContext *ctx = op->getContext();
  FailureOr<OpLaunch> launch = emitElementwiseLaunch(
      op, context.module, kind, batch, h,
      {operandArg(ctx, 0), operandArg(ctx, 1), resultArg(ctx, 0)});
  if (failed(launch))
    return failure();
  return SmallVector<OpLaunch>{*launch};
}

} // namespace

FailureOr<OpLaunch> qf::emitElementwiseLaunch(Operation *op,
                                              gpu::GPUModuleOp module,
                                              Elementwise kind, int64_t rows,
                                              int64_t h,
                                              ArrayRef<LaunchArgAttr> args) {
  int64_t width = halfVectorWidth(h);
  int64_t vectors = rows * h / width;
  if (vectors > std::numeric_limits<int32_t>::max())
    return op->emitOpError() << rows << " x " << h
                             << " elements overflow the kernel's i32 index",
           failure();
  std::string name = (kind == Elementwise::Add ? "qf_add_v" : "qf_silu_mul_v") +
                     std::to_string(width);
  MLIRContext *ctx = op->getContext();
  SmallVector<OpParam> params = {
      {kind == Elementwise::Add ? "lhs" : "gate", ParamKind::In, args[0]},
      {kind == Elementwise::Add ? "rhs" : "up", ParamKind::In, args[1]},
      {"y", ParamKind::Out, args[2]},
      {"n", ParamKind::I32, i32Arg(ctx, vectors)}};
  if (!module.lookupSymbol(name)) {
    ImplicitLocOpBuilder b(op->getLoc(), ctx);
    SmallVector<Value> kernelArgs =
        createOpKernel(b, module, name, params, kThreads);
    buildBody(b, kernelArgs, kind, width);
    LLVM::ReturnOp::create(b, ValueRange{});
  }
  int64_t blocks = std::min(kMaxBlocks, (vectors + kThreads - 1) / kThreads);
  return makeOpLaunch(name, params, blocks, 1, kThreads);
}

FailureOr<SmallVector<OpLaunch>>
qf::lowerAdd(AddOp op, OpKernelContext &context, int64_t batch) {
  return lowerElementwise(op, Elementwise::Add, context, batch);
}

FailureOr<SmallVector<OpLaunch>>
qf::lowerSiluMul(SiluMulOp op, OpKernelContext &context, int64_t batch) {
  return lowerElementwise(op, Elementwise::SiluMul, context, batch);
}
