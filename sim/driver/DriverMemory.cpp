//===- DriverMemory.cpp - device memory as host memory --------------------===//
//
// A device allocation is host memory registered with GlobalMemory, so that
// kernels and copies are checked against its bounds. New allocations are
// filled with 0xFF bytes (NaN as f16, bf16 and f32), so that reading
// memory nothing wrote shows up as a wrong answer; QFUSE_SIM_POISON=0 turns
// that off. Copies and sets run in stream order (SimDriver.h).
//
//===----------------------------------------------------------------------===//

#include "SimDriver.h"

#include "qfuse/sim/GlobalMemory.h"

#include <cstdlib>
#include <cstring>

using namespace qfuse::sim;

namespace {

bool poisonNewMemory() {
  static const bool poison = [] {
    const char *text = std::getenv("QFUSE_SIM_POISON");
    return !(text && std::strcmp(text, "0") == 0);
  }();
  return poison;
}

void *hostPointer(CUdeviceptr p) { return reinterpret_cast<void *>(p); }

CUresult allocate(void **out, size_t bytes, const char *label) {
  if (!out || bytes == 0)
    return CUDA_ERROR_INVALID_VALUE;
  size_t rounded = (bytes + 255) / 256 * 256;
  void *p = std::aligned_alloc(256, rounded);
  if (!p)
    return CUDA_ERROR_OUT_OF_MEMORY;
  if (poisonNewMemory())
    std::memset(p, 0xFF, rounded);
  GlobalMemory::instance().add(p, bytes, label);
  *out = p;
  return CUDA_SUCCESS;
}

CUresult release(void *p) {
  if (!p)
    return CUDA_SUCCESS;
  if (GlobalMemory::instance().sizeAt(p) == 0)
    return CUDA_ERROR_INVALID_VALUE;
  GlobalMemory::instance().remove(p);
  std::free(p);
  return CUDA_SUCCESS;
}

// Whether [p, p + bytes) is device memory (or pinned host memory): a copy
// past an allocation is an error, as cuMemcpy reports it.
bool inDeviceMemory(CUdeviceptr p, size_t bytes) {
  return bytes == 0 || GlobalMemory::instance().contains(hostPointer(p), bytes);
}

CUresult copyNow(void *dst, const void *src, size_t bytes) {
  if (bytes)
    std::memmove(dst, src, bytes);
  return CUDA_SUCCESS;
}

CUresult copyAsync(CUdeviceptr dst, CUdeviceptr src, size_t bytes,
                   CUstream stream, bool checkDst, bool checkSrc) {
  QFUSE_SIM_READY();
  if ((checkDst && !inDeviceMemory(dst, bytes)) ||
      (checkSrc && !inDeviceMemory(src, bytes)) || (bytes && (!dst || !src)))
    return CUDA_ERROR_INVALID_VALUE;
  return submit(stream, [=] {
    return copyNow(hostPointer(dst), hostPointer(src), bytes);
  });
}

// cuMemsetD<8|16|32>: `count` elements of `width` bytes, `rows` rows of
// `pitch` bytes.
CUresult setAsync(CUdeviceptr dst, size_t pitch, uint32_t value, int width,
                  size_t count, size_t rows, CUstream stream) {
  QFUSE_SIM_READY();
  if (rows && count && !inDeviceMemory(dst, pitch * (rows - 1) + count * width))
    return CUDA_ERROR_INVALID_VALUE;
  return submit(stream, [=] {
    for (size_t r = 0; r < rows; ++r) {
      auto *row = static_cast<unsigned char *>(hostPointer(dst + r * pitch));
      for (size_t i = 0; i < count; ++i)
        std::memcpy(row + i * width, &value, size_t(width));
    }
    return CUDA_SUCCESS;
  });
}

} // namespace

extern "C" {

CUresult CUDAAPI cuMemAlloc(CUdeviceptr *dptr, size_t bytes) {
  QFUSE_SIM_READY();
  void *p = nullptr;
  CUresult status = allocate(&p, bytes, "a cuMemAlloc allocation");
  if (status == CUDA_SUCCESS)
    *dptr = reinterpret_cast<CUdeviceptr>(p);
  return status;
}

// Freeing works after a kernel failed too, so that a process that goes on
// (a test) does not leak.
CUresult CUDAAPI cuMemFree(CUdeviceptr dptr) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  return release(hostPointer(dptr));
}

CUresult CUDAAPI cuMemAllocHost(void **pp, size_t bytes) {
  QFUSE_SIM_READY();
  return allocate(pp, bytes, "a cuMemAllocHost allocation");
}

CUresult CUDAAPI cuMemFreeHost(void *p) {
  if (!initialized())
    return CUDA_ERROR_NOT_INITIALIZED;
  return release(p);
}

// A synchronous copy waits for the device: refused on a capturing thread,
// as cuCtxSynchronize is.
CUresult CUDAAPI cuMemcpyHtoD(CUdeviceptr dst, const void *src, size_t bytes) {
  if (capturesOnThisThread() > 0)
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  return copyAsync(dst, reinterpret_cast<CUdeviceptr>(src), bytes, nullptr,
                   true, false);
}

CUresult CUDAAPI cuMemcpyDtoH(void *dst, CUdeviceptr src, size_t bytes) {
  if (capturesOnThisThread() > 0)
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  return copyAsync(reinterpret_cast<CUdeviceptr>(dst), src, bytes, nullptr,
                   false, true);
}

CUresult CUDAAPI cuMemcpyHtoDAsync(CUdeviceptr dst, const void *src,
                                   size_t bytes, CUstream stream) {
  return copyAsync(dst, reinterpret_cast<CUdeviceptr>(src), bytes, stream,
                   true, false);
}

CUresult CUDAAPI cuMemcpyDtoHAsync(void *dst, CUdeviceptr src, size_t bytes,
                                   CUstream stream) {
  return copyAsync(reinterpret_cast<CUdeviceptr>(dst), src, bytes, stream,
                   false, true);
}

CUresult CUDAAPI cuMemcpyDtoDAsync(CUdeviceptr dst, CUdeviceptr src,
                                   size_t bytes, CUstream stream) {
  return copyAsync(dst, src, bytes, stream, true, true);
}

CUresult CUDAAPI cuMemcpy2DAsync(const CUDA_MEMCPY2D *copy, CUstream stream) {
  QFUSE_SIM_READY();
  if (!copy || copy->srcXInBytes || copy->srcY || copy->dstXInBytes ||
      copy->dstY || copy->srcMemoryType == CU_MEMORYTYPE_ARRAY ||
      copy->dstMemoryType == CU_MEMORYTYPE_ARRAY)
    return CUDA_ERROR_NOT_SUPPORTED;
  auto address = [](CUmemorytype type, CUdeviceptr device, const void *host) {
    return type == CU_MEMORYTYPE_HOST ? reinterpret_cast<CUdeviceptr>(host)
                                      : device;
  };
  CUdeviceptr src = address(copy->srcMemoryType, copy->srcDevice, copy->srcHost);
  CUdeviceptr dst = address(copy->dstMemoryType, copy->dstDevice, copy->dstHost);
  size_t width = copy->WidthInBytes, height = copy->Height;
  size_t srcPitch = copy->srcPitch, dstPitch = copy->dstPitch;
  if (height && width &&
      ((copy->srcMemoryType != CU_MEMORYTYPE_HOST &&
        !inDeviceMemory(src, srcPitch * (height - 1) + width)) ||
       (copy->dstMemoryType != CU_MEMORYTYPE_HOST &&
        !inDeviceMemory(dst, dstPitch * (height - 1) + width))))
    return CUDA_ERROR_INVALID_VALUE;
  return submit(stream, [=] {
    for (size_t r = 0; r < height; ++r)
      copyNow(hostPointer(dst + r * dstPitch), hostPointer(src + r * srcPitch),
              width);
    return CUDA_SUCCESS;
  });
}

CUresult CUDAAPI cuMemcpyBatchAsync(CUdeviceptr *dsts, CUdeviceptr *srcs,
                                    size_t *sizes, size_t count,
                                    CUmemcpyAttributes *, size_t *, size_t,
                                    CUstream stream) {
  QFUSE_SIM_READY();
  if (!dsts || !srcs || !sizes || count == 0)
    return CUDA_ERROR_INVALID_VALUE;
  for (size_t i = 0; i < count; ++i)
    if (CUresult status =
            copyAsync(dsts[i], srcs[i], sizes[i], stream, true, true))
      return status;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemcpy3DBatchAsync(size_t count,
                                      CUDA_MEMCPY3D_BATCH_OP *ops,
                                      unsigned long long, CUstream stream) {
  QFUSE_SIM_READY();
  if (!ops || count == 0)
    return CUDA_ERROR_INVALID_VALUE;
  for (size_t i = 0; i < count; ++i)
    if (ops[i].src.type != CU_MEMCPY_OPERAND_TYPE_POINTER ||
        ops[i].dst.type != CU_MEMCPY_OPERAND_TYPE_POINTER ||
        ops[i].extent.depth > 1)
      return CUDA_ERROR_NOT_SUPPORTED;
  for (size_t i = 0; i < count; ++i) {
    CUDA_MEMCPY2D copy;
    std::memset(&copy, 0, sizeof copy);
    copy.srcMemoryType = copy.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    copy.srcDevice = ops[i].src.op.ptr.ptr;
    copy.srcPitch = ops[i].src.op.ptr.rowLength;
    copy.dstDevice = ops[i].dst.op.ptr.ptr;
    copy.dstPitch = ops[i].dst.op.ptr.rowLength;
    copy.WidthInBytes = ops[i].extent.width;
    copy.Height = ops[i].extent.height;
    if (CUresult status = cuMemcpy2DAsync(&copy, stream))
      return status;
  }
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemsetD8Async(CUdeviceptr dst, unsigned char value,
                                 size_t count, CUstream stream) {
  return setAsync(dst, 0, value, 1, count, 1, stream);
}

CUresult CUDAAPI cuMemsetD16Async(CUdeviceptr dst, unsigned short value,
                                  size_t count, CUstream stream) {
  return setAsync(dst, 0, value, 2, count, 1, stream);
}

CUresult CUDAAPI cuMemsetD32Async(CUdeviceptr dst, unsigned int value,
                                  size_t count, CUstream stream) {
  return setAsync(dst, 0, value, 4, count, 1, stream);
}

CUresult CUDAAPI cuMemsetD2D32Async(CUdeviceptr dst, size_t pitch,
                                    unsigned int value, size_t width,
                                    size_t height, CUstream stream) {
  return setAsync(dst, pitch, value, 4, width, height, stream);
}

} // extern "C"
