//===- SimDriver.h - the simulated driver's objects -------------*- C++ -*-===//
//
// What the stand-in libcuda keeps between calls: streams (work runs on the
// calling thread when it is submitted, or is recorded while the stream is
// being captured), events, graphs, modules and functions, and the sticky
// error a failed kernel leaves, as on a GPU.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_SIM_DRIVER_SIMDRIVER_H
#define QFUSE_SIM_DRIVER_SIMDRIVER_H

#include "qfuse/sim/Ptx.h"

#include <cuda.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace qfuse::sim {

/// One unit of stream work: runs when submitted, or later from a graph.
using StreamWork = std::function<CUresult()>;

struct SimStream {
  bool capturing = false;
  std::vector<StreamWork> captured;
};

struct SimGraph {
  std::vector<StreamWork> nodes;
};

struct SimEvent {
  std::chrono::steady_clock::time_point when{};
  bool recorded = false;
};

struct SimModule {
  std::unique_ptr<PtxModule> ptx;
  std::vector<std::unique_ptr<struct SimFunction>> functions;
};

struct SimFunction {
  const SimModule *module = nullptr;
  const KernelInfo *info = nullptr;
  int maxDynamicShared = 48 * 1024;
};

/// Streams this thread is capturing: as on a GPU (thread-local capture
/// mode), a context-wide synchronize on that thread is refused meanwhile.
int &capturesOnThisThread();

/// CUDA_SUCCESS, or the error every call returns after a kernel failed.
CUresult stickyError();
void setStickyError(CUresult error);

/// Whether cuInit ran; every other call returns CUDA_ERROR_NOT_INITIALIZED
/// before it.
bool initialized();

/// Runs `work` now, or records it if `stream` is being captured.
CUresult submit(CUstream stream, StreamWork work);

/// Runs one kernel now (for submit's work): the launch's error, printed
/// on stderr with the kernel's own message, becomes sticky.
CUresult runKernel(const SimFunction &function, const LaunchConfig &config,
                   const std::vector<std::vector<unsigned char>> &params);

/// The values a kernel's parameters point to, copied at launch.
std::vector<std::vector<unsigned char>> copyParams(const SimFunction &function,
                                                   void **kernelParams);

/// The simulated device's compute capability (QFUSE_SIM_CC, default 9.0).
int computeMajor();
int computeMinor();

} // namespace qfuse::sim

/// The first lines of every call after cuInit: not initialized, or the
/// sticky error of a failed kernel.
#define QFUSE_SIM_READY()                                                      \
  do {                                                                         \
    if (!initialized())                                                        \
      return CUDA_ERROR_NOT_INITIALIZED;                                       \
    if (stickyError() != CUDA_SUCCESS)                                         \
      return stickyError();                                                    \
  } while (0)

/// For the stand-in cuBLAS and cuSOLVER: runs fn(arg) in the order of
/// `stream` (a CUstream; now, or on replay of a graph being captured), then
/// destroy(arg) when the work is dropped; returns a CUresult. Found with
/// dlsym, so those libraries need no link to this one: plain C types only,
/// declared the same in sim/blas/StreamOrder.cpp.
extern "C" int qfuseSimSubmit(void *stream, int (*fn)(void *), void *arg,
                              void (*destroy)(void *));

#endif // QFUSE_SIM_DRIVER_SIMDRIVER_H
