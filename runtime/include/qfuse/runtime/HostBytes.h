//===- HostBytes.h - Host bytes whose storage may be borrowed ---*- C++ -*-===//
//
// A byte array in host memory that is either its own (allocated without
// zero-filling: it is about to be overwritten) or borrowed from an owner
// such as a pool of page-locked download buffers, which gets the storage
// back when the last copy of the HostBytes goes. Copies share the bytes.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_RUNTIME_HOSTBYTES_H
#define QFUSE_RUNTIME_HOSTBYTES_H

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>

namespace qfuse {

class HostBytes {
public:
  HostBytes() = default;
  /// `size` bytes of its own, uninitialized.
  static HostBytes allocate(size_t size) {
    std::shared_ptr<uint8_t[]> storage(new uint8_t[size]);
    uint8_t *data = storage.get();
    return HostBytes(data, size, std::move(storage));
  }
  /// A copy of the `size` bytes at `data`.
  static HostBytes copyOf(const uint8_t *data, size_t size) {
    HostBytes bytes = allocate(size);
    if (size)
      std::memcpy(bytes.data(), data, size);
    return bytes;
  }
  /// `size` bytes at `data`, kept alive by `owner` (its deleter returns
  /// them to wherever they came from).
  HostBytes(uint8_t *data, size_t size, std::shared_ptr<const void> owner)
      : data_(data), size_(size), owner_(std::move(owner)) {}

  uint8_t *data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  uint8_t operator[](size_t i) const { return data_[i]; }

private:
  uint8_t *data_ = nullptr;
  size_t size_ = 0;
  std::shared_ptr<const void> owner_;
};

} // namespace qfuse

#endif // QFUSE_RUNTIME_HOSTBYTES_H
