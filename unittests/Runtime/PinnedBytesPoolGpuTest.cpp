//===- PinnedBytesPoolGpuTest.cpp - reused page-locked download blocks ----===//
//
// PinnedBytesPool on a GPU: a block comes back to the pool when its last
// HostBytes goes and is lent again for a size it holds; past the capacity
// take() gives ordinary memory; a download into a lent block is byte for
// byte what the device holds (blocks poisoned first); a block that
// outlives the pool is still usable. Skips with "qfuse-gpu-skip:" where no
// device is usable.
//
//===----------------------------------------------------------------------===//

#include "GpuFixture.h"
#include "qfuse/runtime/device/PinnedBytesPool.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

using namespace qfuse::runtime;

namespace {

class PinnedBytesPoolGpu : public qfuse::testing::GpuFixture {};

TEST_F(PinnedBytesPoolGpu, ReusesABlockOnceItsLastUserIsGone) {
  PinnedBytesPool pool(size_t(64) << 20);
  const uint8_t *first = nullptr;
  {
    qfuse::HostBytes a = pool.take(1000);
    ASSERT_EQ(a.size(), 1000u);
    first = a.data();
    qfuse::HostBytes copy = a; // shares the block
    EXPECT_EQ(pool.pinnedBytes(), 1000u);
    qfuse::HostBytes b = pool.take(1000); // a is still out: a new block
    EXPECT_NE(b.data(), first);
    EXPECT_EQ(pool.pinnedBytes(), 2000u);
  }
  qfuse::HostBytes again = pool.take(900); // a free block that holds it
  EXPECT_EQ(pool.pinnedBytes(), 2000u);
  EXPECT_EQ(again.size(), 900u);
}

TEST_F(PinnedBytesPoolGpu, GivesOrdinaryMemoryPastItsCapacity) {
  PinnedBytesPool pool(4096);
  qfuse::HostBytes a = pool.take(3000);
  qfuse::HostBytes b = pool.take(3000); // over 4096 with a out
  EXPECT_EQ(pool.pinnedBytes(), 3000u);
  ASSERT_EQ(b.size(), 3000u);
  std::memset(b.data(), 7, b.size());
  EXPECT_EQ(b[2999], 7);
}

TEST_F(PinnedBytesPoolGpu, DownloadsIntoALentBlockByteForByte) {
  PinnedBytesPool pool(size_t(64) << 20);
  const size_t size = (size_t(5) << 20) + 123;
  std::vector<uint8_t> want(size);
  std::mt19937 rng(11);
  for (uint8_t &byte : want)
    byte = uint8_t(rng());
  cuda::DeviceBuffer device(size, "pool test source");
  device.upload(want.data(), size);
  for (int round = 0; round < 3; ++round) {
    qfuse::HostBytes got = pool.take(size);
    std::memset(got.data(), 0xFF, size);
    QFUSE_CU(cuMemcpyDtoHAsync(got.data(), device.ptr(), size, stream->get()));
    QFUSE_CU(cuStreamSynchronize(stream->get()));
    EXPECT_EQ(std::memcmp(got.data(), want.data(), size), 0) << round;
  }
  EXPECT_EQ(pool.pinnedBytes(), size); // one block, lent three times
}

TEST_F(PinnedBytesPoolGpu, ABlockOutlivesThePool) {
  qfuse::HostBytes kept;
  {
    PinnedBytesPool pool(size_t(1) << 20);
    kept = pool.take(4096);
  }
  std::memset(kept.data(), 3, kept.size());
  EXPECT_EQ(kept[4095], 3);
}

} // namespace
