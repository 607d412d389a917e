//===- ReadyStages.cpp - Stages made ready in order, waited on ------------===//

#include "qfuse/runtime/device/ReadyStages.h"

#include "qfuse/runtime/Error.h"

#include <string>

namespace qfuse::runtime {

void ReadyStages::markReady(size_t stage) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stage != ready_ || stage >= count_)
      throw Error("stage " + std::to_string(stage) +
                  " marked ready out of order: " + std::to_string(ready_) +
                  " of " + std::to_string(count_) +
                  " stages are ready, and they become ready in order");
    ++ready_;
  }
  changed_.notify_all();
}

void ReadyStages::fail(std::exception_ptr error) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!error_)
      error_ = error;
  }
  changed_.notify_all();
}

void ReadyStages::waitFor(size_t stage) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (stage >= count_)
    throw Error("waiting for stage " + std::to_string(stage) +
                ", but there are " + std::to_string(count_) +
                " stages, numbered from 0");
  changed_.wait(lock, [&] { return error_ || ready_ > stage; });
  if (error_)
    std::rethrow_exception(error_);
}

size_t ReadyStages::readyCount() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return ready_;
}

} // namespace qfuse::runtime
