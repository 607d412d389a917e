//===- PlanCheck.h - whether a fused generator can take a spec ---*- C++ -*-===//
//
// qf-to-gpu asks this before emitting a matvec or tensor-core kernel: a
// tiling its generator cannot plan (a limit selection did not model) runs
// the dequantize + cuBLAS fallback instead of failing the compile.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_LIB_CONVERSION_QFTOGPU_PLANCHECK_H
#define QFUSE_LIB_CONVERSION_QFTOGPU_PLANCHECK_H

#include "Common/MatmulSpec.h"

#include <optional>
#include <string>

namespace mlir {
namespace qf {

/// The diagnostic the matvec or tensor-core generator (by spec.tiling)
/// would give for `spec`, or nullopt when it can plan it. Nothing is
/// emitted.
std::optional<std::string> whyGeneratorRefuses(const MatmulSpec &spec,
                                               Location loc);

} // namespace qf
} // namespace mlir

#endif // QFUSE_LIB_CONVERSION_QFTOGPU_PLANCHECK_H
