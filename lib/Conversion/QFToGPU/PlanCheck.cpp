//===- PlanCheck.cpp - whether a fused generator can take a spec ----------===//

#include "PlanCheck.h"

#include "MatVec/MatVecPlan.h"
#include "TensorCore/TensorCorePlan.h"

#include "mlir/IR/Diagnostics.h"

using namespace mlir;
using namespace mlir::qf;

std::optional<std::string> qf::whyGeneratorRefuses(const MatmulSpec &spec,
                                                   Location loc) {
  std::string reason;
  // Only the plan's errors are taken; anything else goes on to the
  // enclosing handlers.
  ScopedDiagnosticHandler capture(loc.getContext(), [&](Diagnostic &d) {
    if (d.getSeverity() != DiagnosticSeverity::Error)
      return failure();
    if (reason.empty())
      reason = d.str();
    return success();
  });
  auto emit = [&]() { return mlir::emitError(loc); };
  bool planned = isTensorCoreKernel(spec.tiling.getKernel())
                     ? succeeded(tensor_core::makePlan(spec, emit))
                     : succeeded(matvec::makePlan(spec, emit));
  if (planned)
    return std::nullopt;
  return reason.empty() ? std::string("the generator cannot plan it") : reason;
}
