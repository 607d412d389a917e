//===- NormKernel.cpp - qf.rms_norm kernel --------------------------------===//
//
// y = x / sqrt(mean(x^2) + eps) * gamma, per row, in f32:
//
//   one block of T threads per row m (grid M); the row's H halves are V
//   vectors of `width` halves (16 bytes when H % 8 == 0); thread t holds
//   vectors t, t + T, ..., t + (P - 1) T in registers (P = ceil(V / T) <= 16),
//   so x is read once, with all P loads issued before any is used.
//   sum(x^2): per thread, then a warp xor butterfly, then the warp sums
//   through shared memory (one barrier) added in a fixed order by every
//   thread, so the whole row is scaled by one rstd.
//   rstd = 1 / sqrt(sum / H + eps) (sqrt.rn, div.rn); y = x * rstd * gamma,
//   rounded to f16 once.
//
// eps is a constant of the code, H sets the loop: the kernel is named by
// both and shared by every norm of the model with that shape and eps; M is
// the grid.
//
//===----------------------------------------------------------------------===//

#include "Ops/OpKernelCommon.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::qf;

namespace {

/// Vectors a thread may hold in registers (16 x 8 halves = 64 registers).
constexpr int64_t kMaxVectorsPerThread = 16;

struct NormPlan {
  int64_t width, vectors, threads, perThread;
};

/// Up to 256 threads while each holds at most 8 vectors (H <= 16384 at
/// width 8), up to 1024 beyond.
NormPlan planNorm(int64_t h) {
  NormPlan p;
  p.width = halfVectorWidth(h);
  p.vectors = h / p.width;
  auto roundWarp = [](int64_t n) {
    return std::max<int64_t>(32, (n + 31) / 32 * 32);
  };
  p.threads = std::min<int64_t>(256, roundWarp(p.vectors));
  p.perThread = (p.vectors + p.threads - 1) / p.threads;
  if (p.perThread > 8) {
    p.threads = std::min<int64_t>(1024, roundWarp((p.vectors + 7) / 8));
    p.perThread = (p.vectors + p.threads - 1) / p.threads;
  }
  // As few threads as keep P vectors each: H = 3584 (448 vectors) is 224
  // threads x 2, with no partial last vector to guard.
  p.threads = roundWarp((p.vectors + p.perThread - 1) / p.perThread);
  return p;
}

void buildNorm(ImplicitLocOpBuilder &b, gpu::GPUModuleOp module, StringRef name,
               ArrayRef<Value> args, const NormPlan &p, int64_t h, float eps) {
  KernelEmitter e(b);
  Value x = args[0], gamma = args[1], y = args[2];
  Value scratch =
      p.threads > 32
          ? sharedArray(b, module, (name + "_partials").str(), e.f32(), 32)
          : Value();
  Value row = e.mul(e.ctaidX(), e.c32(h));
  Value tid = e.tidX();

  // Vector j of this thread is index tid + j * T; only the last may run past
  // V (then it is clamped for the load and left out of the sum and store).
  SmallVector<Value> index, valid;
  SmallVector<SmallVector<Value>> xs;
  for (int64_t j = 0; j < p.perThread; ++j) {
    Value v = e.add(tid, e.c32(j * p.threads));
    bool alwaysValid = (j + 1) * p.threads <= p.vectors;
    index.push_back(v);
    valid.push_back(alwaysValid ? Value() : e.ult(v, e.c32(p.vectors)));
    Value loadAt = alwaysValid ? v : e.minu(v, e.c32(p.vectors - 1));
    xs.push_back(
        loadHalves(e, x, e.add(row, e.mul(loadAt, e.c32(p.width))), p.width));
  }
  Value sumsq = e.cf32(0.0);
  for (int64_t j = 0; j < p.perThread; ++j) {
    Value part = e.cf32(0.0);
    for (Value v : xs[j])
      part = e.fma(v, v, part);
    if (valid[j])
      part = arith::SelectOp::create(b, valid[j], part, e.cf32(0.0));
    sumsq = e.fadd(sumsq, part);
  }
  Value total = blockSum(e, sumsq, scratch, p.threads / 32);
  Value meanPlusEps =
      e.fadd(e.fdiv(total, e.cf32(static_cast<double>(h))), e.cf32(eps));
  Value rstd = e.fdiv(e.cf32(1.0), LLVM::SqrtOp::create(b, meanPlusEps));

  for (int64_t j = 0; j < p.perThread; ++j) {
    OpBuilder::InsertionGuard guard(b);
    if (valid[j]) {
      auto inRange = scf::IfOp::create(b, valid[j], /*withElseRegion=*/false);
      b.setInsertionPointToStart(inRange.thenBlock());
    }
    Value col = e.mul(index[j], e.c32(p.width));
    SmallVector<Value> g = loadHalves(e, gamma, col, p.width);
    SmallVector<Value> out;
    for (int64_t i = 0; i < p.width; ++i)
      out.push_back(e.fmul(e.fmul(xs[j][i], rstd), g[i]));
    storeHalves(e, y, e.add(row, col), out);
  }
}

} // namespace

FailureOr<SmallVector<OpLaunch>>
qf::lowerRMSNorm(RMSNormOp op, OpKernelContext &context, int64_t batch) {
  RankedTensorType type = op.getInput().getType();
  if (failed(requireF16(op, "activations", type)))
    return failure();
  int64_t h = type.getDimSize(1);
  if (ShapedType::isDynamic(h))
    return op.emitOpError("needs a static row width for its GPU kernel"),
           failure();
  NormPlan p = planNorm(h);
  if (p.perThread > kMaxVectorsPerThread)
    return op.emitOpError() << "row width " << h << " needs " << p.perThread
                            << " vectors of " << p.width
                            << " halves per thread of a 1024-thread block; "
                               "the kernel holds at most "
                            << kMaxVectorsPerThread,
           failure();
  float eps = op.getEps().convertToFloat();
  std::string name =
      "qf_rms_norm_h" + std::to_string(h) + "_eps" + nameNumber(eps, true);
  MLIRContext *ctx = op.getContext();
  SmallVector<OpParam> params = {{"x", ParamKind::In, operandArg(ctx, 0)},
                                 {"gamma", ParamKind::In, operandArg(ctx, 1)},
                                 {"y", ParamKind::Out, resultArg(ctx, 0)}};
  if (!context.module.lookupSymbol(name)) {
    ImplicitLocOpBuilder b(op.getLoc(), ctx);
    SmallVector<Value> args =
        createOpKernel(b, context.module, name, params, p.threads);
    buildNorm(b, context.module, name, args, p, h, eps);
    LLVM::ReturnOp::create(b, ValueRange{});
  }
  int64_t shared = p.threads > 32 ? 32 * 4 : 0;
  return SmallVector<OpLaunch>{
      makeOpLaunch(name, params, batch, 1, p.threads, shared)};
}
