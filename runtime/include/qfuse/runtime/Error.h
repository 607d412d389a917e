//===- Error.h - The runtime's exception type -------------------*- C++ -*-===//
//
// Every failure the runtime reports (a malformed safetensors file, an invalid
// artifact, a failed CUDA call) is a qfuse::Error whose message says what was
// wrong, where (file, tensor, JSON field, call) and what was expected.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_RUNTIME_ERROR_H
#define QFUSE_RUNTIME_ERROR_H

#include <stdexcept>
#include <string>

namespace qfuse {

/// The exception every runtime component throws.
class Error : public std::runtime_error {
public:
  explicit Error(const std::string &message) : std::runtime_error(message) {}
};

} // namespace qfuse

#endif // QFUSE_RUNTIME_ERROR_H
