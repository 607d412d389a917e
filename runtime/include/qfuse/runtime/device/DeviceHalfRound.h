//===- DeviceHalfRound.h - bf16 rounded to f16 on the GPU -------*- C++ -*-===//
//
// The generated qf_round_bf16_to_f16 kernel of an artifact (every quantize
// artifact with a bf16 input holds it; HalfRoundKernel.cpp): the f16 a
// bf16 tensor rounds to, byte-identical to the host's roundToHalves
// (format::floatToHalf: round to nearest even, subnormals, quiet NaNs with
// their top payload bits). qfuse-quantize makes the calibration plan's f16
// weights of a bf16 checkpoint's GPTQ modules with it, from the stored
// bytes it uploaded once for the solver (BackgroundLoad's StoredOnDevice).
//
//   DeviceHalfRound round(artifact, context);
//   if (round.any())
//     round.enqueue(bf16, f16, count, status, stream);  // status zeroed
//   // status 1: a finite value rounded to inf; halfOverflowError names it
//
// enqueue is safe from several threads at once (it only launches).
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_RUNTIME_DEVICE_DEVICEHALFROUND_H
#define QFUSE_RUNTIME_DEVICE_DEVICEHALFROUND_H

#include "qfuse/runtime/artifact/Artifact.h"
#include "qfuse/runtime/device/Cuda.h"
#include "qfuse/runtime/device/ElementwiseKernel.h"

#include <cstdint>
#include <string>

namespace qfuse::runtime {

class DeviceHalfRound {
public:
  /// Loads the artifact's qf_round_bf16_to_f16 kernel on `context` (which
  /// must outlive this object); without one, any() is false.
  DeviceHalfRound(const Artifact &artifact, const cuda::Context &context);

  bool any() const { return kernel_.loaded(); }

  /// Enqueues on `stream`: the `count` f16 elements at `dst` rounded from
  /// the bf16 elements at `src`; `status` (one i32 the caller zeroed)
  /// becomes 1 where a finite value rounds to inf. Throws when any() is
  /// false.
  void enqueue(CUdeviceptr src, CUdeviceptr dst, uint64_t count,
               CUdeviceptr status, CUstream stream) const;

private:
  ElementwiseKernel kernel_;
};

/// The host's error for the bf16 tensor `data` (`count` elements) rounded
/// to f16 where the device's status said a value overflows: convertDense's
/// "<what>: element <i> = <value> overflows f16". Throws that Error; throws
/// an internal error if the host finds no overflowing element.
[[noreturn]] void throwHalfOverflow(const uint8_t *data, uint64_t count,
                                    const std::string &what);

} // namespace qfuse::runtime

#endif // QFUSE_RUNTIME_DEVICE_DEVICEHALFROUND_H
