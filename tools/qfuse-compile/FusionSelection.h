//===- FusionSelection.h - which qf-fuse-* passes --fuse runs ---*- C++ -*-===//

#ifndef QFUSE_TOOLS_QFUSE_COMPILE_FUSIONSELECTION_H
#define QFUSE_TOOLS_QFUSE_COMPILE_FUSIONSELECTION_H

#include "mlir/Support/LLVM.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>

namespace qfuse {

/// The pass names `fuse` (--fuse's value) selects, in pipeline order, for
/// a compile of batches minBatch..maxBatch on a chip with (`wgmmaChip`) or
/// without wgmma, or an error message. rmsnorm needs the matvec kernel:
/// past batch 8 the tensor-core kernel runs, which does not fuse it, so it
/// is left out. `default` leaves out the fusions measured slower at
/// minBatch. Each fusion left out adds a line to `notes`.
mlir::FailureOr<llvm::SmallVector<llvm::StringRef>>
selectFusions(llvm::StringRef fuse, int64_t minBatch, int64_t maxBatch,
              bool wgmmaChip, llvm::SmallVectorImpl<std::string> &notes,
              std::string &error);

} // namespace qfuse

#endif // QFUSE_TOOLS_QFUSE_COMPILE_FUSIONSELECTION_H
