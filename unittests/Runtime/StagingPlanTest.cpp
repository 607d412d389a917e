//===- StagingPlanTest.cpp - PinnedUploader's staging ring, on the CPU ----===//
//
// StagingPlan's pieces for uploads larger than two buffers and smaller than
// one, the ring's wrap (a reused buffer waits for its copies first), a ring
// of one buffer, and a random sequence replayed against a model of the
// copies in flight: every byte of every upload is staged exactly once, and
// no piece overwrites staged bytes whose copy may still be running.
// copyInParallel against memcpy at sizes around its part boundaries.
//
//===----------------------------------------------------------------------===//

#include "qfuse/runtime/device/StagingPlan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

using namespace qfuse::runtime;

namespace {

using Piece = StagingPlan::Piece;

void expectPiece(const Piece &p, size_t from, size_t size, unsigned buffer,
                 size_t at, bool waitFirst) {
  EXPECT_EQ(p.from, from);
  EXPECT_EQ(p.size, size);
  EXPECT_EQ(p.buffer, buffer);
  EXPECT_EQ(p.at, at);
  EXPECT_EQ(p.waitFirst, waitFirst);
}

TEST(StagingPlan, LargeUploadsSplitAndSmallOnesShareABuffer) {
  const size_t b = 1000;
  StagingPlan plan(b, 4);
  // Smaller than one buffer: packed one after another into buffer 0.
  std::vector<Piece> small = plan.place(10);
  ASSERT_EQ(small.size(), 1u);
  expectPiece(small[0], 0, 10, 0, 0, false);
  expectPiece(plan.place(20)[0], 0, 20, 0, 10, false);
  // Larger than two buffers: whole buffers, then the rest.
  std::vector<Piece> large = plan.place(2 * b + 300);
  ASSERT_EQ(large.size(), 3u);
  expectPiece(large[0], 0, b, 1, 0, false);
  expectPiece(large[1], b, b, 2, 0, false);
  expectPiece(large[2], 2 * b, 300, 3, 0, false);
  // Fits behind the rest; exactly filling buffer 3 stays in it.
  expectPiece(plan.place(600)[0], 0, 600, 3, 300, false);
  expectPiece(plan.place(100)[0], 0, 100, 3, 900, false);
  // The ring wraps: buffer 0 again, after its copies.
  std::vector<Piece> wrapped = plan.place(b + 1);
  ASSERT_EQ(wrapped.size(), 2u);
  expectPiece(wrapped[0], 0, b, 0, 0, true);
  expectPiece(wrapped[1], b, 1, 1, 0, true);
  EXPECT_TRUE(plan.place(0).empty());
  expectPiece(plan.place(5)[0], 0, 5, 1, 1, false);
}

TEST(StagingPlan, OneBufferWaitsForItselfEachTimeItIsRefilled) {
  StagingPlan plan(64, 1);
  std::vector<Piece> pieces = plan.place(150);
  ASSERT_EQ(pieces.size(), 3u);
  expectPiece(pieces[0], 0, 64, 0, 0, false);
  expectPiece(pieces[1], 64, 64, 0, 0, true);
  expectPiece(pieces[2], 128, 22, 0, 0, true);
  expectPiece(plan.place(42)[0], 0, 42, 0, 22, false);
  expectPiece(plan.place(1)[0], 0, 1, 0, 0, true);
}

// Replays random uploads against the copies that may still be in flight:
// those staged in a buffer since the last wait for it.
TEST(StagingPlan, NeverOverwritesBytesInFlight) {
  const uint64_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (unsigned buffers : {1u, 2u, 4u}) {
    const size_t bytes = 256;
    StagingPlan plan(bytes, buffers);
    // Per buffer, per byte: whether a copy out of it may be running.
    std::vector<std::vector<bool>> inFlight(buffers,
                                            std::vector<bool>(bytes, false));
    for (int upload = 0; upload < 2000; ++upload) {
      const size_t size = rng() % 4 == 0 ? rng() % (3 * bytes) : rng() % 40;
      size_t next = 0;
      for (const Piece &p : plan.place(size)) {
        ASSERT_EQ(p.from, next);
        ASSERT_GT(p.size, 0u);
        ASSERT_LT(p.buffer, buffers);
        ASSERT_LE(p.at + p.size, bytes);
        std::vector<bool> &staged = inFlight[p.buffer];
        if (p.waitFirst)
          staged.assign(bytes, false);
        for (size_t i = p.at; i < p.at + p.size; ++i) {
          ASSERT_FALSE(staged[i]) << "upload " << upload << ", buffer "
                                  << p.buffer << ", byte " << i;
          staged[i] = true;
        }
        next += p.size;
      }
      ASSERT_EQ(next, size);
    }
  }
}

TEST(StagingPlan, CopyInParallelIsMemcpy) {
  const size_t mib = size_t(1) << 20;
  std::vector<uint8_t> src(17 * mib + 3);
  std::mt19937 rng(5);
  for (uint8_t &byte : src)
    byte = uint8_t(rng());
  for (size_t size :
       {size_t(0), size_t(1), 4 * mib - 1, 4 * mib, 8 * mib + 1, src.size()})
    for (unsigned threads : {1u, 3u, 4u}) {
      SCOPED_TRACE(std::to_string(size) + " bytes, " + std::to_string(threads) +
                   " threads");
      std::vector<uint8_t> dst(src.size() + 1, 0xAB);
      copyInParallel(dst.data(), src.data(), size, threads);
      EXPECT_TRUE(std::equal(src.begin(), src.begin() + size, dst.begin()));
      EXPECT_TRUE(std::all_of(dst.begin() + size, dst.end(),
                              [](uint8_t b) { return b == 0xAB; }));
    }
}

} // namespace
