//===- AtomicFileTest.cpp - files written whole or not at all -------------===//
//
// AtomicFile and the safetensors writer on it: a finished write is renamed
// into place; a failed or abandoned one (an exception, a full disk made by a
// file-size limit or a small tmpfs) leaves nothing at the path that looks
// finished, no temporary behind, and an earlier file unchanged.
//
//===----------------------------------------------------------------------===//

#include "ChildProcess.h"
#include "TempFiles.h"

#include "qfuse/runtime/AtomicFile.h"
#include "qfuse/runtime/Error.h"
#include "qfuse/runtime/checkpoint/Safetensors.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/mount.h>
#include <sys/wait.h>
#include <thread>
#include <vector>

using namespace qfuse;
using namespace qfuse::runtime;
using qfuse::testing::ChildResult;
using qfuse::testing::limitFileSize;
using qfuse::testing::runInChild;
namespace fs = std::filesystem;

using qfuse::testing::makeTempDir;
using qfuse::testing::listDir;

namespace {

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

/// Tensors a (16 KB), b (64 KB), c (64 KB): a limit of 48 KB fails in b.
SafetensorsWriter threeTensors() {
  SafetensorsWriter writer;
  for (auto [name, kb] : {std::pair{"a", 16}, {"b", 64}, {"c", 64}}) {
    std::vector<uint8_t> bytes(size_t(kb) << 10, uint8_t(kb));
    writer.add(name, DType::U8, {int64_t(bytes.size())}, bytes.data(),
               bytes.size());
  }
  return writer;
}

void expectContains(const std::string &text, const std::string &part) {
  EXPECT_NE(text.find(part), std::string::npos)
      << "expected '" << part << "' in: " << text;
}

TEST(AtomicFile, WritesThenRenames) {
  const std::string dir = makeTempDir("qfuse-atomic"), path = dir + "/report.json";
  writeFileAtomically(path, "{}\n");
  EXPECT_EQ(readFile(path), "{}\n");
  EXPECT_EQ(listDir(dir), std::vector<std::string>{"report.json"});
  writeFileAtomically(path, "[1]\n"); // replaces it
  EXPECT_EQ(readFile(path), "[1]\n");
  EXPECT_EQ(listDir(dir), std::vector<std::string>{"report.json"});
}

TEST(AtomicFile, NothingUntilCommitted) {
  const std::string dir = makeTempDir("qfuse-atomic"), path = dir + "/model.safetensors";
  writeFileAtomically(path, "earlier");
  {
    AtomicFile file(path);
    file.write("half of a new fi");
    // A temporary beside it, whose name does not look finished.
    EXPECT_EQ(fs::path(file.temporaryPath()).parent_path(), fs::path(dir));
    EXPECT_NE(file.temporaryPath().find("model.safetensors.partial-"),
              std::string::npos);
    EXPECT_EQ(readFile(path), "earlier");
  } // abandoned (an exception unwinding would do the same)
  EXPECT_EQ(readFile(path), "earlier");
  EXPECT_EQ(listDir(dir), std::vector<std::string>{"model.safetensors"});
}

TEST(AtomicFile, UnwritableDirectoryNamesThePath) {
  try {
    writeFileAtomically("/nonexistent-qfuse-dir/out.json", "{}");
    FAIL() << "expected an error";
  } catch (const Error &e) {
    expectContains(e.what(), "cannot write '/nonexistent-qfuse-dir/out.json'");
    expectContains(e.what(), "No such file or directory");
  }
}

TEST(AtomicFile, ThreadsWritingOnePathLeaveOneWholeFile) {
  const std::string dir = makeTempDir("qfuse-atomic"), path = dir + "/db.json";
  std::vector<std::string> texts;
  for (int t = 0; t < 8; ++t)
    texts.push_back(std::string(size_t(20000 + t), char('a' + t)));
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] { writeFileAtomically(path, texts[size_t(t)]); });
  for (std::thread &t : threads)
    t.join();
  const std::string result = readFile(path);
  EXPECT_NE(std::find(texts.begin(), texts.end(), result), texts.end());
  EXPECT_EQ(listDir(dir), std::vector<std::string>{"db.json"});
}

// A killed writer's temporary would hold its disk space for good: the
// temporaries of a path whose process is gone are removed, and only those.
TEST(AtomicFile, RemovesTheTemporariesOfWritersNoLongerRunning) {
  const std::string dir = makeTempDir("qfuse-atomic"), path = dir + "/model.safetensors";
  const pid_t gone = ::fork();
  if (gone == 0)
    ::_exit(0);
  ::waitpid(gone, nullptr, 0);
  auto temporary = [&](const std::string &file, pid_t pid) {
    const std::string name = file + ".partial-" + std::to_string(pid) + "-7";
    std::ofstream(dir + "/" + name) << "left behind";
    return name;
  };
  temporary("model.safetensors", gone);
  const std::string parent = temporary("model.safetensors", ::getppid());
  const std::string other = temporary("config.json", gone);
  AtomicFile mine(path);
  AtomicFile::removeAbandoned(path);
  std::vector<std::string> kept = {
      other, parent, fs::path(mine.temporaryPath()).filename().string()};
  std::sort(kept.begin(), kept.end());
  EXPECT_EQ(listDir(dir), kept);
}

// A full disk, as a file-size limit makes it: the write fails part-way
// through tensor b, naming the file, the tensor and the reason.
TEST(AtomicFile, SafetensorsFailingPartWayKeepTheEarlierFile) {
  const std::string dir = makeTempDir("qfuse-atomic"), path = dir + "/model.safetensors";
  writeFileAtomically(path, "an earlier, complete file");
  SafetensorsWriter writer = threeTensors();
  ChildResult r = runInChild([&] {
    limitFileSize(48 << 10);
    writer.write(path);
  });
  ASSERT_EQ(r.status, ChildResult::Threw) << r.message;
  expectContains(r.message, "writing '" + path + "' failed");
  expectContains(r.message, "tensor 'b'");
  expectContains(r.message, "File too large");
  expectContains(r.message, "nothing was written to '" + path + "'");
  EXPECT_EQ(readFile(path), "an earlier, complete file");
  EXPECT_EQ(listDir(dir), std::vector<std::string>{"model.safetensors"});
  // Without the limit the same write succeeds.
  writer.write(path);
  EXPECT_EQ(SafetensorsFile::open(path).tensors().size(), 3u);
}

// A real full disk: a 64 KB tmpfs (needs the right to mount; skipped
// without it).
TEST(AtomicFile, SafetensorsOnAFullTmpfs) {
  const std::string dir = makeTempDir("qfuse-atomic");
  if (::mount("tmpfs", dir.c_str(), "tmpfs", 0, "size=64k") != 0)
    GTEST_SKIP() << "cannot mount a tmpfs here (" << systemErrorText(errno)
                 << "); the file-size limit test covers the same path";
  const std::string path = dir + "/model.safetensors";
  std::string message;
  try {
    writeFileAtomically(path, "an earlier, complete file");
    threeTensors().write(path);
  } catch (const Error &e) {
    message = e.what();
  }
  const std::string kept = readFile(path);
  const std::vector<std::string> left = listDir(dir);
  ::umount(dir.c_str());
  expectContains(message, "No space left on device");
  expectContains(message, "writing '" + path + "' failed (tensor '");
  EXPECT_EQ(kept, "an earlier, complete file");
  EXPECT_EQ(left, std::vector<std::string>{"model.safetensors"});
}

} // namespace
