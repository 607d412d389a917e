//===- LoadWorkers.h - How many threads make a background load --*- C++ -*-===//
//
// BackgroundLoad's workers make each tensor's bytes in stage order. The
// first stages (the prologue's weights, the first layer's) are what the
// run waits for before it can start, so every worker it has makes them;
// the rest is made beside the run's layers, whose host threads (the run's
// launches, the solvers', the packer's) it would otherwise compete with,
// so fewer workers make it. CPU only.
//
//   LoadWorkers workers{/*first=*/8, /*later=*/2, /*firstStages=*/2};
//   workers.threads();     // 8 threads are started
//   workers.makes(5, 1);   // true: stage 1 is one of the first two
//   workers.makes(5, 2);   // false: worker 5 ends there (stages only grow)
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_RUNTIME_DEVICE_LOADWORKERS_H
#define QFUSE_RUNTIME_DEVICE_LOADWORKERS_H

#include <algorithm>
#include <cstddef>

namespace qfuse::runtime {

struct LoadWorkers {
  /// Workers for stages 0 .. firstStages-1.
  unsigned first = 1;
  /// Workers for the stages after them.
  unsigned later = 1;
  size_t firstStages = 0;

  /// `threads` workers for every stage.
  static LoadWorkers same(unsigned threads) { return {threads, threads, 0}; }

  /// Threads to start: the most any stage uses.
  unsigned threads() const { return std::max(first, later); }
  /// Whether worker `worker` (0 .. threads()-1) makes the jobs of stage
  /// `stage`. Jobs are taken in stage order, so a worker refused one is
  /// never needed again and may end.
  bool makes(unsigned worker, size_t stage) const {
    return worker < (stage < firstStages ? first : later);
  }
  /// At least one worker at every stage and none beyond `jobs` (0 in
  /// `first`: `cores`; 0 in `later`: as many as `first`).
  LoadWorkers resolved(unsigned cores, size_t jobs) const {
    auto clamp = [&](unsigned n) {
      return unsigned(std::max<size_t>(1, std::min<size_t>(n, jobs)));
    };
    const unsigned f = first ? first : std::max(1u, cores);
    return {clamp(f), clamp(later ? later : f), firstStages};
  }
};

} // namespace qfuse::runtime

#endif // QFUSE_RUNTIME_DEVICE_LOADWORKERS_H
