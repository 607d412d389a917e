//===- Launch.cpp - grids, clusters and per-thread state ------------------===//
//
// A grid runs as a sequence of groups (clusters, or single CTAs), spread
// over host threads (QFUSE_SIM_THREADS, default: the hardware's): CTAs only
// meet through global memory, whose atomics are host atomics. Registers,
// shared and local memory start as a poison pattern, so that a kernel that
// reads what it never wrote gets garbage, as on hardware, not zeros.
//
//===----------------------------------------------------------------------===//

#include "Interpreter.h"

#include <cstdlib>
#include <mutex>
#include <thread>

namespace qfuse::sim::ptx {

namespace {
constexpr uint8_t kPoison = 0xCD;

Dim3 clusterOf(const Function &fn, const LaunchConfig &cfg) {
  if (cfg.cluster.count() > 1 || !fn.reqCluster[0])
    return cfg.cluster;
  return Dim3{fn.reqCluster[0], fn.reqCluster[1], fn.reqCluster[2]};
}
} // namespace

GroupRunner::GroupRunner(const Function &fn, const LaunchConfig &config,
                         const uint8_t *params, uint32_t paramBytes)
    : fn(fn), cfg(config), cluster(clusterOf(fn, config)) {
  threadsPerCta = uint32_t(cfg.block.count());
  uint32_t dynBase = (fn.staticSharedBytes + fn.dynamicSharedAlign - 1) /
                     fn.dynamicSharedAlign * fn.dynamicSharedAlign;
  sharedBytes = cfg.dynamicSharedBytes ? dynBase + cfg.dynamicSharedBytes
                                       : fn.staticSharedBytes;
  uint32_t n = uint32_t(cluster.count());
  ctas.resize(n);
  size_t slots = fn.numSlots ? fn.numSlots : 1;
  regs.assign(size_t(n) * threadsPerCta * slots, 0xCDCDCDCDCDCDCDCDull);
  shared.resize(size_t(n) * sharedBytes);
  local.assign(size_t(n) * threadsPerCta * fn.localBytes, kPoison);
  warpArrived.assign(size_t(n) * ((threadsPerCta + 31) / 32), 0);
  for (uint32_t c = 0; c < n; ++c) {
    Cta &cta = ctas[c];
    cta.rank = c;
    cta.shared = shared.data() + size_t(c) * sharedBytes;
    cta.sharedBytes = sharedBytes;
    cta.threads.resize(threadsPerCta);
    for (uint32_t i = 0; i < threadsPerCta; ++i) {
      Thread &t = cta.threads[i];
      size_t k = size_t(c) * threadsPerCta + i;
      t.r = regs.data() + k * slots;
      t.local = local.data() + k * fn.localBytes;
      t.cta = &cta;
      t.linear = i;
      t.lane = i % 32;
      t.warp = i / 32;
    }
    group.ctas.push_back(&cta);
  }
  x.fn = &fn;
  x.group = &group;
  x.params = params;
  x.paramBytes = paramBytes;
  x.dynamicShared = cfg.dynamicSharedBytes;
}

void GroupRunner::initThread(Cta &cta, Thread &t, uint32_t linear) {
  uint64_t *r = t.r;
  for (const auto &[slot, bits] : fn.constants)
    r[slot] = bits;
  uint32_t tid[3] = {linear % cfg.block.x, linear / cfg.block.x % cfg.block.y,
                     linear / cfg.block.x / cfg.block.y};
  const uint32_t ntid[3] = {cfg.block.x, cfg.block.y, cfg.block.z};
  const uint32_t nctaid[3] = {cfg.grid.x, cfg.grid.y, cfg.grid.z};
  const uint32_t ncl[3] = {cluster.x, cluster.y, cluster.z};
  uint32_t lane = t.lane;
  for (const auto &[slot, which] : fn.specials) {
    uint64_t v = 0;
    unsigned k = 0;
    switch (which) {
    case Special::TidX: case Special::TidY: case Special::TidZ:
      v = tid[unsigned(which) - unsigned(Special::TidX)]; break;
    case Special::NtidX: case Special::NtidY: case Special::NtidZ:
      v = ntid[unsigned(which) - unsigned(Special::NtidX)]; break;
    case Special::CtaidX: case Special::CtaidY: case Special::CtaidZ:
      v = cta.ctaid[unsigned(which) - unsigned(Special::CtaidX)]; break;
    case Special::NctaidX: case Special::NctaidY: case Special::NctaidZ:
      v = nctaid[unsigned(which) - unsigned(Special::NctaidX)]; break;
    case Special::LaneId: v = lane; break;
    case Special::WarpId: v = t.warp; break;
    case Special::NWarpId: v = (threadsPerCta + 31) / 32; break;
    case Special::ClusterCtaRank: v = cta.rank; break;
    case Special::ClusterNCtaRank: v = cluster.count(); break;
    case Special::ClusterIdX: case Special::ClusterIdY: case Special::ClusterIdZ:
      k = unsigned(which) - unsigned(Special::ClusterIdX);
      v = cta.ctaid[k] / ncl[k]; break;
    case Special::NClusterIdX: case Special::NClusterIdY:
    case Special::NClusterIdZ:
      k = unsigned(which) - unsigned(Special::NClusterIdX);
      v = nctaid[k] / ncl[k]; break;
    case Special::ClusterCtaIdX: case Special::ClusterCtaIdY:
    case Special::ClusterCtaIdZ:
      k = unsigned(which) - unsigned(Special::ClusterCtaIdX);
      v = cta.ctaid[k] % ncl[k]; break;
    case Special::ClusterNCtaIdX: case Special::ClusterNCtaIdY:
    case Special::ClusterNCtaIdZ:
      v = ncl[unsigned(which) - unsigned(Special::ClusterNCtaIdX)]; break;
    case Special::DynamicSmem: v = cfg.dynamicSharedBytes; break;
    case Special::TotalSmem: v = sharedBytes; break;
    case Special::NSmId: v = 132; break;
    case Special::LaneMaskEq: v = 1u << lane; break;
    case Special::LaneMaskLt: v = (1u << lane) - 1; break;
    case Special::LaneMaskLe: v = uint32_t((2ull << lane) - 1); break;
    case Special::LaneMaskGt: v = ~uint32_t((2ull << lane) - 1); break;
    case Special::LaneMaskGe: v = ~((1u << lane) - 1); break;
    default: v = 0; break; // %smid, %gridid; clocks are read by handlers
    }
    r[slot] = v;
  }
  t.pc = 0;
  t.state = ThreadState::Ready;
  t.clusterArrived = false;
  t.clusterPhase = 0;
}

void GroupRunner::setUp(uint64_t index) {
  uint64_t cx = cfg.grid.x / cluster.x, cy = cfg.grid.y / cluster.y;
  uint32_t origin[3] = {uint32_t(index % cx * cluster.x),
                        uint32_t(index / cx % cy * cluster.y),
                        uint32_t(index / cx / cy * cluster.z)};
  group.clusterPhase = 0;
  group.clusterArrived = 0;
  group.mbarEpoch = 0;
  std::fill(warpArrived.begin(), warpArrived.end(), 0);
  std::fill(shared.begin(), shared.end(), kPoison);
  for (Cta &cta : ctas) {
    uint32_t rk = cta.rank;
    cta.ctaid[0] = origin[0] + rk % cluster.x;
    cta.ctaid[1] = origin[1] + rk / cluster.x % cluster.y;
    cta.ctaid[2] = origin[2] + rk / cluster.x / cluster.y;
    cta.live = threadsPerCta;
    for (auto &b : cta.bars)
      b = Cta::Barrier{};
    for (uint32_t i = 0; i < threadsPerCta; ++i)
      initThread(cta, cta.threads[i], i);
  }
}

bool GroupRunner::run(uint64_t index) {
  setUp(index);
  return schedule();
}

std::string runGrid(const Function &fn, const LaunchConfig &cfg,
                    const uint8_t *params, uint32_t paramBytes,
                    uint64_t *instructions) {
  Dim3 cl = clusterOf(fn, cfg);
  const Dim3 &g = cfg.grid, &b = cfg.block;
  std::string name = "kernel " + fn.info.name + ": ";
  if (!g.count() || !b.count())
    return name + "empty grid or block";
  if (b.count() > 1024 || b.count() > fn.info.maxThreads)
    return name + "block of " + std::to_string(b.count()) +
           " threads exceeds the kernel's limit of " +
           std::to_string(fn.info.maxThreads);
  if (g.x % cl.x || g.y % cl.y || g.z % cl.z)
    return name + "grid is not a whole number of clusters";
  if (cl.count() > 16)
    return name + "cluster of more than 16 CTAs";
  uint64_t shared = uint64_t(fn.staticSharedBytes) + cfg.dynamicSharedBytes;
  if (shared > 232448)
    return name + std::to_string(shared) +
           " bytes of shared memory exceed the 227 KiB a CTA may have";
  uint64_t groups = g.count() / cl.count();
  unsigned workers = std::thread::hardware_concurrency();
  if (const char *env = std::getenv("QFUSE_SIM_THREADS"))
    workers = unsigned(std::atoi(env));
  if (workers < 1)
    workers = 1;
  if (workers > groups)
    workers = unsigned(groups);
  std::atomic<uint64_t> nextGroup{0};
  std::atomic<bool> stop{false};
  std::mutex lock;
  uint64_t failedAt = ~0ull, total = 0;
  std::string firstError;
  auto work = [&] {
    GroupRunner runner(fn, cfg, params, paramBytes);
    for (;;) {
      uint64_t i = nextGroup.fetch_add(1);
      if (i >= groups || stop.load())
        break;
      if (!runner.run(i)) {
        std::lock_guard<std::mutex> guard(lock);
        if (i < failedAt) {
          failedAt = i;
          firstError = runner.error;
        }
        stop = true;
        break;
      }
    }
    std::lock_guard<std::mutex> guard(lock);
    total += runner.instructions;
  };
  if (workers == 1) {
    work();
  } else {
    std::vector<std::thread> pool;
    for (unsigned w = 0; w < workers; ++w)
      pool.emplace_back(work);
    for (std::thread &t : pool)
      t.join();
  }
  if (instructions)
    *instructions = total;
  return firstError;
}

} // namespace qfuse::sim::ptx
