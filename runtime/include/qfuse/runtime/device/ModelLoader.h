//===- ModelLoader.h - Binds a whole model's weights, in parallel -*- C++ -*-===//
//
// Binds every weight and dense tensor an executor's plans read, from a Hugging
// Face checkpoint (ModelWeights.h: round-to-nearest or converted) or random
// for benchmarks. Quantizing an 8B model with round-to-nearest is minutes on
// one core, so worker threads make the row-major components (largest weights
// first) while the calling thread binds each one as it is ready: binding
// repacks to the artifact's layout and uploads, and stays on one thread, as
// the CUDA context and the executor expect. Host memory is freed per weight.
// Stored bytes that are already what is bound (f16 into f16, qfuse-packed
// components, dense tensors of the artifact's dtype) are not copied: they
// upload from the mapped files. Uploads go through pinned staging buffers
// on a stream of their own (PinnedUploader.h), all finished on return.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_RUNTIME_DEVICE_MODELLOADER_H
#define QFUSE_RUNTIME_DEVICE_MODELLOADER_H

#include "qfuse/runtime/device/Executor.h"
#include "qfuse/runtime/checkpoint/ModelCheckpoint.h"
#include "qfuse/runtime/checkpoint/WeightSources.h"

#include <cstdint>

namespace qfuse::runtime {

struct LoadStats {
  size_t weights = 0; // weights bound
  size_t tensors = 0; // dense tensors bound
  unsigned threads = 0;
  double seconds = 0; // wall time of the whole load
};

/// Binds everything the plans read from `checkpoint`. `threads` = 0 uses
/// every core. The first error (a missing tensor, a wrong shape, an
/// encoding mismatch) is rethrown once the workers have stopped. Dense
/// weights into a quantized encoding are quantized by `device` where given
/// and it takes them (quantize-at-load on the GPU), else on the host; the
/// kernel layouts are made by `repacker` where given and it takes them
/// (the GPU's layout gather), else by format::repack.
LoadStats loadCheckpoint(Executor &executor, const ModelCheckpoint &checkpoint,
                         unsigned threads = 0,
                         const DenseQuantizer *device = nullptr,
                         const LayoutRepacker *repacker = nullptr);

/// Binds random weights and tensors (randomWeight / randomTensor), each
/// seeded from `seed` and its name's position, for benchmarks.
LoadStats bindRandomModel(Executor &executor, uint64_t seed,
                          unsigned threads = 0);

} // namespace qfuse::runtime

#endif // QFUSE_RUNTIME_DEVICE_MODELLOADER_H
