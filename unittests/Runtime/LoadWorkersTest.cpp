//===- LoadWorkersTest.cpp - how many threads make a background load -----===//
//
// BackgroundLoad's worker counts: every worker for the first stages, fewer
// after them; a worker refused a stage is refused every later one (it ends
// there); the counts resolved against the cores and the jobs.
//
//===----------------------------------------------------------------------===//

#include "qfuse/runtime/device/LoadWorkers.h"

#include <gtest/gtest.h>

using namespace qfuse::runtime;

namespace {

/// How many of `workers.threads()` workers make stage `stage`.
unsigned making(const LoadWorkers &workers, size_t stage) {
  unsigned n = 0;
  for (unsigned w = 0; w < workers.threads(); ++w)
    n += workers.makes(w, stage);
  return n;
}

TEST(LoadWorkers, FirstStagesGetEveryWorkerTheRestFewer) {
  const LoadWorkers workers{8, 2, 2};
  EXPECT_EQ(workers.threads(), 8u);
  EXPECT_EQ(making(workers, 0), 8u); // the embedding
  EXPECT_EQ(making(workers, 1), 8u); // layer 0
  EXPECT_EQ(making(workers, 2), 2u); // layer 1, beside the layers
  EXPECT_EQ(making(workers, 33), 2u);
  // The workers that go on are the first ones (ids 0 and 1).
  EXPECT_TRUE(workers.makes(1, 2));
  EXPECT_FALSE(workers.makes(2, 2));
}

TEST(LoadWorkers, ARefusedWorkerIsNeverNeededAgain) {
  for (const LoadWorkers &workers :
       {LoadWorkers{8, 2, 2}, LoadWorkers{4, 4, 1}, LoadWorkers{1, 1, 0},
        LoadWorkers{3, 1, 5}, LoadWorkers::same(6)}) {
    for (unsigned w = 0; w < workers.threads(); ++w) {
      bool refused = false;
      for (size_t stage = 0; stage < 10; ++stage) {
        if (refused)
          EXPECT_FALSE(workers.makes(w, stage))
              << "worker " << w << " needed again at stage " << stage;
        refused = refused || !workers.makes(w, stage);
      }
    }
    for (size_t stage = 0; stage < 10; ++stage)
      EXPECT_GE(making(workers, stage), 1u) << "stage " << stage;
  }
}

TEST(LoadWorkers, SameIsEveryStage) {
  const LoadWorkers workers = LoadWorkers::same(3);
  EXPECT_EQ(workers.threads(), 3u);
  for (size_t stage = 0; stage < 5; ++stage)
    EXPECT_EQ(making(workers, stage), 3u);
}

TEST(LoadWorkers, ResolvedAgainstCoresAndJobs) {
  // 0: every core first, then as many.
  LoadWorkers r = LoadWorkers::same(0).resolved(16, 1000);
  EXPECT_EQ(r.first, 16u);
  EXPECT_EQ(r.later, 16u);
  r = LoadWorkers{0, 2, 2}.resolved(16, 1000);
  EXPECT_EQ(r.first, 16u);
  EXPECT_EQ(r.later, 2u);
  EXPECT_EQ(r.firstStages, 2u);
  // No more workers than jobs, and at least one.
  r = LoadWorkers{8, 4, 2}.resolved(16, 3);
  EXPECT_EQ(r.first, 3u);
  EXPECT_EQ(r.later, 3u);
  r = LoadWorkers{0, 0, 0}.resolved(0, 0);
  EXPECT_EQ(r.first, 1u);
  EXPECT_EQ(r.later, 1u);
}

} // namespace
