//===- ParallelFor.h - split independent work items over host threads -----===//
//
// The stand-in libraries compute on the host; large GEMMs and
// factorizations spread their independent items (output tiles, rows of a
// factor) over the machine's cores. Each item is computed by exactly one
// thread in a fixed order, so results do not depend on the thread count.
//
//===----------------------------------------------------------------------===//
#ifndef QFUSE_SIM_BLAS_PARALLELFOR_H
#define QFUSE_SIM_BLAS_PARALLELFOR_H

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

namespace qfuse::sim {

/// Calls `body(item)` for every item in [0, count). `work` estimates the
/// total cost in multiply-adds: small jobs stay on the calling thread,
/// where starting threads would cost more than it saves.
template <typename Body>
void parallelFor(int64_t count, double work, const Body &body) {
  constexpr double kWorkPerThread = 1 << 20;
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  threads = unsigned(std::min<double>(
      {double(threads), double(count), std::max(1.0, work / kWorkPerThread)}));
  if (threads <= 1) {
    for (int64_t item = 0; item < count; ++item)
      body(item);
    return;
  }
  std::atomic<int64_t> next{0};
  auto worker = [&] {
    for (int64_t item = next++; item < count; item = next++)
      body(item);
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t)
    pool.emplace_back(worker);
  worker();
  for (std::thread &thread : pool)
    thread.join();
}

} // namespace qfuse::sim

#endif // QFUSE_SIM_BLAS_PARALLELFOR_H
