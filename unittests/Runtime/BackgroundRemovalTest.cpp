//===- BackgroundRemovalTest.cpp - scratch directories removed later ------===//
//
// removeDirectoryInBackground: the name is gone when it returns, the files
// are gone soon after, and the removing process holds none of this
// process's standard streams (a pipe reading them sees its end when this
// process exits, not when the removal does). The last is checked with an
// `rm` of the test's own first on PATH that sleeps before it removes.
//
//===----------------------------------------------------------------------===//

#include "TempFiles.h"

#include "qfuse/runtime/BackgroundRemoval.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace std::chrono;

namespace {

std::string fillDirectory(const std::string &parent) {
  const std::string dir = parent + "/.qfuse-progress";
  fs::create_directories(dir + "/layer-0");
  for (int i = 0; i < 20; ++i)
    std::ofstream(dir + "/layer-0/part-" + std::to_string(i)) << "record " << i;
  return dir;
}

/// Whether nothing under `parent` is left after waiting up to `limit`.
bool emptiesWithin(const std::string &parent, milliseconds limit) {
  const auto deadline = steady_clock::now() + limit;
  while (steady_clock::now() < deadline) {
    if (fs::is_empty(parent))
      return true;
    std::this_thread::sleep_for(milliseconds(20));
  }
  return fs::is_empty(parent);
}

TEST(BackgroundRemoval, RenamesAtOnceAndRemovesSoonAfter) {
  const std::string parent = qfuse::testing::makeTempDir("bg-removal");
  const std::string dir = fillDirectory(parent);
  qfuse::removeDirectoryInBackground(dir);
  EXPECT_FALSE(fs::exists(dir));
  EXPECT_TRUE(emptiesWithin(parent, seconds(10)))
      << "left under " << parent << ": "
      << (fs::is_empty(parent) ? "" : fs::directory_iterator(parent)->path().string());
  qfuse::removeDirectoryInBackground(dir); // missing: not an error
  fs::remove_all(parent);
}

TEST(BackgroundRemoval, TheRemovalHoldsNoStandardStream) {
  const std::string parent = qfuse::testing::makeTempDir("bg-removal-pipe");
  const std::string dir = fillDirectory(parent);
  const std::string bin = parent + "/bin";
  fs::create_directories(bin);
  {
    std::ofstream rm(bin + "/rm");
    rm << "#!/bin/sh\nsleep 2\nexec /bin/rm \"$@\"\n";
  }
  fs::permissions(bin + "/rm", fs::perms::owner_all);
  int out[2];
  ASSERT_EQ(pipe(out), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The child's streams are the pipe, as under `qfuse-quantize | tee`.
    dup2(out[1], STDOUT_FILENO);
    dup2(out[1], STDERR_FILENO);
    close(out[0]);
    close(out[1]);
    setenv("PATH", (bin + ":/usr/bin:/bin").c_str(), 1);
    try {
      qfuse::removeDirectoryInBackground(dir);
    } catch (...) {
      _exit(2);
    }
    _exit(0);
  }
  close(out[1]);
  const auto start = steady_clock::now();
  char buffer[64];
  while (read(out[0], buffer, sizeof buffer) > 0) {
  }
  const double waited = duration<double>(steady_clock::now() - start).count();
  close(out[0]);
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_LT(waited, 1.0) << "the pipe stayed open until the removal ended";
  EXPECT_FALSE(fs::exists(dir));
  // The sleeping rm removes the renamed directory 2 s after the spawn,
  // leaving only bin/.
  auto entries = [&] {
    return std::distance(fs::directory_iterator(parent),
                         fs::directory_iterator());
  };
  const auto deadline = steady_clock::now() + seconds(15);
  while (steady_clock::now() < deadline && entries() > 1)
    std::this_thread::sleep_for(milliseconds(50));
  EXPECT_EQ(entries(), 1) << "the removal did not finish";
  fs::remove_all(parent);
}

} // namespace
