//===- AtomicFile.h - files written whole or not at all ---------*- C++ -*-===//
//
// Every file the runtime, the text library and the tools write (quantized
// checkpoints, synthetic models and tokenizers, JSON reports) goes through
// here: it is written under a temporary name in the same directory,
// "<path>.partial-<pid>-<n>", and renamed over <path> only once complete
// (after fsync). A write that fails part-way, or a process killed part-way,
// leaves nothing at <path> that looks finished, and an earlier file there is
// unchanged. The temporary is removed on failure (a killed process may leave
// one behind; its name says what it is).
//
//   AtomicFile file("out/model.safetensors");
//   file.writeAt(bytes, size, offset, "tensor 'lm_head.weight'");
//   file.commit();                       // renamed into place
//
//   writeFileAtomically("report.json", text);
//
// Errors are qfuse::Error naming the file, what was being written and the
// system's reason, and saying that the file was not written. (The tests make
// them with a file-size limit, RLIMIT_FSIZE, and a full tmpfs.)
//
// A large file goes to disk while it is written: after every writeback
// step (64 MiB) of writes, the ranges written since are handed to the
// kernel's writeback at once (Linux: sync_file_range WRITE, which does not
// wait), where the kernel would start only once far more is dirty or old,
// so that commit()'s fsync has little left. Only a hint: where the file
// system does not support it, the file is written as before.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_RUNTIME_ATOMICFILE_H
#define QFUSE_RUNTIME_ATOMICFILE_H

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace qfuse {

class AtomicFile {
public:
  /// Bytes written between two starts of their writeback.
  static constexpr uint64_t kWritebackStep = uint64_t(64) << 20;

  /// Creates the temporary beside `path` (mode 0644 less the umask); throws
  /// naming `path` when its directory is not writable. `writebackStep`:
  /// the bytes written between two starts of their writeback (0: none
  /// before commit()).
  explicit AtomicFile(std::string path,
                      uint64_t writebackStep = kWritebackStep);
  /// Removes the temporary unless commit() succeeded.
  ~AtomicFile();
  AtomicFile(const AtomicFile &) = delete;
  AtomicFile &operator=(const AtomicFile &) = delete;

  const std::string &path() const { return path_; }
  const std::string &temporaryPath() const { return temporary_; }

  /// Appends `size` bytes. `what` names the part in errors ("config").
  void write(const void *data, size_t size, std::string_view what = {});
  void write(std::string_view text, std::string_view what = {}) {
    write(text.data(), text.size(), what);
  }
  /// Writes `size` bytes at `offset` (pwrite; safe from several threads at
  /// disjoint ranges; the file grows to cover them).
  void writeAt(const void *data, size_t size, uint64_t offset,
               std::string_view what = {});

  /// Allocates the file's first `size` bytes on disk now (the file grows to
  /// them), so that a disk too small fails here, not part-way through a long
  /// write. Where the file system cannot allocate ahead, only sets the size.
  void reserve(uint64_t size, std::string_view what = {});

  /// fsync, close and rename over path(); the directory is synced too.
  void commit();
  /// The bytes whose writeback was started before commit(): all those
  /// written but fewer than a step's, or 0 where the file system does not
  /// support it.
  uint64_t writebackStarted() const;
  /// Removes the temporary now (what the destructor does unless committed).
  void discard();

  /// Removes the temporaries of `path` whose writers are no longer running
  /// (a killed process's: their pid names no process), which would
  /// otherwise hold their disk space for good.
  static void removeAbandoned(const std::string &path);

private:
  [[noreturn]] void fail(const std::string &what, int error) const;
  /// Notes [offset, offset + size) as written; once a writeback step has
  /// accumulated, starts the writeback of the ranges noted (thread-safe).
  void written(uint64_t offset, uint64_t size);

  std::string path_;
  std::string temporary_;
  int fd_ = -1;
  uint64_t appendAt_ = 0;
  bool committed_ = false;
  // written(): the ranges [begin, end) written since the last start of
  // their writeback, and their bytes.
  mutable std::mutex writebackMutex_;
  uint64_t writebackStep_;
  std::vector<std::pair<uint64_t, uint64_t>> unstarted_;
  uint64_t unstartedBytes_ = 0, started_ = 0;
};

/// Writes `bytes` to `path` through an AtomicFile.
void writeFileAtomically(const std::string &path, std::string_view bytes);

} // namespace qfuse

#endif // QFUSE_RUNTIME_ATOMICFILE_H
