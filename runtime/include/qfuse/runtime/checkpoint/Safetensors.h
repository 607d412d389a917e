//===- Safetensors.h - Strict safetensors reader and a writer ---*- C++ -*-===//
//
// A safetensors file is an 8-byte little-endian header length N, N bytes of
// UTF-8 JSON mapping tensor names to {"dtype", "shape", "data_offsets"}, then
// the data buffer those offsets index:
//
//   +--------+----------------------------+--------------------------------+
//   | u64 N  | {"w":{"dtype":"F16",...}}  | data: [begin, end) per tensor  |
//   +--------+----------------------------+--------------------------------+
//   0        8                            8+N                        file end
//
// The reader maps the file and validates all of it before handing out a
// byte: the header length against a 100 MB cap and the file size, the JSON
// (no duplicate keys at any level), every entry's dtype, shape and offsets,
// and that the entries tile the data buffer exactly (no overlap, no hole, no
// truncation, no trailing bytes), as the reference implementation requires.
// Every failure is a qfuse::Error naming the file and, where there is one,
// the tensor.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_RUNTIME_CHECKPOINT_SAFETENSORS_H
#define QFUSE_RUNTIME_CHECKPOINT_SAFETENSORS_H

#include "qfuse/runtime/checkpoint/DType.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace qfuse {
class AtomicFile;
}

namespace qfuse::runtime {

/// One entry of a safetensors header. Offsets are relative to the data buffer.
struct TensorInfo {
  std::string name;
  DType dtype = DType::U8;
  std::vector<int64_t> shape;
  uint64_t begin = 0;
  uint64_t end = 0;

  uint64_t numElements() const;
  uint64_t numBytes() const { return end - begin; }
};

/// A tensor's header entry and its bytes inside the mapped file.
struct TensorView {
  const TensorInfo *info = nullptr;
  const uint8_t *data = nullptr;
  size_t size = 0;
};

/// A validated, read-only safetensors file (memory-mapped when opened from a
/// path, owned bytes when parsed from memory). Move-only.
class SafetensorsFile {
public:
  /// Readers refuse headers longer than this (the reference implementation's
  /// limit), so a corrupt length cannot make us allocate gigabytes.
  static constexpr uint64_t kMaxHeaderBytes = 100'000'000;

  /// Maps and validates `path`; throws qfuse::Error on any problem.
  static SafetensorsFile open(const std::string &path);
  /// Validates `bytes` as a safetensors file; `name` stands for it in errors.
  static SafetensorsFile fromBytes(std::vector<uint8_t> bytes,
                                   std::string name);

  SafetensorsFile(SafetensorsFile &&other) noexcept;
  SafetensorsFile &operator=(SafetensorsFile &&other) noexcept;
  SafetensorsFile(const SafetensorsFile &) = delete;
  SafetensorsFile &operator=(const SafetensorsFile &) = delete;
  ~SafetensorsFile();

  /// The path (or the name given to fromBytes).
  const std::string &path() const { return path_; }
  /// All entries, in data-offset order.
  const std::vector<TensorInfo> &tensors() const { return tensors_; }
  /// "__metadata__" (string -> string), empty when absent.
  const std::map<std::string, std::string> &metadata() const {
    return metadata_;
  }

  bool contains(std::string_view name) const;
  /// The entry named `name`, or nullptr.
  const TensorInfo *find(std::string_view name) const;
  /// The entry named `name`; throws naming the file and the tensor if absent.
  const TensorInfo &info(std::string_view name) const;
  /// The bytes of the tensor named `name` (throws if absent).
  TensorView view(std::string_view name) const;
  TensorView view(const TensorInfo &info) const;

private:
  SafetensorsFile() = default;
  void parse();
  void release() noexcept;

  std::string path_;
  // The whole file: either mmap-ed (mapped_ = true) or owned_.
  const uint8_t *bytes_ = nullptr;
  size_t size_ = 0;
  bool mapped_ = false;
  std::vector<uint8_t> owned_;
  // Start of the data buffer inside bytes_.
  size_t dataStart_ = 0;

  std::vector<TensorInfo> tensors_;
  std::unordered_map<std::string, size_t> byName_;
  std::map<std::string, std::string> metadata_;
};

/// The start of a safetensors file holding `tensors` in this order: the
/// 8-byte header length and the JSON header, space-padded so that the data
/// buffer starts 8-byte aligned. Sets each tensor's `begin` and `end` (its
/// bytes follow the previous tensor's). The one definition of the layout
/// that SafetensorsWriter and StreamingSafetensorsWriter write; throws
/// naming a tensor whose name is reserved or repeated, or whose shape x
/// dtype is not a whole number of bytes.
std::string safetensorsHead(std::vector<TensorInfo> &tensors,
                            const std::map<std::string, std::string> &metadata);

/// Builds a safetensors file in memory (tests, converters, the Python
/// frontend's small models). Tensors are laid out in the order they are
/// added; the header is space-padded so the data buffer is 8-byte aligned.
class SafetensorsWriter {
public:
  /// Copies `size` bytes of `data`; throws if the name is taken or the size
  /// does not match `shape` x `dtype`.
  void add(const std::string &name, DType dtype, std::vector<int64_t> shape,
           const void *data, size_t size);
  /// The same, taking `bytes` without a copy.
  void add(const std::string &name, DType dtype, std::vector<int64_t> shape,
           std::vector<uint8_t> bytes);
  /// The same, without a copy of bytes another owner holds: `data` stays
  /// `owner`'s, which the writer keeps alive.
  void add(const std::string &name, DType dtype, std::vector<int64_t> shape,
           std::shared_ptr<const void> owner, const void *data, size_t size);
  void setMetadata(const std::string &key, const std::string &value);

  /// The complete file contents.
  std::vector<uint8_t> serialize() const;
  /// Writes serialize()'s bytes to `path` (tensors by parallel writes at
  /// their offsets) through an AtomicFile: a failure (naming the path and
  /// the tensor) leaves nothing at `path` and an earlier file unchanged.
  void write(const std::string &path) const;
  /// The same into `file`, without committing it (a writer of several files
  /// renames them together once all are written).
  void write(AtomicFile &file) const;

private:
  /// Throws unless a tensor `name` of `size` bytes may be added.
  void checkNew(const std::string &name, DType dtype,
                const std::vector<int64_t> &shape, size_t size) const;
  /// The file's head (safetensorsHead); `tensors` gets every entry's place.
  std::string head(std::vector<TensorInfo> &tensors) const;
  struct Entry {
    std::string name;
    DType dtype;
    std::vector<int64_t> shape;
    std::vector<uint8_t> bytes; // the tensor's, unless `owner` holds them
    std::shared_ptr<const void> owner;
    const uint8_t *shared = nullptr;
    size_t sharedSize = 0;
    const uint8_t *data() const { return owner ? shared : bytes.data(); }
    size_t size() const { return owner ? sharedSize : bytes.size(); }
  };
  std::vector<Entry> entries_;
  std::map<std::string, std::string> metadata_;
};

} // namespace qfuse::runtime

#endif // QFUSE_RUNTIME_CHECKPOINT_SAFETENSORS_H
