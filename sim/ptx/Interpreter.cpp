//===- Interpreter.cpp - threads, barriers and collectives ----------------===//
//
// Each thread runs alone until it reaches a point where it must wait for
// others (bar.sync, a warp collective, barrier.cluster.wait, a failed
// mbarrier try_wait) or yields (nanosleep); the scheduler then moves to the
// next thread, and passes over the group's threads until all have exited. A
// pass in which no thread can move is a deadlock, reported with where the
// threads wait.
//
//===----------------------------------------------------------------------===//

#include "Interpreter.h"

#include <cstdlib>
#include <map>
#include <string>

namespace qfuse::sim::ptx {

std::string GroupRunner::where(const Thread &t, uint32_t pc) const {
  const Instr &in = fn.code[pc < fn.code.size() ? pc : fn.code.size() - 1];
  const Cta &c = *t.cta;
  uint32_t bx = cfg.block.x, by = cfg.block.y;
  uint32_t tx = t.linear % bx, ty = t.linear / bx % by, tz = t.linear / bx / by;
  return "kernel " + fn.info.name + ", line " + std::to_string(in.line) +
         " ('" + fn.opcodes[in.text] + "'), block (" +
         std::to_string(c.ctaid[0]) + "," + std::to_string(c.ctaid[1]) + "," +
         std::to_string(c.ctaid[2]) + "), thread (" + std::to_string(tx) +
         "," + std::to_string(ty) + "," + std::to_string(tz) + ")";
}

bool GroupRunner::fail(const Thread &t, uint32_t pc, const std::string &what) {
  error = what + " [" + where(t, pc) + "]";
  return false;
}

void GroupRunner::releaseBar(Cta &cta, uint32_t id) {
  for (Thread &w : cta.threads)
    if (w.state == ThreadState::Bar && w.barrier == id) {
      w.state = ThreadState::Ready;
      ++w.pc;
    }
  cta.bars[id] = Cta::Barrier{};
}

bool GroupRunner::arriveBar(Cta &cta, uint32_t id, uint32_t count) {
  Cta::Barrier &b = cta.bars[id];
  ++b.arrived;
  if (count)
    b.expected = count;
  uint32_t need = b.expected ? b.expected : cta.live;
  return b.arrived >= need;
}

void GroupRunner::arriveCluster(Thread &t) {
  t.clusterPhase = group.clusterPhase;
  t.clusterArrived = true;
  ++group.clusterArrived;
  uint32_t live = 0;
  for (Cta *c : group.ctas)
    live += c->live;
  if (group.clusterArrived < live)
    return;
  ++group.clusterPhase;
  group.clusterArrived = 0;
  for (Cta *c : group.ctas)
    for (Thread &w : c->threads)
      if (w.state == ThreadState::ClusterWait)
        w.state = ThreadState::Ready; // re-runs the wait, which now passes
}

void GroupRunner::threadExited(Thread &t) {
  t.state = ThreadState::Exited;
  Cta &cta = *t.cta;
  --cta.live;
  // Barriers for "every live thread" may now be complete.
  for (uint32_t id = 0; id < 16; ++id) {
    Cta::Barrier &b = cta.bars[id];
    if (b.arrived && !b.expected && b.arrived >= cta.live)
      releaseBar(cta, id);
  }
  uint32_t live = 0;
  for (Cta *c : group.ctas)
    live += c->live;
  if (group.clusterArrived && group.clusterArrived >= live) {
    ++group.clusterPhase;
    group.clusterArrived = 0;
    for (Cta *c : group.ctas)
      for (Thread &w : c->threads)
        if (w.state == ThreadState::ClusterWait)
          w.state = ThreadState::Ready;
  }
}

bool GroupRunner::arriveWarp(Thread &t, const Instr &in) {
  Cta &cta = *t.cta;
  uint32_t ctaIndex = uint32_t(&cta - ctas.data());
  uint32_t warps = (threadsPerCta + 31) / 32;
  uint32_t &arrived = warpArrived[ctaIndex * warps + t.warp];
  uint32_t mask = uint32_t(t.r[in.target]);
  arrived |= 1u << t.lane;
  t.state = ThreadState::Warp;
  if ((arrived & mask) != mask)
    return true;
  Thread *lanes[32] = {};
  uint32_t first = t.warp * 32;
  for (uint32_t l = 0; l < 32; ++l) {
    if (!(mask >> l & 1))
      continue;
    if (first + l >= threadsPerCta)
      return fail(t, t.pc, "warp collective names lane " + std::to_string(l) +
                               ", which the block does not have");
    lanes[l] = &cta.threads[first + l];
  }
  if (!in.coll(x, lanes, mask, in))
    return fail(t, t.pc, x.error);
  for (uint32_t l = 0; l < 32; ++l)
    if (lanes[l]) {
      lanes[l]->state = ThreadState::Ready;
      ++lanes[l]->pc;
    }
  arrived &= ~mask;
  return true;
}

bool GroupRunner::runThread(Thread &t) {
  x.t = &t;
  x.r = t.r;
  x.cta = t.cta;
  const Instr *code = fn.code.data();
  uint64_t *r = t.r;
  uint32_t pc = t.pc;
  uint64_t count = 0;
  for (;;) {
    const Instr &in = code[pc];
    ++count;
    if (in.guard != kNone && bool(r[in.guard] & 1) == in.guardNeg) {
      ++pc;
      continue;
    }
    switch (in.ctl) {
    case Ctl::Simple:
      if (!in.fn(x, in)) {
        instructions += count;
        return fail(t, pc, x.error);
      }
      ++pc;
      continue;
    case Ctl::Bra:
      pc = in.target;
      continue;
    case Ctl::BraIdx: {
      const std::vector<uint32_t> &table = fn.jumpTables[in.aux];
      uint64_t index = uint32_t(r[in.op[0]]);
      if (index >= table.size())
        return fail(t, pc,
                    "brx.idx index " + std::to_string(index) + " past its " +
                        std::to_string(table.size()) + " targets");
      pc = table[index];
      continue;
    }
    case Ctl::BarArrive: {
      uint32_t id = uint32_t(r[in.op[0]]) & 15;
      uint32_t n = in.op[1] == kNone ? 0 : uint32_t(r[in.op[1]]);
      if (arriveBar(*t.cta, id, n))
        releaseBar(*t.cta, id);
      ++pc;
      continue;
    }
    case Ctl::ClusterArrive:
      arriveCluster(t);
      ++pc;
      continue;
    case Ctl::ClusterWait:
      if (!t.clusterArrived)
        return fail(t, pc, "barrier.cluster.wait without a prior arrive");
      if (group.clusterPhase > t.clusterPhase) {
        t.clusterArrived = false;
        ++pc;
        continue;
      }
      t.state = ThreadState::ClusterWait;
      break;
    case Ctl::MbarTryWait:
      if (!in.fn(x, in)) {
        instructions += count;
        return fail(t, pc, x.error);
      }
      if (r[in.op[0]] & 1) {
        ++pc;
        continue;
      }
      t.state = ThreadState::Mbar;
      t.mbarEpoch = group.mbarEpoch;
      break;
    case Ctl::Bar:
    case Ctl::Warp:
    case Ctl::Exit:
    case Ctl::Yield:
    case Ctl::Trap:
    case Ctl::Unsupported:
      break;
    }
    // Everything below leaves the loop.
    instructions += count;
    t.pc = pc;
    switch (in.ctl) {
    case Ctl::Bar: {
      uint32_t id = uint32_t(r[in.op[0]]) & 15;
      uint32_t n = in.op[1] == kNone ? 0 : uint32_t(r[in.op[1]]);
      t.state = ThreadState::Bar;
      t.barrier = id;
      if (arriveBar(*t.cta, id, n))
        releaseBar(*t.cta, id);
      return true;
    }
    case Ctl::Warp:
      return arriveWarp(t, in);
    case Ctl::Exit:
      threadExited(t);
      return true;
    case Ctl::Yield:
      ++t.pc;
      yielded = true;
      return true;
    case Ctl::Trap:
      return fail(t, pc, "trap");
    case Ctl::Unsupported:
      return fail(t, pc, "unsupported instruction '" + fn.opcodes[in.text] +
                             "'");
    default:
      return true; // ClusterWait, MbarTryWait: parked
    }
  }
}

/// Whether a pass runs a cluster's CTAs from the last rank to the first,
/// each as far as it can go before the next (QFUSE_SIM_CLUSTER_ORDER=
/// reverse). By default a pass moves every thread to its next wait, rank 0
/// first, so the CTAs keep in step; a kernel whose other ranks touch rank
/// 0's shared memory before it is done with it then passes, which ranks far
/// ahead of rank 0 catch (docs/gpu-sim.md).
static bool reverseClusterOrder() {
  static const bool reverse = [] {
    const char *order = std::getenv("QFUSE_SIM_CLUSTER_ORDER");
    return order && std::string(order) == "reverse";
  }();
  return reverse;
}

/// Runs each ready thread of `c` to its next wait, and with `ahead` again
/// until none can move or one yields; false on a failure.
bool GroupRunner::passCta(Cta &c, bool ahead, bool &moved, bool &live) {
  for (bool again = true; again;) {
    again = false;
    yielded = false;
    for (Thread &t : c.threads) {
      if (t.state == ThreadState::Exited)
        continue;
      live = true;
      if (t.state == ThreadState::Mbar && t.mbarEpoch != group.mbarEpoch)
        t.state = ThreadState::Ready;
      if (t.state != ThreadState::Ready)
        continue;
      moved = again = true;
      if (!runThread(t))
        return false;
    }
    again = again && ahead && !yielded; // a yield lets the others run
  }
  return true;
}

bool GroupRunner::schedule() {
  const bool reverse = reverseClusterOrder();
  for (;;) {
    bool moved = false, live = false;
    for (size_t i = 0; i < group.ctas.size(); ++i) {
      Cta &c = *group.ctas[reverse ? group.ctas.size() - 1 - i : i];
      if (!passCta(c, reverse, moved, live))
        return false;
    }
    if (!live)
      return true;
    if (!moved) {
      error = deadlock();
      return false;
    }
  }
}

std::string GroupRunner::deadlock() {
  // Threads grouped by what they wait at.
  std::map<std::pair<int, uint32_t>, std::pair<uint32_t, const Thread *>> at;
  uint32_t exited = 0;
  for (Cta *c : group.ctas)
    for (const Thread &t : c->threads) {
      if (t.state == ThreadState::Exited) {
        ++exited;
        continue;
      }
      auto &entry = at[{int(t.state), t.pc}];
      if (!entry.first++)
        entry.second = &t;
    }
  std::string text = "deadlock: no thread can make progress (" +
                     std::to_string(exited) + " exited)";
  static const char *what[] = {"ready", "bar.sync", "a warp collective",
                               "barrier.cluster.wait", "mbarrier try_wait",
                               "exited"};
  for (const auto &[key, entry] : at)
    text += "; " + std::to_string(entry.first) + " thread(s) waiting at " +
            what[key.first] + ", first: " + where(*entry.second, key.second);
  return text;
}

} // namespace qfuse::sim::ptx
