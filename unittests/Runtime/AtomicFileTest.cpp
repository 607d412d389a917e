//===- AtomicFileTest.cpp - files written whole or not at all -------------===//
//
// AtomicFile and the safetensors writer on it: a finished write is renamed
// into place; a failed or abandoned one (an exception, a full disk made by a
// file-size limit or a small tmpfs) leaves nothing at the path that looks
// finished, no temporary behind, and an earlier file unchanged. The
// writeback started every step before commit() changes none of the bytes
// and none of the errors.
//
//===----------------------------------------------------------------------===//

#include "ChildProcess.h"
#include "TempFiles.h"

#include "qfuse/runtime/AtomicFile.h"
#include "qfuse/runtime/Error.h"
#include "qfuse/runtime/checkpoint/Safetensors.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <random>
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

/// Every step's writeback started before commit() (Linux): all the bytes
/// written but fewer than a step's.
void expectWritebackStarted(uint64_t started, uint64_t written,
                            uint64_t step) {
#ifdef __linux__
  EXPECT_GT(started, written - step);
  EXPECT_LE(started, written);
#else
  EXPECT_EQ(started, 0u);
  (void)written, (void)step;
#endif
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

// The writeback started every 4 KB while 1 MB is written, appended or at
// offsets from four threads in any order, in pieces smaller and larger
// than a step: the same bytes, nothing at the path before commit().
TEST(AtomicFile, WritebackStartedEveryStepKeepsTheBytes) {
  const std::string dir = makeTempDir("qfuse-atomic");
  constexpr uint64_t kStep = 4096;
  std::mt19937 rng(7);
  std::string bytes(size_t(1) << 20, '\0');
  for (char &c : bytes)
    c = char(rng());
  std::vector<std::pair<size_t, size_t>> pieces; // offset, size
  for (size_t at = 0; at < bytes.size(); at += pieces.back().second)
    pieces.push_back(
        {at, std::min<size_t>(1 + rng() % 20000, bytes.size() - at)});

  const std::string appended = dir + "/appended.bin";
  {
    AtomicFile file(appended, kStep);
    for (auto [at, size] : pieces)
      file.write(bytes.data() + at, size);
    expectWritebackStarted(file.writebackStarted(), bytes.size(), kStep);
    file.commit();
  }
  EXPECT_TRUE(readFile(appended) == bytes);

  const std::string scattered = dir + "/scattered.bin";
  {
    AtomicFile file(scattered, kStep);
    std::shuffle(pieces.begin(), pieces.end(), rng);
    std::atomic<size_t> next{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
      threads.emplace_back([&] {
        for (size_t i = next++; i < pieces.size(); i = next++)
          file.writeAt(bytes.data() + pieces[i].first, pieces[i].second,
                       pieces[i].first);
      });
    for (std::thread &t : threads)
      t.join();
    EXPECT_FALSE(fs::exists(scattered)) << "in place before commit()";
    expectWritebackStarted(file.writebackStarted(), bytes.size(), kStep);
    file.commit();
  }
  EXPECT_TRUE(readFile(scattered) == bytes);
  EXPECT_EQ(listDir(dir),
            (std::vector<std::string>{"appended.bin", "scattered.bin"}));
}

// A file-size limit part-way through a file whose writeback starts every
// 4 KB: the same error as without, and nothing left behind.
TEST(AtomicFile, WritebackStartedEveryStepFailsPartWayAsBefore) {
  const std::string dir = makeTempDir("qfuse-atomic"), path = dir + "/model.bin";
  writeFileAtomically(path, "an earlier, complete file");
  ChildResult r = runInChild([&] {
    limitFileSize(48 << 10);
    AtomicFile file(path, 4096);
    const std::string piece(16 << 10, 'x');
    for (int i = 0; i < 4; ++i)
      file.write(piece, "piece " + std::to_string(i));
    file.commit();
  });
  ASSERT_EQ(r.status, ChildResult::Threw) << r.message;
  expectContains(r.message, "writing '" + path + "' failed (piece 3)");
  expectContains(r.message, "File too large");
  expectContains(r.message, "nothing was written to '" + path + "'");
  EXPECT_EQ(readFile(path), "an earlier, complete file");
  EXPECT_EQ(listDir(dir), std::vector<std::string>{"model.bin"});
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
