//===- TinyLlamaArtifact.h - the tiny Llama the GPU tests run ---*- C++ -*-===//
//
// Where the GPU tests that run a whole (tiny) model find its fp16 artifact:
// QFUSE_CALIBRATION_QFA, or artifacts/models/tiny-llama-fp16.qfa in the
// repository (what `make test` compiles). A test skips when it is missing.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_UNITTESTS_RUNTIME_TINYLLAMAARTIFACT_H
#define QFUSE_UNITTESTS_RUNTIME_TINYLLAMAARTIFACT_H

#include <cstdlib>
#include <string>

namespace qfuse::testing {

inline std::string tinyLlamaFp16ArtifactPath() {
  if (const char *path = std::getenv("QFUSE_CALIBRATION_QFA"))
    return path;
  // The repository root, from this header's path.
  const std::string file = __FILE__;
  const std::string suffix = "unittests/Runtime/TinyLlamaArtifact.h";
  return file.substr(0, file.size() - suffix.size()) +
         "artifacts/models/tiny-llama-fp16.qfa";
}

} // namespace qfuse::testing

#endif // QFUSE_UNITTESTS_RUNTIME_TINYLLAMAARTIFACT_H
