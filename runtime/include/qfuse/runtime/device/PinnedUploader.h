//===- PinnedUploader.h - Uploads through pinned staging --------*- C++ -*-===//
//
// Binding a model uploads gigabytes from pageable host memory (a mapped
// checkpoint, made components). A synchronous pageable cuMemcpyHtoD moves
// them at a fraction of PCIe's rate and leaves the host idle meanwhile.
// PinnedUploader copies each upload into a small ring of pinned staging
// buffers (StagingPlan.h; copyInParallel) and queues cuMemcpyHtoDAsync from
// there on a stream of its own, an event per buffer, so that the host fills
// one buffer while the DMA drains the others. Uploads return once their
// source has been read; the device holds the bytes once finish() returns.
//
// CUDA calls stay on the calling thread, whose current context owns the
// destination buffers (the loader's binding thread); only the memcpy of a
// large piece into its staging buffer is split over kCopyThreads threads.
// Staging buffers are pinned when first used; where pinned memory (or the
// stream) cannot be had, uploads fall back to DeviceBuffer::upload,
// synchronous as before.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_RUNTIME_DEVICE_PINNEDUPLOADER_H
#define QFUSE_RUNTIME_DEVICE_PINNEDUPLOADER_H

#include "qfuse/runtime/device/Cuda.h"
#include "qfuse/runtime/device/StagingPlan.h"

#include <memory>
#include <vector>

namespace qfuse::runtime {

class PinnedUploader {
public:
  static constexpr size_t kBufferBytes = size_t(64) << 20;
  static constexpr unsigned kBuffers = 4;
  /// Threads that copy one piece into its staging buffer.
  static constexpr unsigned kCopyThreads = 4;

  explicit PinnedUploader(size_t bufferBytes = kBufferBytes,
                          unsigned buffers = kBuffers);
  /// Waits for the copies in flight (errors are finish()'s to report).
  ~PinnedUploader();
  PinnedUploader(const PinnedUploader &) = delete;
  PinnedUploader &operator=(const PinnedUploader &) = delete;

  /// Copies `size` bytes from `data` to `buffer` at byte `offset` (a part
  /// of a tensor made in parts, TensorParts.h), where no queued work reads
  /// or writes. `data` may be freed when this returns; the bytes are on the
  /// device when finish() returns.
  void upload(cuda::DeviceBuffer &buffer, const void *data, size_t size,
              size_t offset = 0);
  /// Waits until every upload is on the device; throws the first failed
  /// copy's error.
  void finish();

  /// Whether uploads go through pinned memory (false once a staging buffer
  /// or the stream could not be made).
  bool pinned() const { return stream_ != nullptr; }

private:
  struct Slot {
    cuda::PinnedBuffer staging; // empty until first used
    cuda::Event copied;         // recorded after each copy out of it
  };
  /// Stops using pinned memory: waits for what is queued, frees the ring.
  void fallBack();

  StagingPlan plan_;
  std::unique_ptr<cuda::Stream> stream_; // null: synchronous uploads
  std::vector<Slot> slots_;
};

} // namespace qfuse::runtime

#endif // QFUSE_RUNTIME_DEVICE_PINNEDUPLOADER_H
