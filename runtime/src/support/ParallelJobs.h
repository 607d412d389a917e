//===- ParallelJobs.h - independent jobs over the host's cores --*- C++ -*-===//
//
// Writing a quantized checkpoint packs and converts every module on its
// own: jobs 0..count-1, taken in order by one worker per core, each writing
// its own slot. The first exception (by job index) is rethrown once every
// worker has stopped, so errors read the same as a sequential loop's.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_RUNTIME_PARALLELJOBS_H
#define QFUSE_RUNTIME_PARALLELJOBS_H

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <system_error>
#include <thread>
#include <vector>

namespace qfuse::runtime::detail {

/// Calls job(i) for every i in [0, count) on up to one thread per core and
/// returns when all are done; rethrows the exception of the lowest failing
/// job.
template <typename Job>
void parallelJobs(size_t count, const Job &job) {
  const size_t workers = std::max<size_t>(
      1, std::min<size_t>(count, std::thread::hardware_concurrency()));
  std::vector<std::exception_ptr> errors(count);
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < count; i = next++) {
      try {
        job(i);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  std::vector<std::thread> pool;
  // A host short of memory may refuse a thread (its stack): the jobs then
  // run on the workers there are, at least this one.
  for (size_t w = 1; w < workers; ++w) {
    try {
      pool.emplace_back(work);
    } catch (const std::system_error &) {
      break;
    }
  }
  work();
  for (std::thread &t : pool)
    t.join();
  for (std::exception_ptr &e : errors)
    if (e)
      std::rethrow_exception(e);
}

} // namespace qfuse::runtime::detail

#endif // QFUSE_RUNTIME_PARALLELJOBS_H
