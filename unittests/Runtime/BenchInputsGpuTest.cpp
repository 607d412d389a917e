//===- BenchInputsGpuTest.cpp - qfuse-bench times on defined inputs -------===//
//
// bench::artifactPlan fills a plan's inputs (fillPlanInputs) before timing
// it: activations 1.0, integers (positions) 0. A kernel's time can depend on its inputs
// (attention reads positions[m] + 1 cache rows), and new device memory
// holds whatever an earlier allocation left, so without the fill the same
// kernels timed differently from one artifact to the next. On the act_order
// attention artifact (act-order-attention.mlir, `ninja
// qfuse-act-order-artifacts`): every input checked after the fill, over
// buffers poisoned first.
//
//===----------------------------------------------------------------------===//

#include "GpuFixture.h"

#include "qfuse/runtime/device/DeviceArtifact.h"
#include "qfuse/runtime/tooling/Bench.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>

using namespace qfuse::runtime;

namespace {

class BenchInputsGpu : public qfuse::testing::GpuFixture {};

TEST_F(BenchInputsGpu, PlanInputsAreOneAndPositionsZero) {
  const char *dir = std::getenv("QFUSE_ACT_ORDER_ARTIFACTS");
  const std::string path =
      std::string(dir ? dir : QFUSE_ACT_ORDER_ARTIFACTS) + "/attention.qfa";
  if (!std::filesystem::exists(path))
    GTEST_SKIP() << "qfuse-gpu-skip: no " << path
                 << " (ninja qfuse-act-order-artifacts)";
  Artifact artifact = loadArtifactForDevice(path, *context);
  Executor executor(artifact, *context);
  bench::bindPlaceholderWeights(executor, stream->get());
  const int64_t batch = 16;
  executor.allocate(batch);
  size_t filled = 0;
  for (const BufferSpec &spec : artifact.buffers)
    if (!spec.sharedByPlans()) {
      cuda::DeviceBuffer &buffer = executor.buffer(batch, spec.name);
      std::vector<uint8_t> poison(buffer.size(), 0x7f);
      buffer.upload(poison.data(), poison.size());
    }
  bench::fillPlanInputs(executor, batch, stream->get());
  for (const BufferSpec &spec : artifact.buffers) {
    if (spec.sharedByPlans() ||
        std::find(artifact.inputs.begin(), artifact.inputs.end(), spec.name) ==
            artifact.inputs.end())
      continue;
    cuda::DeviceBuffer &buffer = executor.buffer(batch, spec.name);
    std::vector<uint8_t> bytes(buffer.size());
    buffer.download(bytes.data(), bytes.size());
    for (size_t i = 0; i < bytes.size(); i += dtypeBits(spec.dtype) / 8) {
      if (spec.dtype == DType::F16) {
        uint16_t h;
        std::memcpy(&h, &bytes[i], 2);
        ASSERT_EQ(h, 0x3c00) << spec.name << " element " << i / 2;
      } else {
        ASSERT_EQ(spec.dtype, DType::I32) << spec.name;
        int32_t v;
        std::memcpy(&v, &bytes[i], 4);
        ASSERT_EQ(v, 0) << spec.name << " element " << i / 4;
      }
    }
    ++filled;
  }
  // Query, key, value and positions (the caches are state, zeroed apart).
  EXPECT_EQ(filled, 4u);
}

} // namespace
