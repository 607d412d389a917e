//===- BoundInputs.cpp - What a plan step reads that must be bound --------===//

#include "BoundInputs.h"

#include "qfuse/format/Layout.h"

namespace qfuse::runtime {

void forEachBoundInput(
    const Step &step,
    const std::function<void(const std::string &, const std::string &)>
        &component,
    const std::function<void(const std::string &)> &tensor) {
  for (const Arg &arg : step.args)
    if (arg.kind == Arg::Kind::Weight)
      component(arg.name, arg.component);
    else if (arg.kind == Arg::Kind::Tensor)
      tensor(arg.name);
  for (const std::string &weight : step.guard.weights)
    component(weight, format::kPerm);
  if (step.kind != Step::Kind::Gemm)
    return;
  if (!step.gemm.weight.empty())
    component(step.gemm.weight, format::kCodes);
  if (!step.gemm.bias.empty())
    tensor(step.gemm.bias);
}

} // namespace qfuse::runtime
