//===- CublasHandle.cpp - cuBLAS handles, modes and status names ----------===//
//
// The helper functions of the stand-in libcublas.so.13: handles hold the
// stream, workspace and modes they are given; the status names and
// descriptions are the real library's.
//
//===----------------------------------------------------------------------===//
#include "CublasContext.h"

#include <cstdint>
#include <new>

extern "C" {

cublasStatus_t cublasCreate_v2(cublasHandle_t *handle) {
  if (!handle)
    return CUBLAS_STATUS_INVALID_VALUE;
  *handle = new (std::nothrow) cublasContext();
  return *handle ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_ALLOC_FAILED;
}

cublasStatus_t cublasDestroy_v2(cublasHandle_t handle) {
  if (!handle)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  delete handle;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetVersion_v2(cublasHandle_t handle, int *version) {
  if (!handle)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!version)
    return CUBLAS_STATUS_INVALID_VALUE;
  *version = CUBLAS_VERSION;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetWorkspace_v2(cublasHandle_t handle, void *workspace,
                                     size_t workspaceSizeInBytes) {
  if (!handle)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  // cuBLAS requires a 256-byte aligned workspace (cuMemAlloc's alignment).
  if (reinterpret_cast<uintptr_t>(workspace) % 256 != 0)
    return CUBLAS_STATUS_INVALID_VALUE;
  handle->workspace = workspace;
  handle->workspaceBytes = workspace ? workspaceSizeInBytes : 0;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetStream_v2(cublasHandle_t handle,
                                  cudaStream_t streamId) {
  if (!handle)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  handle->stream = streamId;
  // As in cuBLAS: a new stream goes back to the library's own workspace.
  handle->workspace = nullptr;
  handle->workspaceBytes = 0;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetStream_v2(cublasHandle_t handle,
                                  cudaStream_t *streamId) {
  if (!handle)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!streamId)
    return CUBLAS_STATUS_INVALID_VALUE;
  *streamId = handle->stream;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetPointerMode_v2(cublasHandle_t handle,
                                       cublasPointerMode_t *mode) {
  if (!handle)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!mode)
    return CUBLAS_STATUS_INVALID_VALUE;
  *mode = handle->pointerMode;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetPointerMode_v2(cublasHandle_t handle,
                                       cublasPointerMode_t mode) {
  if (!handle)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  if (mode != CUBLAS_POINTER_MODE_HOST && mode != CUBLAS_POINTER_MODE_DEVICE)
    return CUBLAS_STATUS_INVALID_VALUE;
  handle->pointerMode = mode;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetMathMode(cublasHandle_t handle, cublasMath_t *mode) {
  if (!handle)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  if (!mode)
    return CUBLAS_STATUS_INVALID_VALUE;
  *mode = handle->mathMode;
  return CUBLAS_STATUS_SUCCESS;
}

/// Every mode is accepted and remembered; the arithmetic does not change
/// (inputs are never down-converted, sums are exact-order doubles).
cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode) {
  if (!handle)
    return CUBLAS_STATUS_NOT_INITIALIZED;
  switch (int(mode) & ~int(CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION)) {
  case CUBLAS_DEFAULT_MATH:
  case CUBLAS_TENSOR_OP_MATH:
  case CUBLAS_PEDANTIC_MATH:
  case CUBLAS_TF32_TENSOR_OP_MATH:
  case CUBLAS_FP32_EMULATED_BF16X9_MATH:
  case CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH:
    handle->mathMode = mode;
    return CUBLAS_STATUS_SUCCESS;
  default:
    return CUBLAS_STATUS_INVALID_VALUE;
  }
}

const char *cublasGetStatusName(cublasStatus_t status) {
  switch (status) {
  case CUBLAS_STATUS_SUCCESS:
    return "CUBLAS_STATUS_SUCCESS";
  case CUBLAS_STATUS_NOT_INITIALIZED:
    return "CUBLAS_STATUS_NOT_INITIALIZED";
  case CUBLAS_STATUS_ALLOC_FAILED:
    return "CUBLAS_STATUS_ALLOC_FAILED";
  case CUBLAS_STATUS_INVALID_VALUE:
    return "CUBLAS_STATUS_INVALID_VALUE";
  case CUBLAS_STATUS_ARCH_MISMATCH:
    return "CUBLAS_STATUS_ARCH_MISMATCH";
  case CUBLAS_STATUS_MAPPING_ERROR:
    return "CUBLAS_STATUS_MAPPING_ERROR";
  case CUBLAS_STATUS_EXECUTION_FAILED:
    return "CUBLAS_STATUS_EXECUTION_FAILED";
  case CUBLAS_STATUS_INTERNAL_ERROR:
    return "CUBLAS_STATUS_INTERNAL_ERROR";
  case CUBLAS_STATUS_NOT_SUPPORTED:
    return "CUBLAS_STATUS_NOT_SUPPORTED";
  case CUBLAS_STATUS_LICENSE_ERROR:
    return "CUBLAS_STATUS_LICENSE_ERROR";
  }
  return "unrecognized status";
}

const char *cublasGetStatusString(cublasStatus_t status) {
  switch (status) {
  case CUBLAS_STATUS_SUCCESS:
    return "success";
  case CUBLAS_STATUS_NOT_INITIALIZED:
    return "the library was not initialized";
  case CUBLAS_STATUS_ALLOC_FAILED:
    return "the resource allocation failed";
  case CUBLAS_STATUS_INVALID_VALUE:
    return "an unsupported value or parameter was passed to the function";
  case CUBLAS_STATUS_ARCH_MISMATCH:
    return "the function requires an architectural feature absent from the "
           "device";
  case CUBLAS_STATUS_MAPPING_ERROR:
    return "an access to GPU memory space failed";
  case CUBLAS_STATUS_EXECUTION_FAILED:
    return "the function failed to launch on the GPU";
  case CUBLAS_STATUS_INTERNAL_ERROR:
    return "an internal operation failed";
  case CUBLAS_STATUS_NOT_SUPPORTED:
    return "the requested functionality is not supported";
  case CUBLAS_STATUS_LICENSE_ERROR:
    return "the license check failed";
  }
  return "unrecognized status";
}

} // extern "C"
