//===- Interpreter.h - running decoded PTX on the host ----------*- C++ -*-===//

#ifndef QFUSE_SIM_PTX_INTERPRETER_H
#define QFUSE_SIM_PTX_INTERPRETER_H

#include "Exec.h"

#include <atomic>
#include <string>
#include <vector>

namespace qfuse::sim::ptx {

/// Runs one group of CTAs (a cluster, or one CTA) to completion: every
/// thread its own context, switched at barriers, warp collectives, cluster
/// barriers and failed mbarrier waits.
class GroupRunner {
public:
  GroupRunner(const Function &fn, const LaunchConfig &config,
              const uint8_t *params, uint32_t paramBytes);

  /// Runs cluster `index` of the grid; false with `error` set on failure.
  bool run(uint64_t index);
  std::string error;
  uint64_t instructions = 0; ///< thread-instructions run so far

private:
  const Function &fn;
  const LaunchConfig &cfg;
  Dim3 cluster;
  uint32_t threadsPerCta;
  uint32_t sharedBytes;
  std::vector<Cta> ctas;
  std::vector<uint64_t> regs;
  std::vector<uint8_t> shared, local;
  std::vector<uint32_t> warpArrived; ///< per CTA x warp: lanes at a collective
  Group group;
  Exec x;
  bool yielded = false; ///< a thread of this pass ran a nanosleep

  void setUp(uint64_t index);
  void initThread(Cta &cta, Thread &t, uint32_t linear);
  bool schedule();
  bool passCta(Cta &c, bool ahead, bool &moved, bool &live);
  bool runThread(Thread &t);
  bool fail(const Thread &t, uint32_t pc, const std::string &what);
  bool arriveBar(Cta &cta, uint32_t id, uint32_t count);
  void releaseBar(Cta &cta, uint32_t id);
  void threadExited(Thread &t);
  void arriveCluster(Thread &t);
  bool arriveWarp(Thread &t, const Instr &in);
  std::string deadlock();
  std::string where(const Thread &t, uint32_t pc) const;
};

/// Runs a whole grid (clusters on QFUSE_SIM_THREADS host threads); returns
/// an empty string or the first error.
std::string runGrid(const Function &fn, const LaunchConfig &config,
                    const uint8_t *params, uint32_t paramBytes,
                    uint64_t *instructions = nullptr);

} // namespace qfuse::sim::ptx

#endif // QFUSE_SIM_PTX_INTERPRETER_H
