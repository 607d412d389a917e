//===- Block.h - GPTQ's block column loop and lazy update ------*- C++ -*-===//
//
// The part of GPTQ the fused GPU kernel (qf.gptq_block_update: rows across
// programs, the block's columns in sequence inside one, the tile on chip)
// must reproduce BIT FOR BIT. Every operation marked f32 below is one IEEE
// binary32 operation rounded to nearest even, in the order written; nothing
// is contracted into an FMA (qfuse_gptq is compiled with -ffp-contract=off).
// fit and code compute in double exactly as Grid.h and Grid.cpp say.
//
// quantizeBlock, for each row r independently (rows in any order), for each
// block column j = 0 .. B-1 in order, with w = W[r][*] the row's tile and
// U the block's [B, B] slice of the upper factor of H^-1:
//
//   if groups are dynamic and (offset + j) % G == 0:
//       p = grid.fit(w[j .. j+G))          // the group's current weights
//   c      = grid.code(w[j], p)             // RTN's map (Grid.h)
//   q      = grid.value(c, p)               // f32, as format::dequantize
//   d      = U[j][j]
//   t      = w[j] - q                       // f32 subtract
//   e      = t / d                          // f32 divide
//   for c2 = j+1 .. B-1 in order:
//       m      = e * U[j][c2]               // f32 multiply
//       w[c2]  = w[c2] - m                  // f32 subtract
//   codes[r][j] = c;  E[r][j] = e
//   loss[r] += 0.5 * double(e) * double(e)  // double; not part of the match
//
// w[j] is left holding the value that was quantized. fit, code and value are
// the Grid's (scales from the group's statistics and RTN's double
// arithmetic): deterministic functions of their f32 inputs.
//
// lazyUpdate, after the block (the GPU does it with a cuBLAS GEMM, so it
// matches this only to rounding; the whole-layer comparison is statistical):
//
//   for each row r, for each later column c (c >= i2):
//       a = 0.0f
//       for j = 0 .. B-1 in order:  a = a + E[r][j] * U[i1 + j][c]  (f32)
//       W[r][c] = W[r][c] - a                                         (f32)
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_GPTQ_BLOCK_H
#define QFUSE_GPTQ_BLOCK_H

#include "qfuse/gptq/Grid.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace qfuse::gptq {

/// One block of rows x cols weights. Pointers are row-major with the given
/// leading dimensions (elements between rows).
struct BlockTile {
  int64_t rows = 0;
  int64_t cols = 0;
  /// [rows, cols] weights with every earlier block's update applied; updated
  /// in place by the loop.
  float *w = nullptr;
  int64_t ldw = 0;
  /// [cols, cols] the block's diagonal slice of U (upper triangular).
  const float *u = nullptr;
  int64_t ldu = 0;
  /// [rows, cols] the codes chosen.
  int32_t *codes = nullptr;
  int64_t ldc = 0;
  /// [rows, cols] the scaled errors E, for lazyUpdate.
  float *err = nullptr;
  int64_t lde = 0;
  /// [rows] accumulated with 0.5 e^2 per column; may be null.
  double *rowLoss = nullptr;
};

/// Where the block's columns find their group parameters: `params` is
/// [rows, ld] (one entry per group of the row).
///
/// Static (groupOfColumn set): column j uses params[r][groupOfColumn[j]],
/// which the caller filled (per channel, static groups, act-order with
/// static groups, groups larger than the block).
///
/// Dynamic (groupOfColumn null): the block holds whole groups of groupSize
/// columns starting at a multiple of groupSize; at each column j with
/// (columnOffset + j) % groupSize == 0 the loop fits
/// params[r][(columnOffset + j) / groupSize] on w[r][j .. j + groupSize), the
/// weights as earlier columns of the block left them (the GPTQ repo's
/// behaviour without static groups).
struct BlockGroups {
  GroupParams *params = nullptr;
  int64_t ld = 0;
  const int32_t *groupOfColumn = nullptr;
  int64_t groupSize = 0;
  int64_t columnOffset = 0;
};

/// Runs the column loop over one block. Fails only when a dynamic group's
/// scale does not fit the scale type, or the groups do not tile the block;
/// the message names the row and column.
bool quantizeBlock(const Grid &grid, const BlockTile &tile,
                   const BlockGroups &groups, std::string &error);

/// W[:, i2:] -= E * U[i1:i2, i2:] in the order documented above: `err` is
/// [rows, blockCols] (ld lde), `u` points at U[i1][i2] (ld ldu, blockCols
/// rows and restCols columns), `w` at W[0][i2] (ld ldw, restCols columns).
void lazyUpdate(int64_t rows, int64_t blockCols, int64_t restCols,
                const float *err, int64_t lde, const float *u, int64_t ldu,
                float *w, int64_t ldw);

} // namespace qfuse::gptq

#endif // QFUSE_GPTQ_BLOCK_H
