//===- ToolCommon.h - what the GPU tools record beside results --*- C++ -*-===//
//
// qfuse-bench and qfuse-run write JSON with the exact command and the date,
// so that every number under bench/results can be reproduced.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_RUNTIME_TOOLS_TOOLCOMMON_H
#define QFUSE_RUNTIME_TOOLS_TOOLCOMMON_H

#include <ctime>
#include <string>

namespace qfuse::tools {

/// argv as a shell command line, each argument quoted where needed.
inline std::string commandLine(int argc, char **argv) {
  std::string text;
  for (int i = 0; i < argc; ++i) {
    std::string arg = argv[i];
    const bool plain =
        !arg.empty() &&
        arg.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUV"
                              "WXYZ0123456789_-+=/.,:@%") == std::string::npos;
    if (!plain) {
      std::string quoted = "'";
      for (char c : arg)
        quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
      arg = quoted + "'";
    }
    text += (i ? " " : "") + arg;
  }
  return text;
}

/// The current time as ISO 8601 UTC ("2026-11-29T20:41:00Z").
inline std::string utcNow() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof(buffer), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buffer;
}

} // namespace qfuse::tools

#endif // QFUSE_RUNTIME_TOOLS_TOOLCOMMON_H
