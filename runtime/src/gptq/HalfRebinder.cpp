//===- HalfRebinder.cpp - quantized modules back into the f16 plan --------===//

#include "qfuse/runtime/gptq/HalfRebinder.h"

#include "qfuse/runtime/Error.h"
#include "qfuse/runtime/device/Executor.h"
#include "qfuse/runtime/gptq/DequantizeHalf.h"

namespace qfuse::runtime {

HalfRebinder::HalfRebinder(Executor &executor) : executor_(executor) {}

void HalfRebinder::rebind(const std::string &name, const format::Encoding &enc,
                          const format::Unpacked &u, int64_t n, int64_t k) {
  const size_t bytes = size_t(n * k) * 2;
  const int slot = next_;
  next_ ^= 1;
  if (busy_[slot]) {
    uploaded_[slot].synchronize();
    busy_[slot] = false;
  }
  if (staging_[slot].size() < bytes)
    staging_[slot] = cuda::PinnedBuffer(bytes, "f16 rebind staging");
  dequantizeToHalf(enc, u, n, k, staging_[slot].as<uint16_t>());
  const CUdeviceptr target = executor_.componentPointer(name, format::kCodes);
  if (!target || executor_.componentBytes(name, format::kCodes) < bytes) {
    executor_.bindWeightComponent(name, format::kCodes, staging_[slot].data(),
                                  bytes);
    return;
  }
  QFUSE_CU_CTX(cuMemcpyHtoDAsync(target, staging_[slot].data(), bytes,
                                 stream_.get()),
               "rebinding '" + name + "' in f16");
  uploaded_[slot].record(stream_.get());
  busy_[slot] = true;
}

void HalfRebinder::finish() {
  QFUSE_CU(cuStreamSynchronize(stream_.get()));
  busy_[0] = busy_[1] = false;
}

} // namespace qfuse::runtime
