//===- GPTQBlockKernel.cpp - qf.gptq_block_update kernel ------------------===//
//
// One block of GPTQ's column loop (runtime/include/qfuse/gptq/Block.h), bit for bit:
//
//   one warp per row (4 rows per 128-thread block, grid ceil(R / 4)); lane l
//   holds the row's columns l, l + 32, l + 64, l + 96 (P = ceil(B / 32)
//   registers), so the whole row stays in registers for the B columns.
//   Column j = 32 k + l (k unrolled here, l an scf.for):
//     [dynamic, j % G == 0]  the group's amax/min/max over the lanes' current
//                            weights (amax: a warp max, exact in any order;
//                            min/max with their columns, so that a zero
//                            extreme's sign is the host's: WarpExtreme.h), then
//                            Grid::fit's double arithmetic in every lane;
//     wj = shfl(w[k], l)     every lane computes code, value and error of
//                            column j redundantly (the same operations on
//                            the same bits give the same results);
//     w[c] -= e * U[j][c]    each lane for its own columns c > j.
//   Codes and errors (and, with the `values` result, each code's value as
//   f16) stay in the owning lane's registers and are stored once, coalesced,
//   after the loop; dynamic group parameters are stored by lane 0.
//
// The arithmetic is the reference's, operation for operation: every f32 or
// f64 operation is an explicitly rounded PTX instruction (mul.rn, sub.rn,
// div.rn, cvt.rni), written as inline PTX so that neither LLVM (which would
// only contract with a `contract` flag) nor ptxas (which fuses plain mul.f32
// and add.f32 into fma) can change the rounding. Grid::code divides in f64
// (rint of an f32 quotient can differ at half-way points); the scale is
// rounded into its type as format::storeScale does (up for f16/bf16/f32/E8M0,
// to nearest for E4M3); min/max are written as the selects of std::min and
// std::max, so that signed zeros come out as in the reference.
//
// NVFP4 (MinifloatGrid with a global scale): the `global_scale` operand holds
// one f32 per row, which each warp loads once. fit: s = e4m3_rn(f32((amax /
// 6) * g)) in f64, saturating at 448, and 0 (not 1) for a zero group; code:
// s > 0 ? e2m1(f32((w * g) / s)) : 0, in f64; value: (e2m1 * s) / g, an f32
// mul.rn then an f32 div.rn.
//
//===----------------------------------------------------------------------===//
#include "GPTQ/GridArith.h"
#include "GPTQ/WarpExtreme.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

#include <optional>

using namespace mlir;
using namespace mlir::qf;
using namespace mlir::qf::gptq;

namespace {

constexpr int64_t kRowsPerBlock = 4;
constexpr int64_t kThreads = 32 * kRowsPerBlock;

/// Warp-wide reduction of an f32 with `combine` (xor butterfly; exact for
/// max and min, so the order does not matter).
Value warpReduce(KernelEmitter &e, Value v,
                 function_ref<Value(Value, Value)> combine) {
  for (int64_t offset = 16; offset >= 1; offset /= 2)
    v = combine(v, e.shflXor(v, offset));
  return v;
}

Value shflIdx(KernelEmitter &e, Value v, Value lane) {
  return NVVM::ShflOp::create(e.builder(), v.getType(), e.c32(-1), v, lane,
                              e.c32(31), NVVM::ShflKind::idx,
                              /*return_value_and_is_valid=*/UnitAttr());
}

/// Kernel arguments, in the order of the params.
struct BlockArgs {
  Value w, u, scales, zeros, globalScale, codes, err, scalesOut, zerosOut,
      values;
};

/// The f32 element `index` of `base`.
Value f32At(KernelEmitter &e, Value base, Value index) {
  return e.gepBytes(base, e.mul(e.zext64(index), e.c64(4)));
}

/// What the steps of a warp's row read: the lane, the row and its first
/// element, the row's global scale (NVFP4), and lane slot p's column and
/// (when the slot can pass B) its validity.
struct RowState {
  Value lane, row, rowBase, global;
  SmallVector<Value> colOf, validOf;
};

/// Grid::fit at each group's first column j, on the current weights `ws`;
/// lane 0 stores the group's parameters. Returns the scale and zero for
/// column j (`scale`, `zero` when j does not start a group).
std::pair<Value, Value> fitGroupAt(KernelEmitter &e, Arith &a,
                                   const GridSpec &g, const BlockArgs &args,
                                   const RowState &r, ArrayRef<Value> ws,
                                   Value j, Value scale, Value zero) {
  ImplicitLocOpBuilder &b = e.builder();
  const int64_t B = g.cols, P = (B + 31) / 32;
  const int64_t groups = B / g.group;
  Value starts = arith::CmpIOp::create(
      b, arith::CmpIPredicate::eq, e.remu(j, e.c32(g.group)), e.c32(0));
  auto fit = scf::IfOp::create(b, TypeRange{e.f32(), e.f32()}, starts,
                               /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(fit.thenBlock());
    Value end = e.add(j, e.c32(g.group));
    Value amax = e.cf32(0.0);
    Extreme lo{e.cf32(std::numeric_limits<float>::infinity()),
               e.c32(kNoColumn)};
    Extreme hi{e.cf32(-std::numeric_limits<float>::infinity()),
               e.c32(kNoColumn)};
    // A lane's slots hold increasing columns: a tie keeps the earlier one.
    auto keep = [&](Value in, Extreme mine, Extreme candidate, bool isMin) {
      Extreme better = combineExtreme(e, mine, candidate, isMin,
                                      /*tieOnColumn=*/false);
      return Extreme{a.select(in, better.value, mine.value),
                     a.select(in, better.column, mine.column)};
    };
    for (int64_t p = 0; p < P; ++p) {
      Value in = arith::AndIOp::create(
          b, arith::CmpIOp::create(b, arith::CmpIPredicate::uge, r.colOf[p], j),
          e.ult(r.colOf[p], end));
      amax = a.select(in, a.max(amax, a.fabs(ws[p])), amax);
      lo = keep(in, lo, {ws[p], r.colOf[p]}, true);
      hi = keep(in, hi, {ws[p], r.colOf[p]}, false);
    }
    auto fmax = [&](Value x, Value y) { return a.max(x, y); };
    amax = warpReduce(e, amax, fmax);
    bool needRange = g.format == ElementFormat::UInt4 ||
                     g.format == ElementFormat::UInt8;
    // The zero extreme's sign is the host's (a float zero point keeps it).
    if (needRange) {
      lo = warpExtreme(e, lo, true);
      hi = warpExtreme(e, hi, false);
    }
    auto [newScale, newZero] =
        fitGroup(e, a, g, amax, lo.value, hi.value, r.global);
    // Lane 0 records the group's parameters: [R, B / G].
    Value isLane0 = arith::CmpIOp::create(b, arith::CmpIPredicate::eq,
                                          r.lane, e.c32(0));
    auto store = scf::IfOp::create(b, isLane0, /*withElseRegion=*/false);
    {
      OpBuilder::InsertionGuard storeGuard(b);
      b.setInsertionPointToStart(store.thenBlock());
      Value at = e.add(e.mul(r.row, e.c32(groups)),
                       e.divu(j, e.c32(g.group)));
      e.store(newScale, f32At(e, args.scalesOut, at), 4);
      if (args.zerosOut)
        e.store(newZero, f32At(e, args.zerosOut, at), 4);
    }
    scf::YieldOp::create(b, ValueRange{newScale, newZero});
    b.setInsertionPointToStart(fit.elseBlock());
    scf::YieldOp::create(b, ValueRange{scale, zero});
  }
  return {fit.getResult(0), fit.getResult(1)};
}

/// Column j = 32 k + l, redundantly in every lane: c = code(w[j]),
/// q = value(c), t = w[j] - q, e = t / U[j][j] (f32 sub, f32 true division);
/// then w[c] -= e * U[j][c] for the lane's columns c > j, and the owning
/// lane keeps the code and error (and the value, into `vs` when not empty).
void quantizeColumn(KernelEmitter &e, Arith &a, const GridSpec &g,
                    const BlockArgs &args, const RowState &r, int64_t k,
                    Value l, Value j, Value scale, Value zero,
                    MutableArrayRef<Value> ws, MutableArrayRef<Value> cs,
                    MutableArrayRef<Value> es, MutableArrayRef<Value> vs) {
  ImplicitLocOpBuilder &b = e.builder();
  const int64_t B = g.cols, P = (B + 31) / 32;
  Value wj = shflIdx(e, ws[k], l);
  auto [code, q] = codeAndValue(e, a, g, wj, scale, zero, r.global);
  Value uRow = e.mul(j, e.c32(B));
  Value d = e.loadRO(e.f32(), f32At(e, args.u, e.add(uRow, j)), 4);
  Value err = a.divF(a.subF(wj, q), d);
  // w[c] = w[c] - e * U[j][c] for this lane's columns c > j: a rounded
  // multiply, then a rounded subtract.
  for (int64_t p = 0; p < P; ++p) {
    Value later = arith::CmpIOp::create(b, arith::CmpIPredicate::ugt,
                                        r.colOf[p], j);
    if (r.validOf[p])
      later = arith::AndIOp::create(b, later, r.validOf[p]);
    Value at = r.validOf[p] ? e.minu(r.colOf[p], e.c32(B - 1)) : r.colOf[p];
    Value u = e.loadRO(e.f32(), f32At(e, args.u, e.add(uRow, at)), 4);
    ws[p] = a.select(later, a.subF(ws[p], a.mulF(err, u)), ws[p]);
  }
  // The owning lane keeps the code and error of column j.
  Value mine =
      arith::CmpIOp::create(b, arith::CmpIPredicate::eq, r.lane, l);
  cs[k] = a.select(mine, code, cs[k]);
  es[k] = a.select(mine, err, es[k]);
  if (!vs.empty())
    vs[k] = a.select(mine, q, vs[k]);
}

/// Coalesced stores of the codes (i8, the logical code's low byte), E and,
/// with `values`, each value rounded to f16 (cvt.rn: format::floatToHalf).
void storeCodesAndErrors(KernelEmitter &e, const GridSpec &g,
                         const BlockArgs &args, const RowState &r,
                         ArrayRef<Value> state) {
  ImplicitLocOpBuilder &b = e.builder();
  const int64_t P = (g.cols + 31) / 32;
  for (int64_t p = 0; p < P; ++p) {
    OpBuilder::InsertionGuard guard(b);
    if (r.validOf[p]) {
      auto in = scf::IfOp::create(b, r.validOf[p], /*withElseRegion=*/false);
      b.setInsertionPointToStart(in.thenBlock());
    }
    Value at = e.add(r.rowBase, r.colOf[p]);
    Value code8 = arith::TruncIOp::create(b, e.i8(), state[P + p]);
    e.store(code8, e.gepBytes(args.codes, e.zext64(at)), 1);
    e.store(state[2 * P + p], f32At(e, args.err, at), 4);
    if (args.values) {
      Value half = arith::TruncFOp::create(b, b.getF16Type(), state[3 * P + p]);
      e.store(half, e.gepBytes(args.values, e.mul(e.zext64(at), e.c64(2))), 2);
    }
  }
}

void buildBlockKernel(ImplicitLocOpBuilder &b, const GridSpec &g,
                      const BlockArgs &args) {
  KernelEmitter e(b);
  Arith a(e);
  const int64_t B = g.cols, P = (B + 31) / 32;
  RowState r;
  Value tid = e.tidX();
  r.lane = e.band(tid, e.c32(31));
  r.row = e.add(e.mul(e.ctaidX(), e.c32(kRowsPerBlock)),
                e.shru(tid, e.c32(5)));
  // Whole warps leave together: the guard is uniform in a warp.
  auto inRows = scf::IfOp::create(b, e.ult(r.row, e.c32(g.rows)),
                                  /*withElseRegion=*/false);
  b.setInsertionPointToStart(inRows.thenBlock());

  // NVFP4: the row's global scale, loaded once by every lane of its warp.
  r.global = g.globalScale
                 ? e.loadRO(e.f32(), f32At(e, args.globalScale, r.row), 4)
                 : Value();
  r.rowBase = e.mul(r.row, e.c32(B));
  // Lane slot p holds column 32 p + lane (clamped for the load when past B).
  SmallVector<Value> w;
  for (int64_t p = 0; p < P; ++p) {
    Value col = e.add(r.lane, e.c32(32 * p));
    bool full = 32 * (p + 1) <= B;
    r.colOf.push_back(col);
    r.validOf.push_back(full ? Value() : e.ult(col, e.c32(B)));
    Value at = full ? col : e.minu(col, e.c32(B - 1));
    w.push_back(e.loadRO(e.f32(), f32At(e, args.w, e.add(r.rowBase, at)), 4));
  }

  // Loop-carried: w[P], codes[P], errors[P], then values[P] with the
  // `values` result, then scale and zero.
  const int64_t V = args.values ? P : 0;
  SmallVector<Value> state(w);
  for (int64_t p = 0; p < P; ++p)
    state.push_back(e.c32(0));
  for (int64_t p = 0; p < P + V; ++p)
    state.push_back(e.cf32(0.0));
  state.push_back(e.cf32(1.0));
  state.push_back(e.cf32(0.0));

  for (int64_t k = 0; k < P; ++k) {
    int64_t lanes = std::min<int64_t>(32, B - 32 * k);
    auto loop = scf::ForOp::create(b, e.c32(0), e.c32(lanes), e.c32(1), state);
    OpBuilder::InsertionGuard loopGuard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value l = loop.getInductionVar();
    SmallVector<Value> s(loop.getRegionIterArgs());
    MutableArrayRef<Value> ws(s.data(), P), cs(s.data() + P, P),
        es(s.data() + 2 * P, P), vs(s.data() + 3 * P, V);
    Value &scale = s[3 * P + V], &zero = s[3 * P + V + 1];
    Value j = e.add(l, e.c32(32 * k));

    if (g.dynamic) {
      std::tie(scale, zero) = fitGroupAt(e, a, g, args, r, ws, j, scale, zero);
    } else {
      // Static: the host gathered one scale (and zero) per column.
      Value at = e.add(r.rowBase, j);
      scale = e.loadRO(e.f32(), f32At(e, args.scales, at), 4);
      if (args.zeros)
        zero = e.loadRO(e.f32(), f32At(e, args.zeros, at), 4);
    }
    quantizeColumn(e, a, g, args, r, k, l, j, scale, zero, ws, cs, es, vs);
    scf::YieldOp::create(b, s);
    state.assign(loop.getResults().begin(), loop.getResults().end());
  }
  storeCodesAndErrors(e, g, args, r, state);
}

/// A short, unique spelling of the grid for the kernel name.
std::string gridName(const GridSpec &g) {
  std::string name = stringifyElementFormat(g.format).str();
  if (g.format == ElementFormat::Codebook || g.format == ElementFormat::NF4) {
    // FNV-1a over the entries' bits: stable across runs and builds.
    uint32_t h = 2166136261u;
    for (float v : g.table) {
      uint32_t bits;
      std::memcpy(&bits, &v, 4);
      for (int i = 0; i < 4; ++i)
        h = (h ^ ((bits >> (8 * i)) & 0xFF)) * 16777619u;
    }
    name += "_n" + std::to_string(g.table.size()) + "_t" + llvm::utohexstr(h);
  }
  static const char *scaleNames[] = {"f16", "bf16", "f32", "e8m0", "e4m3"};
  name += std::string("_s") + scaleNames[int(g.scale)];
  if (g.isUnsigned)
    name += g.floatZero ? "_zf" : "_zi";
  if (g.globalScale) // NVFP4
    name += "_gs";
  return name;
}

/// Fills in the grid's scale kind and, for table formats, its sorted code
/// values; returns why the kernel cannot take the grid, if it cannot.
std::optional<std::string> describeGrid(EncodingAttr grid, GridSpec &g) {
  auto refuse = [](const Twine &why) { return why.str(); };
  Type scaleType = grid.getScaleType();
  if (!scaleType || scaleType.isF32())
    g.scale = ScaleKind::F32;
  else if (scaleType.isF16())
    g.scale = ScaleKind::F16;
  else if (scaleType.isBF16())
    g.scale = ScaleKind::BF16;
  else if (isa<Float8E8M0FNUType>(scaleType))
    g.scale = ScaleKind::E8M0;
  else if (isa<Float8E4M3FNType>(scaleType))
    g.scale = ScaleKind::E4M3;
  else
    return refuse("unsupported scale type");

  switch (g.format) {
  case ElementFormat::Int4:
  case ElementFormat::Int8:
    g.qmax = g.format == ElementFormat::Int4 ? 7 : 127;
    break;
  case ElementFormat::UInt4:
  case ElementFormat::UInt8:
    g.isUnsigned = true;
    g.floatZero = grid.getZeroPoint() == ZeroPointKind::Float;
    g.qmax = g.format == ElementFormat::UInt4 ? 15 : 255;
    if (g.floatZero &&
        (g.scale == ScaleKind::E8M0 || g.scale == ScaleKind::E4M3))
      return refuse("float zero points rounded to an fp8 scale type");
    break;
  case ElementFormat::FP8E4M3:
  case ElementFormat::FP4E2M1:
    break;
  case ElementFormat::NF4:
  case ElementFormat::Codebook: {
    if (grid.getTableName())
      return refuse("the named table '" + grid.getTableName().getValue() +
                    "' is not an operand of the op: inline it");
    for (double v : grid.getCodebookValues())
      g.table.push_back(static_cast<float>(v));
    if (g.table.empty())
      return refuse("the codebook has no table");
    for (size_t i = 0; i < g.table.size(); ++i) {
      g.sorted.push_back({g.table[i], int32_t(i)});
      g.tableMax = std::max(g.tableMax, std::fabs(double(g.table[i])));
    }
    if (!(g.tableMax > 0))
      return refuse("the codebook has no non-zero entry to scale to");
    if (llvm::any_of(g.table, [](float v) { return std::isnan(v); }))
      return refuse("the codebook has a NaN entry");
    std::stable_sort(g.sorted.begin(), g.sorted.end(),
                     [](auto &x, auto &y) { return x.first < y.first; });
    g.sorted.erase(std::unique(g.sorted.begin(), g.sorted.end(),
                               [](auto &x, auto &y) {
                                 return x.first == y.first;
                               }),
                   g.sorted.end());
    break;
  }
  default:
    return refuse("not a quantized element format");
  }
  return std::nullopt;
}

/// The kernel's parameters and what the runtime binds to each.
SmallVector<OpParam> blockParams(GPTQBlockUpdateOp op, const GridSpec &g,
                                 bool hasZeros) {
  MLIRContext *ctx = op.getContext();
  SmallVector<OpParam> params = {{"w", ParamKind::In, operandArg(ctx, 0)},
                                 {"u", ParamKind::In, operandArg(ctx, 1)}};
  if (!g.dynamic) {
    params.push_back({"scales", ParamKind::In, operandArg(ctx, 2)});
    if (hasZeros)
      params.push_back({"zeros", ParamKind::In, operandArg(ctx, 3)});
  }
  if (g.globalScale) // the last operand, after scales/zeros
    params.push_back(
        {"global_scale", ParamKind::In,
         operandArg(ctx, op.getODSOperandIndexAndLength(4).first)});
  params.push_back({"codes", ParamKind::Out, resultArg(ctx, 0)});
  params.push_back({"err", ParamKind::Out, resultArg(ctx, 1)});
  if (g.dynamic) {
    const unsigned first = op.getODSResultIndexAndLength(3).first;
    params.push_back({"scales_out", ParamKind::Out, resultArg(ctx, first)});
    if (hasZeros)
      params.push_back(
          {"zeros_out", ParamKind::Out, resultArg(ctx, first + 1)});
  }
  // Last, so that a kernel without it keeps its parameters.
  if (op.getValues())
    params.push_back(
        {"values", ParamKind::Out,
         resultArg(ctx, op.getODSResultIndexAndLength(2).first)});
  return params;
}

/// The kernel arguments `v`, in the order of blockParams.
BlockArgs bindBlockArgs(ArrayRef<Value> v, const GridSpec &g, bool hasZeros,
                        bool hasValues) {
  BlockArgs args;
  size_t i = 0;
  args.w = v[i++];
  args.u = v[i++];
  if (!g.dynamic) {
    args.scales = v[i++];
    if (hasZeros)
      args.zeros = v[i++];
  }
  if (g.globalScale)
    args.globalScale = v[i++];
  args.codes = v[i++];
  args.err = v[i++];
  if (g.dynamic) {
    args.scalesOut = v[i++];
    if (hasZeros)
      args.zerosOut = v[i++];
  }
  if (hasValues)
    args.values = v[i++];
  return args;
}

} // namespace

FailureOr<SmallVector<OpLaunch>>
qf::lowerGPTQBlockUpdate(GPTQBlockUpdateOp op, OpKernelContext &context,
                         int64_t batch) {
  EncodingAttr grid = op.getGrid();
  RankedTensorType wType = op.getWeights().getType();
  GridSpec g;
  g.format = grid.getFormat();
  // Dynamic rows: one kernel per plan batch (the row count).
  g.rows = wType.isDynamicDim(0) ? batch : wType.getDimSize(0);
  g.cols = wType.getDimSize(1);
  g.dynamic = !op.getScales();
  g.group = grid.getGroupSize();
  auto reject = [&](const Twine &why) -> FailureOr<SmallVector<OpLaunch>> {
    return op.emitOpError() << "has no GPU kernel for grid " << grid << ": "
                            << why,
           failure();
  };
  if (g.cols > 128)
    return reject("the block holds " + Twine(g.cols) +
                  " columns; the kernel keeps at most 128 in a warp's "
                  "registers");
  if (batch != g.rows)
    return reject("the kernel is compiled for its " + Twine(g.rows) +
                  " rows, not a batch of " + Twine(batch));
  // NVFP4: the verifier guarantees the global_scale operand, one per row.
  g.globalScale = grid.getGlobalScale();

  if (std::optional<std::string> why = describeGrid(grid, g))
    return reject(*why);

  std::string name = "qf_gptq_block_" + gridName(g) +
                     (g.dynamic ? "_g" + std::to_string(g.group)
                                : std::string("_static")) +
                     "_r" + std::to_string(g.rows) + "_b" +
                     std::to_string(g.cols) + (op.getValues() ? "_v" : "");
  bool hasZeros = grid.getZeroPoint() != ZeroPointKind::None;
  SmallVector<OpParam> params = blockParams(op, g, hasZeros);
  if (!context.module.lookupSymbol(name)) {
    ImplicitLocOpBuilder b(op.getLoc(), op.getContext());
    SmallVector<Value> v =
        createOpKernel(b, context.module, name, params, kThreads);
    BlockArgs args = bindBlockArgs(v, g, hasZeros, bool(op.getValues()));
    {
      OpBuilder::InsertionGuard guard(b);
      buildBlockKernel(b, g, args);
    }
    LLVM::ReturnOp::create(b, ValueRange{});
  }
  int64_t blocks = (g.rows + kRowsPerBlock - 1) / kRowsPerBlock;
  return SmallVector<OpLaunch>{
      makeOpLaunch(name, params, blocks, 1, kThreads)};
}
