//===- HalfRebinder.h - quantized modules back into the f16 plan -*- C++ -*-===//
//
// After GPTQ quantizes a layer, the next layer's calibration must see the
// quantized weights: each module's codes dequantized to f16
// (dequantizeToHalf) and written over the plan's f16 weight buffer, in
// place. Two pinned staging buffers alternate, so that one module's
// dequantization overlaps the previous module's upload, and nothing is
// allocated per layer once the largest module has been seen.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_RUNTIME_GPTQ_HALFREBINDER_H
#define QFUSE_RUNTIME_GPTQ_HALFREBINDER_H

#include "qfuse/format/Encoding.h"
#include "qfuse/format/Packing.h"
#include "qfuse/runtime/device/Cuda.h"

#include <string>

namespace qfuse::runtime {

class Executor;

class HalfRebinder {
public:
  explicit HalfRebinder(Executor &executor);

  /// Queues module `name`'s weight `u` ([n, k] in `enc`) as f16 into the
  /// plan's buffer for it (a new buffer when the plan holds none of the
  /// size). Returns once `u` has been read.
  void rebind(const std::string &name, const format::Encoding &enc,
              const format::Unpacked &u, int64_t n, int64_t k);
  /// Waits for every queued upload.
  void finish();

private:
  Executor &executor_;
  cuda::Stream stream_;
  cuda::PinnedBuffer staging_[2];
  cuda::Event uploaded_[2];
  bool busy_[2] = {false, false};
  int next_ = 0;
};

} // namespace qfuse::runtime

#endif // QFUSE_RUNTIME_GPTQ_HALFREBINDER_H
