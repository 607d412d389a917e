//===- PinnedBytesPool.cpp - Reused page-locked download buffers ----------===//

#include "qfuse/runtime/device/PinnedBytesPool.h"

#include "qfuse/runtime/Error.h"
#include "qfuse/runtime/device/Cuda.h"

#include <algorithm>
#include <mutex>
#include <vector>

namespace qfuse::runtime {

struct PinnedBytesPool::State {
  std::mutex mutex;
  std::vector<cuda::PinnedBuffer> free;
  size_t capacity = 0, pinned = 0;
  bool open = true;
};

namespace {

/// A block lent out: its deleter gives it back to the pool, or frees it
/// when the pool is gone.
std::shared_ptr<const void> lend(std::shared_ptr<PinnedBytesPool::State> state,
                                 cuda::PinnedBuffer block) {
  auto *lent = new cuda::PinnedBuffer(std::move(block));
  return std::shared_ptr<const void>(
      lent, [state = std::move(state)](const void *p) {
        std::unique_ptr<cuda::PinnedBuffer> owned(
            static_cast<cuda::PinnedBuffer *>(const_cast<void *>(p)));
        std::lock_guard<std::mutex> lock(state->mutex);
        if (state->open) {
          state->free.push_back(std::move(*owned));
        } else {
          state->pinned -= owned->size();
        }
      });
}

} // namespace

PinnedBytesPool::PinnedBytesPool(size_t capacity)
    : state_(std::make_shared<State>()) {
  state_->capacity = capacity;
}

PinnedBytesPool::~PinnedBytesPool() {
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->open = false;
  for (const cuda::PinnedBuffer &block : state_->free)
    state_->pinned -= block.size();
  state_->free.clear();
}

HostBytes PinnedBytesPool::take(size_t size) {
  if (size == 0)
    return HostBytes();
  cuda::PinnedBuffer block;
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    // The smallest free block that holds `size`.
    auto best = state_->free.end();
    for (auto it = state_->free.begin(); it != state_->free.end(); ++it)
      if (it->size() >= size &&
          (best == state_->free.end() || it->size() < best->size()))
        best = it;
    if (best != state_->free.end()) {
      block = std::move(*best);
      state_->free.erase(best);
    } else {
      // Make room by freeing blocks too small for this size.
      while (state_->pinned + size > state_->capacity &&
             !state_->free.empty()) {
        state_->pinned -= state_->free.back().size();
        state_->free.pop_back();
      }
      if (state_->pinned + size > state_->capacity)
        return HostBytes::allocate(size);
      try {
        block = cuda::PinnedBuffer(size, "download staging");
      } catch (const Error &) {
        return HostBytes::allocate(size); // page-locked memory refused
      }
      state_->pinned += size;
    }
  }
  uint8_t *data = block.as<uint8_t>();
  return HostBytes(data, size, lend(state_, std::move(block)));
}

size_t PinnedBytesPool::pinnedBytes() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->pinned;
}

} // namespace qfuse::runtime
