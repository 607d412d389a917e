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

} // namespace

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {
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
  appendAt_ += size;
}

void AtomicFile::writeAt(const void *data, size_t size, uint64_t offset,
                         std::string_view what) {
  if (fd_ < 0)
    fail(std::string(what), EBADF);
  if (const int error = writeAll(fd_, static_cast<const uint8_t *>(data),
                                 size, int64_t(offset)))
    fail(std::string(what), error);
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
