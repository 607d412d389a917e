//===- FieldGatherKernel.h - packing and layouts as a GPU gather -*- C++ -*-===//
//
// The kernel that runs a format::FieldGather (qfuse/format/FieldGather.h)
// on the device: code bytes into the row-major bit stream (GPTQ's
// packing) and row-major codes into a kernel layout (the repack at load).
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_LIB_CONVERSION_QFTOGPU_OPS_FIELDGATHERKERNEL_H
#define QFUSE_LIB_CONVERSION_QFTOGPU_OPS_FIELDGATHERKERNEL_H

#include "Ops/OpKernelCommon.h"

namespace mlir {
namespace qf {

/// The name of the gather kernel for `dstBits`-wide destination fields.
std::string fieldGatherKernelName(unsigned dstBits);

/// Emits (once per width into `module`) the kernel qf_gather_fields_b<f>
/// for destination fields of `dstBits` (1 to 8, or 16) bits and returns its
/// launch, every immediate 0 (a launch that writes nothing: the runtime
/// launches it itself with a FieldGather's values, one thread per 32-bit
/// destination word, 256 per block). Parameters, in order:
///   src, table, perm, dst, status   (pointers)
///   words, fields, period, tilesK, tileN, tileK, n, k, srcRowBytes,
///   srcBits, hasPerm, signedSrc, minCode, maxCode, addend   (i32)
/// `src` and `perm` are bound to `src`/`perm` below (perm must point at a
/// readable i32 even when hasPerm is 0).
OpLaunch emitFieldGatherLaunch(gpu::GPUModuleOp module, unsigned dstBits,
                               LaunchArgAttr src, LaunchArgAttr table,
                               LaunchArgAttr perm, LaunchArgAttr dst,
                               LaunchArgAttr status, Location loc);

} // namespace qf
} // namespace mlir

#endif // QFUSE_LIB_CONVERSION_QFTOGPU_OPS_FIELDGATHERKERNEL_H
