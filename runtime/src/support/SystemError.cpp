//===- SystemError.cpp - errno as text, from any thread -------------------===//

#include "qfuse/runtime/Error.h"

#include <cstring>

namespace qfuse {

std::string systemErrorText(int error) {
  char buffer[256];
  // GNU strerror_r returns the text (possibly not in `buffer`); POSIX
  // strerror_r fills `buffer`.
#if defined(_GNU_SOURCE) && !defined(__APPLE__)
  return ::strerror_r(error, buffer, sizeof(buffer));
#else
  if (::strerror_r(error, buffer, sizeof(buffer)) != 0)
    return "error " + std::to_string(error);
  return buffer;
#endif
}

} // namespace qfuse
