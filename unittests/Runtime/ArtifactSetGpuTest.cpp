//===- ArtifactSetGpuTest.cpp - a set's variant chosen by the real device --===//
//
// The glue the unit tests cannot reach: loadArtifactForDevice asks the
// context for its compute capability, and the executor runs the variant it
// got. The variants have no kernels (a memset plan), so the test runs on any
// device; it skips with "qfuse-gpu-skip:" where there is none.
//
//===----------------------------------------------------------------------===//

#include "qfuse/runtime/Error.h"
#include "qfuse/runtime/device/DeviceArtifact.h"
#include "qfuse/runtime/device/Executor.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <optional>
#include <string>

using namespace qfuse::runtime;
using nlohmann::json;

namespace {

/// A set with one kernel-free artifact per chip, each with a memset plan.
ArtifactSet setOf(const std::vector<std::string> &chips) {
  json set = {{"format", "qfuse-artifact-set"},
              {"version", 1},
              {"variants", json::array()}};
  for (const std::string &chip : chips)
    set["variants"].push_back(
        {{"format", "qfuse-artifact"},
         {"version", 2},
         {"target", {{"chip", chip}}},
         {"kernels", json::array()},
         {"weights", json::array()},
         {"tensors", json::array()},
         {"buffers", {{{"name", "y"}, {"shape", {"M", 8}}, {"dtype", "f16"}}}},
         {"inputs", json::array()},
         {"outputs", {"y"}},
         {"plans", {{{"batch", 1}, {"steps", {{{"memset", "y"}}}}}}}});
  return ArtifactSet::parse(set.dump(), "gpu-set.qfa");
}

TEST(ArtifactSetGpu, TheDeviceRunsItsVariant) {
  std::string why;
  if (cuda::deviceCount(&why) == 0)
    GTEST_SKIP() << "qfuse-gpu-skip: no usable CUDA device: " << why;
  cuda::Context context(0);
  cuda::Stream stream;
  const std::string own = context.chip();
  const std::string newer =
      "sm_" + std::to_string((context.major() + 1) * 10 + context.minor());
  // An older chip, the device's arch-specific one, and a newer one: the
  // arch-specific chip wins.
  Artifact artifact = takeVariantForDevice(
      setOf({"sm_50", own + "a", newer}), context);
  EXPECT_EQ(artifact.chip, own + "a");
  EXPECT_EQ(artifact.variantIndex, 1u);
  Executor executor(artifact, context);
  executor.run(1, stream.get());
  stream.synchronize();

  // Without it, the newest chip at or below the device.
  EXPECT_EQ(takeVariantForDevice(setOf({newer, "sm_50", own}), context).chip,
            own);
  try {
    takeVariantForDevice(setOf({newer}), context);
    ADD_FAILURE() << "a set for " << newer << " ran on " << own;
  } catch (const qfuse::Error &e) {
    EXPECT_NE(std::string(e.what()).find(context.describe()),
              std::string::npos)
        << e.what();
  }
}

} // namespace
