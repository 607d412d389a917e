//===- AttentionCommon.h - pieces of the qf.attention kernels --*- C++ -*-===//
//
// The shape, parameters and constants that the attention kernels
// (AttentionKernel.cpp, and AttentionTiled.cpp on the tensor cores) and the
// KV-cache writes (AttentionCacheWrite.cpp) share; AttentionKernel.cpp's
// file comment describes the kernels.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_LIB_CONVERSION_QFTOGPU_OPS_ATTENTIONCOMMON_H
#define QFUSE_LIB_CONVERSION_QFTOGPU_OPS_ATTENTIONCOMMON_H

#include "Ops/OpKernelCommon.h"
#include "Ops/RopeCommon.h"

#include <cmath>
#include <optional>

namespace mlir {
namespace qf {
namespace attention {

/// Warps per attention block and positions per stream per loop trip.
constexpr int64_t kWarps = 16;
constexpr int64_t kUnroll = 8;
/// Halves per lane chunk (one 16-byte load).
constexpr int64_t kChunk = 8;
/// From this batch the rotary form is two launches (rotated rows into the
/// cache, then attention of the cache with the query rotated): in one
/// launch every block rotates all the new keys before its row, work that
/// grows with the square of the batch (docs/defaults.md).
constexpr int64_t kRotarySplitFromBatch = 32;
/// From this batch the attention of the cache (launch 2 of the plain and of
/// the split rotary form) runs on the tensor cores, where tiledAttend takes
/// the shape: a block shares each key and value tile among the query rows
/// of a run and the heads of a kv group (docs/defaults.md).
constexpr int64_t kTiledFromBatch = 32;
static_assert(kTiledFromBatch >= kRotarySplitFromBatch,
              "the tiled kernel reads only the cache: the rotary form must "
              "be split from its batch");

/// log2(e) / sqrt(D): scores scaled by it are in the base-2 exponent domain,
/// so that exp is one ex2.
inline double scoreScale(int64_t d) {
  return 1.4426950408889634 / std::sqrt(static_cast<double>(d));
}

struct AttentionShape {
  int64_t heads, kvHeads, d, seq, kvWidth;
};

/// "h<heads>_kv<kvHeads>_d<d>_s<seq>": the shape's part of kernel names.
inline std::string shapeKey(const AttentionShape &s) {
  return "h" + std::to_string(s.heads) + "_kv" + std::to_string(s.kvHeads) +
         "_d" + std::to_string(s.d) + "_s" + std::to_string(s.seq);
}

/// The kernel parameters buildAttention reads. `key` and `value` are the
/// op's new rows, set only in the rotary form (which also writes the
/// caches). `outOrder`, when set, is where out's column c is stored (the
/// inv_perm of the act_order matmul that reads out, SortedOutput.h).
struct AttentionArgs {
  Value query, key, value, keyCache, valueCache, positions, out, outOrder;
};

/// The thread's place in an attention block (h, m): its lane, warp, key
/// chunk and stream, and the columns of its chunk.
struct AttentionThread {
  Value h, m, tid, lane, warp, chunk, stream;
  Value kvHead; // first column of the block's kv head
  Value col;    // first column of the lane's chunk within a head
  Value kvCol;  // kvHead + col
  Value outColumn; // with outOrder: outOrder[h * D + tid], loaded early
};

/// Launch 1 of the plain form: key/value rows -> cache rows positions[m].
OpLaunch cacheWrite(AttentionOp op, OpKernelContext &context,
                    const AttentionShape &s, int64_t batch);

/// Launch 1 of the split rotary form: grid (KV, M), the first head of kv
/// head x's group writes its rotated key row m and value row m to cache
/// row positions[m] (writeRotatedRows, as the one-launch form does).
OpLaunch rotaryCacheWrite(AttentionOp op, OpKernelContext &context,
                          const AttentionShape &s, const RopeParams &rope,
                          int64_t batch);

/// Launch 2 of the plain form (`rope` null) or of the split rotary form on
/// the tensor cores (AttentionTiled.cpp), or std::nullopt where it cannot
/// take the shape or the target: the caller then keeps the CUDA-core kernel.
/// `sorted`: output column c goes to out_order[c] (outOrderArg).
std::optional<OpLaunch> tiledAttend(AttentionOp op, OpKernelContext &context,
                                    const AttentionShape &s, int64_t batch,
                                    const RopeParams *rope, bool sorted);

/// The `out_order` parameter of a sorted output: the reader's inv_perm
/// (SortedOutput.h).
LaunchArgAttr outOrderArg(MLIRContext *ctx);
/// Whether the tiled kernel may be chosen (`--qf-tiled-attention`, on by
/// default).
bool tiledAttentionEnabled();

/// f32 -> f16 -> f32: the rounding an f16 result has.
SmallVector<Value> roundToHalf(KernelEmitter &e, ArrayRef<Value> values);

/// The query chunk of 8 halves at column `col` (i32) of the head starting
/// at element `qHead` of `query`, as f32 values: with a `rope` table,
/// rotated by `position` (i32) and rounded to f16 (rotateChunk), as the
/// separate rotary kernel's result would be; raw without one. Both
/// attention kernels of the cache read their query through it.
SmallVector<Value> queryChunk(KernelEmitter &e, LLVM::GlobalOp rope, int64_t d,
                              Value query, Value qHead, Value col,
                              Value position);

/// Rotates the chunk of 8 elements at column `col` (i32, a multiple of 8)
/// of the head starting at element `head` of `x`, whose values are `own`,
/// by `position` (f64), exactly as qf.rotary's kernel does (RopeCommon.h);
/// returns f32 values, not yet rounded. For D >= 16 the partner chunk
/// col +- D/2 is loaded from `x` (read only); at D = 8 the chunk is the
/// whole head and its halves are each other's partners.
SmallVector<Value> rotateChunk(KernelEmitter &e, LLVM::GlobalOp table,
                               int64_t d, Value x, Value head, Value col,
                               ArrayRef<Value> own, Value position);

/// Rotary form, part 1: the first head of each kv group writes the group's
/// rotated key row m and value row m to cache row positions[m].
void writeRotatedRows(KernelEmitter &e, LLVM::GlobalOp rope,
                      const AttentionArgs &args, const AttentionShape &s,
                      const AttentionThread &t, Value pos, Value posInRange);

} // namespace attention
} // namespace qf
} // namespace mlir

#endif // QFUSE_LIB_CONVERSION_QFTOGPU_OPS_ATTENTIONCOMMON_H
