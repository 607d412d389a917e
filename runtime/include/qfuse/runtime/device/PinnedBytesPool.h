//===- PinnedBytesPool.h - Reused page-locked download buffers --*- C++ -*-===//
//
// Device-to-host copies into fresh pageable memory run at a fraction of
// the link's speed (the driver stages them, and every new page faults);
// into page-locked memory they run at full speed. GPTQ downloads every
// module's codes once per layer, in sizes that repeat from layer to layer,
// so the pool hands out page-locked blocks as HostBytes and takes each back
// when its last user (the packer thread) drops it.
//
// At most `capacity` bytes are page-locked at once; past that, or when the
// driver refuses page-locked memory, take() returns ordinary memory.
// Thread-safe. The pool frees its blocks on destruction; a block still out
// then is freed when it comes back.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_RUNTIME_DEVICE_PINNEDBYTESPOOL_H
#define QFUSE_RUNTIME_DEVICE_PINNEDBYTESPOOL_H

#include "qfuse/runtime/HostBytes.h"

#include <cstddef>
#include <memory>

namespace qfuse::runtime {

class PinnedBytesPool {
public:
  explicit PinnedBytesPool(size_t capacity);
  ~PinnedBytesPool();
  PinnedBytesPool(const PinnedBytesPool &) = delete;
  PinnedBytesPool &operator=(const PinnedBytesPool &) = delete;

  /// `size` bytes, uninitialized: page-locked where the capacity allows.
  HostBytes take(size_t size);
  /// Bytes page-locked now (in use or free), for tests and reports.
  size_t pinnedBytes() const;

  struct State;

private:
  std::shared_ptr<State> state_;
};

} // namespace qfuse::runtime

#endif // QFUSE_RUNTIME_DEVICE_PINNEDBYTESPOOL_H
