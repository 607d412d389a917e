//===- QuantizeArtifactFixture.h - the quantize test artifact ---*- C++ -*-===//
//
// The GPU tests of the generated quantize and gather kernels load one
// artifact, compiled from
// test/Tools/qfuse-cpu-check/Inputs/quantize-formats.mlir by
// bench/quantize-at-load/make-artifacts.sh: QFUSE_QUANTIZE_QFA, or the
// default path the build defines. A test skips when it is missing.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_UNITTESTS_RUNTIME_QUANTIZEARTIFACTFIXTURE_H
#define QFUSE_UNITTESTS_RUNTIME_QUANTIZEARTIFACTFIXTURE_H

#include "GpuFixture.h"

#include "qfuse/runtime/device/DeviceArtifact.h"

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

namespace qfuse::testing {

/// QFUSE_QUANTIZE_QFA, or the default path the build defines.
inline std::string quantizeTestArtifactPath() {
  if (const char *path = std::getenv("QFUSE_QUANTIZE_QFA"))
    return path;
  return QFUSE_QUANTIZE_QFA_DEFAULT;
}

class QuantizeArtifactFixture : public GpuFixture {
protected:
  static std::string artifactPath() { return quantizeTestArtifactPath(); }

  void SetUp() override {
    GpuFixture::SetUp();
    if (IsSkipped())
      return;
    if (!std::filesystem::exists(artifactPath()))
      GTEST_SKIP() << "qfuse-gpu-skip: no quantize artifact at "
                   << artifactPath()
                   << " (bench/quantize-at-load/make-artifacts.sh compiles "
                      "it; QFUSE_QUANTIZE_QFA overrides the path)";
    artifact.emplace(runtime::loadArtifactForDevice(artifactPath(), *context));
  }

  std::optional<runtime::Artifact> artifact;
};

} // namespace qfuse::testing

#endif // QFUSE_UNITTESTS_RUNTIME_QUANTIZEARTIFACTFIXTURE_H
