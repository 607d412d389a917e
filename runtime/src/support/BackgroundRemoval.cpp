//===- BackgroundRemoval.cpp - scratch directories removed later ----------===//

#include "qfuse/runtime/BackgroundRemoval.h"

#include "qfuse/runtime/Error.h"

#include <atomic>
#include <filesystem>
#include <system_error>
#include <thread>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace qfuse {
namespace fs = std::filesystem;

std::string removalName(const std::string &dir) {
  static std::atomic<unsigned> counter{0};
  return dir + ".removing-" + std::to_string(getpid()) + "-" +
         std::to_string(counter++);
}

namespace {

void removeNow(const std::string &dir) {
  std::error_code ec;
  fs::remove_all(dir, ec);
  if (ec)
    throw Error("cannot remove '" + dir + "': " + ec.message());
}

} // namespace

void removeDirectoryInBackground(const std::string &dir) {
  std::error_code ec;
  if (!fs::exists(dir, ec))
    return;
  const std::string doomed = removalName(dir);
  fs::rename(dir, doomed, ec);
  if (ec)
    return removeNow(dir);
  std::string rm = "rm", flags = "-rf", end = "--", path = doomed;
  char *argv[] = {rm.data(), flags.data(), end.data(), path.data(), nullptr};
  // Its standard streams on /dev/null: inherited ones would keep a pipe
  // that reads this process's output (`qfuse-quantize ... | tee log`) open
  // until the removal ends.
  posix_spawn_file_actions_t streams;
  posix_spawn_file_actions_init(&streams);
  for (int fd : {STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO})
    posix_spawn_file_actions_addopen(&streams, fd, "/dev/null",
                                     fd == STDIN_FILENO ? O_RDONLY : O_WRONLY,
                                     0);
  pid_t pid = 0;
  const int spawned =
      posix_spawnp(&pid, "rm", &streams, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&streams);
  if (spawned != 0)
    return removeNow(doomed);
  // Reaped when it ends, so that a long-lived process (the C API, Python)
  // keeps no zombie; a process that exits first leaves it to init.
  std::thread([pid] {
    int status = 0;
    waitpid(pid, &status, 0);
  }).detach();
}

} // namespace qfuse
