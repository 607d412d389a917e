//===- Cuda.cpp - Checked CUDA driver and cuBLAS wrappers -----------------===//

#include "qfuse/runtime/device/Cuda.h"

#include "qfuse/runtime/Error.h"
#include "qfuse/runtime/artifact/ArtifactSet.h"

#include <cstring>
#include <utility>

namespace qfuse::runtime::cuda {
namespace {

std::string baseName(const char *path) {
  const char *slash = std::strrchr(path, '/');
  return slash ? slash + 1 : path;
}

std::string location(const char *call, const char *file, int line,
                     const std::string &context) {
  std::string text = std::string(" in `") + call + "` [" + baseName(file) +
                     ":" + std::to_string(line) + "]";
  if (!context.empty())
    text += " while " + context;
  return text;
}

} // namespace

std::string errorName(CUresult result) {
  const char *name = nullptr;
  if (cuGetErrorName(result, &name) == CUDA_SUCCESS && name)
    return name;
  // Without a working driver (the stub library) even the names are missing.
  switch (result) {
  case CUDA_ERROR_STUB_LIBRARY:
    return "CUDA_ERROR_STUB_LIBRARY";
  case CUDA_ERROR_NO_DEVICE:
    return "CUDA_ERROR_NO_DEVICE";
  case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
    return "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH";
  default:
    return "CUresult " + std::to_string(static_cast<int>(result));
  }
}

void throwCuError(CUresult result, const char *call, const char *file, int line,
                  const std::string &context) {
  const char *description = nullptr;
  std::string text = "CUDA error " + errorName(result);
  if (cuGetErrorString(result, &description) == CUDA_SUCCESS && description)
    text += std::string(" (") + description + ")";
  throw Error(text + location(call, file, line, context));
}

void throwCublasError(cublasStatus_t status, const char *call, const char *file,
                      int line, const std::string &context) {
  std::string text = std::string("cuBLAS error ") +
                     cublasGetStatusName(status) + " (" +
                     cublasGetStatusString(status) + ")";
  throw Error(text + location(call, file, line, context));
}

void throwCusolverError(cusolverStatus_t status, const char *call,
                        const char *file, int line,
                        const std::string &context) {
  // cuSOLVER has no status-name function.
  throw Error("cuSOLVER error " + std::to_string(int(status)) +
              location(call, file, line, context));
}

int deviceCount(std::string *why) {
  CUresult result = cuInit(0);
  if (result != CUDA_SUCCESS) {
    if (why)
      *why = "cuInit failed with " + errorName(result) +
             (result == CUDA_ERROR_STUB_LIBRARY
                  ? " (only the driver stub library is installed)"
                  : "");
    return 0;
  }
  int count = 0;
  result = cuDeviceGetCount(&count);
  if (result != CUDA_SUCCESS) {
    if (why)
      *why = "cuDeviceGetCount failed with " + errorName(result);
    return 0;
  }
  if (count == 0 && why)
    *why = "the driver reports no CUDA device";
  return count;
}

//===----------------------------------------------------------------------===//
// Context
//===----------------------------------------------------------------------===//

Context::Context(int ordinal) : ordinal_(ordinal) {
  const std::string what = "opening device " + std::to_string(ordinal);
  QFUSE_CU_CTX(cuInit(0), what);
  int count = 0;
  QFUSE_CU_CTX(cuDeviceGetCount(&count), what);
  if (ordinal < 0 || ordinal >= count)
    throw Error("CUDA device " + std::to_string(ordinal) +
                " does not exist (the driver reports " + std::to_string(count) +
                " device(s))");
  QFUSE_CU_CTX(cuDeviceGet(&device_, ordinal), what);
  char name[256] = {};
  QFUSE_CU_CTX(cuDeviceGetName(name, sizeof(name), device_), what);
  name_ = name;
  QFUSE_CU_CTX(
      cuDeviceGetAttribute(
          &major_, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device_),
      what);
  QFUSE_CU_CTX(
      cuDeviceGetAttribute(
          &minor_, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device_),
      what);
  QFUSE_CU_CTX(cuDevicePrimaryCtxRetain(&context_, device_), what);
  makeCurrent();
}

Context::~Context() {
  if (context_)
    cuDevicePrimaryCtxRelease(device_);
}

Context::Context(Context &&other) noexcept
    : ordinal_(other.ordinal_), device_(other.device_),
      context_(std::exchange(other.context_, nullptr)),
      name_(std::move(other.name_)), major_(other.major_),
      minor_(other.minor_) {}

void Context::makeCurrent() const {
  QFUSE_CU_CTX(cuCtxSetCurrent(context_), "making " + describe() + " current");
}

std::string Context::chip() const {
  return "sm_" + std::to_string(major_ * 10 + minor_);
}

int Context::attribute(CUdevice_attribute attribute) const {
  int value = 0;
  QFUSE_CU_CTX(cuDeviceGetAttribute(&value, attribute, device_),
               "querying " + describe());
  return value;
}

size_t Context::totalMemory() const {
  size_t bytes = 0;
  QFUSE_CU_CTX(cuDeviceTotalMem(&bytes, device_), "querying " + describe());
  return bytes;
}

std::string Context::describe() const {
  return "device " + std::to_string(ordinal_) + " (" + name_ + ", " + chip() +
         ")";
}

bool cubinRunsOn(const ChipTarget &target, int major, int minor) {
  if (target.archSpecific)
    return major == target.major && minor == target.minor;
  return major == target.major && minor >= target.minor;
}

void checkTarget(const ChipTarget &target, const Context &context) {
  const std::string why = targetMismatch(target, context.major(),
                                         context.minor(), context.describe());
  if (!why.empty())
    throw Error(why);
}

//===----------------------------------------------------------------------===//
// DeviceBuffer
//===----------------------------------------------------------------------===//

DeviceBuffer::DeviceBuffer(size_t size, std::string label)
    : size_(size), label_(std::move(label)) {
  if (size == 0)
    return;
  QFUSE_CU_CTX(cuMemAlloc(&ptr_, size), "allocating buffer '" + label_ + "' (" +
                                            std::to_string(size) + " bytes)");
}

DeviceBuffer::~DeviceBuffer() { release(); }

DeviceBuffer::DeviceBuffer(DeviceBuffer &&other) noexcept
    : ptr_(std::exchange(other.ptr_, 0)), size_(std::exchange(other.size_, 0)),
      label_(std::move(other.label_)) {}

DeviceBuffer &DeviceBuffer::operator=(DeviceBuffer &&other) noexcept {
  if (this != &other) {
    release();
    ptr_ = std::exchange(other.ptr_, 0);
    size_ = std::exchange(other.size_, 0);
    label_ = std::move(other.label_);
  }
  return *this;
}

void DeviceBuffer::release() noexcept {
  if (ptr_)
    cuMemFree(ptr_);
  ptr_ = 0;
  size_ = 0;
}

void DeviceBuffer::checkRange(size_t size, size_t offset,
                              const char *what) const {
  if (offset > size_ || size > size_ - offset)
    throw Error(std::string(what) + " of " + std::to_string(size) +
                " bytes at offset " + std::to_string(offset) +
                " overruns buffer '" + label_ + "' of " +
                std::to_string(size_) + " bytes");
}

void DeviceBuffer::upload(const void *data, size_t size, size_t offset) {
  checkRange(size, offset, "upload");
  if (size == 0)
    return;
  // A pageable cuMemcpyHtoD may return before its DMA lands; streams created
  // non-blocking would not wait for it. Copy and wait explicitly.
  const std::string what =
      "uploading " + std::to_string(size) + " bytes to '" + label_ + "'";
  QFUSE_CU_CTX(cuMemcpyHtoDAsync(ptr_ + offset, data, size, nullptr), what);
  QFUSE_CU_CTX(cuStreamSynchronize(nullptr), what);
}

void DeviceBuffer::download(void *data, size_t size, size_t offset) const {
  checkRange(size, offset, "download");
  if (size == 0)
    return;
  const std::string what =
      "downloading " + std::to_string(size) + " bytes from '" + label_ + "'";
  QFUSE_CU_CTX(cuMemcpyDtoHAsync(data, ptr_ + offset, size, nullptr), what);
  QFUSE_CU_CTX(cuStreamSynchronize(nullptr), what);
}

void DeviceBuffer::zero(CUstream stream) { fill(0, stream); }

void DeviceBuffer::fill(uint8_t value, CUstream stream) {
  if (size_ == 0)
    return;
  QFUSE_CU_CTX(cuMemsetD8Async(ptr_, value, size_, stream),
               "filling buffer '" + label_ + "'");
}

//===----------------------------------------------------------------------===//
// PinnedBuffer
//===----------------------------------------------------------------------===//

PinnedBuffer::PinnedBuffer(size_t size, std::string label)
    : size_(size), label_(std::move(label)) {
  if (size == 0)
    return;
  QFUSE_CU_CTX(cuMemAllocHost(&data_, size),
               "allocating pinned host buffer '" + label_ + "' (" +
                   std::to_string(size) + " bytes)");
}

PinnedBuffer::~PinnedBuffer() { release(); }

PinnedBuffer::PinnedBuffer(PinnedBuffer &&other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)), label_(std::move(other.label_)) {}

PinnedBuffer &PinnedBuffer::operator=(PinnedBuffer &&other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    label_ = std::move(other.label_);
  }
  return *this;
}

void PinnedBuffer::release() noexcept {
  if (data_)
    cuMemFreeHost(data_);
  data_ = nullptr;
  size_ = 0;
}

//===----------------------------------------------------------------------===//
// Stream, Event
//===----------------------------------------------------------------------===//

Stream::Stream() {
  QFUSE_CU_CTX(cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING),
               "creating a stream");
}

Stream::~Stream() {
  if (stream_)
    cuStreamDestroy(stream_);
}

Stream::Stream(Stream &&other) noexcept
    : stream_(std::exchange(other.stream_, nullptr)) {}

void Stream::synchronize() const {
  QFUSE_CU_CTX(cuStreamSynchronize(stream_), "waiting for the stream");
}

Event::Event() {
  QFUSE_CU_CTX(cuEventCreate(&event_, CU_EVENT_DEFAULT), "creating an event");
}

Event::~Event() {
  if (event_)
    cuEventDestroy(event_);
}

Event::Event(Event &&other) noexcept
    : event_(std::exchange(other.event_, nullptr)) {}

void Event::record(CUstream stream) {
  QFUSE_CU_CTX(cuEventRecord(event_, stream), "recording an event");
}

void Event::synchronize() const {
  QFUSE_CU_CTX(cuEventSynchronize(event_), "waiting for an event");
}

float Event::elapsedMs(const Event &start, const Event &end) {
  float ms = 0;
  QFUSE_CU_CTX(cuEventElapsedTime(&ms, start.event_, end.event_),
               "timing between two events");
  return ms;
}

//===----------------------------------------------------------------------===//
// Graph
//===----------------------------------------------------------------------===//

Graph Graph::capture(CUstream stream, const std::function<void()> &enqueue) {
  QFUSE_CU_CTX(
      cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
      "starting a graph capture");
  Graph graph;
  try {
    enqueue();
  } catch (...) {
    // End the capture so the stream is usable again, then rethrow.
    CUgraph partial = nullptr;
    if (cuStreamEndCapture(stream, &partial) == CUDA_SUCCESS && partial)
      cuGraphDestroy(partial);
    throw;
  }
  QFUSE_CU_CTX(cuStreamEndCapture(stream, &graph.graph_),
               "ending a graph capture");
  QFUSE_CU_CTX(cuGraphInstantiate(&graph.exec_, graph.graph_, 0),
               "instantiating a captured graph");
  return graph;
}

Graph::~Graph() { release(); }

Graph::Graph(Graph &&other) noexcept
    : graph_(std::exchange(other.graph_, nullptr)),
      exec_(std::exchange(other.exec_, nullptr)) {}

Graph &Graph::operator=(Graph &&other) noexcept {
  if (this != &other) {
    release();
    graph_ = std::exchange(other.graph_, nullptr);
    exec_ = std::exchange(other.exec_, nullptr);
  }
  return *this;
}

void Graph::release() noexcept {
  if (exec_)
    cuGraphExecDestroy(exec_);
  if (graph_)
    cuGraphDestroy(graph_);
  exec_ = nullptr;
  graph_ = nullptr;
}

void Graph::launch(CUstream stream) const {
  if (!exec_)
    throw Error("launching an empty CUDA graph");
  QFUSE_CU_CTX(cuGraphLaunch(exec_, stream), "replaying a CUDA graph");
}

size_t Graph::numNodes() const {
  size_t count = 0;
  if (graph_)
    QFUSE_CU_CTX(cuGraphGetNodes(graph_, nullptr, &count),
                 "counting graph nodes");
  return count;
}

//===----------------------------------------------------------------------===//
// Module
//===----------------------------------------------------------------------===//

Module Module::loadPtx(const std::string &ptx, const std::string &label) {
  constexpr size_t kLogBytes = 16384;
  std::string errorLog(kLogBytes, '\0');
  std::string infoLog(kLogBytes, '\0');
  CUjit_option options[] = {
      CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
      CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
  void *values[] = {errorLog.data(), reinterpret_cast<void *>(kLogBytes),
                    infoLog.data(), reinterpret_cast<void *>(kLogBytes)};
  Module module;
  module.label_ = label;
  CUresult result =
      cuModuleLoadDataEx(&module.module_, ptx.c_str(), 4, options, values);
  if (result != CUDA_SUCCESS) {
    errorLog.resize(std::strlen(errorLog.c_str()));
    throwCuError(
        result, "cuModuleLoadDataEx(&module, ptx, ...)", __FILE__, __LINE__,
        "JIT-compiling the PTX of " + label +
            (errorLog.empty() ? std::string() : "; JIT log:\n" + errorLog));
  }
  return module;
}

Module Module::loadCubin(const std::vector<uint8_t> &cubin,
                         const std::string &label) {
  Module module;
  module.label_ = label;
  module.fromCubin_ = true;
  QFUSE_CU_CTX(cuModuleLoadData(&module.module_, cubin.data()),
               "loading the cubin of " + label);
  return module;
}

Module Module::load(const Kernel &kernel, const ChipTarget &target,
                    const Context &context) {
  const std::string label = "kernel '" + kernel.name + "'";
  if (!kernel.cubin.empty() &&
      cubinRunsOn(target, context.major(), context.minor())) {
    Module module;
    module.label_ = label;
    module.fromCubin_ = true;
    CUresult result = cuModuleLoadData(&module.module_, kernel.cubin.data());
    if (result == CUDA_SUCCESS)
      return module;
    module.module_ = nullptr;
    if (kernel.ptx.empty())
      throwCuError(result, "cuModuleLoadData(&module, cubin)", __FILE__,
                   __LINE__,
                   "loading the cubin of " + label + " on " +
                       context.describe() + " (no PTX to fall back to)");
    // Fall through to the PTX.
  }
  if (kernel.ptx.empty())
    throw Error(label + " has only a cubin for " + target.str() +
                ", which cannot run on " + context.describe() +
                ", and no PTX to JIT-compile");
  return loadPtx(kernel.ptx, label);
}

Module::~Module() { release(); }

Module::Module(Module &&other) noexcept
    : module_(std::exchange(other.module_, nullptr)),
      fromCubin_(other.fromCubin_), label_(std::move(other.label_)) {}

Module &Module::operator=(Module &&other) noexcept {
  if (this != &other) {
    release();
    module_ = std::exchange(other.module_, nullptr);
    fromCubin_ = other.fromCubin_;
    label_ = std::move(other.label_);
  }
  return *this;
}

void Module::release() noexcept {
  if (module_)
    cuModuleUnload(module_);
  module_ = nullptr;
}

CUfunction Module::function(const std::string &name) const {
  CUfunction function = nullptr;
  QFUSE_CU_CTX(cuModuleGetFunction(&function, module_, name.c_str()),
               "looking up function '" + name + "' in the module of " + label_);
  return function;
}

//===----------------------------------------------------------------------===//
// Cublas
//===----------------------------------------------------------------------===//

Cublas::Cublas() : workspace_(kWorkspaceBytes, "cuBLAS workspace") {
  QFUSE_CUBLAS_CTX(cublasCreate(&handle_), "creating a handle");
  QFUSE_CUBLAS_CTX(
      cublasSetWorkspace(handle_, reinterpret_cast<void *>(workspace_.ptr()),
                         workspace_.size()),
      "giving cuBLAS its workspace");
}

Cublas::~Cublas() {
  if (handle_)
    cublasDestroy(handle_);
}

void Cublas::setStream(CUstream stream) {
  QFUSE_CUBLAS(cublasSetStream(handle_, stream));
  // cublasSetStream resets the workspace to cuBLAS's own pool.
  QFUSE_CUBLAS(cublasSetWorkspace(
      handle_, reinterpret_cast<void *>(workspace_.ptr()), workspace_.size()));
}

void Cublas::gemmRowMajor(cudaDataType_t type, CUdeviceptr y, CUdeviceptr x,
                          CUdeviceptr w, int m, int n, int k, float beta) {
  // Column-major view: y^T[N, M] = W[N, K] * x^T[K, M], where W is the
  // column-major [K, N] matrix W^T transposed and x^T is x as stored.
  const float alpha = 1.0f;
  QFUSE_CUBLAS_CTX(
      cublasGemmEx(handle_, CUBLAS_OP_T, CUBLAS_OP_N, n, m, k, &alpha,
                   reinterpret_cast<const void *>(w), type, k,
                   reinterpret_cast<const void *>(x), type, k, &beta,
                   reinterpret_cast<void *>(y), type, n,
                   CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
      "computing y[" + std::to_string(m) + ", " + std::to_string(n) +
          "] = x * W^T (K = " + std::to_string(k) + ")");
}

void Cublas::addRowBroadcast(cudaDataType_t type, CUdeviceptr y,
                             CUdeviceptr bias, CUdeviceptr ones, int m, int n,
                             float beta) {
  // Column-major view: y^T[N, M] = bias[N, 1] * ones[1, M] + beta * y^T.
  const float alpha = 1.0f;
  QFUSE_CUBLAS_CTX(
      cublasGemmEx(handle_, CUBLAS_OP_N, CUBLAS_OP_N, n, m, 1, &alpha,
                   reinterpret_cast<const void *>(bias), type, n,
                   reinterpret_cast<const void *>(ones), type, 1, &beta,
                   reinterpret_cast<void *>(y), type, n,
                   CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
      "adding a bias of " + std::to_string(n) + " to " + std::to_string(m) +
          " rows");
}

Cusolver::Cusolver() {
  QFUSE_CUSOLVER_CTX(cusolverDnCreate(&handle_), "creating a cuSOLVER handle");
}

Cusolver::~Cusolver() {
  if (handle_)
    cusolverDnDestroy(handle_);
}

void Cusolver::setStream(CUstream stream) {
  QFUSE_CUSOLVER(cusolverDnSetStream(handle_, stream));
}

} // namespace qfuse::runtime::cuda
