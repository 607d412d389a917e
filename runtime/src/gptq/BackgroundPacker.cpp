//===- BackgroundPacker.cpp - pack quantized modules as layers finish -----===//

#include "qfuse/runtime/gptq/BackgroundPacker.h"

#include "qfuse/runtime/Error.h"

namespace qfuse::runtime {

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

void BackgroundPacker::add(QuantizedWeight weight) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    weights_.push_back(std::make_unique<QuantizedWeight>(std::move(weight)));
    errors_.emplace_back();
    queue_.push_back(weights_.size() - 1);
    ++pending_;
  }
  wake_.notify_one();
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
      if (!format::validate(weight->encoding, weight->n, weight->k,
                            message) ||
          !format::pack(weight->encoding, weight->weight, weight->n,
                        weight->k, *components, message))
        throw Error("quantized weight '" + weight->name + "' (" +
                    format::printEncoding(weight->encoding) + ", [" +
                    std::to_string(weight->n) + ", " +
                    std::to_string(weight->k) + "]): " + message);
      weight->packed = std::move(components);
      weight->weight = format::Unpacked();
    } catch (...) {
      error = std::current_exception();
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      errors_[index] = error;
      --pending_;
    }
    idle_.notify_all();
  }
}

std::vector<QuantizedWeight> BackgroundPacker::finish() {
  std::unique_lock<std::mutex> lock(mutex_);
  idle_.wait(lock, [&] { return pending_ == 0; });
  for (std::exception_ptr &error : errors_)
    if (error)
      std::rethrow_exception(error);
  std::vector<QuantizedWeight> out;
  out.reserve(weights_.size());
  for (std::unique_ptr<QuantizedWeight> &w : weights_)
    out.push_back(std::move(*w));
  weights_.clear();
  errors_.clear();
  return out;
}

} // namespace qfuse::runtime
