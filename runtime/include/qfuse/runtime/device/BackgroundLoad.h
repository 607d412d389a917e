//===- BackgroundLoad.h - A model's weights bound while it runs -*- C++ -*-===//
//
// loadCheckpoint binds a whole model before it returns, and a
// layer-at-a-time run (GPTQ, docs/gptq.md) would wait for all of it before
// its first layer, which reads a few percent of it. BackgroundLoad binds
// the same bytes in stages (the prologue's weights, layer 0's, layer 1's,
// ..., then what no layer reads) and lets the run start as soon as the
// first stage it needs is there:
//
//   BackgroundLoad load(executor, context, checkpoint,
//                       layerLoadStages(artifact, layers)); // LoadStages.h
//   load.bindThrough(0);       // the prologue: calibration can begin
//   load.bindThrough(1 + l);   // before running layer l
//   load.finish();             // the rest; the stats
//
// Threads: worker threads make each tensor's bytes in stage order
// (CheckpointBytes.h: host only, reading only the executor's artifact and
// the set of components its plans read, fixed at construction), all of
// them for the first stages and fewer for the rest (LoadWorkers.h), each
// tensor on one worker (its NaN scan too: the workers are the load's
// parallelism, so their count bounds its threads) but a large converted
// one (a bf16 checkpoint's embedding), made in row ranges on several
// (TensorParts.h) into one buffer, and a
// loader thread of its own uploads
// them into device buffers it allocates, through a PinnedUploader on its
// own stream, with the context current. Neither touches the executor's
// bindings: the executor is not thread-safe, and the run launches from it
// meanwhile. A stage's buffers are handed over once its uploads are on the
// device (the uploader finished, then ReadyStages); bindThrough, on the
// run's thread, waits for them and binds them (bindWeightComponent and
// bindTensor with the buffer taken over: no copy). So a layer's weights
// are bound, complete, between the run's launches, and nothing the run
// already uses moves. The first error of a worker or the loader wakes the
// waiting bindThrough, which rethrows it.
//
// StoredOnDevice: the weights named there (a bf16 checkpoint's GPTQ
// modules, bound into the unquantized f16 encoding row-major) are not
// rounded on a worker: their stored bf16 bytes are uploaded as they are,
// and once the stage's uploads are on the device the loader rounds them to
// the f16 codes with the generated kernel (DeviceHalfRound.h, the host's
// bytes), checking that no finite value overflowed (else the error names
// the element, as the host's conversion does). The bf16 buffers are handed
// over beside the codes and kept until the run takes them (takeStored:
// GPTQ's solver reads them, then frees them).
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_RUNTIME_DEVICE_BACKGROUNDLOAD_H
#define QFUSE_RUNTIME_DEVICE_BACKGROUNDLOAD_H

#include "qfuse/runtime/artifact/LoadStages.h"
#include "qfuse/runtime/checkpoint/ModelCheckpoint.h"
#include "qfuse/runtime/device/Cuda.h"
#include "qfuse/runtime/device/Executor.h"
#include "qfuse/runtime/device/LoadWorkers.h"
#include "qfuse/runtime/device/ModelLoader.h"
#include "qfuse/runtime/device/ReadyStages.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <memory>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace qfuse::runtime {

class DeviceHalfRound;

/// The weights whose stored bf16 bytes go to the device once and are
/// rounded to their f16 codes there (see above); empty: every weight is
/// made on the host. `round` must outlive the load.
struct StoredOnDevice {
  const DeviceHalfRound *round = nullptr;
  /// WeightSpec::checkpointName of each (a weight that is not stored as
  /// bf16 [N, K] or not bound as f16 row-major codes is made on the host).
  std::set<std::string> weights;
};

class BackgroundLoad {
public:
  /// Elements per part of a converted tensor: 64 MiB of f16, so that the
  /// Llama-3 embedding (525M elements) is 16 parts for the workers.
  static constexpr uint64_t kPartElements = uint64_t(1) << 25;

  /// Starts loading `stages` from `checkpoint` (which, with `executor` and
  /// `context`, must outlive this) on `workers` (LoadWorkers::resolved:
  /// 0 workers first is every core); converted tensors of more than
  /// `partElements` elements are made in parts of about that many.
  BackgroundLoad(Executor &executor, const cuda::Context &context,
                 const ModelCheckpoint &checkpoint,
                 std::vector<LoadStage> stages,
                 LoadWorkers workers = LoadWorkers::same(0),
                 uint64_t partElements = kPartElements,
                 StoredOnDevice stored = {});
  /// Stops the load (what is queued is dropped) and waits for its threads.
  ~BackgroundLoad();
  BackgroundLoad(const BackgroundLoad &) = delete;
  BackgroundLoad &operator=(const BackgroundLoad &) = delete;

  size_t numStages() const { return stages_.size(); }
  /// Waits until stages 0..`stage` are on the device and binds those not
  /// yet bound, on the calling thread (the executor's). Rethrows the load's
  /// first error (a missing tensor, a wrong shape).
  void bindThrough(size_t stage);
  /// Binds every stage and returns the stats; `seconds` is the wall time
  /// from the start to the last upload on the device.
  LoadStats finish();
  /// Seconds bindThrough and finish have waited for stages so far.
  double waitSeconds() const { return waitSeconds_; }
  /// Seconds from the start until `stage` was on the device (whether or
  /// not anyone waited for it); valid once bindThrough(stage) returned.
  double readySeconds(size_t stage) const { return readySeconds_.at(stage); }

  /// The stored bf16 bytes of StoredOnDevice weight `name` on the device
  /// ([N, K], as in the checkpoint), taken over by the caller; an empty
  /// buffer where the weight was made on the host or is not bound yet. On
  /// the run's thread, like bindThrough.
  cuda::DeviceBuffer takeStored(const std::string &name);

private:
  struct Job;
  struct SplitTensor;
  struct Handed;
  struct Rounding;
  void make(unsigned worker);
  void upload();
  /// The stage's stored weights rounded into their f16 codes (after its
  /// uploads are on the device) and handed over with their bf16 bytes.
  void roundStored(std::vector<Rounding> &rounding, Handed &handed);
  void stop();

  Executor &executor_;
  const cuda::Context &context_;
  const ModelCheckpoint &checkpoint_;
  std::vector<LoadStage> stages_;
  LoadWorkers workers_;
  StoredOnDevice stored_;
  std::map<std::string, cuda::DeviceBuffer> storedBuffers_; // bound, not taken
  const std::chrono::steady_clock::time_point start_ =
      std::chrono::steady_clock::now();
  std::vector<std::unique_ptr<Job>> jobs_;      // stage order
  std::vector<size_t> stageEnd_;                // jobs_ of stage s end here
  std::vector<std::unique_ptr<Handed>> handed_; // per stage, once ready
  std::vector<double> readySeconds_;            // per stage, once ready
  ReadyStages ready_;
  // Workers take jobs in order, at most a window ahead of the uploads.
  std::mutex mutex_;
  std::condition_variable changed_;
  size_t nextToMake_ = 0, uploaded_ = 0, window_ = 0;
  std::atomic<bool> stopping_{false};
  std::exception_ptr error_;
  LoadStats stats_;
  size_t bound_ = 0; // stages bound into the executor
  double waitSeconds_ = 0;
  std::vector<std::thread> makers_;
  std::thread loader_; // last: started once the rest is made
};

} // namespace qfuse::runtime

#endif // QFUSE_RUNTIME_DEVICE_BACKGROUNDLOAD_H
