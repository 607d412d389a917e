//===- CudaFault.cpp - injected CUDA driver errors and a memory cap -------===//
//
// Test-only, never linked into the product: LD_PRELOAD=libqfuse-cuda-fault.so
// puts these definitions before libcuda's, so that the runtime's own driver
// calls can be made to fail as a faulty or full device would
// (scripts/fault-injection-check.sh):
//
//   QFUSE_CUDA_FAULT="cuLaunchKernel:200"       the 200th launch returns
//                                               CUDA_ERROR_LAUNCH_FAILED
//                                               (cuLaunchKernel or -Ex)
//   QFUSE_CUDA_FAULT="cuMemcpyDtoH_v2:3:999"    the 3rd copy back returns 999
//                                               (CUDA_ERROR_UNKNOWN)
//   QFUSE_CUDA_MEMORY_LIMIT=268435456           cuMemAlloc fails with
//                                               CUDA_ERROR_OUT_OF_MEMORY once
//                                               the runtime's allocations
//                                               would pass 256 MB
//
// (cuBLAS and cuSOLVER reach the driver through the CUDA runtime, which
// these do not intercept.)
//
//===----------------------------------------------------------------------===//

#include <cuda.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <mutex>
#include <string>
#include <unordered_map>

namespace {

struct Fault {
  std::string function;
  long long nth = 0;
  CUresult error = CUDA_ERROR_LAUNCH_FAILED;
  unsigned long long memoryLimit = 0;
};

const Fault &fault() {
  static const Fault f = [] {
    Fault f;
    if (const char *spec = std::getenv("QFUSE_CUDA_FAULT")) {
      std::string text = spec;
      const size_t a = text.find(':');
      f.function = text.substr(0, a);
      if (a != std::string::npos) {
        const size_t b = text.find(':', a + 1);
        f.nth = std::atoll(text.substr(a + 1, b - a - 1).c_str());
        if (b != std::string::npos)
          f.error = CUresult(std::atoi(text.substr(b + 1).c_str()));
      }
      std::fprintf(stderr, "qfuse-cuda-fault: call %lld of %s fails with %d\n",
                   f.nth, f.function.c_str(), int(f.error));
    }
    if (const char *limit = std::getenv("QFUSE_CUDA_MEMORY_LIMIT"))
      f.memoryLimit = std::strtoull(limit, nullptr, 10);
    return f;
  }();
  return f;
}

/// The injected error if this is the chosen call of `name`, else success.
CUresult injected(const char *name, std::atomic<long long> &calls) {
  const Fault &f = fault();
  if (f.function != name)
    return CUDA_SUCCESS;
  return ++calls == f.nth ? f.error : CUDA_SUCCESS;
}

template <typename Fn> Fn next(const char *name) {
  void *symbol = dlsym(RTLD_NEXT, name);
  if (!symbol) {
    std::fprintf(stderr, "qfuse-cuda-fault: no %s after this library\n", name);
    std::abort();
  }
  return reinterpret_cast<Fn>(symbol);
}

std::mutex allocationsMutex;
std::unordered_map<CUdeviceptr, size_t> allocations;
unsigned long long allocated = 0;

} // namespace

#define QFUSE_FORWARD(name, params, args)                                      \
  extern "C" CUresult name params {                                            \
    static std::atomic<long long> calls{0};                                    \
    if (CUresult error = injected(#name, calls))                               \
      return error;                                                            \
    static auto real = next<CUresult(*) params>(#name);                        \
    return real args;                                                          \
  }

#undef cuMemcpyDtoH
#undef cuMemcpyHtoD
#undef cuMemcpyDtoHAsync
#undef cuMemcpyHtoDAsync
#undef cuMemcpyDtoDAsync

// Both launch entry points count as "cuLaunchKernel" (the Executor takes
// cuLaunchKernelEx for programmatic dependent launches).
static std::atomic<long long> launchCalls{0};
extern "C" CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy,
                                   unsigned gz, unsigned bx, unsigned by,
                                   unsigned bz, unsigned shared,
                                   CUstream stream, void **params,
                                   void **extra) {
  if (CUresult error = injected("cuLaunchKernel", launchCalls))
    return error;
  static auto real = next<CUresult (*)(CUfunction, unsigned, unsigned,
                                       unsigned, unsigned, unsigned, unsigned,
                                       unsigned, CUstream, void **, void **)>(
      "cuLaunchKernel");
  return real(f, gx, gy, gz, bx, by, bz, shared, stream, params, extra);
}
extern "C" CUresult cuLaunchKernelEx(const CUlaunchConfig *config,
                                     CUfunction f, void **params,
                                     void **extra) {
  if (CUresult error = injected("cuLaunchKernel", launchCalls))
    return error;
  static auto real =
      next<CUresult (*)(const CUlaunchConfig *, CUfunction, void **, void **)>(
          "cuLaunchKernelEx");
  return real(config, f, params, extra);
}
QFUSE_FORWARD(cuGraphLaunch, (CUgraphExec graph, CUstream stream),
              (graph, stream))
QFUSE_FORWARD(cuStreamSynchronize, (CUstream stream), (stream))
QFUSE_FORWARD(cuMemcpyDtoH_v2, (void *dst, CUdeviceptr src, size_t bytes),
              (dst, src, bytes))
QFUSE_FORWARD(cuMemcpyHtoD_v2,
              (CUdeviceptr dst, const void *src, size_t bytes),
              (dst, src, bytes))
QFUSE_FORWARD(cuMemcpyDtoHAsync_v2,
              (void *dst, CUdeviceptr src, size_t bytes, CUstream stream),
              (dst, src, bytes, stream))
QFUSE_FORWARD(cuMemcpyHtoDAsync_v2,
              (CUdeviceptr dst, const void *src, size_t bytes, CUstream stream),
              (dst, src, bytes, stream))
QFUSE_FORWARD(cuMemcpyDtoDAsync_v2,
              (CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream stream),
              (dst, src, bytes, stream))

extern "C" CUresult cuMemAlloc_v2(CUdeviceptr *ptr, size_t bytes) {
  static std::atomic<long long> calls{0};
  if (CUresult error = injected("cuMemAlloc_v2", calls))
    return error;
  static auto real = next<CUresult (*)(CUdeviceptr *, size_t)>("cuMemAlloc_v2");
  const unsigned long long limit = fault().memoryLimit;
  if (!limit)
    return real(ptr, bytes);
  std::lock_guard<std::mutex> lock(allocationsMutex);
  if (allocated + bytes > limit)
    return CUDA_ERROR_OUT_OF_MEMORY;
  const CUresult result = real(ptr, bytes);
  if (result == CUDA_SUCCESS) {
    allocations[*ptr] = bytes;
    allocated += bytes;
  }
  return result;
}

extern "C" CUresult cuMemFree_v2(CUdeviceptr ptr) {
  static auto real = next<CUresult (*)(CUdeviceptr)>("cuMemFree_v2");
  if (fault().memoryLimit) {
    std::lock_guard<std::mutex> lock(allocationsMutex);
    auto it = allocations.find(ptr);
    if (it != allocations.end()) {
      allocated -= it->second;
      allocations.erase(it);
    }
  }
  return real(ptr);
}
