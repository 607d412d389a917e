//===- ParallelRows.h - split a row loop over the host's cores --*- C++ -*-===//
//
// GPTQ's host work is loops over every element of [R, K] weights (R * K is
// 117 M for Llama-3-8B's gate/up): permuting columns, unpacking codes. They
// are independent per row, so each core takes a contiguous range of rows.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_RUNTIME_PARALLELROWS_H
#define QFUSE_RUNTIME_PARALLELROWS_H

#include <algorithm>
#include <cstdint>
#include <thread>
#include <vector>

namespace qfuse::runtime::detail {

/// Calls body(first, last) on disjoint ranges covering [0, rows), one per
/// worker (at most one per core, at least `minRows` rows each), and returns
/// when all are done. `body` must not throw.
template <typename Body>
void parallelRows(int64_t rows, const Body &body, int64_t minRows = 64) {
  const int64_t cores =
      std::max<int64_t>(1, int64_t(std::thread::hardware_concurrency()));
  const int64_t workers =
      std::max<int64_t>(1, std::min(cores, rows / std::max<int64_t>(minRows, 1)));
  if (workers == 1) {
    body(int64_t(0), rows);
    return;
  }
  std::vector<std::thread> pool;
  const int64_t per = (rows + workers - 1) / workers;
  for (int64_t first = 0; first < rows; first += per)
    pool.emplace_back(
        [&body, first, last = std::min(rows, first + per)] { body(first, last); });
  for (std::thread &t : pool)
    t.join();
}

} // namespace qfuse::runtime::detail

#endif // QFUSE_RUNTIME_PARALLELROWS_H
