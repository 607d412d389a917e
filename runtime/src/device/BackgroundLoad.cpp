//===- BackgroundLoad.cpp - A model's weights bound while it runs ---------===//

#include "qfuse/runtime/device/BackgroundLoad.h"

#include "CheckpointBytes.h"

#include "qfuse/runtime/Error.h"
#include "qfuse/runtime/checkpoint/WeightSources.h"
#include "qfuse/runtime/device/DeviceHalfRound.h"
#include "qfuse/runtime/device/PinnedUploader.h"
#include "qfuse/runtime/device/TensorParts.h"

#include "qfuse/format/Packing.h"

#include <algorithm>
#include <optional>

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
  bool stored = false; // laidOut's one upload is the stored bf16 (rounded
                       // on the device)
};

/// A StoredOnDevice weight of the stage being uploaded: its bf16 bytes on
/// the device, to round into its codes at the stage's end.
struct BackgroundLoad::Rounding {
  std::string weight, component; // the artifact's, for the codes
  std::string source, what;      // the checkpoint's, for takeStored, errors
  cuda::DeviceBuffer asStored;
  const uint8_t *host = nullptr; // the mapped checkpoint's, for errors
  uint64_t count = 0;
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
  std::vector<Tensor> stored; // StoredOnDevice weights' bf16 bytes
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

/// `weight` laid out from its stored bf16 bytes viewed as its f16 codes
/// (the same size), where the executor uploads that one row-major
/// component from the view as it is: the bytes the device then rounds in
/// place of the host. std::nullopt where the weight is not a bf16 [N, K]
/// tensor bound into the unquantized f16 encoding that way.
std::optional<Executor::LaidOutWeight>
storedBf16(const Executor &executor, const ModelCheckpoint &checkpoint,
           const WeightSpec &weight) {
  const std::string &name = weight.checkpointName();
  const std::string source = name + ".weight";
  const format::Encoding &enc = weight.encodingAttr;
  if (enc.format != format::ElementFormat::F16 || enc.isQuantized() ||
      enc.isSparse24() || !checkpoint.contains(source))
    return std::nullopt;
  const TensorView view = checkpoint.view(source);
  const uint64_t bytes = uint64_t(weight.n) * uint64_t(weight.k) * 2;
  if (view.info->dtype != DType::BF16 ||
      view.info->shape != std::vector<int64_t>{weight.n, weight.k} ||
      view.size < bytes)
    return std::nullopt;
  // The encoding's one component: the codes, 2 bytes per element.
  std::vector<format::ComponentSpec> specs;
  std::string error;
  if (!format::componentSpecs(enc, weight.n, weight.k, specs, error) ||
      specs.size() != 1 || specs[0].name != format::kCodes ||
      specs[0].shape != std::vector<int64_t>{weight.n, 2 * weight.k})
    return std::nullopt;
  RowMajorViews views;
  views[format::kCodes] = {format::dtypeName(specs[0].dtype), specs[0].shape,
                           view.data, bytes};
  Executor::LaidOutWeight laidOut = executor.layOutViews(name, views);
  if (laidOut.uploads.size() != 1 ||
      laidOut.uploads[0].component != format::kCodes ||
      laidOut.uploads[0].data != view.data || laidOut.uploads[0].size != bytes)
    return std::nullopt;
  return laidOut;
}

} // namespace

BackgroundLoad::BackgroundLoad(Executor &executor, const cuda::Context &context,
                               const ModelCheckpoint &checkpoint,
                               std::vector<LoadStage> stages,
                               LoadWorkers workers, uint64_t partElements,
                               StoredOnDevice stored)
    : executor_(executor), context_(context), checkpoint_(checkpoint),
      stages_(std::move(stages)), stored_(std::move(stored)),
      handed_(stages_.size()),
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
      std::optional<Executor::LaidOutWeight> stored;
      if (job.weight && stored_.round &&
          stored_.weights.count(job.weight->checkpointName()))
        stored = storedBf16(executor_, checkpoint_, *job.weight);
      if (stored) {
        job.laidOut = std::move(*stored);
        job.stored = true;
      } else if (job.weight) {
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
      std::vector<Rounding> rounding;
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
        if (job.stored) {
          const Executor::LaidOutWeight::Upload &u = job.laidOut.uploads[0];
          const std::string &source = job.weight->checkpointName();
          Rounding r{u.weight, u.component, source,
                     "checkpoint '" + checkpoint_.dir() + "': tensor '" +
                         source + ".weight'",
                     cuda::DeviceBuffer(u.size, u.weight + " (bf16 as stored)"),
                     u.data, u.size / 2};
          uploader.upload(r.asStored, u.data, u.size);
          rounding.push_back(std::move(r));
          job.laidOut = Executor::LaidOutWeight();
          ++stats_.weights;
        } else if (job.weight) {
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
      roundStored(rounding, *handed);
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

void BackgroundLoad::roundStored(std::vector<Rounding> &rounding,
                                 Handed &handed) {
  if (rounding.empty())
    return;
  cuda::Stream stream;
  cuda::DeviceBuffer status(4 * rounding.size(), "half rounding status");
  status.zero(stream.get());
  std::vector<cuda::DeviceBuffer> codes;
  for (size_t i = 0; i < rounding.size(); ++i) {
    const Rounding &r = rounding[i];
    // Whole 16-byte units, zero past the codes, as componentBuffer makes.
    const size_t size = r.asStored.size(), padded = (size + 15) / 16 * 16;
    codes.emplace_back(padded, r.weight + "." + r.component);
    if (padded != size)
      codes.back().zero(stream.get());
    stored_.round->enqueue(r.asStored.ptr(), codes.back().ptr(), r.count,
                           status.ptr() + 4 * i, stream.get());
  }
  stream.synchronize();
  std::vector<int32_t> overflowed(rounding.size());
  status.download(overflowed.data(), 4 * overflowed.size());
  for (size_t i = 0; i < rounding.size(); ++i) {
    Rounding &r = rounding[i];
    if (overflowed[i])
      throwHalfOverflow(r.host, r.count, r.what);
    handed.components.push_back({r.weight, r.component, std::move(codes[i])});
    handed.stored.push_back({r.source, std::move(r.asStored)});
  }
}

cuda::DeviceBuffer BackgroundLoad::takeStored(const std::string &name) {
  auto it = storedBuffers_.find(name);
  if (it == storedBuffers_.end())
    return cuda::DeviceBuffer();
  cuda::DeviceBuffer buffer = std::move(it->second);
  storedBuffers_.erase(it);
  return buffer;
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
    for (Handed::Tensor &t : handed.stored)
      storedBuffers_[t.name] = std::move(t.buffer);
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
