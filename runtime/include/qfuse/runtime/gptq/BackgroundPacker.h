//===- BackgroundPacker.h - pack quantized modules as layers finish -*- C++ -*-===//
//
// Writing a quantized checkpoint starts with format::pack of every module.
// The GPTQ pipeline hands each layer's modules here as soon as they are
// solved; worker threads pack them (and release the unpacked codes) while
// the GPU works on the next layers: the qfuse-packed checkpoint takes each
// module as soon as it is packed (PackedCheckpointStream), the other
// formats find them packed at the end (QuantizedWeight::packed).
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_RUNTIME_GPTQ_BACKGROUNDPACKER_H
#define QFUSE_RUNTIME_GPTQ_BACKGROUNDPACKER_H

#include "qfuse/runtime/checkpoint/QuantizedCheckpoint.h"

#include <condition_variable>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace qfuse::runtime {

class BackgroundPacker {
public:
  /// `threads` workers (at least one).
  explicit BackgroundPacker(unsigned threads);
  /// Waits for the workers (dropping an unfinished run's errors).
  ~BackgroundPacker();
  BackgroundPacker(const BackgroundPacker &) = delete;
  BackgroundPacker &operator=(const BackgroundPacker &) = delete;

  /// Queues `weight` for packing (one packed already, e.g. read back by a
  /// resumed run, is kept as it is). Returns its index.
  size_t add(QuantizedWeight weight);
  /// Waits until weight `index` is packed and returns its components;
  /// throws its packing error.
  std::shared_ptr<const format::TensorMap> packed(size_t index);
  /// Waits until everything queued is packed; throws the first packing
  /// error (naming the module), in the order given.
  void wait();
  /// wait(), then returns the weights in the order given, each with
  /// `packed` set and its `weight` released.
  std::vector<QuantizedWeight> finish();

private:
  void work();
  /// wait() under `lock`.
  void waitPacked(std::unique_lock<std::mutex> &lock);

  std::vector<std::unique_ptr<QuantizedWeight>> weights_;
  std::vector<std::exception_ptr> errors_;
  std::vector<bool> done_;
  std::deque<size_t> queue_;
  size_t pending_ = 0;
  bool stopping_ = false;
  std::mutex mutex_;
  std::condition_variable wake_, idle_;
  std::vector<std::thread> workers_;
};

} // namespace qfuse::runtime

#endif // QFUSE_RUNTIME_GPTQ_BACKGROUNDPACKER_H
