//===- SerialJobs.h - jobs run in order on a thread of their own -*- C++ -*-===//
//
// The GPTQ pipeline hands the work that waits for the packer and the disk
// (a layer's progress record, a module's checkpoint tensors) to a thread of
// its own, so that the layer loop never waits for either. Jobs run in the
// order given; the first error stops the ones after it and is rethrown by
// the next add() or by wait().
//
//   SerialJobs records;
//   records.add([&] { progress.recordLayer(...); }); // returns at once
//   records.wait(); // all done, or the first error
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_RUNTIME_SERIALJOBS_H
#define QFUSE_RUNTIME_SERIALJOBS_H

#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

namespace qfuse::runtime::detail {

class SerialJobs {
public:
  SerialJobs();
  /// Lets the running job finish and drops the queued ones.
  ~SerialJobs();
  SerialJobs(const SerialJobs &) = delete;
  SerialJobs &operator=(const SerialJobs &) = delete;

  /// Queues `job`; throws the error of an earlier one.
  void add(std::function<void()> job);
  /// Waits until every job given has run; throws the first error.
  void wait();

private:
  void work();

  std::mutex mutex_;
  std::condition_variable wake_, idle_;
  std::deque<std::function<void()>> queue_;
  bool busy_ = false, stopping_ = false;
  std::exception_ptr error_;
  std::thread thread_; // last: started once the rest is constructed
};

} // namespace qfuse::runtime::detail

#endif // QFUSE_RUNTIME_SERIALJOBS_H
