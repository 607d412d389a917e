//===- MatmulBatches.cpp - what a fused matmul asks of each batch ---------===//

#include "MatmulBatches.h"

#include "qfuse/Conversion/TensorCoreSupport.h"

using namespace mlir;
using namespace mlir::qf;

SmallVector<FusedMatmulOp> qf::groupMembers(FusedMatmulOp op) {
  SmallVector<FusedMatmulOp> members;
  if (auto group = op->getAttrOfType<IntegerAttr>("qf.group"))
    for (auto other : op->getBlock()->getOps<FusedMatmulOp>())
      if (other->getAttr("qf.group") == group)
        members.push_back(other);
  return members;
}

LogicalResult qf::verifyGroup(ArrayRef<FusedMatmulOp> members) {
  if (members.empty())
    return success();
  FusedMatmulOp first = members.front();
  for (FusedMatmulOp other : members.drop_front())
    if (other.getInput() != first.getInput() ||
        other.getWeight().getType().getEncoding() !=
            first.getWeight().getType().getEncoding() ||
        other.getWeight().getType().getLayout() !=
            first.getWeight().getType().getLayout() ||
        other.getWeight().getType().getK() !=
            first.getWeight().getType().getK() ||
        other.getNorm() != first.getNorm() ||
        other.getNormEpsAttr() != first.getNormEpsAttr() ||
        static_cast<bool>(other.getBias()) !=
            static_cast<bool>(first.getBias()) ||
        static_cast<bool>(other.getResidual()) !=
            static_cast<bool>(first.getResidual()) ||
        other.getActivation() != first.getActivation())
      return other.emitOpError()
             << "differs from the first member of its qf.group in input, "
                "weight encoding, layout or K, prologue or epilogue";
  return success();
}

EncodingAttr qf::withoutActOrder(EncodingAttr enc) {
  return EncodingAttr::get(
      enc.getContext(), enc.getFormat(), enc.getIndexBits(), enc.getTable(),
      enc.getTableName(), enc.getTableType(), enc.getGroupSize(),
      enc.getScaleType(), enc.getGlobalScale(), enc.getZeroPoint(),
      /*actOrder=*/false, enc.getSparsity());
}

llvm::DenseMap<int64_t, BatchKernel> qf::getBatchKernels(FusedMatmulOp op) {
  llvm::DenseMap<int64_t, BatchKernel> kernels;
  if (auto entries = op->getAttrOfType<ArrayAttr>("qf.batch_tilings"))
    for (auto entry : entries.getAsRange<BatchTilingAttr>())
      kernels[entry.getBatch()] = {entry.getTiling(), entry.getLayout()};
  return kernels;
}

FailureOr<MatmulSpec>
qf::batchSpec(FusedMatmulOp op,
              const llvm::DenseMap<int64_t, BatchKernel> &perBatch,
              int64_t batch) {
  WeightType w = op.getWeight().getType();
  MatmulSpec spec;
  spec.encoding = w.getEncoding();
  spec.layout = w.getLayout();
  spec.tiling = *op.getTiling();
  auto own = perBatch.find(batch);
  if (own == perBatch.end())
    return spec;
  spec.tiling = own->second.tiling;
  if (own->second.layout)
    spec.layout = own->second.layout;
  if (isTensorCoreKernel(spec.tiling.getKernel()) && op.getNorm() &&
      !op.hasPermutedNorm())
    return op.emitOpError() << "batch " << batch << " has the tensor-core "
                            << "(mma) tiling " << spec.tiling
                            << " in qf.batch_tilings, but that kernel does "
                               "not fuse an RMSNorm prologue";
  return spec;
}
