//===- KnownTargets.h - The GPUs qfuse generates kernels for ----*- C++ -*-===//
//
// One table of chips: what `--chip=sm_90a` means to every pass (shared memory
// a block may use, SM count, bandwidth, peak throughput), as #qf.target.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_DIALECT_QF_IR_KNOWNTARGETS_H
#define QFUSE_DIALECT_QF_IR_KNOWNTARGETS_H

#include "qfuse/Dialect/QF/IR/QFDialect.h"

#include <string>

namespace mlir::qf {

/// The #qf.target of a known chip name (sm_80, sm_89, sm_90, sm_90a), or null.
TargetAttr getKnownTarget(MLIRContext *context, StringRef chip);

/// The known chip names, for diagnostics: "sm_80, sm_89, sm_90 or sm_90a".
std::string knownTargetNames();

} // namespace mlir::qf

#endif // QFUSE_DIALECT_QF_IR_KNOWNTARGETS_H
