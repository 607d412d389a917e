//===- CheckpointBytes.h - A checkpoint tensor made for binding -*- C++ -*-===//
//
// What a loader's worker makes from one checkpoint tensor before it is
// uploaded: a weight laid out for the executor's artifact, or a dense
// tensor's bytes in the artifact's dtype. Stored bytes that are already
// what is bound are viewed in the mapped files, not copied. Shared by
// loadCheckpoint (ModelLoader.cpp) and BackgroundLoad, so that both bind
// the same bytes. Safe on any thread: nothing here touches the device or
// the executor's bindings.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_RUNTIME_DEVICE_CHECKPOINTBYTES_H
#define QFUSE_RUNTIME_DEVICE_CHECKPOINTBYTES_H

#include "qfuse/runtime/checkpoint/ModelCheckpoint.h"
#include "qfuse/runtime/checkpoint/WeightSources.h"
#include "qfuse/runtime/device/Executor.h"

#include <cstdint>
#include <vector>

namespace qfuse::runtime::detail {

/// A dense tensor's bytes in the artifact's dtype: made on a worker
/// (`owned`) or viewed in the mapped checkpoint (`view`).
struct TensorBytes {
  std::vector<uint8_t> owned;
  const uint8_t *view = nullptr;
  size_t viewSize = 0;

  const uint8_t *data() const { return view ? view : owned.data(); }
  size_t size() const { return view ? viewSize : owned.size(); }
};

/// `weight`'s checkpoint tensor laid out for every layout the artifact
/// packs it in (Executor::layOutViews or layOutWeight). `device` and
/// `repacker` as for loadCheckpoint; `scanThreads` as for storedWeight.
Executor::LaidOutWeight layOutCheckpointWeight(
    const Executor &executor, const ModelCheckpoint &checkpoint,
    const WeightSpec &weight, const DenseQuantizer *device,
    const LayoutRepacker *repacker, unsigned scanThreads = 0);

/// `tensor`'s bytes from the checkpoint, viewed where stored as bound.
TensorBytes checkpointTensorBytes(const ModelCheckpoint &checkpoint,
                                  const TensorSpec &tensor);

} // namespace qfuse::runtime::detail

#endif // QFUSE_RUNTIME_DEVICE_CHECKPOINTBYTES_H
