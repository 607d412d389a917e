//===- ModelLoader.cpp - Binds a whole model's weights, in parallel -------===//

#include "qfuse/runtime/device/ModelLoader.h"

#include "CheckpointBytes.h"

#include "qfuse/runtime/Error.h"
#include "qfuse/runtime/checkpoint/WeightSources.h"
#include "qfuse/runtime/device/PinnedUploader.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

namespace qfuse::runtime {
namespace {

using detail::TensorBytes;

/// One weight or tensor to make on a worker and bind on the caller's thread.
struct Job {
  const WeightSpec *weight = nullptr; // else tensor
  const TensorSpec *tensor = nullptr;
  uint64_t index = 0; // position in name order (random seeds)
  uint64_t cost = 0;  // elements, for largest-first scheduling
  Executor::LaidOutWeight laidOut;
  TensorBytes bytes;
};

/// A weight's components laid out (Executor::layOutWeight or layOutViews).
using MakeWeight =
    std::function<Executor::LaidOutWeight(const WeightSpec &, uint64_t index)>;
using MakeTensor =
    std::function<TensorBytes(const TensorSpec &, uint64_t index)>;

LoadStats loadParallel(Executor &executor, unsigned threads,
                       const MakeWeight &makeWeight,
                       const MakeTensor &makeTensor) {
  const auto start = std::chrono::steady_clock::now();
  const Artifact &artifact = executor.artifact();
  // One job per checkpoint tensor: bindWeight packs it into every layout
  // the artifact lists it in (docs/artifact.md), from one set of codes.
  std::vector<Job> jobs;
  uint64_t index = 0;
  for (const std::string &source : executor.usedWeightSources()) {
    Job job;
    job.weight = artifact.weightsPackedFrom(source).front();
    job.index = index++;
    job.cost = uint64_t(job.weight->n) * uint64_t(job.weight->k);
    jobs.push_back(std::move(job));
  }
  for (const std::string &name : executor.usedTensors()) {
    Job job;
    job.tensor = artifact.findTensor(name);
    job.index = index++;
    job.cost = job.tensor->numBytes() / 2;
    jobs.push_back(std::move(job));
  }
  // Largest first: the lm_head must not start last on an otherwise idle pool.
  std::vector<size_t> order(jobs.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return jobs[a].cost > jobs[b].cost;
  });

  if (threads == 0)
    threads = std::max(1u, std::thread::hardware_concurrency());
  threads = std::max(1u, std::min<unsigned>(threads, unsigned(jobs.size())));

  std::mutex mutex;
  std::condition_variable ready;
  std::deque<size_t> done;
  std::exception_ptr failure;
  std::atomic<size_t> next{0};
  std::atomic<bool> stop{false};
  auto work = [&] {
    for (;;) {
      const size_t at = next.fetch_add(1);
      if (at >= order.size() || stop)
        return;
      Job &job = jobs[order[at]];
      try {
        // Made and repacked into every layout here, uploaded by the caller.
        if (job.weight)
          job.laidOut = makeWeight(*job.weight, job.index);
        else
          job.bytes = makeTensor(*job.tensor, job.index);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mutex);
        if (!failure)
          failure = std::current_exception();
        stop = true;
        ready.notify_one();
        return;
      }
      std::lock_guard<std::mutex> lock(mutex);
      done.push_back(order[at]);
      ready.notify_one();
    }
  };
  // Every upload is staged through pinned memory and queued; `uploader`
  // is finished before this returns or rethrows, so everything is on the
  // device either way.
  PinnedUploader uploader;
  std::vector<std::thread> workers;
  for (unsigned t = 0; t < threads; ++t)
    workers.emplace_back(work);

  LoadStats stats;
  stats.threads = threads;
  try {
    for (size_t bound = 0; bound < jobs.size(); ++bound) {
      size_t ready_index;
      {
        std::unique_lock<std::mutex> lock(mutex);
        ready.wait(lock, [&] { return !done.empty() || failure; });
        if (failure)
          break;
        ready_index = done.front();
        done.pop_front();
      }
      Job &job = jobs[ready_index];
      if (job.weight) {
        executor.bindLaidOut(job.laidOut, &uploader);
        job.laidOut = Executor::LaidOutWeight();
        ++stats.weights;
      } else {
        executor.bindTensor(job.tensor->name, job.bytes.data(),
                            job.bytes.size(), &uploader);
        job.bytes = {};
        ++stats.tensors;
      }
    }
    uploader.finish();
  } catch (...) {
    std::lock_guard<std::mutex> lock(mutex);
    if (!failure)
      failure = std::current_exception();
    stop = true;
  }
  stop = stop || failure != nullptr;
  for (std::thread &worker : workers)
    worker.join();
  if (failure) {
    try {
      uploader.finish(); // the first error is the one to report
    } catch (...) {
    }
    std::rethrow_exception(failure);
  }
  stats.seconds = std::chrono::duration<double>(
                      std::chrono::steady_clock::now() - start)
                      .count();
  return stats;
}

} // namespace

namespace detail {

Executor::LaidOutWeight
layOutCheckpointWeight(const Executor &executor,
                       const ModelCheckpoint &checkpoint,
                       const WeightSpec &weight, const DenseQuantizer *device,
                       const LayoutRepacker *repacker, unsigned scanThreads) {
  const std::string &name = weight.checkpointName();
  if (std::optional<RowMajorViews> stored =
          storedWeight(checkpoint, weight, scanThreads))
    return executor.layOutViews(name, *stored, repacker);
  return executor.layOutWeight(
      name, checkpointWeight(checkpoint, weight, device), repacker);
}

TensorBytes checkpointTensorBytes(const ModelCheckpoint &checkpoint,
                                  const TensorSpec &tensor) {
  TensorBytes bytes;
  if (std::optional<TensorView> stored = storedTensor(checkpoint, tensor)) {
    bytes.view = stored->data;
    bytes.viewSize = stored->size;
  } else {
    bytes.owned = checkpointTensor(checkpoint, tensor);
  }
  return bytes;
}

} // namespace detail

LoadStats loadCheckpoint(Executor &executor, const ModelCheckpoint &checkpoint,
                         unsigned threads, const DenseQuantizer *device,
                         const LayoutRepacker *repacker) {
  // The stored bytes, where they are what is bound, upload straight from
  // the mapped files (which outlive the load): no copy on the host.
  return loadParallel(
      executor, threads,
      [&](const WeightSpec &weight, uint64_t) {
        return detail::layOutCheckpointWeight(executor, checkpoint, weight,
                                              device, repacker);
      },
      [&](const TensorSpec &tensor, uint64_t) {
        return detail::checkpointTensorBytes(checkpoint, tensor);
      });
}

LoadStats bindRandomModel(Executor &executor, uint64_t seed,
                          unsigned threads) {
  // randomWeight fills in parallel itself; the pool still overlaps the
  // quantization of one weight with the others.
  return loadParallel(
      executor, threads,
      [&](const WeightSpec &weight, uint64_t index) {
        return executor.layOutWeight(
            weight.checkpointName(),
            randomWeight(weight, seed + 1000 * (index + 1)));
      },
      [&](const TensorSpec &tensor, uint64_t index) {
        TensorBytes bytes;
        bytes.owned = randomTensor(tensor, seed + 1000 * (index + 1));
        return bytes;
      });
}

} // namespace qfuse::runtime
