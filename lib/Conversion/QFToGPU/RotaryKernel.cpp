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

#include "OpKernelCommon.h"

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

/// inv_freq for rotary `op` (double), as transformers computes it.
SmallVector<double> invFreq(RotaryOp op) {
  int64_t d = op.getHeadDim();
  double theta = op.getTheta().convertToDouble();
  SmallVector<double> out;
  for (int64_t i = 0; i < d / 2; ++i) {
    double f =
        std::pow(theta, -2.0 * static_cast<double>(i) / static_cast<double>(d));
    if (op.getScalingFactor()) {
      double factor = op.getScalingFactor()->convertToDouble();
      double low = op.getLowFreqFactor()->convertToDouble();
      double high = op.getHighFreqFactor()->convertToDouble();
      double original = static_cast<double>(*op.getOriginalMaxPosition());
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

/// Everything besides d and the row width that determines the table:
/// theta, and the Llama 3 parameters when present.
std::string tableKey(RotaryOp op) {
  std::string key = "t" + nameNumber(op.getTheta().convertToDouble());
  if (op.getScalingFactor())
    key += "_llama3_f" + nameNumber(op.getScalingFactor()->convertToDouble()) +
           "_lo" + nameNumber(op.getLowFreqFactor()->convertToDouble()) +
           "_hi" + nameNumber(op.getHighFreqFactor()->convertToDouble()) +
           "_o" + std::to_string(*op.getOriginalMaxPosition());
  return key;
}

/// The constant f64 table `name` of `values`, created once per module.
LLVM::GlobalOp invFreqTable(ImplicitLocOpBuilder &b, gpu::GPUModuleOp module,
                            StringRef name, ArrayRef<double> values) {
  if (auto existing = module.lookupSymbol<LLVM::GlobalOp>(name))
    return existing;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(module.getBody());
  int64_t count = values.size();
  auto tensorType = RankedTensorType::get({count}, b.getF64Type());
  return LLVM::GlobalOp::create(
      b, LLVM::LLVMArrayType::get(b.getF64Type(), count), /*isConstant=*/true,
      LLVM::Linkage::Internal, name, DenseElementsAttr::get(tensorType, values),
      /*alignment=*/16, /*addrSpace=*/1);
}

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
  Type f64 = b.getF64Type();
  Value tableBase = LLVM::AddressOfOp::create(b, table);
  Value tableAt = e.gepBytes(tableBase, e.mul(e.zext64(i0), e.c64(8)));
  SmallVector<Value> freq;
  if (p.width == 1) {
    freq.push_back(e.loadRO(f64, tableAt, 8));
  } else {
    auto pairType = VectorType::get({2}, f64);
    for (int64_t k = 0; k < p.width; k += 2) {
      Value pair = e.loadRO(pairType, e.gepBytes(tableAt, e.c64(8 * k)), 16);
      freq.push_back(e.extract(pair, 0));
      freq.push_back(e.extract(pair, 1));
    }
  }

  Value posD = arith::SIToFPOp::create(b, f64, pos);
  auto cf64 = [&](double v) {
    return arith::ConstantOp::create(b, b.getF64FloatAttr(v)).getResult();
  };
  SmallVector<Value> out1, out2;
  for (int64_t k = 0; k < p.width; ++k) {
    Value angle = arith::MulFOp::create(b, posD, freq[k]);
    Value turns = LLVM::FFloorOp::create(
        b, LLVM::FMAOp::create(b, angle, cf64(1.0 / kTwoPi), cf64(0.5)));
    Value reduced = LLVM::FMAOp::create(b, arith::NegFOp::create(b, turns),
                                        cf64(kTwoPi), angle);
    Value r = arith::TruncFOp::create(b, e.f32(), reduced);
    Value sin = e.ptx("sin.approx.f32 $0, $1;", "=f,f", e.f32(), {r});
    Value cos = e.ptx("cos.approx.f32 $0, $1;", "=f,f", e.f32(), {r});
    out1.push_back(e.fsub(e.fmul(x1[k], cos), e.fmul(x2[k], sin)));
    out2.push_back(e.fadd(e.fmul(x2[k], cos), e.fmul(x1[k], sin)));
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
  if (op.getScalingFactor() && !(op.getHighFreqFactor()->convertToDouble() >
                                 op.getLowFreqFactor()->convertToDouble()))
    return op.emitOpError()
               << "llama3 rope scaling needs high_freq_factor > "
                  "low_freq_factor (the smoothing divides by their "
                  "difference), got "
               << formatNumber(op.getHighFreqFactor()->convertToDouble())
               << " and "
               << formatNumber(op.getLowFreqFactor()->convertToDouble()),
           failure();
  p.width = halfVectorWidth(p.half);
  p.chunksPerHead = p.half / p.width;
  p.chunksPerRow = p.rowWidth / p.d * p.chunksPerHead;
  p.threads = std::min<int64_t>(
      256, std::max<int64_t>(32, (p.chunksPerRow + 31) / 32 * 32));
  p.blocksPerRow = (p.chunksPerRow + p.threads - 1) / p.threads;

  std::string key = tableKey(op);
  std::string name = "qf_rotary_w" + std::to_string(p.rowWidth) + "_d" +
                     std::to_string(p.d) + "_" + key;
  MLIRContext *ctx = op.getContext();
  SmallVector<OpParam> params = {
      {"x", ParamKind::In, operandArg(ctx, 0)},
      {"positions", ParamKind::In, operandArg(ctx, 1)},
      {"y", ParamKind::Out, resultArg(ctx, 0)}};
  if (!context.module.lookupSymbol(name)) {
    ImplicitLocOpBuilder b(op.getLoc(), ctx);
    LLVM::GlobalOp table = invFreqTable(
        b, context.module,
        "qf_rope_inv_freq_d" + std::to_string(p.d) + "_" + key, invFreq(op));
    SmallVector<Value> args =
        createOpKernel(b, context.module, name, params, p.threads);
    buildRotary(b, args, table, p);
    LLVM::ReturnOp::create(b, ValueRange{});
  }
  return SmallVector<OpLaunch>{
      makeOpLaunch(name, params, p.blocksPerRow, batch, p.threads)};
}
