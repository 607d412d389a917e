//===- Exec.h - the state instruction handlers run against ------*- C++ -*-===//
//
// Threads, CTAs and clusters as the interpreter keeps them, and the helpers
// every handler uses: typed register access and checked memory access
// (global through GlobalMemory, shared and local against their sizes).
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_SIM_PTX_EXEC_H
#define QFUSE_SIM_PTX_EXEC_H

#include "PtxInstruction.h"

#include <cstring>
#include <string>
#include <vector>

namespace qfuse::sim::ptx {

struct Cta;

enum class ThreadState : uint8_t {
  Ready,
  Bar,         ///< waiting at bar.sync
  Warp,        ///< waiting at a warp collective
  ClusterWait, ///< waiting at barrier.cluster.wait
  Mbar,        ///< a try_wait failed: waiting for an mbarrier arrive
  Exited,
};

struct Thread {
  uint64_t *r = nullptr;
  uint8_t *local = nullptr;
  Cta *cta = nullptr;
  uint32_t pc = 0;
  ThreadState state = ThreadState::Ready;
  uint32_t linear = 0, lane = 0, warp = 0;
  uint32_t barrier = 0;       ///< the bar.sync it waits at
  uint64_t clusterPhase = 0;  ///< the cluster barrier phase it arrived in
  bool clusterArrived = false;
  uint64_t mbarEpoch = 0;     ///< mbarrier arrives seen when it blocked
  uint64_t instructions = 0;
};

struct Cta {
  uint8_t *shared = nullptr;
  uint32_t sharedBytes = 0;
  uint32_t ctaid[3] = {0, 0, 0};
  uint32_t rank = 0; ///< in the cluster
  std::vector<Thread> threads;
  struct Barrier {
    uint32_t arrived = 0;
    uint32_t expected = 0; ///< 0: every live thread
  } bars[16];
  uint32_t live = 0;
};

/// The CTAs that run together (one, or a cluster), and what they share.
struct Group {
  std::vector<Cta *> ctas;
  uint64_t clusterPhase = 0;
  uint32_t clusterArrived = 0;
  uint64_t mbarEpoch = 0; ///< counts mbarrier arrives (wakes waiters)
};

struct Exec {
  Thread *t = nullptr;
  uint64_t *r = nullptr;
  Cta *cta = nullptr;
  Group *group = nullptr;
  const Function *fn = nullptr;
  const uint8_t *params = nullptr;
  uint32_t paramBytes = 0;
  uint32_t dynamicShared = 0;
  std::string error;
  uintptr_t okBase = 0, okEnd = 0; ///< a global range known to be mapped
  uint64_t clock = 0;

  /// Global memory [p, p + n): the host pointer, or null with error set.
  uint8_t *global(uint64_t p, size_t n) {
    if (p >= okBase && p + n <= okEnd && p + n >= p)
      return reinterpret_cast<uint8_t *>(p);
    return globalSlow(p, n);
  }
  uint8_t *globalSlow(uint64_t p, size_t n);
  /// Shared memory of this CTA, or of another CTA of the cluster when the
  /// address carries a rank (mapa); null with error set when out of range.
  uint8_t *shared(uint64_t a, size_t n) {
    if (a + n <= cta->sharedBytes)
      return cta->shared + a;
    return sharedSlow(a, n);
  }
  uint8_t *sharedSlow(uint64_t a, size_t n);
  uint8_t *local(uint64_t a, size_t n);
  const uint8_t *param(uint64_t a, size_t n);
  /// Any state space; generic addresses resolved by window.
  uint8_t *memory(Space s, uint64_t a, size_t n, bool write);
};

template <class T> inline T get(const Exec &x, uint32_t slot) {
  T v;
  std::memcpy(&v, &x.r[slot], sizeof(T));
  return v;
}
template <class T> inline void set(Exec &x, uint32_t slot, T v) {
  uint64_t u = 0;
  std::memcpy(&u, &v, sizeof(T));
  x.r[slot] = u;
}
template <class T> inline T getAt(const uint64_t *r, uint32_t slot) {
  T v;
  std::memcpy(&v, &r[slot], sizeof(T));
  return v;
}
template <class T> inline void setAt(uint64_t *r, uint32_t slot, T v) {
  uint64_t u = 0;
  std::memcpy(&u, &v, sizeof(T));
  r[slot] = u;
}

} // namespace qfuse::sim::ptx

#endif // QFUSE_SIM_PTX_EXEC_H
