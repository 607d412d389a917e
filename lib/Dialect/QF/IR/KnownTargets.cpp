//===- KnownTargets.cpp - The GPUs qfuse generates kernels for ------------===//
//
// A chip row describes the data-center part of its generation that qfuse is
// measured on: sm_80 an A100 SXM (80 GB), sm_89 an L40S, sm_90 and sm_90a an
// H100/H200 SXM (bandwidth: H200). Shared memory is the per-block opt-in
// maximum from the CUDA programming guide's compute-capability table.
//
//===----------------------------------------------------------------------===//

#include "qfuse/Dialect/QF/IR/KnownTargets.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::qf;

namespace {
struct KnownTarget {
  const char *chip;
  int64_t smCount;
  int64_t maxSharedPerBlock;
  int64_t bandwidthGbps;
  int64_t peakF16Tflops;
};

constexpr KnownTarget kKnownTargets[] = {
    {"sm_80", 108, 163 * 1024, 2039, 312},
    {"sm_89", 142, 99 * 1024, 864, 362},
    {"sm_90", 132, 227 * 1024, 4800, 989},
    {"sm_90a", 132, 227 * 1024, 4800, 989},
};
} // namespace

TargetAttr mlir::qf::getKnownTarget(MLIRContext *context, StringRef chip) {
  for (const KnownTarget &t : kKnownTargets)
    if (chip == t.chip)
      return TargetAttr::get(context, t.chip, t.smCount, t.maxSharedPerBlock,
                             t.bandwidthGbps, t.peakF16Tflops);
  return {};
}

std::string mlir::qf::knownTargetNames() {
  std::string names;
  for (size_t i = 0; i < std::size(kKnownTargets); ++i) {
    if (i > 0)
      names += i + 1 == std::size(kKnownTargets) ? " or " : ", ";
    names += kKnownTargets[i].chip;
  }
  return names;
}
