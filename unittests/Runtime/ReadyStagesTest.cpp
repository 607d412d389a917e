//===- ReadyStagesTest.cpp - stages made ready in order, waited on --------===//
//
// The readiness BackgroundLoad's layers are waited on with: a waiter wakes
// when its stage is marked ready on another thread, not before; the
// producer's error wakes a blocked waiter, which rethrows it (no hang);
// stages are marked in order. Every wait that could hang runs under a
// deadline, so a lost wake-up fails the test instead of stalling it.
//
//===----------------------------------------------------------------------===//

#include "qfuse/runtime/device/ReadyStages.h"
#include "qfuse/runtime/Error.h"

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <stdexcept>
#include <string>
#include <thread>

using namespace qfuse::runtime;
using namespace std::chrono_literals;

namespace {

/// A wake-up that is never lost comes well within this.
constexpr auto kDeadline = 10s;

TEST(ReadyStages, WaiterWakesWhenItsStageIsReady) {
  ReadyStages stages(3);
  std::future<void> waiter =
      std::async(std::launch::async, [&] { stages.waitFor(1); });
  stages.markReady(0);
  // Stage 0 alone does not release a wait for stage 1.
  EXPECT_EQ(waiter.wait_for(100ms), std::future_status::timeout);
  stages.markReady(1);
  ASSERT_EQ(waiter.wait_for(kDeadline), std::future_status::ready);
  waiter.get();
  EXPECT_EQ(stages.readyCount(), 2u);
  // A ready stage is waited for at once.
  stages.waitFor(0);
}

TEST(ReadyStages, ProducerOnAnotherThread) {
  constexpr size_t kStages = 64;
  ReadyStages stages(kStages);
  std::thread producer([&] {
    for (size_t s = 0; s < kStages; ++s) {
      if (s % 8 == 0)
        std::this_thread::sleep_for(1ms);
      stages.markReady(s);
    }
  });
  std::future<size_t> consumer = std::async(std::launch::async, [&] {
    size_t seen = 0;
    for (size_t s = 0; s < kStages; ++s) {
      stages.waitFor(s);
      seen += stages.readyCount() > s;
    }
    return seen;
  });
  ASSERT_EQ(consumer.wait_for(kDeadline), std::future_status::ready);
  EXPECT_EQ(consumer.get(), kStages);
  producer.join();
}

TEST(ReadyStages, ErrorWakesABlockedWaiter) {
  ReadyStages stages(4);
  stages.markReady(0);
  std::future<void> waiter =
      std::async(std::launch::async, [&] { stages.waitFor(2); });
  EXPECT_EQ(waiter.wait_for(100ms), std::future_status::timeout);
  stages.fail(std::make_exception_ptr(
      qfuse::Error("'model.layers.1.mlp.up_proj.weight': missing")));
  if (waiter.wait_for(kDeadline) != std::future_status::ready) {
    // Release the waiter so that the test fails instead of hanging.
    stages.markReady(1);
    stages.markReady(2);
    FAIL() << "the error did not wake the waiter";
  }
  try {
    waiter.get();
    FAIL() << "the waiter returned instead of rethrowing the error";
  } catch (const qfuse::Error &e) {
    EXPECT_EQ(std::string(e.what()),
              "'model.layers.1.mlp.up_proj.weight': missing");
  }
}

TEST(ReadyStages, ErrorStopsEveryLaterWait) {
  ReadyStages stages(2);
  stages.markReady(0);
  stages.fail(std::make_exception_ptr(std::runtime_error("first")));
  stages.fail(std::make_exception_ptr(std::runtime_error("second")));
  // Even the stage that was ready: the run stops at the first error.
  for (size_t s = 0; s < 2; ++s) {
    try {
      stages.waitFor(s);
      FAIL() << "waitFor(" << s << ") returned after the error";
    } catch (const std::runtime_error &e) {
      EXPECT_EQ(std::string(e.what()), "first");
    }
  }
}

TEST(ReadyStages, OutOfOrderAndOutOfRange) {
  ReadyStages stages(2);
  EXPECT_THROW(stages.markReady(1), qfuse::Error);
  stages.markReady(0);
  EXPECT_THROW(stages.markReady(0), qfuse::Error);
  stages.markReady(1);
  EXPECT_THROW(stages.markReady(2), qfuse::Error);
  EXPECT_THROW(stages.waitFor(2), qfuse::Error);
  EXPECT_EQ(stages.readyCount(), 2u);
}

} // namespace
