//===- Cuda.h - Checked CUDA driver and cuBLAS wrappers ---------*- C++ -*-===//
//
// Every driver and cuBLAS call in the runtime goes through QFUSE_CU /
// QFUSE_CUBLAS (or their _CTX forms), which turn a failure into a
// qfuse::Error carrying the call text, the error name and string, the source
// location and what the runtime was doing:
//
//   CUDA error CUDA_ERROR_OUT_OF_MEMORY (out of memory) in
//   `cuMemAlloc(&ptr_, size)` [Cuda.cpp:210] while allocating buffer 'x'
//   (8192 bytes)
//
// Resources are RAII, move-only: the primary context of a device, device
// buffers, pinned host buffers, streams, events, modules, CUDA graphs and
// cuBLAS handles.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_RUNTIME_DEVICE_CUDA_H
#define QFUSE_RUNTIME_DEVICE_CUDA_H

#include "qfuse/runtime/artifact/Artifact.h"

#include <cublas_v2.h>
#include <cuda.h>
#include <cusolverDn.h>

#include <functional>
#include <string>

namespace qfuse::runtime::cuda {

[[noreturn]] void throwCuError(CUresult result, const char *call,
                               const char *file, int line,
                               const std::string &context);
[[noreturn]] void throwCublasError(cublasStatus_t status, const char *call,
                                   const char *file, int line,
                                   const std::string &context);

[[noreturn]] void throwCusolverError(cusolverStatus_t status, const char *call,
                                     const char *file, int line,
                                     const std::string &context);

/// "CUDA_ERROR_INVALID_VALUE" (cuGetErrorName), or "CUresult <n>".
std::string errorName(CUresult result);

} // namespace qfuse::runtime::cuda

// The context expression is evaluated only when the call fails, so checked
// calls cost nothing extra on the launch path.
#define QFUSE_CU_CTX(call, context)                                            \
  do {                                                                         \
    CUresult qfuseResult_ = (call);                                            \
    if (qfuseResult_ != CUDA_SUCCESS)                                          \
      ::qfuse::runtime::cuda::throwCuError(qfuseResult_, #call, __FILE__,      \
                                           __LINE__, (context));               \
  } while (false)
#define QFUSE_CU(call) QFUSE_CU_CTX(call, std::string())

#define QFUSE_CUBLAS_CTX(call, context)                                        \
  do {                                                                         \
    cublasStatus_t qfuseStatus_ = (call);                                      \
    if (qfuseStatus_ != CUBLAS_STATUS_SUCCESS)                                 \
      ::qfuse::runtime::cuda::throwCublasError(qfuseStatus_, #call, __FILE__,  \
                                               __LINE__, (context));           \
  } while (false)
#define QFUSE_CUBLAS(call) QFUSE_CUBLAS_CTX(call, std::string())

#define QFUSE_CUSOLVER_CTX(call, context)                                      \
  do {                                                                         \
    cusolverStatus_t qfuseStatus_ = (call);                                    \
    if (qfuseStatus_ != CUSOLVER_STATUS_SUCCESS)                               \
      ::qfuse::runtime::cuda::throwCusolverError(                              \
          qfuseStatus_, #call, __FILE__, __LINE__, (context));                 \
  } while (false)
#define QFUSE_CUSOLVER(call) QFUSE_CUSOLVER_CTX(call, std::string())

namespace qfuse::runtime::cuda {

/// cuInit(0) then cuDeviceGetCount. Returns 0 devices, and the reason in
/// `why`, where there is no driver, only the stub library, or no GPU.
int deviceCount(std::string *why = nullptr);

/// A device and its retained primary context, made current on the calling
/// thread (cuBLAS and every other library in the process share it).
class Context {
public:
  explicit Context(int ordinal = 0);
  ~Context();
  Context(Context &&other) noexcept;
  Context &operator=(Context &&) = delete;
  Context(const Context &) = delete;
  Context &operator=(const Context &) = delete;

  /// Makes the context current on the calling thread.
  void makeCurrent() const;

  CUdevice device() const { return device_; }
  CUcontext get() const { return context_; }
  int ordinal() const { return ordinal_; }
  const std::string &name() const { return name_; }
  int major() const { return major_; }
  int minor() const { return minor_; }
  /// "sm_90" for compute capability 9.0.
  std::string chip() const;
  int attribute(CUdevice_attribute attribute) const;
  size_t totalMemory() const;
  /// "device 0 (NVIDIA H200, sm_90)".
  std::string describe() const;

private:
  int ordinal_ = 0;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  std::string name_;
  int major_ = 0;
  int minor_ = 0;
};

/// Throws unless code built for `target` runs on `context`'s device: PTX
/// and cubins run on the same or a newer compute capability, `sm_XYa` code
/// only on exactly X.Y (selectVariant with one chip, artifact/ArtifactSet.h).
void checkTarget(const ChipTarget &target, const Context &context);

/// Whether a cubin for `target` loads on a device of compute capability
/// major.minor (same major, minor at least the target's; exact for 'a').
bool cubinRunsOn(const ChipTarget &target, int major, int minor);

/// A device allocation (cuMemAlloc). Move-only; a default one is empty.
class DeviceBuffer {
public:
  DeviceBuffer() = default;
  /// `label` names the buffer in errors.
  DeviceBuffer(size_t size, std::string label);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer &&other) noexcept;
  DeviceBuffer &operator=(DeviceBuffer &&other) noexcept;
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;

  CUdeviceptr ptr() const { return ptr_; }
  size_t size() const { return size_; }
  const std::string &label() const { return label_; }
  bool empty() const { return ptr_ == 0; }

  /// Copies `size` bytes from the host to byte `offset`; returns when they
  /// are on the device. Work already queued on other streams that reads the
  /// buffer is not waited for.
  void upload(const void *data, size_t size, size_t offset = 0);
  /// Copies to the host; the caller first synchronizes the stream whose
  /// work writes the buffer.
  void download(void *data, size_t size, size_t offset = 0) const;
  /// Asynchronous zero fill on `stream`.
  void zero(CUstream stream);
  /// Asynchronous byte fill on `stream` (poisoning outputs in tests).
  void fill(uint8_t value, CUstream stream);

private:
  void checkRange(size_t size, size_t offset, const char *what) const;
  void release() noexcept;

  CUdeviceptr ptr_ = 0;
  size_t size_ = 0;
  std::string label_;
};

/// Page-locked host memory (cuMemAllocHost): asynchronous copies to and
/// from it do not wait for the host. Move-only; a default one is empty.
class PinnedBuffer {
public:
  PinnedBuffer() = default;
  PinnedBuffer(size_t size, std::string label);
  ~PinnedBuffer();
  PinnedBuffer(PinnedBuffer &&other) noexcept;
  PinnedBuffer &operator=(PinnedBuffer &&other) noexcept;
  PinnedBuffer(const PinnedBuffer &) = delete;
  PinnedBuffer &operator=(const PinnedBuffer &) = delete;

  void *data() const { return data_; }
  size_t size() const { return size_; }
  template <typename T> T *as() const { return static_cast<T *>(data_); }

private:
  void release() noexcept;

  void *data_ = nullptr;
  size_t size_ = 0;
  std::string label_;
};

class Stream {
public:
  Stream();
  ~Stream();
  Stream(Stream &&other) noexcept;
  Stream &operator=(Stream &&) = delete;
  Stream(const Stream &) = delete;
  Stream &operator=(const Stream &) = delete;

  CUstream get() const { return stream_; }
  void synchronize() const;

private:
  CUstream stream_ = nullptr;
};

class Event {
public:
  Event();
  ~Event();
  Event(Event &&other) noexcept;
  Event &operator=(Event &&) = delete;
  Event(const Event &) = delete;
  Event &operator=(const Event &) = delete;

  CUevent get() const { return event_; }
  void record(CUstream stream);
  void synchronize() const;
  /// Milliseconds from `start` to `end`, both recorded and complete.
  static float elapsedMs(const Event &start, const Event &end);

private:
  CUevent event_ = nullptr;
};

/// A stream capture turned into an executable graph.
class Graph {
public:
  Graph() = default;
  /// Captures what `enqueue` puts on `stream` (which must not be the legacy
  /// default stream) and instantiates it.
  static Graph capture(CUstream stream, const std::function<void()> &enqueue);
  ~Graph();
  Graph(Graph &&other) noexcept;
  Graph &operator=(Graph &&other) noexcept;
  Graph(const Graph &) = delete;
  Graph &operator=(const Graph &) = delete;

  bool empty() const { return exec_ == nullptr; }
  /// Enqueues one replay on `stream`.
  void launch(CUstream stream) const;
  /// Number of nodes captured.
  size_t numNodes() const;

private:
  void release() noexcept;

  CUgraph graph_ = nullptr;
  CUgraphExec exec_ = nullptr;
};

/// A loaded module: the cubin when one is there and fits the device,
/// otherwise the PTX through the driver's JIT (cuModuleLoadDataEx).
class Module {
public:
  /// Loads `kernel` (built for `target`) on the current context.
  static Module load(const Kernel &kernel, const ChipTarget &target,
                     const Context &context);
  /// Loads PTX text; `label` names it in errors, which include the JIT log.
  static Module loadPtx(const std::string &ptx, const std::string &label);
  /// Loads a cubin image.
  static Module loadCubin(const std::vector<uint8_t> &cubin,
                          const std::string &label);
  Module() = default;
  ~Module();
  Module(Module &&other) noexcept;
  Module &operator=(Module &&other) noexcept;
  Module(const Module &) = delete;
  Module &operator=(const Module &) = delete;

  CUfunction function(const std::string &name) const;
  bool fromCubin() const { return fromCubin_; }
  CUmodule get() const { return module_; }

private:
  void release() noexcept;

  CUmodule module_ = nullptr;
  bool fromCubin_ = false;
  std::string label_;
};

/// A cuBLAS handle bound to the current context, with its own workspace
/// (so that calls can be captured into CUDA graphs without allocating).
class Cublas {
public:
  static constexpr size_t kWorkspaceBytes = 32u << 20;

  Cublas();
  ~Cublas();
  Cublas(const Cublas &) = delete;
  Cublas &operator=(const Cublas &) = delete;

  cublasHandle_t get() const { return handle_; }
  void setStream(CUstream stream);

  /// Row-major y[M, N] = x[M, K] * W[N, K]^T + beta * y, every matrix of
  /// `type` (CUDA_R_16F or CUDA_R_16BF) with fp32 accumulation
  /// (cublasGemmEx, CUBLAS_COMPUTE_32F), enqueued on the handle's stream.
  void gemmRowMajor(cudaDataType_t type, CUdeviceptr y, CUdeviceptr x,
                    CUdeviceptr w, int m, int n, int k, float beta = 0.0f);
  /// Row-major y[M, N] = ones[M] (x) bias[N] + beta * y: the bias added to
  /// every row, as a rank-1 cublasGemmEx (K = 1) with a device vector of M
  /// ones, all of `type`, so that it is captured into graphs like any GEMM.
  void addRowBroadcast(cudaDataType_t type, CUdeviceptr y, CUdeviceptr bias,
                       CUdeviceptr ones, int m, int n, float beta);

private:
  cublasHandle_t handle_ = nullptr;
  DeviceBuffer workspace_;
};

/// A dense cuSOLVER handle on the current context (GPTQ's factorizations).
class Cusolver {
public:
  Cusolver();
  ~Cusolver();
  Cusolver(const Cusolver &) = delete;
  Cusolver &operator=(const Cusolver &) = delete;

  cusolverDnHandle_t get() const { return handle_; }
  void setStream(CUstream stream);

private:
  cusolverDnHandle_t handle_ = nullptr;
};

} // namespace qfuse::runtime::cuda

#endif // QFUSE_RUNTIME_DEVICE_CUDA_H
