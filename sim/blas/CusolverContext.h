//===- CusolverContext.h - the stand-in cuSOLVER dense handle ---*- C++ -*-===//
//
// cusolverDnHandle_t points at a cusolverDnContext, which the real header
// leaves opaque: here the stream (passed back to the simulated driver,
// which runs each call's computation in its order) and the math mode.
//
//===----------------------------------------------------------------------===//
#ifndef QFUSE_SIM_BLAS_CUSOLVERCONTEXT_H
#define QFUSE_SIM_BLAS_CUSOLVERCONTEXT_H

#include "StreamOrder.h"

#include <cusolverDn.h>

struct cusolverDnContext {
  cudaStream_t stream = nullptr;
  cusolverMathMode_t mathMode = CUSOLVER_DEFAULT_MATH;
};

namespace qfuse::sim {

/// Runs a call's computation, after its arguments were checked, in the
/// handle's stream order (StreamOrder.h).
inline cusolverStatus_t inStreamOrder(cusolverDnHandle_t handle,
                                      std::function<void()> work) {
  return runInStreamOrder(handle->stream, std::move(work))
             ? CUSOLVER_STATUS_SUCCESS
             : CUSOLVER_STATUS_EXECUTION_FAILED;
}

} // namespace qfuse::sim

#endif // QFUSE_SIM_BLAS_CUSOLVERCONTEXT_H
