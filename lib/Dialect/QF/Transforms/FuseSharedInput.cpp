//===- FuseSharedInput.cpp - one launch for matmuls of one input ------------===//
//
// Horizontal fusion: fused matmuls that read the same activations with the
// same weight encoding, layout and K (q/k/v; gate/up when not gated) get a
// common `qf.group`, and qf-to-gpu emits one kernel whose blocks are split
// across them. The ops stay separate (one weight and one result each), so
// every other pass and the CPU reference see them as before.
//
// With gate-up-only, only the pairs that feed one qf.silu_mul group (gate
// and up where qf-fuse-gated-mlp did not run): --fuse=default's form from
// the batches where q/k/v run faster apart but gate/up still do better as
// one launch (tools/qfuse-compile/FusionSelection.cpp).
//
// act_order weights group too: GPTQ's desc_act orders the columns of every
// module that reads one input the same way (one Hessian per input), so the
// group's kernel permutes the shared input once, by its first member's
// `perm`. The perms are weight data: qf-to-gpu guards the grouped launches
// with that contract and adds the per-member fallback for weights whose
// perms differ, which the runtime picks at load time (docs/act-order.md).
//
//===----------------------------------------------------------------------===//

#include "qfuse/Dialect/QF/Transforms/Passes.h"

#include "FusionUtils.h"

#include "mlir/IR/Dominance.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Support/Debug.h"

#include <tuple>

#define DEBUG_TYPE "qf-fuse-shared-input"

namespace mlir {
namespace qf {
#define GEN_PASS_DEF_QFFUSESHAREDINPUT
#include "qfuse/Dialect/QF/Transforms/Passes.h.inc"
} // namespace qf
} // namespace mlir

using namespace mlir;
using namespace mlir::qf;

namespace {

constexpr StringLiteral kGroupAttr = "qf.group";

/// The most matmuls one launch takes. Each member adds its weight
/// components and outputs to the kernel's parameters, which PTX caps at
/// 4 KB; q/k/v (3) is what decoder layers need. Larger sets (e.g. every
/// layer of a linear-only benchmark step reading one input) are split.
constexpr size_t kMaxGroupMembers = 4;

/// Why `op` cannot join a group, or "".
std::string whyNotGroupable(FusedMatmulOp op) {
  WeightType w = op.getWeight().getType();
  EncodingAttr enc = w.getEncoding();
  if (op->hasAttr(kGroupAttr))
    return "it is already in a qf.group";
  if (op.getTilingAttr())
    return "it already has a tiling (run qf-fuse-shared-input before "
           "qf-select-tiling)";
  if (isDenseUnquantized(w))
    return "its dense weight runs as a cuBLAS step";
  if (op.getActivation() != EpilogueActivation::None)
    return "it has a silu_mul epilogue (two weights per output already)";
  if (op.hasSiluMulPrologue())
    return "its input is the product of its silu_mul prologue";
  if (enc.getFormat() == ElementFormat::Codebook && enc.getTableName())
    return "its named codebook table is per weight, and a block holds one";
  return "";
}

/// The qf.silu_mul that is `op`'s only user (gate/up left unfused), or
/// null.
Operation *siluMulUser(FusedMatmulOp op) {
  Value result = op.getResult();
  if (!result.hasOneUse())
    return nullptr;
  Operation *user = *result.getUsers().begin();
  return isa<SiluMulOp>(user) ? user : nullptr;
}

/// What members of one group must share: the input, the weight's encoding,
/// layout and K, the prologue, which epilogue operands exist and, under
/// gate-up-only, the qf.silu_mul they feed.
using GroupKey =
    std::tuple<const void *, const void *, const void *, int64_t, const void *,
               const void *, unsigned, unsigned, const void *>;

GroupKey keyOf(FusedMatmulOp op, Operation *siluMul) {
  WeightType w = op.getWeight().getType();
  return {op.getInput().getAsOpaquePointer(),
          w.getEncoding().getAsOpaquePointer(),
          w.getLayout().getAsOpaquePointer(),
          w.getK(),
          op.getNorm().getAsOpaquePointer(),
          op.getNormEpsAttr().getAsOpaquePointer(),
          op.getBias() ? 1u : 0u,
          op.getResidual() ? 1u : 0u,
          siluMul};
}

struct QFFuseSharedInputPass
    : public qf::impl::QFFuseSharedInputBase<QFFuseSharedInputPass> {
  using Base::Base;

  void runOnOperation() override {
    // Group ids continue after any the IR already has.
    int64_t nextId = 0;
    getOperation()->walk([&](FusedMatmulOp op) {
      if (auto id = op->getAttrOfType<IntegerAttr>(kGroupAttr))
        nextId = std::max(nextId, id.getInt() + 1);
    });
    DominanceInfo dominance(getOperation());
    Builder b(&getContext());
    getOperation()->walk([&](Block *block) {
      llvm::MapVector<GroupKey, SmallVector<FusedMatmulOp>> buckets;
      for (auto op : block->getOps<FusedMatmulOp>()) {
        std::string reason = whyNotGroupable(op);
        Operation *siluMul = gateUpOnly ? siluMulUser(op) : nullptr;
        if (reason.empty() && gateUpOnly && !siluMul)
          reason = "gate-up-only groups gate and up that feed one qf.silu_mul";
        if (reason.empty()) {
          buckets[keyOf(op, siluMul)].push_back(op);
          continue;
        }
        LLVM_DEBUG(llvm::dbgs() << op << ": " << reason << "\n");
        if (reportUnfused && sharesInput(op))
          op.emitRemark() << "fused matmul not grouped with the others "
                             "reading its input: "
                          << reason;
      }
      for (auto &[key, ops] : buckets) {
        // The group's kernel runs at the first member: every member's
        // epilogue operands must exist there.
        FusedMatmulOp first = ops.front();
        SmallVector<FusedMatmulOp> members = {first};
        for (FusedMatmulOp op : ArrayRef(ops).drop_front()) {
          Value late;
          for (Value v : {op.getBias(), op.getResidual()})
            if (v && !dominance.properlyDominates(v, first))
              late = v;
          if (!late) {
            members.push_back(op);
            continue;
          }
          if (reportUnfused)
            op.emitRemark() << "fused matmul not grouped with the others "
                               "reading its input: its "
                            << (late == op.getBias() ? "bias" : "residual")
                            << " is computed after the group's first matmul";
        }
        if (members.size() < 2) {
          if (reportUnfused && sharesInput(first) && ops.size() == 1)
            first.emitRemark() << "fused matmul not grouped: no other fused "
                                  "matmul reads its input with the same "
                                  "weight encoding, layout, K, prologue and "
                                  "epilogue operands";
          continue;
        }
        for (size_t start = 0; start + 1 < members.size();
             start += kMaxGroupMembers) {
          auto id = b.getI64IntegerAttr(nextId++);
          size_t end = std::min(members.size(), start + kMaxGroupMembers);
          for (FusedMatmulOp op : ArrayRef(members).slice(start, end - start))
            op->setAttr(kGroupAttr, id);
        }
      }
    });
  }

  /// Whether another fused matmul reads `op`'s input (only then is a
  /// missing group worth a remark).
  static bool sharesInput(FusedMatmulOp op) {
    return llvm::any_of(op.getInput().getUsers(), [&](Operation *user) {
      auto other = dyn_cast<FusedMatmulOp>(user);
      return other && other != op && other.getInput() == op.getInput();
    });
  }
};

} // namespace
