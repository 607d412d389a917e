//===- StreamingSafetensorsWriter.cpp - tensors written as they come ------===//

#include "qfuse/runtime/checkpoint/StreamingSafetensorsWriter.h"

#include "qfuse/runtime/Error.h"

namespace qfuse::runtime {

StreamingSafetensorsWriter::StreamingSafetensorsWriter(
    std::string path, std::vector<TensorInfo> tensors,
    const std::map<std::string, std::string> &metadata, uint64_t writebackStep)
    : tensors_(std::move(tensors)), head_(safetensorsHead(tensors_, metadata)),
      file_(std::move(path), writebackStep),
      states_(tensors_.size(), State::Unwritten) {
  for (size_t i = 0; i < tensors_.size(); ++i)
    byName_.emplace(tensors_[i].name, i);
  file_.reserve(size(), "reserving its " + std::to_string(size()) + " bytes");
  file_.writeAt(head_.data(), head_.size(), 0, "the header");
}

uint64_t StreamingSafetensorsWriter::size() const {
  return head_.size() + (tensors_.empty() ? 0 : tensors_.back().end);
}

void StreamingSafetensorsWriter::write(const std::string &name,
                                       const void *data, size_t size) {
  auto fail = [&](const std::string &what) {
    return Error("safetensors '" + path() + "': tensor '" + name + "' " +
                 what);
  };
  auto it = byName_.find(name);
  if (it == byName_.end())
    throw fail("is not in the file (its header, written first, lists every "
               "tensor)");
  const size_t index = it->second;
  const TensorInfo &info = tensors_[index];
  if (size != info.numBytes())
    throw fail("is given " + std::to_string(size) +
               " bytes but its shape and dtype need " +
               std::to_string(info.numBytes()));
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (states_[index] != State::Unwritten)
      throw fail("is written twice");
    states_[index] = State::Writing;
  }
  const uint64_t at = head_.size() + info.begin;
  try {
    file_.writeAt(data, size, at,
                  "tensor '" + name + "', bytes " + std::to_string(at) + ".." +
                      std::to_string(at + size));
  } catch (...) {
    std::lock_guard<std::mutex> lock(mutex_);
    states_[index] = State::Unwritten;
    throw;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  states_[index] = State::Written;
}

std::vector<std::string> StreamingSafetensorsWriter::unwritten() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::string> names;
  for (size_t i = 0; i < tensors_.size(); ++i)
    if (states_[i] != State::Written)
      names.push_back(tensors_[i].name);
  return names;
}

void StreamingSafetensorsWriter::checkComplete() const {
  const std::vector<std::string> missing = unwritten();
  if (missing.empty())
    return;
  std::string list;
  for (const std::string &name : missing)
    list += (list.empty() ? "'" : ", '") + name + "'";
  throw Error("safetensors '" + path() + "': " +
              std::to_string(missing.size()) + " of " +
              std::to_string(tensors_.size()) +
              " tensors were never written: " + list +
              "; nothing was written to '" + path() + "'");
}

void StreamingSafetensorsWriter::commit() {
  checkComplete();
  file_.commit();
}

} // namespace qfuse::runtime
