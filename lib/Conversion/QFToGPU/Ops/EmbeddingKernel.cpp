//===- EmbeddingKernel.cpp - qf.embedding kernel --------------------------===//
//
// out[m, :] = table[ids[m], :]: one block per row m; the block's threads copy
// the table row in vectors of the widest f16 width dividing H (16 bytes when
// H % 8 == 0), raw (no conversion), thread t taking vectors t, t + T, ...
//
// An id outside [0, V) (negative ids included: the compare is unsigned)
// never reads the table: the row is written as NaN instead of a clamped
// row, so that a bad id shows up in the logits rather than as a plausible
// wrong token. The runtime also validates ids on the host.
//
//===----------------------------------------------------------------------===//

#include "Ops/OpKernelCommon.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

#include <limits>

using namespace mlir;
using namespace mlir::qf;

FailureOr<SmallVector<OpLaunch>>
qf::lowerEmbedding(EmbeddingOp op, OpKernelContext &context, int64_t batch) {
  RankedTensorType table = op.getTable().getType();
  if (failed(requireF16(op, "the embedding table", table)))
    return failure();
  int64_t vocab = table.getDimSize(0), h = table.getDimSize(1);
  if (ShapedType::isDynamic(vocab) || ShapedType::isDynamic(h))
    return op.emitOpError("needs a static [vocab, hidden] table for its GPU "
                          "kernel"),
           failure();
  if (vocab * h > std::numeric_limits<int32_t>::max())
    return op.emitOpError() << "table of " << vocab << " x " << h
                            << " elements overflows the kernel's i32 index",
           failure();
  int64_t width = halfVectorWidth(h);
  int64_t vectors = h / width;
  int64_t threads = std::min<int64_t>(256, (vectors + 31) / 32 * 32);
  std::string name =
      "qf_embedding_v" + std::to_string(vocab) + "_h" + std::to_string(h);
  MLIRContext *ctx = op.getContext();
  SmallVector<OpParam> params = {{"table", ParamKind::In, operandArg(ctx, 0)},
                                 {"ids", ParamKind::In, operandArg(ctx, 1)},
                                 {"y", ParamKind::Out, resultArg(ctx, 0)}};
  if (!context.module.lookupSymbol(name)) {
    ImplicitLocOpBuilder b(op.getLoc(), ctx);
    KernelEmitter e(b);
    SmallVector<Value> args =
        createOpKernel(b, context.module, name, params, threads);
    Value tablePtr = args[0], ids = args[1], y = args[2];
    Value m = e.ctaidX();
    Value id =
        e.loadRO(e.i32(), e.gepBytes(ids, e.mul(e.zext64(m), e.c64(4))), 4);
    Value tid = e.tidX();
    Value outRow = e.mul(m, e.c32(h));
    // One branch per block (id is uniform): copy, or fill with NaN.
    auto inRange =
        scf::IfOp::create(b, e.ult(id, e.c32(vocab)), /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(inRange.thenBlock());
      Value inRow = e.mul(id, e.c32(h));
      auto loop = scf::ForOp::create(b, tid, e.c32(vectors), e.c32(threads));
      b.setInsertionPointToStart(loop.getBody());
      Value col = e.mul(loop.getInductionVar(), e.c32(width));
      Value raw = loadRaw(e, tablePtr, e.add(inRow, col), width);
      storeRaw(e, y, e.add(outRow, col), raw, width);
    }
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(inRange.elseBlock());
      auto loop = scf::ForOp::create(b, tid, e.c32(vectors), e.c32(threads));
      b.setInsertionPointToStart(loop.getBody());
      Value col = e.mul(loop.getInductionVar(), e.c32(width));
      SmallVector<Value> nans(width,
                              e.cf32(std::numeric_limits<double>::quiet_NaN()));
      storeHalves(e, y, e.add(outRow, col), nans);
    }
    LLVM::ReturnOp::create(b, ValueRange{});
  }
  return SmallVector<OpLaunch>{makeOpLaunch(name, params, batch, 1, threads)};
}
