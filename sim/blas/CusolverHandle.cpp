//===- CusolverHandle.cpp - cuSOLVER dense handles ------------------------===//
//
// The helper functions of the stand-in libcusolver.so.12: a handle holds
// the stream and the math mode it is given (CusolverContext.h).
//
//===----------------------------------------------------------------------===//
#include "CusolverContext.h"

#include <new>

extern "C" {

cusolverStatus_t cusolverDnCreate(cusolverDnHandle_t *handle) {
  if (!handle)
    return CUSOLVER_STATUS_INVALID_VALUE;
  *handle = new (std::nothrow) cusolverDnContext();
  return *handle ? CUSOLVER_STATUS_SUCCESS : CUSOLVER_STATUS_ALLOC_FAILED;
}

cusolverStatus_t cusolverDnDestroy(cusolverDnHandle_t handle) {
  if (!handle)
    return CUSOLVER_STATUS_NOT_INITIALIZED;
  delete handle;
  return CUSOLVER_STATUS_SUCCESS;
}

cusolverStatus_t cusolverDnSetStream(cusolverDnHandle_t handle,
                                     cudaStream_t streamId) {
  if (!handle)
    return CUSOLVER_STATUS_NOT_INITIALIZED;
  handle->stream = streamId;
  return CUSOLVER_STATUS_SUCCESS;
}

cusolverStatus_t cusolverDnGetStream(cusolverDnHandle_t handle,
                                     cudaStream_t *streamId) {
  if (!handle)
    return CUSOLVER_STATUS_NOT_INITIALIZED;
  if (!streamId)
    return CUSOLVER_STATUS_INVALID_VALUE;
  *streamId = handle->stream;
  return CUSOLVER_STATUS_SUCCESS;
}

/// Both modes are accepted and remembered; the arithmetic is the same
/// (double sums, float storage).
cusolverStatus_t cusolverDnSetMathMode(cusolverDnHandle_t handle,
                                       cusolverMathMode_t mode) {
  if (!handle)
    return CUSOLVER_STATUS_NOT_INITIALIZED;
  if (mode != CUSOLVER_DEFAULT_MATH &&
      mode != CUSOLVER_FP32_EMULATED_BF16X9_MATH)
    return CUSOLVER_STATUS_INVALID_VALUE;
  handle->mathMode = mode;
  return CUSOLVER_STATUS_SUCCESS;
}

cusolverStatus_t cusolverDnGetMathMode(cusolverDnHandle_t handle,
                                       cusolverMathMode_t *mode) {
  if (!handle)
    return CUSOLVER_STATUS_NOT_INITIALIZED;
  if (!mode)
    return CUSOLVER_STATUS_INVALID_VALUE;
  *mode = handle->mathMode;
  return CUSOLVER_STATUS_SUCCESS;
}

} // extern "C"
