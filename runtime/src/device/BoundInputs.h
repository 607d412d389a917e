//===- BoundInputs.h - What a plan step reads that must be bound -*- C++ -*-===//
//
// One definition of the inputs a step reads from outside its buffers, for
// the Executor's checks and for tools that copy what a plan reads.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_RUNTIME_DEVICE_BOUNDINPUTS_H
#define QFUSE_RUNTIME_DEVICE_BOUNDINPUTS_H

#include "qfuse/runtime/artifact/Artifact.h"

#include <functional>
#include <string>

namespace qfuse::runtime {

/// What `step` reads that must be bound: weight components (a guard reads
/// its weights' perms; a dense f16 gemm weight is one component, the matrix
/// as stored) and dense tensors. A gemm's weight buffer is filled by the
/// plan itself.
void forEachBoundInput(
    const Step &step,
    const std::function<void(const std::string &, const std::string &)>
        &component,
    const std::function<void(const std::string &)> &tensor);

} // namespace qfuse::runtime

#endif // QFUSE_RUNTIME_DEVICE_BOUNDINPUTS_H
