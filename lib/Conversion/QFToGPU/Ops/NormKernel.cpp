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
// The permuted variant (`_perm`, an act_order weight's input,
// docs/act-order.md) writes y[m, j] = x[m, perm[j]] * rstd * gamma[perm[j]]:
// the same values in the weight's sorted column order, so the matmul needs
// no permute launch. sum(x^2) does not depend on the order, so rstd is the
// plain kernel's, bit for bit. Where x's row and gamma fit in shared memory
// together (H <= kMaxStagedRow) each thread stores its x and gamma vectors
// there beside the sum's loads, and loads its perm entries as vectors, all
// before the block sum's barrier; after it the output gathers from shared
// memory. So the gather adds no global round trip after the sum (longer
// rows gather x and gamma from global memory, after a scalar perm load).
// The stores stay vectors.
//
//===----------------------------------------------------------------------===//

#include "Ops/OpKernelCommon.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::qf;

namespace {

/// Vectors a thread may hold in registers (16 x 8 halves = 64 registers).
constexpr int64_t kMaxVectorsPerThread = 16;

/// The longest row whose x and gamma the permuted kernel stages in shared
/// memory: two f16 rows beside the 32 partial sums in 48 KB of static
/// shared memory.
constexpr int64_t kMaxStagedRow = (48 * 1024 - 32 * 4) / 4;

/// Whether the kernel stages x's row and gamma in shared memory.
bool stagesRow(bool permuted, int64_t h) {
  return permuted && h <= kMaxStagedRow;
}

/// Static shared bytes of the kernel: the block sum's partials, and the
/// staged rows.
int64_t normSharedBytes(int64_t threads, int64_t h, bool permuted) {
  return (threads > 32 ? 32 * 4 : 0) + (stagesRow(permuted, h) ? 2 * h * 2 : 0);
}

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

/// Element `index` of the shared f16 row `row`, as f32.
Value loadSharedHalf(KernelEmitter &e, Value row, Value index) {
  return e.extf32(LLVM::LoadOp::create(e.builder(), e.f16(),
                                       sharedElement(e, row, index, 2), 2));
}

void buildNorm(ImplicitLocOpBuilder &b, gpu::GPUModuleOp module, StringRef name,
               ArrayRef<Value> args, const NormPlan &p, int64_t h, float eps) {
  KernelEmitter e(b);
  const bool permuted = args.size() == 4;
  const bool staged = stagesRow(permuted, h);
  Value x = args[0], gamma = args[1], y = args.back();
  Value perm = permuted ? args[2] : Value();
  Value scratch =
      p.threads > 32
          ? sharedArray(b, module, (name + "_partials").str(), e.f32(), 32)
          : Value();
  Value xRow = staged ? sharedArray(b, module, (name + "_x").str(), e.f16(), h)
                      : Value();
  Value gammaRow =
      staged ? sharedArray(b, module, (name + "_gamma").str(), e.f16(), h)
             : Value();
  Value row = e.mul(e.ctaidX(), e.c32(h));
  Value tid = e.tidX();

  // Vector j of this thread is index tid + j * T; only the last may run past
  // V (then it is clamped for the load and left out of the sum and store).
  SmallVector<Value> index, valid;
  SmallVector<SmallVector<Value>> xs, sources;
  for (int64_t j = 0; j < p.perThread; ++j) {
    Value v = e.add(tid, e.c32(j * p.threads));
    bool alwaysValid = (j + 1) * p.threads <= p.vectors;
    index.push_back(v);
    valid.push_back(alwaysValid ? Value() : e.ult(v, e.c32(p.vectors)));
    Value loadAt = alwaysValid ? v : e.minu(v, e.c32(p.vectors - 1));
    Value col = e.mul(loadAt, e.c32(p.width));
    if (!staged) {
      xs.push_back(loadHalves(e, x, e.add(row, col), p.width));
      continue;
    }
    Value xRaw = loadRaw(e, x, e.add(row, col), p.width);
    Value gammaRaw = loadRaw(e, gamma, col, p.width);
    sources.push_back(loadWords(e, perm, col, p.width));
    xs.push_back(halvesOf(e, xRaw, p.width));
    OpBuilder::InsertionGuard guard(b);
    if (valid[j]) {
      auto inRange = scf::IfOp::create(b, valid[j], /*withElseRegion=*/false);
      b.setInsertionPointToStart(inRange.thenBlock());
    }
    const unsigned align = static_cast<unsigned>(p.width * 2);
    e.store(xRaw, sharedElement(e, xRow, col, 2), align);
    e.store(gammaRaw, sharedElement(e, gammaRow, col, 2), align);
  }
  // The staged rows are read after the block sum's barrier; one warp has
  // none of its own.
  if (staged && p.threads <= 32)
    NVVM::Barrier0Op::create(b);
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
    SmallVector<Value> out;
    if (staged) {
      for (Value source : sources[j]) {
        Value xv = loadSharedHalf(e, xRow, source);
        Value g = loadSharedHalf(e, gammaRow, source);
        out.push_back(e.fmul(e.fmul(xv, rstd), g));
      }
    } else if (permuted) {
      for (int64_t i = 0; i < p.width; ++i) {
        Value source = e.loadRO(
            e.i32(),
            e.gepBytes(perm, e.zext64(e.mul(e.add(col, e.c32(i)), e.c32(4)))),
            4);
        Value xv = loadHalves(e, x, e.add(row, source), 1).front();
        Value g = loadHalves(e, gamma, source, 1).front();
        out.push_back(e.fmul(e.fmul(xv, rstd), g));
      }
    } else {
      SmallVector<Value> g = loadHalves(e, gamma, col, p.width);
      for (int64_t i = 0; i < p.width; ++i)
        out.push_back(e.fmul(e.fmul(xs[j][i], rstd), g[i]));
    }
    storeHalves(e, y, e.add(row, col), out);
  }
}

} // namespace

FailureOr<OpLaunch> qf::emitRMSNormLaunch(Operation *op,
                                          gpu::GPUModuleOp module,
                                          int64_t rows, int64_t h, float eps,
                                          ArrayRef<LaunchArgAttr> args) {
  if (ShapedType::isDynamic(h))
    return op->emitOpError("needs a static row width for its GPU kernel"),
           failure();
  NormPlan p = planNorm(h);
  if (p.perThread > kMaxVectorsPerThread)
    return op->emitOpError() << "row width " << h << " needs " << p.perThread
                             << " vectors of " << p.width
                             << " halves per thread of a 1024-thread block; "
                                "the kernel holds at most "
                             << kMaxVectorsPerThread,
           failure();
  const bool permuted = args.size() == 4;
  std::string name = "qf_rms_norm_h" + std::to_string(h) + "_eps" +
                     nameNumber(eps, true) + (permuted ? "_perm" : "");
  SmallVector<OpParam> params = {{"x", ParamKind::In, args[0]},
                                 {"gamma", ParamKind::In, args[1]}};
  if (permuted)
    params.push_back({"perm", ParamKind::In, args[2]});
  params.push_back({"y", ParamKind::Out, args.back()});
  if (!module.lookupSymbol(name)) {
    ImplicitLocOpBuilder b(op->getLoc(), op->getContext());
    SmallVector<Value> kernelArgs =
        createOpKernel(b, module, name, params, p.threads);
    buildNorm(b, module, name, kernelArgs, p, h, eps);
    LLVM::ReturnOp::create(b, ValueRange{});
  }
  int64_t shared = normSharedBytes(p.threads, h, permuted);
  return makeOpLaunch(name, params, rows, 1, p.threads, shared);
}

FailureOr<SmallVector<OpLaunch>>
qf::lowerRMSNorm(RMSNormOp op, OpKernelContext &context, int64_t batch) {
  RankedTensorType type = op.getInput().getType();
  if (failed(requireF16(op, "activations", type)))
    return failure();
  MLIRContext *ctx = op.getContext();
  FailureOr<OpLaunch> launch = emitRMSNormLaunch(
      op, context.module, batch, type.getDimSize(1),
      op.getEps().convertToFloat(),
      {operandArg(ctx, 0), operandArg(ctx, 1), resultArg(ctx, 0)});
  if (failed(launch))
    return failure();
  return SmallVector<OpLaunch>{*launch};
}
