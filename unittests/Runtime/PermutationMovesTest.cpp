//===- PermutationMovesTest.cpp - GPTQ's act-order copy plans --------------===//
//
// rowGather and columnScatter (PermutationMoves.h), the copies GptqSolver
// runs on the device for act-order and static groups, run here on host
// memory in order and compared with the gathers they stand for: random
// permutations, the identity, runs, and group-of-position maps (static
// parameters, with and without act-order); and the solver's compositions
// of them with transposes (H -> P^T H P, W's columns, the static
// parameters' block layout) against the host loops they replaced.
//
//===----------------------------------------------------------------------===//

#include "qfuse/runtime/gptq/PermutationMoves.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>

using namespace qfuse::runtime;

namespace {

constexpr int64_t kWidth = 3; // elements per row

/// The copies of rowGather(from) on [rows, width] host rows.
std::vector<float> runRowGather(const std::vector<float> &src,
                                const std::vector<int64_t> &from,
                                int64_t width = kWidth) {
  std::vector<float> dst(from.size() * size_t(width),
                         std::numeric_limits<float>::quiet_NaN());
  for (const RowCopy &c : rowGather(from)) {
    const float *at = (c.fromDst ? dst.data() : src.data()) + c.src * width;
    // Stream order: each copy completes before the next; a doubling copy
    // never overlaps its source.
    if (c.fromDst)
      EXPECT_LE(c.src + c.count, c.dst);
    std::memmove(dst.data() + c.dst * width, at,
                 size_t(c.count * width) * sizeof(float));
  }
  return dst;
}

/// The waves of rowGatherWaves(from) as the device runs them: each wave a
/// batch whose copies run in no particular order (here: last first, each
/// reading the destination as it was when the wave began, so that a copy
/// reading a row its own wave writes gets the poison), the waves in order.
std::vector<float> runRowGatherWaves(const std::vector<float> &src,
                                     const std::vector<int64_t> &from,
                                     size_t &waveCount,
                                     int64_t width = kWidth) {
  std::vector<float> dst(from.size() * size_t(width),
                         std::numeric_limits<float>::quiet_NaN());
  const std::vector<std::vector<RowCopy>> waves = rowGatherWaves(from);
  waveCount = waves.size();
  for (const std::vector<RowCopy> &wave : waves) {
    EXPECT_FALSE(wave.empty());
    const std::vector<float> before = dst;
    std::vector<int> writes(from.size(), 0);
    for (auto c = wave.rbegin(); c != wave.rend(); ++c) {
      const float *at =
          (c->fromDst ? before.data() : src.data()) + c->src * width;
      std::memcpy(dst.data() + c->dst * width, at,
                  size_t(c->count * width) * sizeof(float));
      for (int64_t r = c->dst; r < c->dst + c->count; ++r)
        ++writes[size_t(r)];
    }
    EXPECT_EQ(*std::max_element(writes.begin(), writes.end()), 1)
        << "two copies of one wave write the same row";
  }
  return dst;
}

/// Row-major [rows, cols] -> [cols, rows] (what the solver's cublasSgeam
/// does on the device).
std::vector<float> transposed(const std::vector<float> &a, int64_t rows,
                              int64_t cols) {
  std::vector<float> t(a.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      t[size_t(c * rows + r)] = a[size_t(r * cols + c)];
  return t;
}

std::vector<int64_t> randomPermutation(int64_t n, std::mt19937_64 &rng) {
  std::vector<int64_t> p(static_cast<size_t>(n));
  std::iota(p.begin(), p.end(), int64_t(0));
  std::shuffle(p.begin(), p.end(), rng);
  return p;
}

std::vector<float> randomMatrix(int64_t n, std::mt19937_64 &rng) {
  std::uniform_real_distribution<float> value(-2.0f, 2.0f);
  std::vector<float> a(static_cast<size_t>(n));
  for (float &v : a)
    v = value(rng);
  return a;
}

/// rowGather(from) and its waves against the gather; `maxWaves`, where
/// not 0, is the number of waves expected.
void expectGathered(const std::vector<int64_t> &from, int64_t srcRows,
                    size_t maxCopies, size_t maxWaves = 0) {
  std::mt19937_64 rng(std::random_device{}());
  std::uniform_real_distribution<float> value(-2.0f, 2.0f);
  std::vector<float> src(size_t(srcRows * kWidth));
  for (float &v : src)
    v = value(rng);
  size_t waveCount = 0;
  for (bool inWaves : {false, true}) {
    SCOPED_TRACE(inWaves ? "in waves (unordered batches)" : "in order");
    const std::vector<float> got =
        inWaves ? runRowGatherWaves(src, from, waveCount)
                : runRowGather(src, from);
    size_t wrong = 0;
    for (size_t i = 0; i < from.size(); ++i)
      for (int64_t e = 0; e < kWidth; ++e)
        wrong += std::memcmp(&got[i * kWidth + e],
                             &src[size_t(from[i] * kWidth + e)], 4) != 0;
    EXPECT_EQ(wrong, 0u);
  }
  EXPECT_LE(rowGather(from).size(), maxCopies);
  if (maxWaves)
    EXPECT_EQ(waveCount, maxWaves);
}

TEST(PermutationMoves, IdentityIsOneCopy) {
  std::vector<int64_t> from(300);
  std::iota(from.begin(), from.end(), int64_t(0));
  expectGathered(from, 300, 1, 1);
}

TEST(PermutationMoves, RandomPermutationOfRows) {
  std::mt19937_64 rng(std::random_device{}());
  for (int64_t n : {1, 2, 7, 128, 641}) {
    std::vector<int64_t> from(static_cast<size_t>(n));
    std::iota(from.begin(), from.end(), int64_t(0));
    std::shuffle(from.begin(), from.end(), rng);
    // No repeats: one batch.
    expectGathered(from, n, size_t(n), 1);
  }
}

TEST(PermutationMoves, RunsOfConsecutiveRows) {
  // Blocks of rows moved whole: one copy per block.
  std::vector<int64_t> from;
  for (int64_t block : {3, 0, 2, 1})
    for (int64_t r = 0; r < 10; ++r)
      from.push_back(block * 10 + r);
  expectGathered(from, 40, 4);
}

TEST(PermutationMoves, StaticParametersByPosition) {
  // Group of each position, K = 576, group 128 (a last group of 64):
  // column order, then act-order's order.
  const int64_t k = 576, group = 128, groups = 5;
  std::vector<int64_t> from(static_cast<size_t>(k));
  for (int64_t c = 0; c < k; ++c)
    from[size_t(c)] = c / group;
  // 1 + log2(128) copies per whole group, 1 + log2(64) for the last; as
  // many waves as the longest run needs.
  expectGathered(from, groups, 4 * 8 + 7, 1 + 7);
  std::vector<int64_t> perm(static_cast<size_t>(k));
  std::iota(perm.begin(), perm.end(), int64_t(0));
  std::shuffle(perm.begin(), perm.end(), std::mt19937_64(std::random_device{}()));
  for (int64_t c = 0; c < k; ++c)
    from[size_t(c)] = perm[size_t(c)] / group;
  expectGathered(from, groups, size_t(k));
  // Per channel: one group, 576 positions: 1 + floor(log2 576) waves (the
  // last 64 rows are copied from the first 64, written by wave 6).
  std::fill(from.begin(), from.end(), int64_t(0));
  expectGathered(from, 1, 1 + 10, 1 + 9);
}

TEST(PermutationMoves, WavesOfRandomRepeats) {
  // Runs of random lengths from random rows, some consecutive: every
  // doubling copy lands in a later wave than the rows it reads.
  std::mt19937_64 rng(std::random_device{}());
  std::uniform_int_distribution<int64_t> length(1, 40), row(0, 9);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<int64_t> from;
    while (from.size() < 500) {
      const int64_t n = length(rng), r = row(rng);
      const bool repeat = rng() % 2;
      for (int64_t i = 0; i < n; ++i)
        from.push_back(repeat ? r : (r + i) % 10);
    }
    // The longest run of one repeated row (runs can meet).
    size_t longest = 1, run = 1;
    for (size_t i = 1; i < from.size(); ++i) {
      run = from[i] == from[i - 1] ? run + 1 : 1;
      longest = std::max(longest, run);
    }
    expectGathered(from, 10, from.size());
    EXPECT_LE(rowGatherWaves(from).size(),
              1 + size_t(std::ceil(std::log2(double(longest)))));
  }
}

TEST(PermutationMoves, ColumnScatterPutsColumnsInOrder) {
  std::mt19937_64 rng(std::random_device{}());
  const int64_t rows = 5, k = 200;
  std::vector<int64_t> to(static_cast<size_t>(k));
  std::iota(to.begin(), to.end(), int64_t(0));
  // Shuffled, with one run of 20 consecutive columns kept.
  std::shuffle(to.begin() + 20, to.end(), rng);
  std::vector<uint16_t> src(size_t(rows * k)), dst(src.size(), 0x7E00);
  for (size_t i = 0; i < src.size(); ++i)
    src[i] = uint16_t(i * 2654435761u >> 7);
  const std::vector<ColumnCopy> copies = columnScatter(to.data(), k);
  for (const ColumnCopy &c : copies)
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < c.count; ++j)
        dst[size_t(r * k + c.dst + j)] = src[size_t(r * k + c.src + j)];
  size_t wrong = 0;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < k; ++j)
      wrong += dst[size_t(r * k + to[size_t(j)])] != src[size_t(r * k + j)];
  EXPECT_EQ(wrong, 0u);
  EXPECT_LE(copies.size(), size_t(k - 19));
  std::iota(to.begin(), to.end(), int64_t(0));
  EXPECT_EQ(columnScatter(to.data(), k).size(), 1u);
}

// The compositions of GptqSolvePermute.cpp, run with the same plans on the
// host against the loops they replaced (hostPrepare's).
TEST(PermutationMoves, HessianPermutedAsTwoGathersAndTransposes) {
  std::mt19937_64 rng(std::random_device{}());
  const int64_t k = 200;
  const std::vector<int64_t> perm = randomPermutation(k, rng);
  const std::vector<float> h = randomMatrix(k * k, rng); // not symmetric
  std::vector<float> m = h;
  for (int pass = 0; pass < 2; ++pass)
    m = transposed(runRowGather(m, perm, k), k, k);
  size_t wrong = 0;
  for (int64_t i = 0; i < k; ++i)
    for (int64_t j = 0; j < k; ++j)
      wrong += m[size_t(i * k + j)] != h[size_t(perm[i] * k + perm[j])];
  EXPECT_EQ(wrong, 0u);
}

TEST(PermutationMoves, WeightColumnsPermutedThroughTheTranspose) {
  std::mt19937_64 rng(std::random_device{}());
  const int64_t rows = 37, k = 150;
  const std::vector<int64_t> perm = randomPermutation(k, rng);
  const std::vector<float> w = randomMatrix(rows * k, rng);
  const std::vector<float> got = transposed(
      runRowGather(transposed(w, rows, k), perm, rows), k, rows);
  size_t wrong = 0;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < k; ++c)
      wrong += got[size_t(r * k + c)] != w[size_t(r * k + perm[c])];
  EXPECT_EQ(wrong, 0u);
}

TEST(PermutationMoves, StaticParametersInTheBlockLayout) {
  // [groups, rows] gathered by each position's group into [K, rows], each
  // block of 128 positions transposed into [rows, wb] at rows * i1: the
  // layout the host wrote (rows * i1 + r * wb + (c - i1)).
  std::mt19937_64 rng(std::random_device{}());
  const int64_t rows = 9, k = 576, group = 32, groups = k / group,
                block = 128;
  const std::vector<int64_t> perm = randomPermutation(k, rng);
  const std::vector<float> byGroup = randomMatrix(groups * rows, rng);
  std::vector<int64_t> from(static_cast<size_t>(k));
  for (int64_t c = 0; c < k; ++c)
    from[size_t(c)] = perm[size_t(c)] / group;
  const std::vector<float> byPosition = runRowGather(byGroup, from, rows);
  std::vector<float> blocked(byPosition.size());
  for (int64_t i1 = 0; i1 < k; i1 += block) {
    const int64_t wb = std::min(block, k - i1);
    const std::vector<float> t = transposed(
        std::vector<float>(byPosition.begin() + i1 * rows,
                           byPosition.begin() + (i1 + wb) * rows),
        wb, rows);
    std::copy(t.begin(), t.end(), blocked.begin() + rows * i1);
  }
  size_t wrong = 0;
  for (int64_t c = 0; c < k; ++c) {
    const int64_t i1 = c / block * block, wb = std::min(block, k - i1);
    for (int64_t r = 0; r < rows; ++r)
      wrong += blocked[size_t(rows * i1 + r * wb + (c - i1))] !=
               byGroup[size_t(from[size_t(c)] * rows + r)];
  }
  EXPECT_EQ(wrong, 0u);
}

} // namespace
