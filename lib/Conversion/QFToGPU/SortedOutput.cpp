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

} // namespace

FusedMatmulOp qf::sortedOutputReader(FusedMatmulOp writer, int64_t batch,
                                     RunsFusedAt runsFused) {
  if (batch > kSortedOutputMaxBatch ||
      writer.getActivation() != EpilogueActivation::SiluMul ||
      writer.getResidual() || writer->hasAttr("qf.group") ||
      !writer.getInput().getType().getElementType().isF16())
    return {};
  Value result = writer.getResult();
  if (!result.hasOneUse())
    return {};
  auto reader = dyn_cast<FusedMatmulOp>(*result.getUsers().begin());
  if (!reader || reader.getInput() != result || !readsThroughPermute(reader) ||
      !runsFused(reader, batch))
    return {};
  return reader;
}

bool qf::readsSortedInput(FusedMatmulOp reader, int64_t batch,
                          RunsFusedAt runsFused) {
  auto writer = reader.getInput().getDefiningOp<FusedMatmulOp>();
  return writer && sortedOutputReader(writer, batch, runsFused) == reader;
}
