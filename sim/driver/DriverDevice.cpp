//===- DriverDevice.cpp - the simulated device, context and errors --------===//
//
// One device that says it is an H200 run on the CPU (compute capability 9.0,
// or QFUSE_SIM_CC such as "8.0"), with the H200's limits, so that the
// runtime picks the kernels it would pick on the GPU.
//
//===----------------------------------------------------------------------===//

#include "SimDriver.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace qfuse::sim;

namespace {

std::atomic<bool> isInitialized{false};
std::atomic<int> sticky{CUDA_SUCCESS};
int primaryContext; // its address is the one context handle

constexpr size_t kTotalMemory = size_t(140) << 30;

// The compute capability: QFUSE_SIM_CC ("9.0", "8.0"), else 9.0.
std::pair<int, int> capability() {
  static const std::pair<int, int> value = [] {
    const char *text = std::getenv("QFUSE_SIM_CC");
    int major = 9, minor = 0;
    if (text && std::sscanf(text, "%d.%d", &major, &minor) != 2) {
      std::fprintf(stderr, "qfuse-sim: QFUSE_SIM_CC='%s' is not of the form "
                           "9.0; using 9.0\n", text);
      major = 9, minor = 0;
    }
    return std::make_pair(major, minor);
  }();
  return value;
}

struct ErrorName {
  CUresult code;
  const char *name;
  const char *text;
};

const ErrorName kErrors[] = {
    {CUDA_SUCCESS, "CUDA_SUCCESS", "no error"},
    {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED",
     "initialization error"},
    {CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE",
     "no CUDA-capable device is detected"},
    {CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE",
     "invalid device ordinal"},
    {CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE",
     "device kernel image is invalid"},
    {CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT",
     "invalid device context"},
    {CUDA_ERROR_NO_BINARY_FOR_GPU, "CUDA_ERROR_NO_BINARY_FOR_GPU",
     "no kernel image is available for execution on the device"},
    {CUDA_ERROR_INVALID_PTX, "CUDA_ERROR_INVALID_PTX",
     "a PTX JIT compilation failed"},
    {CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE",
     "invalid resource handle"},
    {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {CUDA_ERROR_ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS",
     "an illegal memory access was encountered"},
    {CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
     "too many resources requested for launch"},
    {CUDA_ERROR_LAUNCH_FAILED, "CUDA_ERROR_LAUNCH_FAILED",
     "unspecified launch failure"},
    {CUDA_ERROR_ILLEGAL_INSTRUCTION, "CUDA_ERROR_ILLEGAL_INSTRUCTION",
     "an illegal instruction was encountered"},
    {CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED",
     "operation not supported"},
    {CUDA_ERROR_STREAM_CAPTURE_INVALIDATED,
     "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED",
     "operation failed due to a previous error during capture"},
    {CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
     "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED",
     "operation not permitted when stream is capturing"},
    {CUDA_ERROR_STREAM_CAPTURE_UNMATCHED,
     "CUDA_ERROR_STREAM_CAPTURE_UNMATCHED",
     "capture was not initiated in this stream"},
    {CUDA_ERROR_UNKNOWN, "CUDA_ERROR_UNKNOWN", "unknown error"},
};

const ErrorName *findError(CUresult code) {
  for (const ErrorName &e : kErrors)
    if (e.code == code)
      return &e;
  return nullptr;
}

// The H200's value of an attribute the runtime or a tool may ask for.
bool attributeValue(CUdevice_attribute attribute, int &value) {
  switch (attribute) {
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
    value = capability().first;
    return true;
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
    value = capability().second;
    return true;
  case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
    value = 132;
    return true;
  case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
    value = 1024;
    return true;
  case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR:
    value = 2048;
    return true;
  case CU_DEVICE_ATTRIBUTE_WARP_SIZE:
    value = 32;
    return true;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK:
    value = 48 * 1024;
    return true;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN:
    value = 227 * 1024;
    return true;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR:
    value = 228 * 1024;
    return true;
  case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK:
  case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR:
    value = 65536;
    return true;
  case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE:
    value = 60 * 1024 * 1024;
    return true;
  case CU_DEVICE_ATTRIBUTE_CLOCK_RATE:
    value = 1980000;
    return true;
  case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE:
    value = 2619000;
    return true;
  case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH:
    value = 6144;
    return true;
  case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X:
  case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y:
    value = 1024;
    return true;
  case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z:
    value = 64;
    return true;
  case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X:
    value = 2147483647;
    return true;
  case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y:
  case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z:
    value = 65535;
    return true;
  case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING:
  case CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS:
  case CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH:
    value = 1;
    return true;
  default:
    return false;
  }
}

} // namespace

namespace qfuse::sim {

CUresult stickyError() { return CUresult(sticky.load()); }

void setStickyError(CUresult error) {
  int expected = CUDA_SUCCESS;
  sticky.compare_exchange_strong(expected, error);
}

bool initialized() { return isInitialized.load(); }

int computeMajor() { return capability().first; }
int computeMinor() { return capability().second; }

} // namespace qfuse::sim


extern "C" {

CUresult CUDAAPI cuInit(unsigned int flags) {
  if (flags != 0)
    return CUDA_ERROR_INVALID_VALUE;
  isInitialized = true;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetCount(int *count) {
  if (!count)
    return CUDA_ERROR_INVALID_VALUE;
  QFUSE_SIM_READY();
  *count = 1;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGet(CUdevice *device, int ordinal) {
  if (!device)
    return CUDA_ERROR_INVALID_VALUE;
  QFUSE_SIM_READY();
  if (ordinal != 0)
    return CUDA_ERROR_INVALID_DEVICE;
  *device = 0;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetName(char *name, int length, CUdevice device) {
  if (!name || length <= 0)
    return CUDA_ERROR_INVALID_VALUE;
  QFUSE_SIM_READY();
  if (device != 0)
    return CUDA_ERROR_INVALID_DEVICE;
  std::snprintf(name, size_t(length),
                "qfuse-sim (an H200 as sm_%d%d, on the CPU)", computeMajor(),
                computeMinor());
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetAttribute(int *value, CUdevice_attribute attribute,
                                      CUdevice device) {
  if (!value)
    return CUDA_ERROR_INVALID_VALUE;
  QFUSE_SIM_READY();
  if (device != 0)
    return CUDA_ERROR_INVALID_DEVICE;
  if (!attributeValue(attribute, *value))
    *value = 0;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceTotalMem(size_t *bytes, CUdevice device) {
  if (!bytes)
    return CUDA_ERROR_INVALID_VALUE;
  QFUSE_SIM_READY();
  if (device != 0)
    return CUDA_ERROR_INVALID_DEVICE;
  *bytes = kTotalMemory;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemGetInfo(size_t *free, size_t *total) {
  if (!free || !total)
    return CUDA_ERROR_INVALID_VALUE;
  QFUSE_SIM_READY();
  *free = *total = kTotalMemory;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext *context, CUdevice device) {
  if (!context)
    return CUDA_ERROR_INVALID_VALUE;
  QFUSE_SIM_READY();
  if (device != 0)
    return CUDA_ERROR_INVALID_DEVICE;
  *context = reinterpret_cast<CUcontext>(&primaryContext);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice device) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  return device == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

CUresult CUDAAPI cuCtxSetCurrent(CUcontext context) {
  QFUSE_SIM_READY();
  if (context && context != reinterpret_cast<CUcontext>(&primaryContext))
    return CUDA_ERROR_INVALID_CONTEXT;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxSynchronize(void) {
  QFUSE_SIM_READY();
  if (capturesOnThisThread() > 0)
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDriverGetVersion(int *version) {
  if (!version)
    return CUDA_ERROR_INVALID_VALUE;
  *version = CUDA_VERSION;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGetErrorName(CUresult error, const char **name) {
  if (!name)
    return CUDA_ERROR_INVALID_VALUE;
  const ErrorName *e = findError(error);
  *name = e ? e->name : nullptr;
  return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuGetErrorString(CUresult error, const char **text) {
  if (!text)
    return CUDA_ERROR_INVALID_VALUE;
  const ErrorName *e = findError(error);
  *text = e ? e->text : nullptr;
  return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

} // extern "C"
