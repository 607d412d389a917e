//===- AtomicFile.cpp - files written whole or not at all -----------------===//

#include "qfuse/runtime/AtomicFile.h"

#include "qfuse/runtime/Error.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

namespace qfuse {
namespace {

std::string directoryOf(const std::string &path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos)
    return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

/// Writes all of [data, data + size) at `offset` (append when offset < 0).
int writeAll(int fd, const uint8_t *data, uint64_t size, int64_t offset) {
  while (size > 0) {
    const size_t chunk = size_t(std::min<uint64_t>(size, uint64_t(1) << 30));
    const ssize_t n = offset < 0 ? ::write(fd, data, chunk)
                                 : ::pwrite(fd, data, chunk, off_t(offset));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return errno;
    if (n == 0)
      return EIO;
    data += n;
    size -= uint64_t(n);
    if (offset >= 0)
      offset += n;
  }
  return 0;
}

/// Starts the writeback of [offset, offset + size) without waiting for it
/// (sync_file_range SYNC_FILE_RANGE_WRITE): 0, or the errno.
int startWriteback(int fd, uint64_t offset, uint64_t size) {
#ifdef __linux__
  int result;
  do
    result = ::sync_file_range(fd, off64_t(offset), off64_t(size),
                               SYNC_FILE_RANGE_WRITE);
  while (result != 0 && errno == EINTR);
  return result == 0 ? 0 : errno;
#else
  (void)fd, (void)offset, (void)size;
  return ENOSYS;
#endif
}

/// The errors of a system, file system or file that cannot start the
/// writeback of a range (not errors of the file's data).
bool writebackUnsupported(int error) {
  return error == EINVAL || error == ENOSYS || error == ESPIPE ||
         error == EOPNOTSUPP;
}

/// `ranges` sorted, the adjacent ones joined.
std::vector<std::pair<uint64_t, uint64_t>>
joined(std::vector<std::pair<uint64_t, uint64_t>> ranges) {
  std::sort(ranges.begin(), ranges.end());
  std::vector<std::pair<uint64_t, uint64_t>> out;
  for (const auto &range : ranges)
    if (!out.empty() && range.first <= out.back().second)
      out.back().second = std::max(out.back().second, range.second);
    else
      out.push_back(range);
  return out;
}

} // namespace

AtomicFile::AtomicFile(std::string path, uint64_t writebackStep)
    : path_(std::move(path)), writebackStep_(writebackStep) {
  static std::atomic<uint64_t> counter{0};
  temporary_ = path_ + ".partial-" + std::to_string(::getpid()) + "-" +
               std::to_string(counter++);
  fd_ = ::open(temporary_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
               0644);
  if (fd_ < 0) {
    const int error = errno;
    throw Error("cannot write '" + path_ + "': cannot create a file in '" +
                directoryOf(path_) + "': " + systemErrorText(error));
  }
}

AtomicFile::~AtomicFile() {
  if (!committed_)
    discard();
}

void AtomicFile::discard() {
  if (fd_ >= 0)
    ::close(fd_);
  fd_ = -1;
  if (!committed_ && !temporary_.empty())
    ::unlink(temporary_.c_str());
}

void AtomicFile::fail(const std::string &what, int error) const {
  throw Error("writing '" + path_ + "' failed" +
              (what.empty() ? "" : " (" + what + ")") + ": " +
              systemErrorText(error) + "; nothing was written to '" + path_ +
              "' (an earlier file there is unchanged)");
}

void AtomicFile::write(const void *data, size_t size, std::string_view what) {
  if (fd_ < 0)
    fail(std::string(what), EBADF);
  if (const int error =
          writeAll(fd_, static_cast<const uint8_t *>(data), size, -1))
    fail(std::string(what), error);
  written(appendAt_, size);
  appendAt_ += size;
}

void AtomicFile::writeAt(const void *data, size_t size, uint64_t offset,
                         std::string_view what) {
  if (fd_ < 0)
    fail(std::string(what), EBADF);
  if (const int error = writeAll(fd_, static_cast<const uint8_t *>(data),
                                 size, int64_t(offset)))
    fail(std::string(what), error);
  written(offset, size);
}

void AtomicFile::written(uint64_t offset, uint64_t size) {
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  {
    std::lock_guard<std::mutex> lock(writebackMutex_);
    if (writebackStep_ == 0 || size == 0)
      return;
    if (!unstarted_.empty() && unstarted_.back().second == offset)
      unstarted_.back().second += size; // appends: one range
    else
      unstarted_.push_back({offset, offset + size});
    unstartedBytes_ += size;
    if (unstartedBytes_ < writebackStep_)
      return;
    ranges.swap(unstarted_);
    unstartedBytes_ = 0;
  }
  // The system calls outside the lock: the other writers go on meanwhile.
  for (const auto &[begin, end] : joined(std::move(ranges))) {
    const int error = startWriteback(fd_, begin, end - begin);
    std::lock_guard<std::mutex> lock(writebackMutex_);
    if (error == 0) {
      started_ += end - begin;
    } else if (writebackUnsupported(error)) {
      writebackStep_ = 0; // only a hint: the file is written as before
      return;
    } else {
      fail("writing back bytes " + std::to_string(begin) + ".." +
               std::to_string(end),
           error);
    }
  }
}

uint64_t AtomicFile::writebackStarted() const {
  std::lock_guard<std::mutex> lock(writebackMutex_);
  return started_;
}

void AtomicFile::reserve(uint64_t size, std::string_view what) {
  if (fd_ < 0)
    fail(std::string(what), EBADF);
  int result;
  do
    result = ::fallocate(fd_, 0, 0, off_t(size));
  while (result != 0 && errno == EINTR);
  if (result == 0)
    return;
  // Not every file system allocates ahead: the size alone, then.
  if ((errno == EOPNOTSUPP || errno == ENOSYS) &&
      ::ftruncate(fd_, off_t(size)) == 0)
    return;
  fail(std::string(what), errno);
}

void AtomicFile::commit() {
  if (fd_ < 0)
    fail("committing", EBADF);
  if (::fsync(fd_) != 0)
    fail("flushing to disk", errno);
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0)
    fail("closing", errno);
  if (::rename(temporary_.c_str(), path_.c_str()) != 0)
    fail("renaming '" + temporary_ + "' into place", errno);
  committed_ = true;
  // The rename itself on disk: sync the directory (not every file system
  // supports it; the file is in place either way).
  const int dir = ::open(directoryOf(path_).c_str(),
                         O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
}

void AtomicFile::removeAbandoned(const std::string &path) {
  const std::string dir = directoryOf(path);
  const std::string prefix =
      path.substr(path.rfind('/') + 1) + ".partial-"; // npos + 1 = 0
  DIR *listing = ::opendir(dir.c_str());
  if (!listing)
    return;
  while (const dirent *entry = ::readdir(listing)) {
    const std::string name = entry->d_name;
    if (name.compare(0, prefix.size(), prefix) != 0)
      continue;
    // "<pid>-<n>" after the prefix.
    const pid_t pid = pid_t(std::atoll(name.c_str() + prefix.size()));
    if (pid > 0 && pid != ::getpid() && ::kill(pid, 0) != 0 && errno == ESRCH)
      ::unlink((dir + "/" + name).c_str());
  }
  ::closedir(listing);
}

void writeFileAtomically(const std::string &path, std::string_view bytes) {
  AtomicFile file(path);
  file.write(bytes);
  file.commit();
}

} // namespace qfuse
