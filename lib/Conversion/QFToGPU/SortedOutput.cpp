//===- SortedOutput.cpp - a matmul that writes its reader's sorted order --===//

#include "SortedOutput.h"

using namespace mlir;
using namespace mlir::qf;

namespace {

/// An act_order matmul that reads its input through a permute launch of
/// its own: sortable columns, no prologue writing the permuted input, no
/// group sharing it.
bool readsThroughPermute(FusedMatmulOp op) {
  EncodingAttr enc = op.getWeight().getType().getEncoding();
  return enc.getActOrder() && !enc.isSparse24() && !op.getNorm() &&
         !op.hasSiluMulPrologue() && !op->hasAttr("qf.group");
}

/// A writer whose stores can follow a reader's order: qf.attention, or a
/// gated matmul on f16 without a residual or group.
bool canSortOutput(Operation *writer) {
  if (isa<AttentionOp>(writer))
    return true;
  auto gated = dyn_cast<FusedMatmulOp>(writer);
  return gated && gated.getActivation() == EpilogueActivation::SiluMul &&
         !gated.getResidual() && !gated->hasAttr("qf.group") &&
         gated.getInput().getType().getElementType().isF16();
}

} // namespace

FusedMatmulOp qf::sortedOutputReader(Operation *writer, int64_t batch,
                                     RunsFusedAt runsFused,
                                     int64_t attentionMaxBatch) {
  if (!writer || !canSortOutput(writer) ||
      batch > (isa<AttentionOp>(writer) ? attentionMaxBatch
                                        : kSortedOutputMaxBatch))
    return {};
  Value result = writer->getResult(0);
  if (!result.hasOneUse())
    return {};
  auto reader = dyn_cast<FusedMatmulOp>(*result.getUsers().begin());
  if (!reader || reader.getInput() != result || !readsThroughPermute(reader) ||
      !runsFused(reader, batch))
    return {};
  return reader;
}

bool qf::readsSortedInput(FusedMatmulOp reader, int64_t batch,
                          RunsFusedAt runsFused, int64_t attentionMaxBatch) {
  Operation *writer = reader.getInput().getDefiningOp();
  return writer && sortedOutputReader(writer, batch, runsFused,
                                      attentionMaxBatch) == reader;
}
