//===- PermutationMoves.h - GPTQ's exact moves as lists of copies -*- C++ -*-===//
//
// The copies by which GptqSolver moves act-order's and static groups' data
// on the device (runtime/src/gptq/GptqSolvePermute.cpp), planned here
// without a GPU so that unit tests can run a plan on host memory and
// compare it with the gather it stands for:
//
//   rowGather(from):       dst row i = src row from[i]
//     consecutive source rows  -> one copy of the run
//     a source row repeated    -> one copy, then doubled inside dst
//                                 (rows [i, i + d) copied to [i + d, ...))
//   columnScatter(to, n):  dst column to[j] = src column j
//     consecutive destinations -> one pitched copy of the run
//
// The device runs each plan in a few batches (cuMemcpyBatchAsync,
// cuMemcpy3DBatchAsync: one call for a list of copies, unordered among
// themselves) instead of one call per copy: rowGatherWaves splits a
// gather into the batches that can run unordered; a scatter's copies
// are independent (distinct destinations) and run as one batch.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_RUNTIME_GPTQ_PERMUTATIONMOVES_H
#define QFUSE_RUNTIME_GPTQ_PERMUTATIONMOVES_H

#include <cstdint>
#include <vector>

namespace qfuse::runtime {

/// `count` rows from row `src` of the source (or of the destination
/// itself, fromDst) to row `dst` of the destination; the copies run in
/// order (a stream's order).
struct RowCopy {
  int64_t dst = 0, src = 0, count = 0;
  bool fromDst = false;
};

/// The copies that make dst row i = src row from[i], i < from.size().
std::vector<RowCopy> rowGather(const std::vector<int64_t> &from);

/// rowGather(from) in waves, to run one batch per wave, the waves in
/// order: a wave's copies write distinct rows and read only source rows
/// and destination rows that earlier waves wrote, so they can run in any
/// order. A permutation or any gather without repeats is one wave; a row
/// repeated d times adds at most ceil(log2 d) (its doubling copies; a
/// last, shorter one may read rows an earlier wave wrote).
std::vector<std::vector<RowCopy>>
rowGatherWaves(const std::vector<int64_t> &from);

/// `count` columns from column `src` of the source to column `dst` of the
/// destination.
struct ColumnCopy {
  int64_t dst = 0, src = 0, count = 0;
};

/// The copies that make dst column to[j] = src column j, j < count.
std::vector<ColumnCopy> columnScatter(const int64_t *to, int64_t count);

} // namespace qfuse::runtime

#endif // QFUSE_RUNTIME_GPTQ_PERMUTATIONMOVES_H
