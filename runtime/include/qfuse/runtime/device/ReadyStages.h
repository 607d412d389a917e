//===- ReadyStages.h - Stages made ready in order, waited on ----*- C++ -*-===//
//
// A producer thread makes stages 0, 1, 2, ... ready in order (the layers of
// a model whose weights upload in the background, BackgroundLoad.h); a
// consumer waits for the one it needs next. The producer's first error
// wakes every waiter, which rethrows it: a consumer never hangs on a stage
// that will not come.
//
//   ReadyStages stages(3);
//   // producer:                    // consumer:
//   stages.markReady(0);            stages.waitFor(1); // blocks
//   stages.fail(error);             // ...and rethrows `error`
//
// What the producer wrote before markReady(s) is visible to a consumer once
// waitFor(s) returns (both lock one mutex).
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_RUNTIME_DEVICE_READYSTAGES_H
#define QFUSE_RUNTIME_DEVICE_READYSTAGES_H

#include <condition_variable>
#include <cstddef>
#include <exception>
#include <mutex>

namespace qfuse::runtime {

class ReadyStages {
public:
  explicit ReadyStages(size_t count) : count_(count) {}
  ReadyStages(const ReadyStages &) = delete;
  ReadyStages &operator=(const ReadyStages &) = delete;

  size_t count() const { return count_; }
  /// Stage `stage` is ready. Stages become ready in order: marking any but
  /// the next one throws qfuse::Error (a producer's bug, not a wait).
  void markReady(size_t stage);
  /// Records `error` (the first one given is kept) and wakes every waiter.
  void fail(std::exception_ptr error);
  /// Returns once `stage` is ready. Rethrows the recorded error, even for a
  /// stage that was ready before it: the run stops at the first error, as a
  /// load that binds everything before it returns would.
  void waitFor(size_t stage);
  /// How many stages are ready now (0..count()).
  size_t readyCount() const;

private:
  const size_t count_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  size_t ready_ = 0;
  std::exception_ptr error_;
};

} // namespace qfuse::runtime

#endif // QFUSE_RUNTIME_DEVICE_READYSTAGES_H
