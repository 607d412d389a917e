//===- ChildProcess.h - run a test body in a forked child -------*- C++ -*-===//
//
// Fault tests limit the process (RLIMIT_FSIZE for a full disk, RLIMIT_AS for
// the host out of memory) in a forked child, so that the test process keeps
// its own limits:
//
//   ChildResult r = runInChild([&] {
//     limitFileSize(64 << 10);
//     writer.write(path);                 // throws: the disk is "full"
//   });
//   EXPECT_EQ(r.status, ChildResult::Threw);
//   EXPECT_NE(r.message.find(path), std::string::npos);
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_UNITTESTS_RUNTIME_CHILDPROCESS_H
#define QFUSE_UNITTESTS_RUNTIME_CHILDPROCESS_H

#include "qfuse/runtime/Error.h"

#include <csignal>
#include <cstdint>
#include <fstream>
#include <functional>
#include <string>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace qfuse::testing {

struct ChildResult {
  enum Status { Returned, Threw, Died } status = Died;
  /// errorText of what the body threw.
  std::string message;
};

/// Runs `body` in a forked child and reports how it ended.
inline ChildResult runInChild(const std::function<void()> &body) {
  int fds[2];
  if (::pipe(fds) != 0)
    return {ChildResult::Died, "pipe failed"};
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    int code = 0;
    std::string message;
    try {
      body();
    } catch (const std::exception &e) {
      message = errorText(e);
      code = 3;
    }
    if (::write(fds[1], message.data(), message.size()) < 0)
      code = 4;
    ::_exit(code);
  }
  ::close(fds[1]);
  ChildResult result;
  char buffer[4096];
  for (ssize_t n; (n = ::read(fds[0], buffer, sizeof(buffer))) > 0;)
    result.message.append(buffer, size_t(n));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
    result.status = ChildResult::Returned;
  else if (WIFEXITED(status) && WEXITSTATUS(status) == 3)
    result.status = ChildResult::Threw;
  else
    result.message += " (the child died: status " + std::to_string(status) + ")";
  return result;
}

/// A full disk after `bytes` bytes of any file: writes past it fail with
/// EFBIG ("File too large") instead of raising SIGXFSZ.
inline void limitFileSize(uint64_t bytes) {
  std::signal(SIGXFSZ, SIG_IGN);
  const rlimit limit{rlim_t(bytes), rlim_t(bytes)};
  ::setrlimit(RLIMIT_FSIZE, &limit);
}

/// The host out of memory `bytes` past what the process maps now.
inline void limitAddressSpace(uint64_t bytes) {
  std::ifstream statm("/proc/self/statm");
  uint64_t pages = 0;
  statm >> pages;
  const uint64_t now = pages * uint64_t(::sysconf(_SC_PAGESIZE));
  const rlimit limit{rlim_t(now + bytes), rlim_t(now + bytes)};
  ::setrlimit(RLIMIT_AS, &limit);
}

} // namespace qfuse::testing

#endif // QFUSE_UNITTESTS_RUNTIME_CHILDPROCESS_H
