//===- ThreadsTest.cpp - the host readers from many threads ---------------===//
//
// What the C API's handles are made from, read from several threads at
// once: artifacts parsed and refused, configs parsed and refused (each error
// naming its own source), one checkpoint directory opened and read, and
// files written whole (AtomicFile). Under -DQFUSE_SANITIZE=thread,
// ThreadSanitizer checks them for data races (docs/threads.md).
//
//===----------------------------------------------------------------------===//

#include "ValidArtifact.h"

#include "qfuse/reference/ModelConfig.h"
#include "qfuse/reference/SyntheticModel.h"
#include "qfuse/runtime/AtomicFile.h"
#include "qfuse/runtime/Error.h"
#include "qfuse/runtime/artifact/Artifact.h"
#include "qfuse/runtime/checkpoint/ModelCheckpoint.h"

#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <thread>
#include <vector>

using namespace qfuse::runtime;
namespace ref = qfuse::reference;

namespace {

constexpr int kThreads = 8;

int onThreads(const std::function<int(int)> &body) {
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] { failures += body(t); });
  for (std::thread &thread : threads)
    thread.join();
  return failures;
}

/// 1 unless `body` throws an Error whose message holds `part`.
int failsNaming(const std::function<void()> &body, const std::string &part) {
  try {
    body();
  } catch (const qfuse::Error &e) {
    return std::string(e.what()).find(part) == std::string::npos;
  }
  return 1;
}

TEST(Threads, ArtifactsAndConfigs) {
  const std::string config = ref::syntheticPreset("tiny-llama").toJson();
  const int failures = onThreads([&](int t) {
    int bad = 0;
    const std::string name = "thread-" + std::to_string(t);
    for (int r = 0; r < 20; ++r) {
      Artifact a = Artifact::parse(qfuse::testing::kValidArtifact, name + ".qfa");
      bad += a.plans.empty();
      std::string broken = qfuse::testing::kValidArtifact;
      broken.replace(broken.find("\"version\": 2"), 12, "\"version\": 9");
      bad += failsNaming([&] { Artifact::parse(broken, name + ".qfa"); },
                         name + ".qfa");
      bad += ref::ModelConfig::parse(config, name).hiddenSize != 256;
      bad += failsNaming([&] { ref::ModelConfig::parse("{\"hidden_size\": -1}", name); },
                         name);
    }
    return bad;
  });
  EXPECT_EQ(failures, 0);
}

TEST(Threads, OneCheckpointAndWholeFiles) {
  std::string dir = ::testing::TempDir() + "qfuse-threads-XXXXXX";
  ASSERT_TRUE(mkdtemp(dir.data()));
  ref::writeSyntheticModel(ref::syntheticPreset("tiny-llama"), dir + "/model",
                           {/*seed=*/1, ref::StorageType::F16});
  const int failures = onThreads([&](int t) {
    int bad = 0;
    for (int r = 0; r < 5; ++r) {
      ModelCheckpoint c = ModelCheckpoint::open(dir + "/model");
      bad += c.config().vocabSize != 1024;
      bad += c.view("model.norm.weight").size != 512;
      qfuse::writeFileAtomically(dir + "/report-" + std::to_string(t % 2) + ".json",
                                 std::string(size_t(1000 + t), 'x'));
    }
    return bad;
  });
  EXPECT_EQ(failures, 0);
}

} // namespace
