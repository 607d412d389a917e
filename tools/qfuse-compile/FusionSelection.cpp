//===- FusionSelection.cpp - which qf-fuse-* passes --fuse runs -----------===//
//
// The fusions qfuse-compile's --fuse names, the ones --fuse=default runs,
// and the batches that leave one out.
//
//===----------------------------------------------------------------------===//

#include "FusionSelection.h"

#include "qfuse/Dialect/QF/Transforms/CostModel.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"

#include <utility>

using namespace mlir;

namespace {

/// The fusion passes --fuse can switch on, in the order they run.
constexpr std::pair<llvm::StringLiteral, llvm::StringLiteral>
    kFusions[] = {{"rmsnorm", "qf-fuse-rmsnorm-prologue"},
                  {"gated-mlp", "qf-fuse-gated-mlp"},
                  {"epilogue", "qf-fuse-epilogue"},
                  {"shared-input", "qf-fuse-shared-input"},
                  // After the groups form, so a group takes it whole.
                  {"act-order-norm", "qf-fuse-act-order-norm"},
                  // After gated-mlp, which takes a silu_mul of its own.
                  {"act-order-silu-mul", "qf-fuse-act-order-silu-mul"},
                  {"rotary-attention", "qf-fuse-rotary-attention"}};

/// What --fuse=default runs: every fusion that measured faster on the H200.
/// Left out: the RMSNorm prologue (each matvec block recomputes its rows'
/// norm: slower than the norm kernel, docs/defaults.md).
/// act-order-silu-mul: its one launch (gate and up gathered from global
/// memory) was slower than the silu_mul and staged permute launches it
/// replaces at most batches (docs/defaults.md).
constexpr llvm::StringLiteral kDefaultFusions[] = {
    "gated-mlp", "epilogue", "shared-input", "act-order-norm",
    "rotary-attention"};

/// Smallest batch from which --fuse=default leaves out shared-input.
constexpr int64_t kSharedInputDropFromBatch = 32;

/// The batches [from, to) for which --fuse=default leaves out gated-mlp on
/// chips with wgmma (sm_90a): there gate and up as one qf.group launch on
/// the plain wgmma kernel, then a silu_mul launch, beat the gated kernel,
/// which still wins below, and from `to` on, where its one warpgroup per
/// weight is fed by a producer warpgroup (docs/defaults.md). mma.sync chips
/// keep it: the comparison was made on wgmma only.
constexpr int64_t kGatedDropFromBatch = 128;
constexpr int64_t kGatedDropToBatch = 512;

/// shared-input restricted to gate and up feeding one qf.silu_mul.
constexpr llvm::StringLiteral kSharedInputGateUpOnly =
    "qf-fuse-shared-input{gate-up-only=true}";

} // namespace

FailureOr<SmallVector<StringRef>>
qfuse::selectFusions(StringRef fuse, int64_t minBatch, int64_t maxBatch,
                     bool wgmmaChip, SmallVectorImpl<std::string> &notes,
                     std::string &error) {
  // shared-input left out of default at these batches (measured slower);
  // gate/up still one launch where gated-mlp is out too.
  bool sharedInputDropped = false, gatedDropped = false;
  llvm::StringSet<> wanted;
  SmallVector<StringRef> items;
  fuse.split(items, ',', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
  for (StringRef item : items) {
    item = item.trim();
    if (item == "all") {
      for (auto &entry : kFusions)
        wanted.insert(entry.first);
    } else if (item == "default") {
      for (StringRef flag : kDefaultFusions) {
        // q/k/v as one launch runs k and v with q's tiling: from batch 32
        // that measured slower than three launches of their own tilings
        // (docs/defaults.md). Keyed on the smallest batch, the decode step
        // that dominates generation.
        if (flag == "shared-input" && minBatch >= kSharedInputDropFromBatch) {
          sharedInputDropped = true;
          continue;
        }
        // From kGatedDropFromBatch to kGatedDropToBatch the gated wgmma
        // kernel loses to gate and up as one plain wgmma launch plus
        // silu_mul.
        if (flag == "gated-mlp" && wgmmaChip &&
            minBatch >= kGatedDropFromBatch && minBatch < kGatedDropToBatch) {
          gatedDropped = true;
          continue;
        }
        wanted.insert(flag);
      }
    } else if (item != "none") {
      if (llvm::none_of(kFusions,
                        [&](auto &entry) { return entry.first == item; })) {
        error = "--fuse: unknown fusion '" + item.str() +
                "'; expected rmsnorm, gated-mlp, epilogue, shared-input, "
                "act-order-norm, act-order-silu-mul, rotary-attention, "
                "default, all or none";
        return failure();
      }
      wanted.insert(item);
    }
  }
  if (llvm::is_contained(items, "none") && wanted.size() > 0) {
    error = "--fuse: 'none' cannot be combined with other fusions";
    return failure();
  }
  // The notes say what was left out in the end (a fusion named after
  // `default` stays in).
  if (gatedDropped && !wanted.contains("gated-mlp"))
    notes.push_back(
        "--fuse=default leaves out gated-mlp on sm_90a: from batch " +
        std::to_string(kGatedDropFromBatch) + " to " +
        std::to_string(kGatedDropToBatch - 1) +
        " gate and up run faster as one wgmma launch and a silu_mul");
  const bool sharedInputGateUpOnly = sharedInputDropped &&
                                     !wanted.contains("shared-input") &&
                                     !wanted.contains("gated-mlp");
  if (sharedInputDropped && !wanted.contains("shared-input"))
    notes.push_back(std::string("--fuse=default ") +
                    (sharedInputGateUpOnly ? "groups only gate and up"
                                           : "leaves out shared-input") +
                    ": from batch " +
                    std::to_string(kSharedInputDropFromBatch) +
                    " q/k/v run faster as launches of their own");
  SmallVector<StringRef> passes;
  for (auto &[flag, pass] : kFusions) {
    if (flag == "shared-input" && sharedInputGateUpOnly) {
      passes.push_back(kSharedInputGateUpOnly);
      continue;
    }
    if (!wanted.contains(flag))
      continue;
    // The tensor-core kernel (past batch 8 the only one) does not take the
    // RMSNorm prologue; up to 8 qf-select-tiling keeps the matvec for it.
    if (maxBatch > qf::kMatvecMaxM && flag == "rmsnorm") {
      notes.push_back("--fuse=rmsnorm skipped: batch " +
                      std::to_string(maxBatch) +
                      " uses the tensor-core kernel, which does not fuse it");
      continue;
    }
    passes.push_back(pass);
  }
  return passes;
}
