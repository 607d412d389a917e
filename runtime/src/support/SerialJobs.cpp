//===- SerialJobs.cpp - jobs run in order on a thread of their own --------===//

#include "SerialJobs.h"

namespace qfuse::runtime::detail {

SerialJobs::SerialJobs() : thread_([this] { work(); }) {}

SerialJobs::~SerialJobs() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void SerialJobs::add(std::function<void()> job) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (error_)
      std::rethrow_exception(error_);
    queue_.push_back(std::move(job));
  }
  wake_.notify_all();
}

void SerialJobs::wait() {
  std::unique_lock<std::mutex> lock(mutex_);
  idle_.wait(lock, [&] { return error_ || (queue_.empty() && !busy_); });
  if (error_)
    std::rethrow_exception(error_);
}

void SerialJobs::work() {
  for (;;) {
    std::function<void()> job;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_ || error_)
        return;
      job = std::move(queue_.front());
      queue_.pop_front();
      busy_ = true;
    }
    std::exception_ptr failed;
    try {
      job();
    } catch (...) {
      failed = std::current_exception();
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      busy_ = false;
      if (failed && !error_)
        error_ = failed;
    }
    idle_.notify_all();
  }
}

} // namespace qfuse::runtime::detail
