//===- PermutationMoves.cpp - GPTQ's exact moves as lists of copies -------===//
//
// The copy plans of PermutationMoves.h (CPU only; run on the device by
// GptqSolvePermute.cpp).
//
//===----------------------------------------------------------------------===//

#include "qfuse/runtime/gptq/PermutationMoves.h"

#include <algorithm>

namespace qfuse::runtime {

std::vector<RowCopy> rowGather(const std::vector<int64_t> &from) {
  std::vector<RowCopy> copies;
  const int64_t n = int64_t(from.size());
  for (int64_t i = 0; i < n;) {
    int64_t j = i + 1;
    if (j < n && from[size_t(j)] == from[size_t(i)]) {
      while (j < n && from[size_t(j)] == from[size_t(i)])
        ++j;
      copies.push_back({i, from[size_t(i)], 1, false});
      for (int64_t done = 1; done < j - i; done *= 2)
        copies.push_back({i + done, i, std::min(done, j - i - done), true});
    } else {
      while (j < n && from[size_t(j)] == from[size_t(j - 1)] + 1)
        ++j;
      copies.push_back({i, from[size_t(i)], j - i, false});
    }
    i = j;
  }
  return copies;
}

std::vector<std::vector<RowCopy>>
rowGatherWaves(const std::vector<int64_t> &from) {
  std::vector<std::vector<RowCopy>> waves;
  // The wave that wrote each destination row (-1: none yet).
  std::vector<int64_t> writtenIn(from.size(), -1);
  for (const RowCopy &c : rowGather(from)) {
    size_t wave = 0;
    if (c.fromDst)
      for (int64_t r = c.src; r < c.src + c.count; ++r)
        wave = std::max(wave, size_t(writtenIn[size_t(r)] + 1));
    for (int64_t r = c.dst; r < c.dst + c.count; ++r)
      writtenIn[size_t(r)] = int64_t(wave);
    if (waves.size() <= wave)
      waves.resize(wave + 1);
    waves[wave].push_back(c);
  }
  return waves;
}

std::vector<ColumnCopy> columnScatter(const int64_t *to, int64_t count) {
  std::vector<ColumnCopy> copies;
  for (int64_t j = 0; j < count;) {
    int64_t e = j + 1;
    while (e < count && to[e] == to[e - 1] + 1)
      ++e;
    copies.push_back({to[j], j, e - j});
    j = e;
  }
  return copies;
}

} // namespace qfuse::runtime
