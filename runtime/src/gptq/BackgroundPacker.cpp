//===- BackgroundPacker.cpp - pack quantized modules as layers finish -----===//

#include "qfuse/runtime/gptq/BackgroundPacker.h"

#include "qfuse/runtime/Error.h"

#include <cstring>

namespace qfuse::runtime {
namespace {

bool sameBytes(const HostBytes &a, const std::vector<uint8_t> &b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size()) == 0);
}

} // namespace

BackgroundPacker::BackgroundPacker(unsigned threads) {
  for (unsigned t = 0; t < std::max(1u, threads); ++t)
    workers_.emplace_back([this] { work(); });
}

BackgroundPacker::~BackgroundPacker() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (std::thread &t : workers_)
    t.join();
}

size_t BackgroundPacker::add(QuantizedWeight weight) {
  const bool packed = weight.packed != nullptr;
  size_t index = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    weights_.push_back(std::make_unique<QuantizedWeight>(std::move(weight)));
    errors_.emplace_back();
    done_.push_back(packed);
    index = weights_.size() - 1;
    if (packed)
      return index;
    queue_.push_back(index);
    ++pending_;
  }
  wake_.notify_one();
  return index;
}

std::shared_ptr<const format::TensorMap> BackgroundPacker::packed(size_t index) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (index >= weights_.size())
    throw Error("background packer: no weight " + std::to_string(index));
  idle_.wait(lock, [&] { return bool(done_[index]); });
  if (errors_[index])
    std::rethrow_exception(errors_[index]);
  return weights_[index]->packed;
}

void BackgroundPacker::work() {
  for (;;) {
    QuantizedWeight *weight = nullptr;
    size_t index = 0;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty())
        return;
      index = queue_.front();
      queue_.pop_front();
      weight = weights_[index].get();
    }
    std::exception_ptr error;
    try {
      auto components = std::make_shared<format::TensorMap>();
      std::string message;
      const bool bytes = !weight->codeBytes.empty();
      const bool packedCodes = !weight->packedCodes.empty() && !bytes;
      if (!format::validate(weight->encoding, weight->n, weight->k,
                            message) ||
          !(packedCodes
                ? format::packWithCodes(weight->encoding,
                                        std::vector<uint8_t>(
                                            weight->packedCodes.data(),
                                            weight->packedCodes.data() +
                                                weight->packedCodes.size()),
                                        weight->weight, weight->n, weight->k,
                                        *components, message)
            : bytes ? format::packCodeBytes(weight->encoding,
                                            weight->codeBytes.data(),
                                            weight->weight, weight->n,
                                            weight->k, *components, message)
                    : format::pack(weight->encoding, weight->weight,
                                   weight->n, weight->k, *components,
                                   message)))
        throw Error("quantized weight '" + weight->name + "' (" +
                    format::printEncoding(weight->encoding) + ", [" +
                    std::to_string(weight->n) + ", " +
                    std::to_string(weight->k) + "]): " + message);
      if (bytes && !weight->packedCodes.empty() &&
          !sameBytes(weight->packedCodes,
                     components->at(format::kCodes).data))
        throw Error("quantized weight '" + weight->name +
                    "': the codes packed on the device differ from "
                    "format::packCodeBytes' (QFUSE_PACK=check)");
      weight->packed = std::move(components);
      weight->weight = format::Unpacked();
      weight->codeBytes = HostBytes();
      weight->packedCodes = HostBytes();
    } catch (...) {
      error = std::current_exception();
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      errors_[index] = error;
      done_[index] = true;
      --pending_;
    }
    idle_.notify_all();
  }
}

void BackgroundPacker::waitPacked(std::unique_lock<std::mutex> &lock) {
  idle_.wait(lock, [&] { return pending_ == 0; });
  for (std::exception_ptr &error : errors_)
    if (error)
      std::rethrow_exception(error);
}

void BackgroundPacker::wait() {
  std::unique_lock<std::mutex> lock(mutex_);
  waitPacked(lock);
}

std::vector<QuantizedWeight> BackgroundPacker::finish() {
  std::unique_lock<std::mutex> lock(mutex_);
  waitPacked(lock);
  std::vector<QuantizedWeight> out;
  out.reserve(weights_.size());
  for (std::unique_ptr<QuantizedWeight> &w : weights_)
    out.push_back(std::move(*w));
  weights_.clear();
  errors_.clear();
  done_.clear();
  return out;
}

} // namespace qfuse::runtime
