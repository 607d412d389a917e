//===- QuantizeLoad.h - the fp16 weights of a quantize run ------*- C++ -*-===//
//
// The checkpoint's fp16 weights bound to quantizeModel's calibration
// executor (Fp16Load). The load overlaps the layers (BackgroundLoad.h): the
// weights upload on threads of their own in layer order, and the run binds
// each layer's (bindLayer) just before it first runs that layer, waiting
// only where the upload has not got there yet. The executor itself is only
// ever used from the run's thread. QFUSE_LOAD_OVERLAP=0 binds everything
// first instead (loadCheckpoint), the same bytes: outputs compare equal
// either way. A file of its own so that the load's bookkeeping (what is
// bound, when each part was ready, how long the run waited) stays out of
// the run's phases. Private to QuantizeModel.cpp.
//
// With a DeviceHalfRound (a bf16 checkpoint, not --host-weights), the
// overlapped load uploads each GPTQ module's stored bf16 bytes once and
// rounds them to the plan's f16 on the device (BackgroundLoad's
// StoredOnDevice); the solver then takes the bf16 buffer (takeStored)
// instead of uploading the module again, and frees it after the layer.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_RUNTIME_GPTQ_QUANTIZELOAD_H
#define QFUSE_RUNTIME_GPTQ_QUANTIZELOAD_H

#include "qfuse/runtime/artifact/Artifact.h"
#include "qfuse/runtime/checkpoint/ModelCheckpoint.h"
#include "qfuse/runtime/device/BackgroundLoad.h"
#include "qfuse/runtime/device/Cuda.h"
#include "qfuse/runtime/device/DeviceHalfRound.h"
#include "qfuse/runtime/device/Executor.h"
#include "qfuse/runtime/device/ModelLoader.h"

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>

namespace qfuse::runtime {

/// The fp16 weights' load of one run, in the order the run calls it:
/// start, bindPrologue, bindLayer for each layer run, finish. The executor,
/// context and checkpoint must outlive it.
class Fp16Load {
public:
  /// A progress line, already formatted, for the run's log.
  using Say = std::function<void(const char *text)>;

  /// The weights bound to `executor` (serial: QFUSE_LOAD_OVERLAP=0, or a
  /// plan that is not layered), or their background load started.
  /// `halfRound` (may be null, else outliving the load): the GPTQ modules
  /// of a bf16 checkpoint rounded to f16 on the device (overlapped only).
  void start(Executor &executor, const cuda::Context &context,
             const Artifact &fp16, const ModelCheckpoint &checkpoint,
             Say say, const DeviceHalfRound *halfRound = nullptr);
  /// The prologue's weights (the embedding) bound, before calibration
  /// begins; a no-op after a serial load.
  void bindPrologue();
  /// Layer `l`'s weights bound (waiting for their upload), before the run
  /// first reads them; a no-op after a serial load.
  void bindLayer(int64_t l);
  /// The background load's last weights bound and its threads ended; a
  /// no-op after a serial load.
  void finish();
  /// Module `module`'s stored bf16 weight on the device, taken over (see
  /// above); an empty buffer where it was made on the host. After
  /// bindLayer of its layer.
  cuda::DeviceBuffer takeStored(const std::string &module);
  /// GPTQ modules whose f16 weight was rounded on the device.
  size_t roundedOnDevice = 0;

  /// The whole load's (its wall time, overlapped or not), once finished.
  LoadStats stats;
  /// Whether the weights loaded beside the layers.
  bool overlapped = false;
  /// Seconds from the load's start to the first layer bound, and that the
  /// run waited for weights in all (the whole load when serial).
  double firstLayerSeconds = -1, waitSeconds = 0;
  /// Seconds from the load's start until the prologue's weights and the
  /// first layer's were on the device (the whole load when serial).
  double prologueReadySeconds = -1, firstLayerReadySeconds = -1;

private:
  void say(const char *fmt, ...) const __attribute__((format(printf, 2, 3)));

  std::optional<BackgroundLoad> background_; // null: serial, or finished
  std::chrono::steady_clock::time_point start_;
  Say say_;
};

} // namespace qfuse::runtime

#endif // QFUSE_RUNTIME_GPTQ_QUANTIZELOAD_H
