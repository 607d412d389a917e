//===- StagingPlan.h - Where PinnedUploader stages bytes --------*- C++ -*-===//
//
// The host half of PinnedUploader (PinnedUploader.h), without CUDA so that
// it is unit-tested anywhere: which pinned staging buffer, and where in it,
// each piece of an upload is copied through, and when a buffer must first
// wait for its copies in flight. Uploads are split into pieces of at most
// one buffer; pieces fill a buffer one after another (small components
// share one) and move to the next buffer of the ring when they no longer
// fit:
//
//   buffers 0..3 of B bytes; uploads of 10, 2.5 B and 20 bytes:
//     buffer 0: [10 @ 0]          buffer 1: [B]   buffer 2: [B]
//     buffer 3: [0.5 B @ 0][20 @ 0.5 B]
//   the next piece that does not fit goes to buffer 0, after waiting for
//   buffer 0's last copy (waitFirst).
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_RUNTIME_DEVICE_STAGINGPLAN_H
#define QFUSE_RUNTIME_DEVICE_STAGINGPLAN_H

#include <cstddef>
#include <vector>

namespace qfuse::runtime {

class StagingPlan {
public:
  struct Piece {
    size_t from = 0;        // byte offset in the upload
    size_t size = 0;        // bytes, at most one buffer
    unsigned buffer = 0;    // staging buffer it is copied through
    size_t at = 0;          // byte offset in that buffer
    bool waitFirst = false; // the buffer was used before: wait for its copies
  };

  /// A ring of `buffers` staging buffers of `bufferBytes` each (both > 0).
  StagingPlan(size_t bufferBytes, unsigned buffers);

  /// The pieces of the next upload of `size` bytes, in order (none for 0).
  std::vector<Piece> place(size_t size);

  size_t bufferBytes() const { return bufferBytes_; }
  unsigned buffers() const { return unsigned(used_.size()); }

private:
  size_t bufferBytes_;
  std::vector<bool> used_; // ever staged into, per buffer
  unsigned current_ = 0;   // the buffer being filled
  size_t filled_ = 0;      // bytes of it given out since it was entered
};

/// memcpy in up to `threads` contiguous parts on as many threads (the
/// calling one included), none shorter than 4 MiB: one core copies far
/// slower than the host's memory and PCIe move bytes.
void copyInParallel(void *dst, const void *src, size_t size, unsigned threads);

} // namespace qfuse::runtime

#endif // QFUSE_RUNTIME_DEVICE_STAGINGPLAN_H
