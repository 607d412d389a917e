//===- StagingPlan.cpp - Where PinnedUploader stages each byte ------------===//

#include "qfuse/runtime/device/StagingPlan.h"

#include <algorithm>
#include <cstring>
#include <system_error>
#include <thread>

namespace qfuse::runtime {

StagingPlan::StagingPlan(size_t bufferBytes, unsigned buffers)
    : bufferBytes_(std::max<size_t>(1, bufferBytes)),
      used_(std::max(1u, buffers), false) {}

std::vector<StagingPlan::Piece> StagingPlan::place(size_t size) {
  std::vector<Piece> pieces;
  for (size_t from = 0; from < size;) {
    Piece piece;
    piece.from = from;
    piece.size = std::min(size - from, bufferBytes_);
    if (piece.size > bufferBytes_ - filled_) {
      current_ = (current_ + 1) % buffers();
      filled_ = 0;
      piece.waitFirst = used_[current_];
    }
    piece.buffer = current_;
    piece.at = filled_;
    used_[current_] = true;
    filled_ += piece.size;
    from += piece.size;
    pieces.push_back(piece);
  }
  return pieces;
}

void copyInParallel(void *dst, const void *src, size_t size, unsigned threads) {
  constexpr size_t kMinPart = size_t(4) << 20;
  const size_t parts =
      std::max<size_t>(1, std::min<size_t>(threads, size / kMinPart));
  const size_t per = (size + parts - 1) / parts;
  auto copy = [&](size_t part) {
    const size_t first = part * per;
    const size_t last = std::min(size, first + per);
    if (first < last)
      std::memcpy(static_cast<char *>(dst) + first,
                  static_cast<const char *>(src) + first, last - first);
  };
  std::vector<std::thread> helpers;
  size_t part = 1;
  try {
    for (; part < parts; ++part)
      helpers.emplace_back(copy, part);
  } catch (const std::system_error &) {
    // No more threads: this one copies the rest.
  }
  for (; part < parts; ++part)
    copy(part);
  copy(0);
  for (std::thread &helper : helpers)
    helper.join();
}

} // namespace qfuse::runtime
