//===- StreamingSafetensorsWriter.h - tensors written as they come -*- C++ -*-===//
//
// A safetensors file whose tensors (names, dtypes, shapes, in file order)
// are all known before the first one's bytes are: the header is written and
// the whole file reserved at once, each tensor's bytes go to their offset
// when they are ready, from any thread and in any order, and commit()
// renames the file into place once every tensor is there.
//
//   StreamingSafetensorsWriter out(path, {{"a", DType::F16, {2, 3}},
//                                         {"b", DType::I32, {4}}},
//                                  {{"format", "pt"}});
//   out.write("b", ints, 16);  // any thread, any order
//   out.write("a", halves, 12);
//   out.commit();              // throws naming every tensor not written
//
// The file holds SafetensorsWriter::serialize()'s bytes for the same
// tensors in the same order: both lay it out with safetensorsHead. It is an
// AtomicFile: nothing is at the path before commit(), a writer destroyed
// uncommitted (an error, an exception elsewhere) removes its temporary, and
// the tensors written go to disk as they come (the writeback started every
// 64 MiB), so that commit()'s fsync has little left.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_RUNTIME_CHECKPOINT_STREAMINGSAFETENSORSWRITER_H
#define QFUSE_RUNTIME_CHECKPOINT_STREAMINGSAFETENSORSWRITER_H

#include "qfuse/runtime/AtomicFile.h"
#include "qfuse/runtime/checkpoint/Safetensors.h"

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace qfuse::runtime {

class StreamingSafetensorsWriter {
public:
  /// The file of `tensors` (their offsets are set here) and `metadata` at
  /// `path`: created beside it under a temporary name, its size reserved
  /// (AtomicFile::reserve) and its header written. Throws naming a tensor
  /// the file cannot hold (safetensorsHead), or the path. `writebackStep`:
  /// AtomicFile's.
  StreamingSafetensorsWriter(
      std::string path, std::vector<TensorInfo> tensors,
      const std::map<std::string, std::string> &metadata,
      uint64_t writebackStep = AtomicFile::kWritebackStep);

  const std::string &path() const { return file_.path(); }
  /// Every tensor, in file order; offsets relative to the data buffer.
  const std::vector<TensorInfo> &tensors() const { return tensors_; }
  /// Bytes of the whole file.
  uint64_t size() const;
  /// The bytes whose writeback was started before commit()
  /// (AtomicFile::writebackStarted).
  uint64_t writebackStarted() const { return file_.writebackStarted(); }

  /// Writes tensor `name`'s `size` bytes at its offset (thread-safe).
  /// Throws naming the tensor when the file has no such tensor, it was
  /// written already or `size` is not its shape x dtype's; a failed write
  /// throws naming the file, the tensor and the reason, and the tensor
  /// counts as not written.
  void write(const std::string &name, const void *data, size_t size);

  /// The tensors not written yet, in file order.
  std::vector<std::string> unwritten() const;
  /// Throws naming every tensor not written yet.
  void checkComplete() const;
  /// checkComplete(), then fsync and rename into place.
  void commit();

private:
  enum class State : uint8_t { Unwritten, Writing, Written };

  std::vector<TensorInfo> tensors_;
  const std::string head_; // laid out before the file is created
  AtomicFile file_;
  std::unordered_map<std::string, size_t> byName_;
  mutable std::mutex mutex_;
  std::vector<State> states_;
};

} // namespace qfuse::runtime

#endif // QFUSE_RUNTIME_CHECKPOINT_STREAMINGSAFETENSORSWRITER_H
