//===- Block.cpp - the block column loop and the lazy update (f32) --------===//
//
// The arithmetic order is the contract documented in Block.h; keep the two
// identical. Compiled with -ffp-contract=off, so `w - e * u` is a rounded
// multiply followed by a rounded subtract.
//
//===----------------------------------------------------------------------===//

#include "qfuse/gptq/Block.h"

#include <algorithm>
#include <vector>

namespace qfuse::gptq {

bool quantizeBlock(const Grid &grid, const BlockTile &tile,
                   const BlockGroups &groups, std::string &error) {
  const bool dynamic = groups.groupOfColumn == nullptr;
  const int64_t g = groups.groupSize;
  if (dynamic &&
      (g <= 0 || tile.cols % g != 0 || groups.columnOffset % g != 0)) {
    error = "a block computing its own scales must hold whole groups: " +
            std::to_string(tile.cols) + " columns at offset " +
            std::to_string(groups.columnOffset) + " with group " +
            std::to_string(g);
    return false;
  }
  for (int64_t r = 0; r < tile.rows; ++r) {
    float *w = tile.w + r * tile.ldw;
    int32_t *codes = tile.codes + r * tile.ldc;
    float *err = tile.err + r * tile.lde;
    GroupParams *params = groups.params + r * groups.ld;
    double loss = 0;
    for (int64_t j = 0; j < tile.cols; ++j) {
      GroupParams *p;
      if (dynamic) {
        p = params + (groups.columnOffset + j) / g;
        if ((groups.columnOffset + j) % g == 0 &&
            !grid.fit(w + j, g, *p, error)) {
          error = "row " + std::to_string(r) + ", column " +
                  std::to_string(groups.columnOffset + j) + ": " + error;
          return false;
        }
      } else {
        p = params + groups.groupOfColumn[j];
      }
      const float *u = tile.u + j * tile.ldu;
      const int32_t c = grid.code(w[j], *p);
      const float q = grid.value(c, *p);
      const float t = w[j] - q;
      const float e = t / u[j];
      for (int64_t c2 = j + 1; c2 < tile.cols; ++c2) {
        const float m = e * u[c2];
        w[c2] = w[c2] - m;
      }
      codes[j] = c;
      err[j] = e;
      loss += 0.5 * double(e) * double(e);
    }
    if (tile.rowLoss)
      tile.rowLoss[r] += loss;
  }
  return true;
}

void lazyUpdate(int64_t rows, int64_t blockCols, int64_t restCols,
                const float *err, int64_t lde, const float *u, int64_t ldu,
                float *w, int64_t ldw) {
  if (restCols <= 0)
    return;
  // a[c] = sum_j E[r][j] * U[j][c], j ascending; the loops are interchanged
  // (j outside c) so that U is read along its rows, which keeps each a[c]'s
  // order of additions.
  std::vector<float> a(static_cast<size_t>(restCols));
  for (int64_t r = 0; r < rows; ++r) {
    std::fill(a.begin(), a.end(), 0.0f);
    const float *e = err + r * lde;
    for (int64_t j = 0; j < blockCols; ++j) {
      const float ej = e[j];
      const float *uj = u + j * ldu;
      for (int64_t c = 0; c < restCols; ++c) {
        const float m = ej * uj[c];
        a[size_t(c)] = a[size_t(c)] + m;
      }
    }
    float *wr = w + r * ldw;
    for (int64_t c = 0; c < restCols; ++c)
      wr[c] = wr[c] - a[size_t(c)];
  }
}

} // namespace qfuse::gptq
