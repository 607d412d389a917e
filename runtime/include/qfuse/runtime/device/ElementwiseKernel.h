//===- ElementwiseKernel.h - one generated element-wise kernel --*- C++ -*-===//
//
// A generated kernel of one thread per element (256 a block) whose
// parameters are (src, dst, extra pointers..., element count as i32), found
// in an artifact by name: the quantize artifact's conversions
// (qf_widen_*_to_f32, qf_round_bf16_to_f16). Counts of 2^30 elements and
// more go in several launches, each slice's pointers advanced by the
// element sizes.
//
// enqueue is safe from several threads at once (it only launches).
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_RUNTIME_DEVICE_ELEMENTWISEKERNEL_H
#define QFUSE_RUNTIME_DEVICE_ELEMENTWISEKERNEL_H

#include "qfuse/runtime/artifact/Artifact.h"
#include "qfuse/runtime/device/Cuda.h"

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>

namespace qfuse::runtime {

class ElementwiseKernel {
public:
  /// The kernel `name` of `artifact`, loaded on `context` (which must
  /// outlive this object); loaded() is false where the artifact has none.
  ElementwiseKernel(const Artifact &artifact, std::string name,
                    const cuda::Context &context);

  bool loaded() const { return function_ != nullptr; }

  /// Enqueues on `stream` the kernel over `count` elements: `srcBytes` per
  /// element at `src`, `dstBytes` at `dst`, then the `extra` pointers as
  /// they are. Throws where !loaded().
  void enqueue(CUdeviceptr src, unsigned srcBytes, CUdeviceptr dst,
               unsigned dstBytes, uint64_t count,
               std::initializer_list<CUdeviceptr> extra, CUstream stream) const;

private:
  std::string name_;
  std::shared_ptr<cuda::Module> module_;
  CUfunction function_ = nullptr;
};

} // namespace qfuse::runtime

#endif // QFUSE_RUNTIME_DEVICE_ELEMENTWISEKERNEL_H
