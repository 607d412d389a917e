//===- OpKernelCommon.h - pieces the decode-op generators share -*- C++ -*-===//
//
// The decode-op kernels (rms_norm, rotary, attention, silu_mul, add,
// embedding, argmax) take typed parameters (pointers the kernel reads or
// writes, i32/f32 immediates) bound by `args` records, move f16 rows with
// 16-byte vector loads, and reduce across a block with warp shuffles and one
// shared-memory round trip. This header is the one place those live.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_LIB_CONVERSION_QFTOGPU_OPS_OPKERNELCOMMON_H
#define QFUSE_LIB_CONVERSION_QFTOGPU_OPS_OPKERNELCOMMON_H

#include "Common/KernelCommon.h"
#include "Ops/OpKernels.h"

#include <string>

namespace mlir {
namespace qf {

/// One kernel parameter and what the runtime binds to it (a `#qf.arg`;
/// OpKernels.h).
struct OpParam {
  std::string name;
  ParamKind kind;
  LaunchArgAttr arg;
};

/// The launch of kernel `name`: its record (param names and types, grid,
/// block, static shared bytes) and the args parallel to the params.
OpLaunch makeOpLaunch(StringRef name, ArrayRef<OpParam> params, int64_t gridX,
                      int64_t gridY, int64_t blockX, int64_t sharedBytes = 0);

/// Creates the kernel `name` in `module` (createKernelEntry, KernelCommon.h),
/// places `b` at the start of its body, and returns its arguments in the
/// order of `params`.
SmallVector<Value> createOpKernel(ImplicitLocOpBuilder &b,
                                  gpu::GPUModuleOp module, StringRef name,
                                  ArrayRef<OpParam> params, int64_t threads);

/// Fails with a diagnostic on `op` naming `what` unless `type`'s elements
/// are f16: the kernels read and write f16 and accumulate in f32.
LogicalResult requireF16(Operation *op, StringRef what, Type type);

/// The widest f16 vector (8, 4, 2 or 1 elements: 16, 8, 4 or 2 bytes) that
/// divides `elems`, so that rows of `elems` halves stay aligned to it.
int64_t halfVectorWidth(int64_t elems);

/// A number as it appears in a kernel name: whole numbers as integers,
/// others as the shortest %g that reads back as `value` (as an f32 when
/// `isFloat`), in PTX identifiers' characters only ([A-Za-z0-9_$]):
/// `1e-05` is written `1em05`, `1.5` `1d5`, `2.5e+20` `2d5ep20`.
std::string nameNumber(double value, bool isFloat = false);

/// A static shared-memory array `<name>` of `count` x `element` in
/// `module` (16-byte aligned), and its address.
Value sharedArray(ImplicitLocOpBuilder &b, gpu::GPUModuleOp module,
                  StringRef name, Type element, int64_t count);

/// ptr + index * elementBytes in address space 3 (shared).
Value sharedElement(KernelEmitter &e, Value base, Value index,
                    int64_t elementBytes);

/// Loads `width` f16 values starting at element `index` (i32, in halves;
/// aligned to the width) of `base` and returns them as f32. `readOnly`
/// selects invariant loads (ld.global.nc) for buffers nothing writes during
/// the kernel.
SmallVector<Value> loadHalves(KernelEmitter &e, Value base, Value index,
                              int64_t width, bool readOnly = true);

/// Elements index .. index + count of the i32 array `base` (a perm), in
/// 16-byte loads where `count` allows (index aligned to them).
SmallVector<Value> loadWords(KernelEmitter &e, Value base, Value index,
                             int64_t count);

/// The `width` f16 values of a raw load (loadRaw) as f32.
SmallVector<Value> halvesOf(KernelEmitter &e, Value raw, int64_t width);

/// Stores `values` (f32) rounded to f16 at element `index` of `base`, as one
/// vector store of values.size() halves.
void storeHalves(KernelEmitter &e, Value base, Value index,
                 ArrayRef<Value> values);

/// The same `width` halves, raw: a vector of width / 2 i32 words (an f16
/// for width 1), for copies that need no arithmetic.
Value loadRaw(KernelEmitter &e, Value base, Value index, int64_t width,
              bool readOnly = true);
void storeRaw(KernelEmitter &e, Value base, Value index, Value raw,
              int64_t width);

/// 2^x with ex2.approx.ftz.f32 (relative error ~2^-22; ex2(-inf) = +0).
Value exp2Approx(KernelEmitter &e, Value x);

/// A (value, index) candidate of an argmax: argmax and the sampler's
/// greedy and max passes reduce the same way.
struct Best {
  Value value, index;
};

/// The better of two candidates under (value desc, index asc); ordered
/// compares make NaN lose.
Best better(KernelEmitter &e, Best mine, Best other);

/// Sum of `v` over the 32 lanes of a warp, in every lane (xor butterfly:
/// every lane must execute it).
Value warpSum(KernelEmitter &e, Value v);

/// Sum of `v` over the block's `warps` warps, in every thread: warp sums
/// through `scratch` (a shared f32 array of at least `warps` entries), one
/// barrier, then each thread adds the warp sums in the same order. Every
/// thread of the block must call it; `scratch` must not be reused before
/// another barrier.
Value blockSum(KernelEmitter &e, Value v, Value scratch, int64_t warps);

} // namespace qf
} // namespace mlir

#endif // QFUSE_LIB_CONVERSION_QFTOGPU_OPS_OPKERNELCOMMON_H
