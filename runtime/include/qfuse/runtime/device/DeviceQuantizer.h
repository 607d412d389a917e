//===- DeviceQuantizer.h - round-to-nearest on the GPU ----------*- C++ -*-===//
//
// Quantize-at-load on the device: the generated qf.quantize kernels of an
// artifact (version 6, docs/quantize-at-load.md) turn a dense f16/bf16/f32
// [N, K] device matrix into exactly the row-major components
// format::quantizeRTN packs. One kernel per (encoding, K, input dtype)
// serves every N (one block per row).
//
//   DeviceQuantizer q(artifact, context);
//   if (q.has(enc, k, DType::F16))
//     ok = q.quantize(enc, wDevice, n, k, DType::F16, components, why);
//   // ok false: a weight or scale is not finite; quantize on the host,
//   // which names the element.
//
// NVFP4's kernel also reads the tensor's largest magnitude (one f32,
// parameter "amax"): quantize() finds it first with DeviceAmax.
//
// Calls from several threads are serialized (one stream).
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_RUNTIME_DEVICE_DEVICEQUANTIZER_H
#define QFUSE_RUNTIME_DEVICE_DEVICEQUANTIZER_H

#include "qfuse/runtime/artifact/Artifact.h"
#include "qfuse/runtime/device/Cuda.h"
#include "qfuse/runtime/device/DeviceAmax.h"

#include "qfuse/format/Encoding.h"
#include "qfuse/format/Tensor.h"

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace qfuse::runtime {

class DeviceQuantizer {
public:
  /// Loads the kernel of every qf.quantize launch of `artifact` on
  /// `context` (which must outlive the quantizer).
  DeviceQuantizer(const Artifact &artifact, const cuda::Context &context);

  /// Whether a kernel quantizes `enc` over `k` columns of `input`.
  bool has(const format::Encoding &enc, int64_t k, DType input) const;
  /// What one kernel quantizes.
  struct Key {
    format::Encoding encoding;
    int64_t k = 0;
    DType input = DType::F16;
  };
  /// Every loaded kernel's key, in artifact order.
  std::vector<Key> keys() const;

  /// Launches the kernel on `stream`: `w` is the [n, k] input, `outputs`
  /// the device buffers of the components by name (codes, scales[, zeros]
  /// [, global_scale], the shapes of format::componentSpecs), `status` one
  /// i32 the caller zeroed, `amax` (NVFP4 only, else 0) one f32 holding the
  /// largest |w| of the whole input (DeviceAmax). Throws when has() is
  /// false or the kernel needs an amax and gets none.
  void enqueue(const format::Encoding &enc, CUdeviceptr w, int64_t n, int64_t k,
               DType input, const std::map<std::string, CUdeviceptr> &outputs,
               CUdeviceptr status, CUstream stream,
               CUdeviceptr amax = 0) const;

  /// Quantizes the device matrix `w` and downloads the components into
  /// `components` (format::quantizeRTN's bytes). Returns false, with
  /// `why`, when the kernel reports a non-finite weight or scale.
  bool quantize(const format::Encoding &enc, CUdeviceptr w, int64_t n,
                int64_t k, DType input, format::TensorMap &components,
                std::string &why);
  /// The same from host memory (uploaded first).
  bool quantizeHost(const format::Encoding &enc, const void *w, int64_t n,
                    int64_t k, DType input, format::TensorMap &components,
                    std::string &why);

private:
  struct Entry {
    format::Encoding encoding;
    int64_t k = 0;
    DType input = DType::F16;
    std::shared_ptr<cuda::Module> module;
    CUfunction function = nullptr;
    std::vector<std::string> params; // w, components..., status
    unsigned threads = 0;
  };
  const Entry *find(const format::Encoding &enc, int64_t k, DType input) const;
  /// quantize() with mutex_ held and the context current.
  bool quantizeLocked(const format::Encoding &enc, CUdeviceptr w, int64_t n,
                      int64_t k, DType input, format::TensorMap &components,
                      std::string &why);

  const cuda::Context &context_;
  std::vector<Entry> entries_;
  std::mutex mutex_;
  std::unique_ptr<cuda::Stream> stream_;
  /// Grow-only device memory reused by quantize(): input, outputs, status,
  /// NVFP4's amax word.
  cuda::DeviceBuffer input_, outputs_, status_, amaxWord_;
  /// The largest magnitude for NVFP4 (made on first use).
  std::unique_ptr<DeviceAmax> amax_;
};

} // namespace qfuse::runtime

#endif // QFUSE_RUNTIME_DEVICE_DEVICEQUANTIZER_H
