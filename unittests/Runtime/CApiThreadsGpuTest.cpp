//===- CApiThreadsGpuTest.cpp - runtimes on several threads, on a GPU -----===//
//
// qfuse.h's "Threads" rules where a device is needed, on a whole model
// (QFUSE_THREADS_MODEL: a checkpoint directory with its qfuse-int4-g128.qfa,
// e.g. `make demo`'s build/demo/tiny-llama): runtimes on their own threads
// at once, one runtime shared by threads through qfuse_generate, and a
// runtime used from threads that did not open it, each giving the tokens of
// a single-threaded generation. Skips with "qfuse-gpu-skip:" without a
// device or the model.
//
//===----------------------------------------------------------------------===//

#include "qfuse/runtime/qfuse.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr int64_t kNew = 16;
const int32_t kPrompt[] = {5, 17, 300, 42, 7};

class CApiThreadsGpu : public ::testing::Test {
protected:
  void SetUp() override {
    if (qfuse_device_count() <= 0)
      GTEST_SKIP() << "qfuse-gpu-skip: no CUDA device";
    const char *dir = std::getenv("QFUSE_THREADS_MODEL");
    if (!dir || !*dir)
      GTEST_SKIP() << "qfuse-gpu-skip: set QFUSE_THREADS_MODEL to a model "
                      "directory with qfuse-int4-g128.qfa (make demo: "
                      "build/demo/tiny-llama)";
    model = dir;
    artifact = model + "/qfuse-int4-g128.qfa";
  }

  qfuse_runtime *open() {
    qfuse_runtime *rt = qfuse_open(artifact.c_str(), 0);
    EXPECT_NE(rt, nullptr) << qfuse_last_error();
    if (rt)
      EXPECT_EQ(qfuse_load_checkpoint(rt, model.c_str(), 0), 0)
          << qfuse_last_error();
    return rt;
  }

  static std::vector<int32_t> generate(qfuse_runtime *rt) {
    std::vector<int32_t> out(kNew, -1);
    if (qfuse_generate(rt, kPrompt, 5, kNew, out.data(), nullptr) != 0)
      return {};
    return out;
  }

  std::string model, artifact;
};

int onThreads(int n, const std::function<int(int)> &body) {
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < n; ++t)
    threads.emplace_back([&, t] { failures += body(t); });
  for (std::thread &thread : threads)
    thread.join();
  return failures;
}

TEST_F(CApiThreadsGpu, RuntimesOnTheirOwnThreads) {
  qfuse_runtime *first = open();
  ASSERT_NE(first, nullptr);
  const std::vector<int32_t> expected = generate(first);
  ASSERT_EQ(expected.size(), size_t(kNew)) << qfuse_last_error();
  std::vector<qfuse_runtime *> runtimes = {first, open(), open(), open()};
  const int failures = onThreads(4, [&](int t) {
    int bad = 0;
    for (int r = 0; r < 8; ++r)
      bad += generate(runtimes[size_t(t)]) != expected;
    return bad;
  });
  EXPECT_EQ(failures, 0);
  for (qfuse_runtime *rt : runtimes)
    qfuse_close(rt);
}

TEST_F(CApiThreadsGpu, OneRuntimeSharedThroughGenerate) {
  qfuse_runtime *rt = open();
  ASSERT_NE(rt, nullptr);
  const std::vector<int32_t> expected = generate(rt);
  ASSERT_EQ(expected.size(), size_t(kNew)) << qfuse_last_error();
  const int failures = onThreads(6, [&](int) {
    int bad = 0;
    for (int r = 0; r < 5; ++r)
      bad += generate(rt) != expected;
    return bad;
  });
  EXPECT_EQ(failures, 0);
  // Closed from a thread that did not open it.
  std::thread([&] { qfuse_close(rt); }).join();
}

} // namespace
