//===- Error.h - The runtime's exception type -------------------*- C++ -*-===//
//
// Every failure the runtime reports (a malformed safetensors file, an invalid
// artifact, a failed CUDA call) is a qfuse::Error whose message says what was
// wrong, where (file, tensor, JSON field, call) and what was expected.
//
// The host running out of memory is std::bad_alloc, which says nothing of
// where: the steps that allocate much (a module's conversion, a layer of
// GPTQ) run inside onOutOfHostMemory("packing 'model.layers.3.mlp.up_proj'",
// ...), which turns it into an Error naming the step. Tools and the C API
// print any exception through errorText.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_RUNTIME_ERROR_H
#define QFUSE_RUNTIME_ERROR_H

#include <new>
#include <stdexcept>
#include <string>
#include <utility>

namespace qfuse {

/// The exception every runtime component throws.
class Error : public std::runtime_error {
public:
  explicit Error(const std::string &message) : std::runtime_error(message) {}
};

/// Runs `body`; a std::bad_alloc from it becomes an Error "out of host
/// memory while <what>".
template <typename Body>
decltype(auto) onOutOfHostMemory(const std::string &what, Body &&body) {
  try {
    return std::forward<Body>(body)();
  } catch (const std::bad_alloc &) {
    throw Error("out of host memory while " + what);
  }
}

/// The system's text for errno value `error` (strerror, safe from several
/// threads at once).
std::string systemErrorText(int error);

/// The message for an exception that ends a tool or a C API call: an
/// Error's text, and for the standard library's own what it means.
inline std::string errorText(const std::exception &e) {
  if (dynamic_cast<const std::bad_alloc *>(&e))
    return std::string("out of host memory (") + e.what() + ")";
  return e.what();
}

} // namespace qfuse

#endif // QFUSE_RUNTIME_ERROR_H
