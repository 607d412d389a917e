//===- BackgroundLoad.cpp - A model's weights bound while it runs ---------===//

#include "qfuse/runtime/device/BackgroundLoad.h"

#include "CheckpointBytes.h"

#include "qfuse/runtime/Error.h"
#include "qfuse/runtime/checkpoint/WeightSources.h"
#include "qfuse/runtime/device/PinnedUploader.h"
#include "qfuse/runtime/device/TensorParts.h"

#include <algorithm>

namespace qfuse::runtime {

/// A converted tensor made in row ranges: its host bytes, written by the
/// parts' workers, and its device buffer, made by the loader at the first
/// part it uploads and handed over after the last.
struct BackgroundLoad::SplitTensor {
  std::once_flag allocated;
  std::unique_ptr<uint8_t[]> host;
  size_t bytes = 0, elementBytes = 0;
  size_t partsLeft = 0; // the loader's
  cuda::DeviceBuffer device;
};

/// One checkpoint tensor (or a part of one) to make on a worker and upload
/// on the loader.
struct BackgroundLoad::Job {
  const WeightSpec *weight = nullptr; // else tensor
  const TensorSpec *tensor = nullptr;
  std::shared_ptr<SplitTensor> split; // a part of `tensor`: `part`
  ElementRange part;
  size_t stage = 0;
  uint64_t cost = 0; // elements: largest first inside a stage
  bool made = false; // guarded by mutex_
  Executor::LaidOutWeight laidOut;
  detail::TensorBytes bytes;
};

/// A stage's device buffers, handed from the loader to bindThrough.
struct BackgroundLoad::Handed {
  struct Component {
    std::string weight, component;
    cuda::DeviceBuffer buffer;
  };
  struct Tensor {
    std::string name;
    cuda::DeviceBuffer buffer;
  };
  std::vector<Component> components;
  std::vector<Tensor> tensors;
};

namespace {

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

/// The row ranges `tensor` is made in: several where it is converted and
/// large, none otherwise (made whole: a tensor viewed in the mapped file is
/// copied by the uploader's own threads).
std::vector<ElementRange> partsOf(const ModelCheckpoint &checkpoint,
                                  const TensorSpec &tensor,
                                  uint64_t partElements) {
  if (tensor.shape.size() < 2 || tensor.shape[0] < 2 ||
      !convertsInParts(checkpoint, tensor))
    return {};
  uint64_t rowElements = 1;
  for (size_t d = 1; d < tensor.shape.size(); ++d)
    rowElements *= uint64_t(tensor.shape[d]);
  std::vector<ElementRange> parts =
      rowParts(uint64_t(tensor.shape[0]), rowElements, partElements);
  if (parts.size() < 2)
    return {};
  return parts;
}

} // namespace

BackgroundLoad::BackgroundLoad(Executor &executor, const cuda::Context &context,
                               const ModelCheckpoint &checkpoint,
                               std::vector<LoadStage> stages,
                               LoadWorkers workers, uint64_t partElements)
    : executor_(executor), context_(context), checkpoint_(checkpoint),
      stages_(std::move(stages)), handed_(stages_.size()),
      readySeconds_(stages_.size(), -1), ready_(stages_.size()) {
  const Artifact &artifact = executor_.artifact();
  for (const LoadStage &stage : stages_) {
    const size_t first = jobs_.size();
    for (const std::string &source : stage.weights) {
      auto job = std::make_unique<Job>();
      job->stage = stageEnd_.size();
      job->weight = artifact.weightsPackedFrom(source).front();
      job->cost = uint64_t(job->weight->n) * uint64_t(job->weight->k);
      jobs_.push_back(std::move(job));
    }
    for (const std::string &name : stage.tensors) {
      const TensorSpec *tensor = artifact.findTensor(name);
      if (!tensor)
        throw Error("loading tensor '" + name +
                    "': not declared in the artifact's 'tensors'");
      const std::vector<ElementRange> parts =
          partsOf(checkpoint_, *tensor, partElements);
      std::shared_ptr<SplitTensor> split;
      if (!parts.empty()) {
        split = std::make_shared<SplitTensor>();
        split->bytes = tensor->numBytes();
        split->elementBytes = *dtypeStorageBytes(tensor->dtype, 1);
        split->partsLeft = parts.size();
      }
      for (size_t p = 0; p < std::max<size_t>(1, parts.size()); ++p) {
        auto job = std::make_unique<Job>();
        job->stage = stageEnd_.size();
        job->tensor = tensor;
        job->split = split;
        if (split)
          job->part = parts[p];
        // The whole tensor's: its parts stay together, in order.
        job->cost = tensor->numBytes() / 2;
        jobs_.push_back(std::move(job));
      }
    }
    std::stable_sort(
        jobs_.begin() + first, jobs_.end(),
        [](const auto &a, const auto &b) { return a->cost > b->cost; });
    stageEnd_.push_back(jobs_.size());
  }
  workers_ =
      workers.resolved(std::thread::hardware_concurrency(), jobs_.size());
  // Made host bytes wait at most this many jobs ahead of the uploads (a
  // bf16 checkpoint's f16 copies would otherwise pile up in host memory).
  window_ = 2 * size_t(workers_.threads());
  stats_.threads = workers_.threads();
  for (unsigned t = 0; t < workers_.threads(); ++t)
    makers_.emplace_back([this, t] { make(t); });
  loader_ = std::thread([this] { upload(); });
}

BackgroundLoad::~BackgroundLoad() { stop(); }

void BackgroundLoad::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (loader_.joinable())
    loader_.join();
  for (std::thread &maker : makers_)
    if (maker.joinable())
      maker.join();
}

void BackgroundLoad::make(unsigned worker) {
  for (;;) {
    size_t at;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      changed_.wait(lock, [&] {
        return stopping_ || error_ || nextToMake_ >= jobs_.size() ||
               nextToMake_ < uploaded_ + window_;
      });
      if (stopping_ || error_ || nextToMake_ >= jobs_.size() ||
          !workers_.makes(worker, jobs_[nextToMake_]->stage))
        return;
      at = nextToMake_++;
    }
    Job &job = *jobs_[at];
    try {
      if (job.weight) {
        job.laidOut = detail::layOutCheckpointWeight(
            executor_, checkpoint_, *job.weight, nullptr, nullptr,
            /*scanThreads=*/1);
      } else if (job.split) {
        SplitTensor &split = *job.split;
        // Not zero-filled: every byte is some part's, and the parts' own
        // writes fault its pages in on their workers.
        std::call_once(split.allocated,
                       [&] { split.host.reset(new uint8_t[split.bytes]); });
        checkpointTensorPart(checkpoint_, *job.tensor, job.part.first,
                             job.part.count, split.host.get());
      } else {
        job.bytes = detail::checkpointTensorBytes(checkpoint_, *job.tensor);
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!error_)
        error_ = std::current_exception();
      changed_.notify_all();
      return;
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      job.made = true;
    }
    changed_.notify_all();
  }
}

void BackgroundLoad::upload() {
  try {
    // Buffers, the uploader's stream and its copies belong to the run's
    // context.
    context_.makeCurrent();
    PinnedUploader uploader;
    size_t j = 0;
    for (size_t s = 0; s < stages_.size(); ++s) {
      auto handed = std::make_unique<Handed>();
      for (; j < stageEnd_[s]; ++j) {
        Job &job = *jobs_[j];
        {
          std::unique_lock<std::mutex> lock(mutex_);
          changed_.wait(lock, [&] { return job.made || error_ || stopping_; });
          if (error_)
            std::rethrow_exception(error_);
          if (stopping_)
            throw Error("the background load was stopped");
        }
        if (job.weight) {
          for (const Executor::LaidOutWeight::Upload &u : job.laidOut.uploads)
            handed->components.push_back(
                {u.weight, u.component,
                 Executor::componentBuffer(u.weight + "." + u.component, u.data,
                                           u.size, &uploader)});
          job.laidOut = Executor::LaidOutWeight(); // read by the uploader
          ++stats_.weights;
        } else if (job.split) {
          SplitTensor &split = *job.split;
          if (split.device.size() == 0)
            split.device = cuda::DeviceBuffer(split.bytes, job.tensor->name);
          const size_t at = job.part.first * split.elementBytes;
          uploader.upload(split.device, split.host.get() + at,
                          job.part.count * split.elementBytes, at);
          if (--split.partsLeft == 0) {
            handed->tensors.push_back(
                {job.tensor->name, std::move(split.device)});
            split.host.reset(); // read by the uploader
            ++stats_.tensors;
          }
        } else {
          cuda::DeviceBuffer buffer(job.bytes.size(), job.tensor->name);
          uploader.upload(buffer, job.bytes.data(), job.bytes.size());
          handed->tensors.push_back({job.tensor->name, std::move(buffer)});
          job.bytes = {};
          ++stats_.tensors;
        }
        {
          std::lock_guard<std::mutex> lock(mutex_);
          ++uploaded_;
        }
        changed_.notify_all();
      }
      // On the device before any stream of the run reads it.
      uploader.finish();
      handed_[s] = std::move(handed);
      readySeconds_[s] = secondsSince(start_);
      ready_.markReady(s);
    }
    stats_.seconds = secondsSince(start_);
  } catch (...) {
    std::exception_ptr first;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!error_)
        error_ = std::current_exception();
      first = error_;
      stopping_ = true;
    }
    changed_.notify_all();
    ready_.fail(first);
  }
}

void BackgroundLoad::bindThrough(size_t stage) {
  if (stage >= stages_.size())
    throw Error("binding load stage " + std::to_string(stage) +
                ", but there are " + std::to_string(stages_.size()));
  for (; bound_ <= stage; ++bound_) {
    const auto start = std::chrono::steady_clock::now();
    ready_.waitFor(bound_);
    waitSeconds_ += secondsSince(start);
    Handed &handed = *handed_[bound_];
    for (Handed::Component &c : handed.components)
      executor_.bindWeightComponent(c.weight, c.component, std::move(c.buffer));
    for (Handed::Tensor &t : handed.tensors)
      executor_.bindTensor(t.name, std::move(t.buffer));
    handed_[bound_].reset();
  }
}

LoadStats BackgroundLoad::finish() {
  if (!stages_.empty())
    bindThrough(stages_.size() - 1);
  stop();
  return stats_;
}

} // namespace qfuse::runtime
