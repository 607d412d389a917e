//===- ChooseLayout.cpp - the packed layout each kernel reads
//----------------===//
//
// Retypes the weights of matvec kernels over 4-bit codes to the tiled,
// nibble-interleaved layout (LayoutUtils.h), cloning a qf.weight_ref where
// its consumers want different layouts, and gives each per-batch tiling
// (`qf.batch_tilings`) the layout its kernel reads.
//
//===----------------------------------------------------------------------===//

#include "qfuse/Dialect/QF/Transforms/Passes.h"

#include "qfuse/Dialect/QF/Transforms/LayoutUtils.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "qf-choose-layout"

namespace mlir {
namespace qf {
#define GEN_PASS_DEF_QFCHOOSELAYOUT
#include "qfuse/Dialect/QF/Transforms/Passes.h.inc"
} // namespace qf
} // namespace mlir

using namespace mlir;
using namespace mlir::qf;

namespace {

/// The uses of one weight_ref that want each layout, in program order.
using UsesByLayout = llvm::MapVector<LayoutAttr, SmallVector<OpOperand *>>;

/// Retypes `ref` for the uses in `wanted`: in place when they are all of its
/// uses and want one layout, otherwise on a clone per layout, leaving the
/// original (row_major) to the remaining uses.
///
///   %w = qf.weight_ref "w" : !qf.weight<4096x4096, #int4_g128>
///   %a = qf.fused_matmul %x, %w {tiling = #qf.tiling<matvec, ...>}
///   %b = qf.fused_matmul %y, %w {tiling = #qf.tiling<mma, ...>}
/// becomes
///   %w = qf.weight_ref "w" : !qf.weight<4096x4096, #int4_g128>
///   %t = qf.weight_ref "w" : !qf.weight<4096x4096, #int4_g128,
///                                       #qf.layout<tiled, tile_n = 1, tile_k =
///                                       32>>
///   %a = qf.fused_matmul %x, %t {...}
///   %b = qf.fused_matmul %y, %w {...}
LogicalResult retype(WeightRefOp ref, const UsesByLayout &wanted) {
  WeightType type = ref.getType();
  size_t numWanted = 0;
  for (const auto &entry : wanted)
    numWanted += entry.second.size();
  bool inPlace =
      wanted.size() == 1 &&
      numWanted ==
          static_cast<size_t>(std::distance(ref->use_begin(), ref->use_end()));
  OpBuilder builder(ref->getContext());
  builder.setInsertionPointAfter(ref);
  for (const auto &[layout, uses] : wanted) {
    auto newType = WeightType::getChecked(
        [&]() {
          return uses.front()->getOwner()->emitOpError()
                 << "cannot use layout " << layout << " for weight '"
                 << ref.getName() << "': ";
        },
        ref->getContext(), type.getN(), type.getK(), type.getEncoding(),
        layout);
    if (!newType)
      return failure();
    LLVM_DEBUG(llvm::dbgs()
               << "'" << ref.getName() << "': " << uses.size() << " use(s) -> "
               << layout << (inPlace ? " (in place)\n" : " (clone)\n"));
    if (inPlace) {
      ref.getResult().setType(newType);
      return success();
    }
    auto clone = cast<WeightRefOp>(builder.clone(*ref));
    clone.getResult().setType(newType);
    for (OpOperand *use : uses)
      use->set(clone.getResult());
  }
  if (ref->use_empty())
    ref->erase();
  return success();
}

/// Adds to each `qf.batch_tilings` entry of `op` the layout its kernel
/// reads the weight (and `up`) in, from the weight type before this pass
/// retypes it:
///
///   %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<matvec, ...>,
///          qf.batch_tilings = [#qf.batch_tiling<batch = 16,
///                               tiling = #qf.tiling<mma, ...>>]}
/// becomes
///   ... qf.batch_tilings = [#qf.batch_tiling<batch = 16,
///          tiling = #qf.tiling<mma, ...>,
///          layout = #qf.layout<tiled, tile_n = 32, tile_k = 32>>]
///
/// The weight operand keeps the layout of `tiling`; the artifact lists the
/// weight once per layout, each packed from the one checkpoint tensor. A
/// weight that already has a layout, or is not a qf.weight_ref, keeps it
/// for every batch, as for `tiling`.
LogicalResult annotateBatchLayouts(FusedMatmulOp op) {
  auto entries = op->getAttrOfType<ArrayAttr>("qf.batch_tilings");
  if (!entries)
    return success();
  WeightType type = op.getWeight().getType();
  bool keep = !type.getLayout().isRowMajor() ||
              !op.getWeight().getDefiningOp<WeightRefOp>() ||
              (op.getUp() && !op.getUp().getDefiningOp<WeightRefOp>());
  Builder b(op.getContext());
  SmallVector<Attribute> annotated;
  // The dialect verified the entries (QFOpAttributes.cpp).
  for (auto entry : entries.getAsRange<BatchTilingAttr>()) {
    TilingAttr tiling = entry.getTiling();
    // The fallback's dequantize kernel reads any layout: the one the op's
    // own tiling gives the weight, so that it needs no copy of its own.
    TilingAttr reads = tiling.getKernel() == KernelKind::DequantGemm
                           ? op.getTilingAttr()
                           : tiling;
    LayoutAttr layout = keep ? type.getLayout() : getKernelLayout(type, reads);
    if (!WeightType::getChecked(
            [&]() {
              return op.emitOpError() << "cannot use layout " << layout
                                      << " for the batch tiling " << tiling
                                      << ": ";
            },
            op.getContext(), type.getN(), type.getK(), type.getEncoding(),
            layout))
      return failure();
    annotated.push_back(BatchTilingAttr::get(op.getContext(), entry.getBatch(),
                                             tiling, layout));
    LLVM_DEBUG(llvm::dbgs() << op << ": " << tiling << " reads " << layout
                            << "\n");
  }
  op->setAttr("qf.batch_tilings", b.getArrayAttr(annotated));
  return success();
}

struct QFChooseLayoutPass
    : public qf::impl::QFChooseLayoutBase<QFChooseLayoutPass> {
  void runOnOperation() override {
    llvm::MapVector<Operation *, UsesByLayout> plan;
    bool failedAny = false;
    getOperation()->walk([&](FusedMatmulOp op) {
      failedAny |= failed(annotateBatchLayouts(op));
      WeightType type = op.getWeight().getType();
      LayoutAttr layout = getKernelLayout(type, op.getTilingAttr());
      if (layout.isRowMajor() || layout == type.getLayout())
        return;
      if (!type.getLayout().isRowMajor()) {
        LLVM_DEBUG(llvm::dbgs() << op << ": weight already has layout "
                                << type.getLayout() << ", kept\n");
        return;
      }
      // A gated matmul reads its gate and up weights with one kernel: both
      // get the layout, or neither (the verifier wants equal types).
      SmallVector<OpOperand *> operands = {&op.getWeightMutable()};
      if (op.getUp())
        operands.push_back(&op.getUpMutable()[0]);
      for (OpOperand *operand : operands)
        if (!operand->get().getDefiningOp<WeightRefOp>()) {
          LLVM_DEBUG(llvm::dbgs() << op
                                  << ": weight is not a qf.weight_ref, "
                                     "its layout is kept\n");
          return;
        }
      for (OpOperand *operand : operands)
        plan[operand->get().getDefiningOp()][layout].push_back(operand);
    });
    if (failedAny)
      return signalPassFailure();
    for (auto &[ref, wanted] : plan)
      if (failed(retype(cast<WeightRefOp>(ref), wanted)))
        return signalPassFailure();
  }
};

} // namespace
