//===- PtxSyncTest.cpp - threads that meet: shfl, bar, mbarrier, cluster --===//

#include "SimTestUtil.h"

#include <gtest/gtest.h>

#include <random>

using namespace qfuse::sim;
using namespace qfuse::sim::test;

namespace {

std::unique_ptr<PtxModule> syncModule() {
  std::string error;
  auto module = loadInput("sync.ptx", error);
  EXPECT_TRUE(module) << error;
  return module;
}

} // namespace

TEST(PtxSync, ShuffleModes) {
  auto module = syncModule();
  ASSERT_TRUE(module);
  const int n = 64; // two warps: shuffles stay inside each
  std::vector<uint32_t> in(n);
  for (int i = 0; i < n; ++i)
    in[i] = 1000 + 17 * i;
  Buffer input(n * 4, "in"), output(n * 32, "out");
  input.fill(in);
  ASSERT_EQ(launch(*module, "shfl_modes", {1}, {n},
                   {input.address(), output.address()}),
            "");
  auto out = output.read<uint32_t>(8 * n);
  for (int i = 0; i < n; ++i) {
    int w = i / 32 * 32, l = i % 32;
    auto v = [&](int lane) { return in[w + lane]; };
    EXPECT_EQ(out[8 * i + 0], v(l ^ 1)) << "bfly 1, thread " << i;
    EXPECT_EQ(out[8 * i + 1], v(l ^ 16)) << "bfly 16, thread " << i;
    EXPECT_EQ(out[8 * i + 2], v(l >= 1 ? l - 1 : l)) << "up 1, thread " << i;
    EXPECT_EQ(out[8 * i + 3], v(l >= 3 ? l - 3 : l)) << "up 3, thread " << i;
    EXPECT_EQ(out[8 * i + 4], l >= 3 ? 1u : 0u) << "up 3 pred, thread " << i;
    EXPECT_EQ(out[8 * i + 5], v(l + 2 <= 31 ? l + 2 : l)) << "down 2, thread " << i;
    EXPECT_EQ(out[8 * i + 6], v(5)) << "idx 5, thread " << i;
    EXPECT_EQ(out[8 * i + 7], v((l & ~7) | 3)) << "idx 3 width 8, thread " << i;
  }
}

TEST(PtxSync, SharedReduction) {
  auto module = syncModule();
  ASSERT_TRUE(module);
  const int blocks = 9;
  std::vector<uint32_t> in(256 * blocks);
  std::mt19937 rng(3);
  for (auto &v : in)
    v = rng() % 100000;
  Buffer input(in.size() * 4, "in"), output(blocks * 4, "sums");
  input.fill(in);
  ASSERT_EQ(launch(*module, "reduce_sum", {blocks}, {256},
                   {input.address(), output.address()}),
            "");
  auto out = output.read<uint32_t>(blocks);
  for (int b = 0; b < blocks; ++b) {
    uint32_t sum = 0;
    for (int i = 0; i < 256; ++i)
      sum += in[256 * b + i];
    EXPECT_EQ(out[b], sum) << "block " << b;
  }
}

TEST(PtxSync, CpAsyncCopiesAndZeroFills) {
  auto module = syncModule();
  ASSERT_TRUE(module);
  std::vector<uint8_t> in(640);
  for (size_t i = 0; i < in.size(); ++i)
    in[i] = uint8_t(i * 7 + 1);
  Buffer input(in.size(), "in"), output(1152, "out");
  input.fill(in);
  ASSERT_EQ(launch(*module, "cp_async", {1}, {32},
                   {input.address(), output.address()}),
            "");
  auto out = output.read<uint8_t>(1152);
  for (int i = 0; i < 640; ++i)
    EXPECT_EQ(out[i], in[i]) << "byte " << i;
  for (int t = 0; t < 32; ++t)
    for (int b = 0; b < 16; ++b)
      EXPECT_EQ(out[640 + 16 * t + b], b < t % 17 ? in[16 * t + b] : 0)
          << "zero-fill piece " << t << " byte " << b;
}

TEST(PtxSync, MbarrierProducerConsumer) {
  auto module = syncModule();
  ASSERT_TRUE(module);
  std::vector<uint32_t> in(32);
  for (int i = 0; i < 32; ++i)
    in[i] = 5 * i + 11;
  Buffer input(32 * 4, "in"), output(64 * 4, "out");
  input.fill(in);
  ASSERT_EQ(launch(*module, "mbarrier_pc", {1}, {64},
                   {input.address(), output.address()}),
            "");
  auto out = output.read<uint32_t>(64);
  for (int i = 0; i < 32; ++i) {
    EXPECT_EQ(out[i], 2 * in[i]) << "phase 0, lane " << i;
    EXPECT_EQ(out[32 + i], 3 * in[i]) << "phase 1, lane " << i;
  }
}

TEST(PtxSync, ClusterPeersShareMemory) {
  auto module = syncModule();
  ASSERT_TRUE(module);
  Buffer output(4 * 32 * 4, "out");
  ASSERT_EQ(launch(*module, "cluster_swap", {4}, {32}, {output.address()}),
            "");
  auto out = output.read<uint32_t>(4 * 32);
  for (uint32_t c = 0; c < 4; ++c)
    for (uint32_t t = 0; t < 32; ++t)
      EXPECT_EQ(out[32 * c + t], 1000 * (c ^ 1) + t + 7 * ((c % 2) ^ 1))
          << "cta " << c << " thread " << t;
}
