//===- RowMinMaxKernel.cpp - qf.row_min_max kernel ------------------------===//
//
// Each row's [min, max] of a [R, K] f32 matrix, the two values per-channel
// GPTQ fits a row's parameters from (GptqSolveFits.cpp), selected exactly
// as gptq::Grid's statsOf selects them:
//
//   one warp per row (4 rows per 128-thread block, grid ceil(R / 4)); lane l
//   reads columns l, l + 32, ... in increasing order (coalesced) and keeps
//   (value, column) of its min and max, replacing them only on a strict
//   `<` (std::min / std::max: on a tie the earlier column stays); then a
//   xor butterfly combines the lanes' pairs, taking the other lane's pair
//   when its value is strictly better, or equal with a lower column. So the
//   warp selects, of the elements comparing equal to the extreme (-0 and
//   +0), the one in the lowest column: the one the host's sequential
//   comparisons keep, sign of zero included. A NaN never compares true, so
//   it is skipped, as on the host; lane 0 stores [min, max] as [R, 2].
//
//===----------------------------------------------------------------------===//
#include "GPTQ/WarpExtreme.h"
#include "Ops/OpKernelCommon.h"
#include "Ops/OpKernels.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

#include <limits>

using namespace mlir;
using namespace mlir::qf;
using namespace mlir::qf::gptq;

namespace {

constexpr int64_t kRowsPerBlock = 4;
constexpr int64_t kThreads = 32 * kRowsPerBlock;

/// The kernel body over `rows` x `cols` at `w`, [min, max] per row to `out`.
void buildRowMinMax(ImplicitLocOpBuilder &b, int64_t rows, int64_t cols,
                    Value w, Value out) {
  KernelEmitter e(b);
  Value tid = e.tidX();
  Value lane = e.band(tid, e.c32(31));
  Value row =
      e.add(e.mul(e.ctaidX(), e.c32(kRowsPerBlock)), e.shru(tid, e.c32(5)));
  // Whole warps leave together: the guard is uniform in a warp.
  auto inRows =
      scf::IfOp::create(b, e.ult(row, e.c32(rows)), /*withElseRegion=*/false);
  b.setInsertionPointToStart(inRows.thenBlock());
  Value rowBytes = e.mul(e.zext64(row), e.c64(cols * 4));
  Value rowPtr = e.gepBytes(w, rowBytes);

  // A row of NaN leaves [+inf, -inf], as statsOf does.
  SmallVector<Value> init = {
      e.cf32(std::numeric_limits<float>::infinity()), e.c32(kNoColumn),
      e.cf32(-std::numeric_limits<float>::infinity()), e.c32(kNoColumn)};
  const int64_t steps = (cols + 31) / 32;
  auto loop = scf::ForOp::create(b, e.c32(0), e.c32(steps), e.c32(1), init);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    ValueRange s = loop.getRegionIterArgs();
    Value col = e.add(lane, e.mul(loop.getInductionVar(), e.c32(32)));
    Value valid = e.ult(col, e.c32(cols));
    // Past K (the last step when 32 does not divide K): read the last
    // column and ignore it.
    Value at = e.minu(col, e.c32(cols - 1));
    Value v = e.loadRO(e.f32(), e.gepBytes(rowPtr, e.mul(e.zext64(at), e.c64(4))),
                       4);
    // Columns come in increasing order: a tie keeps the earlier one.
    auto next = [&](Extreme mine, bool isMin) {
      Extreme better =
          combineExtreme(e, mine, {v, col}, isMin, /*tieOnColumn=*/false);
      return Extreme{arith::SelectOp::create(b, valid, better.value, mine.value),
                     arith::SelectOp::create(b, valid, better.column,
                                             mine.column)};
    };
    Extreme lo = next({s[0], s[1]}, true), hi = next({s[2], s[3]}, false);
    scf::YieldOp::create(
        b, ValueRange{lo.value, lo.column, hi.value, hi.column});
  }
  Extreme lo = warpExtreme(e, {loop.getResult(0), loop.getResult(1)}, true);
  Extreme hi = warpExtreme(e, {loop.getResult(2), loop.getResult(3)}, false);
  auto isLane0 = scf::IfOp::create(
      b, arith::CmpIOp::create(b, arith::CmpIPredicate::eq, lane, e.c32(0)),
      /*withElseRegion=*/false);
  b.setInsertionPointToStart(isLane0.thenBlock());
  Value outRow = e.gepBytes(out, e.mul(e.zext64(row), e.c64(8)));
  e.store(lo.value, outRow, 4);
  e.store(hi.value, e.gepBytes(outRow, e.c64(4)), 4);
}

} // namespace

FailureOr<SmallVector<OpLaunch>>
qf::lowerRowMinMax(RowMinMaxOp op, OpKernelContext &context, int64_t batch) {
  RankedTensorType wType = op.getWeights().getType();
  // Dynamic rows: one kernel per plan batch (the row count). Static rows (a
  // tile the runtime moves over the rows): the same kernel in every plan.
  const int64_t rows = wType.isDynamicDim(0) ? batch : wType.getDimSize(0);
  const int64_t cols = wType.getDimSize(1);
  if (cols >= std::numeric_limits<int32_t>::max())
    return op.emitOpError() << "has no GPU kernel for " << cols
                            << " columns: column indices are 32-bit",
           failure();
  MLIRContext *ctx = op.getContext();
  SmallVector<OpParam> params = {
      {"w", ParamKind::In, operandArg(ctx, 0)},
      {"min_max", ParamKind::Out, resultArg(ctx, 0)}};
  std::string name = "qf_row_min_max_r" + std::to_string(rows) + "_k" +
                     std::to_string(cols);
  if (!context.module.lookupSymbol(name)) {
    ImplicitLocOpBuilder b(op.getLoc(), ctx);
    SmallVector<Value> v =
        createOpKernel(b, context.module, name, params, kThreads);
    {
      OpBuilder::InsertionGuard guard(b);
      buildRowMinMax(b, rows, cols, v[0], v[1]);
    }
    LLVM::ReturnOp::create(b, ValueRange{});
  }
  const int64_t blocks = (rows + kRowsPerBlock - 1) / kRowsPerBlock;
  return SmallVector<OpLaunch>{
      makeOpLaunch(name, params, blocks, 1, kThreads)};
}
