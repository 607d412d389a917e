//===- PinnedUploader.cpp - Host-to-device copies through pinned memory ---===//

#include "qfuse/runtime/device/PinnedUploader.h"

#include "qfuse/runtime/Error.h"

#include <cstdint>

namespace qfuse::runtime {

PinnedUploader::PinnedUploader(size_t bufferBytes, unsigned buffers)
    : plan_(bufferBytes, buffers) {
  try {
    auto stream = std::make_unique<cuda::Stream>();
    std::vector<Slot> slots(plan_.buffers());
    slots_ = std::move(slots);
    stream_ = std::move(stream);
  } catch (const Error &) {
    // Synchronous uploads, as without the uploader.
  }
}

PinnedUploader::~PinnedUploader() {
  // The staging buffers must outlive the copies out of them.
  if (stream_)
    cuStreamSynchronize(stream_->get());
}

void PinnedUploader::upload(cuda::DeviceBuffer &buffer, const void *data,
                            size_t size, size_t offset) {
  if (!stream_) {
    buffer.upload(data, size, offset);
    return;
  }
  if (offset > buffer.size() || size > buffer.size() - offset)
    throw Error("upload of " + std::to_string(size) + " bytes at " +
                std::to_string(offset) + " overruns buffer '" + buffer.label() +
                "' of " + std::to_string(buffer.size()) + " bytes");
  const auto *bytes = static_cast<const uint8_t *>(data);
  for (const StagingPlan::Piece &piece : plan_.place(size)) {
    Slot &slot = slots_[piece.buffer];
    if (piece.waitFirst)
      slot.copied.synchronize();
    if (slot.staging.size() == 0) {
      try {
        slot.staging =
            cuda::PinnedBuffer(plan_.bufferBytes(), "upload staging");
      } catch (const Error &) {
        fallBack();
        buffer.upload(bytes + piece.from, size - piece.from,
                      offset + piece.from);
        return;
      }
    }
    uint8_t *staged = slot.staging.as<uint8_t>() + piece.at;
    copyInParallel(staged, bytes + piece.from, piece.size, kCopyThreads);
    QFUSE_CU_CTX(cuMemcpyHtoDAsync(buffer.ptr() + offset + piece.from, staged,
                                   piece.size, stream_->get()),
                 "uploading " + std::to_string(size) + " bytes to '" +
                     buffer.label() + "'");
    slot.copied.record(stream_->get());
  }
}

void PinnedUploader::finish() {
  if (stream_)
    QFUSE_CU_CTX(cuStreamSynchronize(stream_->get()), "waiting for uploads");
}

void PinnedUploader::fallBack() {
  finish();
  slots_.clear();
  stream_.reset();
}

} // namespace qfuse::runtime
