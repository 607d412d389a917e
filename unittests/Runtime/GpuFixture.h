//===- GpuFixture.h - a test on a CUDA device, or skipped -------*- C++ -*-===//
//
// What the GPU tests share: a context on device 0 and a stream, made in
// SetUp, or a skip where no device is usable. The skip message starts with
// the marker ctest reads as "skipped" (SKIP_REGULAR_EXPRESSION).
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_UNITTESTS_RUNTIME_GPUFIXTURE_H
#define QFUSE_UNITTESTS_RUNTIME_GPUFIXTURE_H

#include "qfuse/runtime/device/Cuda.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>

namespace qfuse::testing {

class GpuFixture : public ::testing::Test {
protected:
  void SetUp() override {
    std::string why;
    if (runtime::cuda::deviceCount(&why) == 0)
      GTEST_SKIP() << "qfuse-gpu-skip: no usable CUDA device: " << why;
    context.emplace(0);
    stream.emplace();
  }

  /// Whether the device is qfuse-sim (docs/gpu-sim.md), which runs PTX on
  /// the CPU and loads no cubin.
  bool onSimulator() const {
    return context &&
           context->describe().find("qfuse-sim") != std::string::npos;
  }

  std::optional<runtime::cuda::Context> context;
  std::optional<runtime::cuda::Stream> stream;
};

} // namespace qfuse::testing

#endif // QFUSE_UNITTESTS_RUNTIME_GPUFIXTURE_H
