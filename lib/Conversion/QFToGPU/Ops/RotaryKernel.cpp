//===- RotaryKernel.cpp - qf.rotary kernel --------------------------------===//
//
// Rotary position embedding, "rotate half" per head (Llama, Qwen2): for head
// h of row m and i < d/2, with a = positions[m] * inv_freq[i],
//
//   y[h d + i]       = x[h d + i] cos a - x[h d + i + d/2] sin a
//   y[h d + i + d/2] = x[h d + i + d/2] cos a + x[h d + i] sin a
//
// inv_freq[i] = theta^(-2i/d), rescaled as Llama 3 does when the scaling
// attributes are present (transformers' _compute_llama3_parameters), is
// computed at compile time in double and embedded as a constant f64 table
// (`qf_rope_inv_freq_...`, shared by every rotary of the same d and
// parameters).
//
// Layout: a thread owns `width` consecutive pairs of one head (16-byte loads
// of x[i0 .. i0+8) and x[i0+d/2 .. i0+d/2+8) when d/2 % 8 == 0); grid
// (ceil(pairs per row / (width T)), M), blockIdx.y = row.
//
// Accuracy: angles reach positions x inv_freq ~ 1e4..1e5 rad, where an f32
// angle is off by ~1e-3 rad and sin.approx is meaningless without a
// reduction. The angle is formed in double (H100/H200 and A100 run f64 at
// half the f32 rate; a handful per element), reduced to r in [-pi, pi] as
// a - 2 pi round(a / 2 pi) with one f64 fma (error ~1e-11 for k < 1e5),
// then rounded to f32 for sin.approx.f32 / cos.approx.f32, whose absolute
// error on [-pi, pi] is below 2^-20.
//
//===----------------------------------------------------------------------===//

#include "Ops/OpKernelCommon.h"
#include "Ops/RopeCommon.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

#include <cmath>
#include <cstdio>

using namespace mlir;
using namespace mlir::qf;

namespace {

constexpr double kTwoPi = 6.283185307179586476925286766559;

/// `value` as %g prints it (8, 0.5, 1e+06), for diagnostics.
std::string formatNumber(double value) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", value);
  return buf;
}

/// inv_freq for `p` (double), as transformers computes it.
SmallVector<double> invFreq(const RopeParams &p) {
  int64_t d = p.headDim;
  SmallVector<double> out;
  for (int64_t i = 0; i < d / 2; ++i) {
    double f = std::pow(p.theta, -2.0 * static_cast<double>(i) /
                                     static_cast<double>(d));
    if (p.scalingFactor) {
      double factor = *p.scalingFactor;
      double low = *p.lowFreqFactor;
      double high = *p.highFreqFactor;
      double original = static_cast<double>(*p.originalMaxPosition);
      double wavelen = kTwoPi / f;
      if (wavelen < original / high) {
        // High frequencies: unchanged.
      } else if (wavelen > original / low) {
        f = f / factor;
      } else {
        double smooth = (original / wavelen - low) / (high - low);
        f = (1.0 - smooth) * f / factor + smooth * f;
      }
    }
    out.push_back(f);
  }
  return out;
}

std::optional<double> toDouble(std::optional<APFloat> v) {
  if (!v)
    return std::nullopt;
  return v->convertToDouble();
}

} // namespace

RopeParams qf::ropeParams(RotaryOp op) {
  RopeParams p;
  p.headDim = op.getHeadDim();
  p.theta = op.getTheta().convertToDouble();
  p.scalingFactor = toDouble(op.getScalingFactor());
  p.lowFreqFactor = toDouble(op.getLowFreqFactor());
  p.highFreqFactor = toDouble(op.getHighFreqFactor());
  if (op.getOriginalMaxPosition())
    p.originalMaxPosition = static_cast<int64_t>(*op.getOriginalMaxPosition());
  return p;
}

std::optional<RopeParams> qf::ropeParams(AttentionOp op) {
  if (!op.getRopeTheta())
    return std::nullopt;
  RopeParams p;
  p.headDim = op.getHeadDim();
  p.theta = op.getRopeTheta()->convertToDouble();
  p.scalingFactor = toDouble(op.getScalingFactor());
  p.lowFreqFactor = toDouble(op.getLowFreqFactor());
  p.highFreqFactor = toDouble(op.getHighFreqFactor());
  if (op.getOriginalMaxPosition())
    p.originalMaxPosition = static_cast<int64_t>(*op.getOriginalMaxPosition());
  return p;
}

LogicalResult qf::checkRope(Operation *op, const RopeParams &p) {
  if (p.scalingFactor && !(*p.highFreqFactor > *p.lowFreqFactor))
    return op->emitOpError()
               << "llama3 rope scaling needs high_freq_factor > "
                  "low_freq_factor (the smoothing divides by their "
                  "difference), got "
               << formatNumber(*p.highFreqFactor) << " and "
               << formatNumber(*p.lowFreqFactor),
           failure();
  return success();
}

std::string qf::ropeKey(const RopeParams &p) {
  std::string key = "t" + nameNumber(p.theta);
  if (p.scalingFactor)
    key += "_llama3_f" + nameNumber(*p.scalingFactor) + "_lo" +
           nameNumber(*p.lowFreqFactor) + "_hi" +
           nameNumber(*p.highFreqFactor) + "_o" +
           std::to_string(*p.originalMaxPosition);
  return key;
}

LLVM::GlobalOp qf::ropeTable(ImplicitLocOpBuilder &b, gpu::GPUModuleOp module,
                             const RopeParams &p) {
  std::string name =
      "qf_rope_inv_freq_d" + std::to_string(p.headDim) + "_" + ropeKey(p);
  if (auto existing = module.lookupSymbol<LLVM::GlobalOp>(name))
    return existing;
  SmallVector<double> values = invFreq(p);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(module.getBody());
  int64_t count = values.size();
  auto tensorType = RankedTensorType::get({count}, b.getF64Type());
  return LLVM::GlobalOp::create(
      b, LLVM::LLVMArrayType::get(b.getF64Type(), count), /*isConstant=*/true,
      LLVM::Linkage::Internal, name, DenseElementsAttr::get(tensorType, ArrayRef<double>(values)),
      /*alignment=*/16, /*addrSpace=*/1);
}

SmallVector<Value> qf::loadInvFreq(KernelEmitter &e, LLVM::GlobalOp table,
                                   Value i0, int64_t count) {
  ImplicitLocOpBuilder &b = e.builder();
  Type f64 = b.getF64Type();
  Value tableBase = LLVM::AddressOfOp::create(b, table);
  Value tableAt = e.gepBytes(tableBase, e.mul(e.zext64(i0), e.c64(8)));
  SmallVector<Value> freq;
  if (count % 2 != 0) {
    for (int64_t k = 0; k < count; ++k)
      freq.push_back(e.loadRO(f64, e.gepBytes(tableAt, e.c64(8 * k)), 8));
    return freq;
  }
  auto pairType = VectorType::get({2}, f64);
  for (int64_t k = 0; k < count; k += 2) {
    Value pair = e.loadRO(pairType, e.gepBytes(tableAt, e.c64(8 * k)), 16);
    freq.push_back(e.extract(pair, 0));
    freq.push_back(e.extract(pair, 1));
  }
  return freq;
}

std::pair<Value, Value> qf::ropeSinCos(KernelEmitter &e, Value position,
                                       Value freq) {
  ImplicitLocOpBuilder &b = e.builder();
  auto cf64 = [&](double v) {
    return arith::ConstantOp::create(b, b.getF64FloatAttr(v)).getResult();
  };
  Value angle = arith::MulFOp::create(b, position, freq);
  Value turns = LLVM::FFloorOp::create(
      b, LLVM::FMAOp::create(b, angle, cf64(1.0 / kTwoPi), cf64(0.5)));
  Value reduced = LLVM::FMAOp::create(b, arith::NegFOp::create(b, turns),
                                      cf64(kTwoPi), angle);
  Value r = arith::TruncFOp::create(b, e.f32(), reduced);
  Value sin = e.ptx("sin.approx.f32 $0, $1;", "=f,f", e.f32(), {r});
  Value cos = e.ptx("cos.approx.f32 $0, $1;", "=f,f", e.f32(), {r});
  return {sin, cos};
}

Value qf::rotateFirst(KernelEmitter &e, Value x1, Value x2, Value sin,
                      Value cos) {
  return e.fsub(e.fmul(x1, cos), e.fmul(x2, sin));
}

Value qf::rotateSecond(KernelEmitter &e, Value x1, Value x2, Value sin,
                       Value cos) {
  return e.fadd(e.fmul(x2, cos), e.fmul(x1, sin));
}

namespace {

struct RotaryPlan {
  int64_t d, half, width, rowWidth, chunksPerHead, chunksPerRow, threads,
      blocksPerRow;
};

void buildRotary(ImplicitLocOpBuilder &b, ArrayRef<Value> args,
                 LLVM::GlobalOp table, const RotaryPlan &p) {
  KernelEmitter e(b);
  Value x = args[0], positions = args[1], y = args[2];
  Value m = NVVM::BlockIdYOp::create(b, e.i32());
  Value chunk = e.add(e.mul(e.ctaidX(), e.c32(p.threads)), e.tidX());
  OpBuilder::InsertionGuard guard(b);
  if (p.blocksPerRow * p.threads != p.chunksPerRow) {
    auto inRange = scf::IfOp::create(b, e.ult(chunk, e.c32(p.chunksPerRow)),
                                     /*withElseRegion=*/false);
    b.setInsertionPointToStart(inRange.thenBlock());
  }
  Value head = e.divu(chunk, e.c32(p.chunksPerHead));
  Value i0 = e.mul(e.remu(chunk, e.c32(p.chunksPerHead)), e.c32(p.width));
  Value first =
      e.add(e.add(e.mul(m, e.c32(p.rowWidth)), e.mul(head, e.c32(p.d))), i0);
  Value second = e.add(first, e.c32(p.half));
  SmallVector<Value> x1 = loadHalves(e, x, first, p.width);
  SmallVector<Value> x2 = loadHalves(e, x, second, p.width);
  Value pos =
      e.loadRO(e.i32(), e.gepBytes(positions, e.mul(e.zext64(m), e.c64(4))), 4);

  // inv_freq[i0 .. i0 + width): f64 pairs (16-byte loads) when width >= 2.
  SmallVector<Value> freq = loadInvFreq(e, table, i0, p.width);
  Value posD = arith::SIToFPOp::create(b, b.getF64Type(), pos);
  SmallVector<Value> out1, out2;
  for (int64_t k = 0; k < p.width; ++k) {
    auto [sin, cos] = ropeSinCos(e, posD, freq[k]);
    out1.push_back(rotateFirst(e, x1[k], x2[k], sin, cos));
    out2.push_back(rotateSecond(e, x1[k], x2[k], sin, cos));
  }
  storeHalves(e, y, first, out1);
  storeHalves(e, y, second, out2);
}

} // namespace

FailureOr<SmallVector<OpLaunch>>
qf::lowerRotary(RotaryOp op, OpKernelContext &context, int64_t batch) {
  RankedTensorType type = op.getInput().getType();
  if (failed(requireF16(op, "activations", type)))
    return failure();
  RotaryPlan p;
  p.d = op.getHeadDim();
  p.half = p.d / 2;
  p.rowWidth = type.getDimSize(1);
  if (ShapedType::isDynamic(p.rowWidth))
    return op.emitOpError("needs a static row width for its GPU kernel"),
           failure();
  RopeParams rope = ropeParams(op);
  if (failed(checkRope(op, rope)))
    return failure();
  p.width = halfVectorWidth(p.half);
  p.chunksPerHead = p.half / p.width;
  p.chunksPerRow = p.rowWidth / p.d * p.chunksPerHead;
  p.threads = std::min<int64_t>(
      256, std::max<int64_t>(32, (p.chunksPerRow + 31) / 32 * 32));
  p.blocksPerRow = (p.chunksPerRow + p.threads - 1) / p.threads;

  std::string name = "qf_rotary_w" + std::to_string(p.rowWidth) + "_d" +
                     std::to_string(p.d) + "_" + ropeKey(rope);
  MLIRContext *ctx = op.getContext();
  SmallVector<OpParam> params = {
      {"x", ParamKind::In, operandArg(ctx, 0)},
      {"positions", ParamKind::In, operandArg(ctx, 1)},
      {"y", ParamKind::Out, resultArg(ctx, 0)}};
  if (!context.module.lookupSymbol(name)) {
    ImplicitLocOpBuilder b(op.getLoc(), ctx);
    LLVM::GlobalOp table = ropeTable(b, context.module, rope);
    SmallVector<Value> args =
        createOpKernel(b, context.module, name, params, p.threads);
    buildRotary(b, args, table, p);
    LLVM::ReturnOp::create(b, ValueRange{});
  }
  return SmallVector<OpLaunch>{
      makeOpLaunch(name, params, p.blocksPerRow, batch, p.threads)};
}
