//===- GptqTestArtifacts.h - the GPTQ GPU tests' inputs ---------*- C++ -*-===//
//
// What the GPTQ solver's GPU tests share: where bench/make-gptq-artifacts.sh
// wrote the test artifacts, and a module's weights as the device holds them
// with the same values in f32.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_UNITTESTS_RUNTIME_GPTQTESTARTIFACTS_H
#define QFUSE_UNITTESTS_RUNTIME_GPTQTESTARTIFACTS_H

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

namespace qfuse::testing {

/// QFUSE_GPTQ_ARTIFACTS, else artifacts/gptq/ of the source tree, with a
/// trailing slash.
inline std::string gptqArtifactDir() {
  if (const char *dir = std::getenv("QFUSE_GPTQ_ARTIFACTS"))
    return std::string(dir) + "/";
  const std::string file = __FILE__;
  const std::string suffix = "unittests/Runtime/GptqTestArtifacts.h";
  return file.substr(0, file.size() - suffix.size()) + "artifacts/gptq/";
}

/// One module's [n, K] weight: its f16 (or bf16) bits and the same values.
struct GptqTestModule {
  std::string name;
  int64_t n;
  std::vector<uint16_t> bits;
  std::vector<float> f32;
};

} // namespace qfuse::testing

#endif // QFUSE_UNITTESTS_RUNTIME_GPTQTESTARTIFACTS_H
