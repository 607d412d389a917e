//===- DeviceGather.h - code packing and layouts on the GPU -----*- C++ -*-===//
//
// Runs a format::FieldGather (qfuse/format/FieldGather.h) with the
// generated qf_gather_fields_b<f> kernels of an artifact (every quantize
// artifact holds the widths of its encodings; FieldGatherKernel.cpp):
// GPTQ's code bytes into the row-major codes component
// (format::packCodeBytes), and row-major codes into a kernel layout
// (format::repack), byte-identical to the host functions.
//
//   DeviceGather gather(artifact, context);
//   format::FieldGather g;
//   if (gather.has(enc) && format::repackGather(enc, layout, n, k, gIdx, g, why))
//     ok = gather.run(g, codesDevice, bytes, why);   // else repack on the host
//
// The plan's tile table (at most 2048 entries per (width, layout)) is
// uploaded once and cached; act_order's perm ([K]) per call. Calls from
// several threads are serialized (one stream).
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_RUNTIME_DEVICE_DEVICEGATHER_H
#define QFUSE_RUNTIME_DEVICE_DEVICEGATHER_H

#include "qfuse/runtime/artifact/Artifact.h"
#include "qfuse/runtime/device/Cuda.h"

#include "qfuse/format/FieldGather.h"

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace qfuse::runtime {

class DeviceGather {
public:
  /// Loads every qf_gather_fields_b<f> kernel of `artifact` on `context`
  /// (which must outlive this object); an artifact without any gives an
  /// object for which has() is false.
  DeviceGather(const Artifact &artifact, const cuda::Context &context);

  /// Whether a kernel writes `dstBits`-wide fields.
  bool has(unsigned dstBits) const { return functions_.count(dstBits) > 0; }
  bool any() const { return !functions_.empty(); }
  /// Whether the `dstBits` kernel takes padParity (2:4 metadata): kernels
  /// of quantize artifacts compiled before it do not.
  bool hasPadParity(unsigned dstBits) const {
    auto it = immCounts_.find(dstBits);
    return it != immCounts_.end() && it->second >= 16;
  }

  /// Runs `gather` from the device bytes `src` into a device buffer and
  /// downloads its first dstBytes bytes into `out`. False, with `why`, when
  /// a code is out of range (the host function names it).
  bool run(const format::FieldGather &gather, CUdeviceptr src,
           std::vector<uint8_t> &out, std::string &why);
  /// The same from host bytes (`srcBytes` of them, uploaded first).
  bool runHost(const format::FieldGather &gather, const uint8_t *src,
               size_t srcBytes, std::vector<uint8_t> &out, std::string &why);

  /// Enqueues `gather` on `stream` into `dst` (at least words() * 4 bytes,
  /// every word written); `status` (one i32 the caller zeroed) becomes 1
  /// on an out-of-range code. The table and perm are uploaded before it
  /// returns. Throws when no kernel writes the width (or it has no
  /// padParity and `gather` needs it). Threads may enqueue
  /// gathers without a perm on streams of their own at once (GPTQ's
  /// groups do); a perm goes through one shared buffer, so callers with
  /// perms take turns (run and runHost do).
  void enqueue(const format::FieldGather &gather, CUdeviceptr src,
               CUdeviceptr dst, CUdeviceptr status, CUstream stream);
  /// The same with the caller's perm on the device (`devicePerm`, one i32
  /// per destination column; gather.perm empty), so that threads with
  /// perms of their own may enqueue at once.
  void enqueue(const format::FieldGather &gather, CUdeviceptr src,
               CUdeviceptr dst, CUdeviceptr status, CUstream stream,
               CUdeviceptr devicePerm);

private:
  bool runLocked(const format::FieldGather &gather, CUdeviceptr src,
                 std::vector<uint8_t> &out, std::string &why);

  const cuda::Context &context_;
  std::vector<std::shared_ptr<cuda::Module>> modules_;
  std::map<unsigned, CUfunction> functions_;
  std::map<unsigned, size_t> immCounts_; // i32 parameters of each kernel
  std::map<std::vector<int32_t>, cuda::DeviceBuffer> tables_;
  std::mutex tablesMutex_; // tables_ and perm_, for enqueue
  cuda::DeviceBuffer perm_, src_, dst_, status_;
  std::unique_ptr<cuda::Stream> stream_;
  std::mutex mutex_;
};

} // namespace qfuse::runtime

#endif // QFUSE_RUNTIME_DEVICE_DEVICEGATHER_H
