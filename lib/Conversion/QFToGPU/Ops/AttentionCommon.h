//===- AttentionCommon.h - pieces of the qf.attention kernels --*- C++ -*-===//
//
// The shape, parameters and constants that the attention kernel
// (AttentionKernel.cpp) and the KV-cache writes (AttentionCacheWrite.cpp)
// share; AttentionKernel.cpp's file comment describes the kernels.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_LIB_CONVERSION_QFTOGPU_OPS_ATTENTIONCOMMON_H
#define QFUSE_LIB_CONVERSION_QFTOGPU_OPS_ATTENTIONCOMMON_H

#include "Ops/OpKernelCommon.h"
#include "Ops/RopeCommon.h"

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

struct AttentionShape {
  int64_t heads, kvHeads, d, seq, kvWidth;
};

/// The kernel parameters buildAttention reads. `key` and `value` are the
/// op's new rows, set only in the rotary form (which also writes the
/// caches).
struct AttentionArgs {
  Value query, key, value, keyCache, valueCache, positions, out;
};

/// The thread's place in an attention block (h, m): its lane, warp, key
/// chunk and stream, and the columns of its chunk.
struct AttentionThread {
  Value h, m, tid, lane, warp, chunk, stream;
  Value kvHead; // first column of the block's kv head
  Value col;    // first column of the lane's chunk within a head
  Value kvCol;  // kvHead + col
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
