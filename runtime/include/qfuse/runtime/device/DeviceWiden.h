//===- DeviceWiden.h - f16/bf16 widened to f32 on the GPU -------*- C++ -*-===//
//
// The generated qf_widen_f16_to_f32 / qf_widen_bf16_to_f32 kernels of an
// artifact (every quantize artifact with an f16 or bf16 input holds its
// type's; WidenKernel.cpp): the f32 bits the host's format::halfToFloat /
// bfloat16ToFloat give, every pattern (-0 and NaN payloads included).
// GPTQ's solver widens the checkpoint's device weights with them
// (GptqSolveOptions::widen); without one it falls back to a cuBLAS product
// x * 1, which turns -0 into +0.
//
//   DeviceWiden widen(artifact, context);
//   if (widen.has(DType::F16))
//     widen.enqueue(DType::F16, src, dst, count, stream);
//
// enqueue is safe from several threads at once (it only launches).
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_RUNTIME_DEVICE_DEVICEWIDEN_H
#define QFUSE_RUNTIME_DEVICE_DEVICEWIDEN_H

#include "qfuse/runtime/artifact/Artifact.h"
#include "qfuse/runtime/device/Cuda.h"
#include "qfuse/runtime/device/ElementwiseKernel.h"

#include <cstdint>

namespace qfuse::runtime {

class DeviceWiden {
public:
  /// Loads the artifact's widening kernels on `context` (which must
  /// outlive this object); has() says which it holds.
  DeviceWiden(const Artifact &artifact, const cuda::Context &context);

  /// A kernel widens `source` (F16 or BF16).
  bool has(DType source) const;
  bool any() const { return f16_.loaded() || bf16_.loaded(); }

  /// Enqueues on `stream`: the `count` f32 elements at `dst` widened from
  /// the `source` elements at `src`. Throws where !has(source).
  void enqueue(DType source, CUdeviceptr src, CUdeviceptr dst,
               uint64_t count, CUstream stream) const;

private:
  ElementwiseKernel f16_, bf16_;
};

} // namespace qfuse::runtime

#endif // QFUSE_RUNTIME_DEVICE_DEVICEWIDEN_H
