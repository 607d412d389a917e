//===- Safetensors.cpp - Strict safetensors reader and a writer -----------===//

#include "qfuse/runtime/checkpoint/Safetensors.h"

#include "qfuse/runtime/AtomicFile.h"
#include "qfuse/runtime/Error.h"

#include "ParallelJobs.h"
#include "StrictJson.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace qfuse::runtime {
namespace {

using nlohmann::json;

constexpr std::string_view kMetadataKey = "__metadata__";

[[noreturn]] void fail(const std::string &path, const std::string &what) {
  throw Error("safetensors '" + path + "': " + what);
}

[[noreturn]] void failTensor(const std::string &path, const std::string &name,
                             const std::string &what) {
  fail(path, "tensor '" + name + "': " + what);
}

uint64_t readLittleEndian64(const uint8_t *p) {
  uint64_t value = 0;
  for (int i = 7; i >= 0; --i)
    value = (value << 8) | p[i];
  return value;
}

std::string rangeText(uint64_t begin, uint64_t end) {
  return "[" + std::to_string(begin) + ", " + std::to_string(end) + ")";
}

/// Parses the header JSON, rejecting duplicate keys in any object.
json parseHeaderJson(const std::string &path, std::string_view text) {
  json header =
      detail::parseStrictJson(text, "safetensors '" + path + "': header");
  if (!header.is_object())
    fail(path, "header must be a JSON object, found " +
                   std::string(header.type_name()));
  return header;
}

/// A JSON integer that is >= 0 (and not a float), as uint64_t.
bool asUnsigned(const json &value, uint64_t &out) {
  if (value.is_number_unsigned()) {
    out = value.get<uint64_t>();
    return true;
  }
  if (value.is_number_integer() && value.get<int64_t>() >= 0) {
    out = static_cast<uint64_t>(value.get<int64_t>());
    return true;
  }
  return false;
}

TensorInfo parseEntry(const std::string &path, const std::string &name,
                      const json &entry) {
  if (!entry.is_object())
    failTensor(path, name,
               "entry must be an object with dtype, shape and data_offsets");
  for (const auto &item : entry.items())
    if (item.key() != "dtype" && item.key() != "shape" &&
        item.key() != "data_offsets")
      failTensor(path, name,
                 "unexpected key '" + item.key() +
                     "' (expected dtype, shape, data_offsets)");

  TensorInfo info;
  info.name = name;

  auto dtypeIt = entry.find("dtype");
  if (dtypeIt == entry.end() || !dtypeIt->is_string())
    failTensor(path, name, "missing string 'dtype'");
  const std::string dtypeText = dtypeIt->get<std::string>();
  std::optional<DType> dtype = parseSafetensorsDType(dtypeText);
  if (!dtype)
    failTensor(path, name,
               "unknown dtype '" + dtypeText +
                   "' (expected one of BOOL U8 I8 I16 U16 F16 BF16 I32 U32 "
                   "F32 F64 I64 U64 F8_E4M3 F8_E5M2 F8_E8M0 F4)");
  info.dtype = *dtype;

  auto shapeIt = entry.find("shape");
  if (shapeIt == entry.end() || !shapeIt->is_array())
    failTensor(path, name, "missing array 'shape'");
  uint64_t numElements = 1;
  for (const json &dim : *shapeIt) {
    uint64_t extent;
    if (!asUnsigned(dim, extent) ||
        extent > uint64_t(std::numeric_limits<int64_t>::max()))
      failTensor(path, name,
                 "shape entry " + dim.dump() +
                     " is not a non-negative integer");
    if (__builtin_mul_overflow(numElements, extent, &numElements))
      failTensor(path, name, "shape " + shapeIt->dump() + " overflows");
    info.shape.push_back(static_cast<int64_t>(extent));
  }

  auto offsetsIt = entry.find("data_offsets");
  if (offsetsIt == entry.end() || !offsetsIt->is_array() ||
      offsetsIt->size() != 2)
    failTensor(path, name, "missing 'data_offsets' [begin, end]");
  if (!asUnsigned((*offsetsIt)[0], info.begin) ||
      !asUnsigned((*offsetsIt)[1], info.end))
    failTensor(path, name,
               "data_offsets " + offsetsIt->dump() +
                   " out of range: expected two integers in [0, 2^64)");
  if (info.begin > info.end)
    failTensor(path, name,
               "data_offsets " + offsetsIt->dump() +
                   " out of range: begin is past end");

  std::optional<uint64_t> expected = dtypeStorageBytes(info.dtype, numElements);
  if (!expected)
    failTensor(path, name,
               "shape " + shapeIt->dump() + " of " + dtypeText +
                   " is not a whole number of bytes");
  if (*expected != info.numBytes())
    failTensor(path, name,
               "size mismatch: shape " + shapeIt->dump() + " x " + dtypeText +
                   " is " + std::to_string(*expected) +
                   " bytes but data_offsets " + offsetsIt->dump() + " span " +
                   std::to_string(info.numBytes()));
  return info;
}

/// The bytes of a tensor `name` of `shape` x `dtype`; throws naming it
/// when the name is reserved, the shape invalid or the bytes not whole.
uint64_t storageBytes(const std::string &name, DType dtype,
                      const std::vector<int64_t> &shape) {
  if (name == kMetadataKey)
    throw Error("safetensors writer: '" + name + "' is a reserved name");
  uint64_t numElements = 1;
  for (int64_t extent : shape) {
    if (extent < 0 ||
        __builtin_mul_overflow(numElements, uint64_t(extent), &numElements))
      throw Error("safetensors writer: tensor '" + name +
                  "' has an invalid shape");
  }
  std::optional<uint64_t> bytes = dtypeStorageBytes(dtype, numElements);
  if (!bytes)
    throw Error("safetensors writer: tensor '" + name + "' of " +
                std::string(safetensorsName(dtype)) +
                " is not a whole number of bytes");
  return *bytes;
}

} // namespace

uint64_t TensorInfo::numElements() const {
  uint64_t count = 1;
  for (int64_t extent : shape)
    count *= static_cast<uint64_t>(extent);
  return count;
}

//===----------------------------------------------------------------------===//
// SafetensorsFile
//===----------------------------------------------------------------------===//

SafetensorsFile SafetensorsFile::open(const std::string &path) {
  SafetensorsFile file;
  file.path_ = path;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    fail(path, std::string("cannot open: ") + qfuse::systemErrorText(errno));
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    fail(path, std::string("cannot stat: ") + qfuse::systemErrorText(err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    fail(path, "not a regular file");
  }
  file.size_ = static_cast<size_t>(st.st_size);
  if (file.size_ > 0) {
    void *map = ::mmap(nullptr, file.size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED) {
      int err = errno;
      ::close(fd);
      fail(path, std::string("cannot mmap: ") + qfuse::systemErrorText(err));
    }
    file.bytes_ = static_cast<const uint8_t *>(map);
    file.mapped_ = true;
  }
  ::close(fd);
  file.parse();
  return file;
}

SafetensorsFile SafetensorsFile::fromBytes(std::vector<uint8_t> bytes,
                                           std::string name) {
  SafetensorsFile file;
  file.path_ = std::move(name);
  file.owned_ = std::move(bytes);
  file.bytes_ = file.owned_.data();
  file.size_ = file.owned_.size();
  file.parse();
  return file;
}

SafetensorsFile::SafetensorsFile(SafetensorsFile &&other) noexcept {
  *this = std::move(other);
}

SafetensorsFile &SafetensorsFile::operator=(SafetensorsFile &&other) noexcept {
  if (this == &other)
    return *this;
  release();
  path_ = std::move(other.path_);
  mapped_ = other.mapped_;
  size_ = other.size_;
  owned_ = std::move(other.owned_);
  bytes_ = mapped_ ? other.bytes_ : owned_.data();
  dataStart_ = other.dataStart_;
  tensors_ = std::move(other.tensors_);
  byName_ = std::move(other.byName_);
  metadata_ = std::move(other.metadata_);
  other.bytes_ = nullptr;
  other.size_ = 0;
  other.mapped_ = false;
  return *this;
}

SafetensorsFile::~SafetensorsFile() { release(); }

void SafetensorsFile::release() noexcept {
  if (mapped_ && bytes_)
    ::munmap(const_cast<uint8_t *>(bytes_), size_);
  bytes_ = nullptr;
  mapped_ = false;
}

void SafetensorsFile::parse() {
  if (size_ < 8)
    fail(path_, "truncated header: the file has " + std::to_string(size_) +
                    " bytes, fewer than the 8-byte header length");
  const uint64_t headerBytes = readLittleEndian64(bytes_);
  if (headerBytes > kMaxHeaderBytes)
    fail(path_, "header length " + std::to_string(headerBytes) +
                    " exceeds the " + std::to_string(kMaxHeaderBytes) +
                    "-byte cap");
  if (headerBytes > size_ - 8)
    fail(path_, "header length " + std::to_string(headerBytes) +
                    " runs past the end of the file (" + std::to_string(size_) +
                    " bytes, so at most " + std::to_string(size_ - 8) +
                    " header bytes)");
  if (headerBytes == 0 || bytes_[8] != '{')
    fail(path_, "header must start with '{'");
  dataStart_ = 8 + static_cast<size_t>(headerBytes);
  const uint64_t dataBytes = size_ - dataStart_;

  json header = parseHeaderJson(
      path_, std::string_view(reinterpret_cast<const char *>(bytes_ + 8),
                              static_cast<size_t>(headerBytes)));

  for (const auto &item : header.items()) {
    if (item.key() == kMetadataKey) {
      if (!item.value().is_object())
        fail(path_, "__metadata__ must be an object of strings");
      for (const auto &meta : item.value().items()) {
        if (!meta.value().is_string())
          fail(path_, "__metadata__ entry '" + meta.key() +
                          "' must be a string, found " +
                          std::string(meta.value().type_name()));
        metadata_[meta.key()] = meta.value().get<std::string>();
      }
      continue;
    }
    tensors_.push_back(parseEntry(path_, item.key(), item.value()));
  }

  // The entries must tile the data buffer: sorted by offset, each starts
  // where the previous one ended, and the last ends where the file does.
  std::sort(tensors_.begin(), tensors_.end(),
            [](const TensorInfo &a, const TensorInfo &b) {
              return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
            });
  uint64_t cursor = 0;
  const TensorInfo *previous = nullptr;
  for (const TensorInfo &info : tensors_) {
    if (info.begin < cursor)
      failTensor(path_, info.name,
                 "data_offsets " + rangeText(info.begin, info.end) +
                     " overlap tensor '" + previous->name + "' at " +
                     rangeText(previous->begin, previous->end));
    if (info.begin > cursor)
      failTensor(path_, info.name,
                 "data_offsets " + rangeText(info.begin, info.end) +
                     " leave a hole " + rangeText(cursor, info.begin) +
                     " in the data buffer (entries must be contiguous)");
    cursor = info.end;
    previous = &info;
  }
  for (const TensorInfo &info : tensors_)
    if (info.end > dataBytes)
      failTensor(path_, info.name,
                 "file truncated: data " + rangeText(info.begin, info.end) +
                     " runs past the end of the data buffer (" +
                     std::to_string(dataBytes) + " bytes after the header)");
  if (cursor != dataBytes)
    fail(path_, std::to_string(dataBytes - cursor) +
                    " trailing bytes after the last tensor are not indexed "
                    "by the header");

  for (size_t i = 0; i < tensors_.size(); ++i)
    byName_.emplace(tensors_[i].name, i);
}

bool SafetensorsFile::contains(std::string_view name) const {
  return find(name) != nullptr;
}

const TensorInfo *SafetensorsFile::find(std::string_view name) const {
  auto it = byName_.find(std::string(name));
  return it == byName_.end() ? nullptr : &tensors_[it->second];
}

const TensorInfo &SafetensorsFile::info(std::string_view name) const {
  if (const TensorInfo *info = find(name))
    return *info;
  failTensor(path_, std::string(name), "not found in the file");
}

TensorView SafetensorsFile::view(std::string_view name) const {
  return view(info(name));
}

TensorView SafetensorsFile::view(const TensorInfo &info) const {
  TensorView result;
  result.info = &info;
  result.data = bytes_ + dataStart_ + info.begin;
  result.size = static_cast<size_t>(info.numBytes());
  return result;
}

//===----------------------------------------------------------------------===//
// SafetensorsWriter
//===----------------------------------------------------------------------===//

std::string safetensorsHead(std::vector<TensorInfo> &tensors,
                            const std::map<std::string, std::string> &metadata) {
  json header = json::object();
  uint64_t offset = 0;
  for (TensorInfo &info : tensors) {
    const uint64_t bytes = storageBytes(info.name, info.dtype, info.shape);
    if (header.contains(info.name))
      throw Error("safetensors writer: tensor '" + info.name +
                  "' is listed twice");
    info.begin = offset;
    info.end = offset + bytes;
    offset = info.end;
    header[info.name] = {{"dtype", std::string(safetensorsName(info.dtype))},
                         {"shape", info.shape},
                         {"data_offsets", {info.begin, info.end}}};
  }
  if (!metadata.empty())
    header[std::string(kMetadataKey)] = metadata;
  std::string text = header.dump();
  // Pad with spaces so the data buffer starts 8-byte aligned.
  text.append((8 - text.size() % 8) % 8, ' ');
  std::string head(8, '\0');
  for (int i = 0; i < 8; ++i)
    head[size_t(i)] = char(uint8_t(uint64_t(text.size()) >> (8 * i)));
  return head + text;
}

void SafetensorsWriter::checkNew(const std::string &name, DType dtype,
                                 const std::vector<int64_t> &shape,
                                 size_t size) const {
  const uint64_t expected = storageBytes(name, dtype, shape);
  for (const Entry &entry : entries_)
    if (entry.name == name)
      throw Error("safetensors writer: tensor '" + name + "' added twice");
  if (expected != size)
    throw Error("safetensors writer: tensor '" + name + "' is given " +
                std::to_string(size) + " bytes but its shape and dtype need " +
                std::to_string(expected));
}

void SafetensorsWriter::add(const std::string &name, DType dtype,
                            std::vector<int64_t> shape, const void *data,
                            size_t size) {
  checkNew(name, dtype, shape, size);
  const auto *begin = static_cast<const uint8_t *>(data);
  onOutOfHostMemory("copying tensor '" + name + "' (" + std::to_string(size) +
                        " bytes) for writing",
                    [&] {
                      entries_.push_back(
                          Entry{name, dtype, std::move(shape),
                                std::vector<uint8_t>(begin, begin + size)});
                    });
}

void SafetensorsWriter::add(const std::string &name, DType dtype,
                            std::vector<int64_t> shape,
                            std::vector<uint8_t> bytes) {
  checkNew(name, dtype, shape, bytes.size());
  entries_.push_back(Entry{name, dtype, std::move(shape), std::move(bytes)});
}

void SafetensorsWriter::add(const std::string &name, DType dtype,
                            std::vector<int64_t> shape,
                            std::shared_ptr<const void> owner,
                            const void *data, size_t size) {
  checkNew(name, dtype, shape, size);
  if (!owner)
    throw Error("safetensors writer: tensor '" + name + "' has no owner");
  Entry entry{name, dtype, std::move(shape), {}};
  entry.owner = std::move(owner);
  entry.shared = static_cast<const uint8_t *>(data);
  entry.sharedSize = size;
  entries_.push_back(std::move(entry));
}

void SafetensorsWriter::setMetadata(const std::string &key,
                                    const std::string &value) {
  metadata_[key] = value;
}

std::string SafetensorsWriter::head(std::vector<TensorInfo> &tensors) const {
  tensors.clear();
  for (const Entry &entry : entries_)
    tensors.push_back({entry.name, entry.dtype, entry.shape});
  return safetensorsHead(tensors, metadata_);
}

std::vector<uint8_t> SafetensorsWriter::serialize() const {
  std::vector<TensorInfo> tensors;
  const std::string start = head(tensors);
  std::vector<uint8_t> out;
  out.reserve(start.size() + (tensors.empty() ? 0 : tensors.back().end));
  out.insert(out.end(), start.begin(), start.end());
  for (const Entry &entry : entries_)
    out.insert(out.end(), entry.data(), entry.data() + entry.size());
  return out;
}

void SafetensorsWriter::write(const std::string &path) const {
  AtomicFile file(path);
  write(file);
  file.commit();
}

void SafetensorsWriter::write(AtomicFile &file) const {
  // The bytes serialize() would return, written in place: the head, then
  // every tensor at its offset by parallel pwrite calls (no second copy of
  // the whole file in memory).
  std::vector<TensorInfo> tensors;
  const std::string start = head(tensors);
  file.writeAt(start.data(), start.size(), 0, "the header");
  detail::parallelJobs(entries_.size(), [&](size_t i) {
    const Entry &e = entries_[i];
    const uint64_t at = start.size() + tensors[i].begin;
    file.writeAt(e.data(), e.size(), at,
                 "tensor '" + e.name + "', bytes " + std::to_string(at) +
                     ".." + std::to_string(at + e.size()));
  });
}

} // namespace qfuse::runtime
