//===- RowParallelRTN.cpp - round to nearest, rows over the cores ---------===//

#include "qfuse/runtime/checkpoint/RowParallelRTN.h"

#include "ParallelJobs.h"

#include "qfuse/format/Packing.h"

#include <algorithm>
#include <cstring>
#include <thread>
#include <vector>

namespace qfuse::runtime {
namespace {

/// The single call: every row at once.
bool wholeTensor(const format::Encoding &enc, int64_t n, int64_t k,
                 const RowsAsF32 &rows, format::TensorMap &components,
                 std::string &error) {
  std::vector<float> w(size_t(n * k));
  rows(0, n, w.data());
  return format::quantizeRTN(enc, w.data(), n, k, components, error);
}

} // namespace

bool quantizeRTNByRows(const format::Encoding &enc, int64_t n, int64_t k,
                       const RowsAsF32 &rows, format::TensorMap &components,
                       std::string &error) {
  // At least this many elements per part: smaller weights are not split.
  constexpr int64_t kMinElements = int64_t(1) << 22;
  const int64_t cores =
      std::max<int64_t>(1, int64_t(std::thread::hardware_concurrency()));
  const int64_t parts = std::min<int64_t>(
      {cores, n, std::max<int64_t>(1, n * k / kMinElements)});
  // Every component must be [n, ...]: then each part's rows are a
  // contiguous slice of it.
  std::vector<format::ComponentSpec> specs;
  bool byRows = parts > 1 && !enc.globalScale && !enc.actOrder &&
                format::componentSpecs(enc, n, k, specs, error);
  for (const format::ComponentSpec &spec : specs)
    byRows = byRows && !spec.shape.empty() && spec.shape[0] == n;
  if (!byRows) {
    error.clear();
    return wholeTensor(enc, n, k, rows, components, error);
  }
  const int64_t per = (n + parts - 1) / parts;
  const size_t count = size_t((n + per - 1) / per);
  std::vector<format::TensorMap> pieces(count);
  std::vector<std::string> errors(count);
  std::vector<char> ok(count, 0);
  detail::parallelJobs(count, [&](size_t i) {
    const int64_t first = int64_t(i) * per, last = std::min(n, first + per);
    std::vector<float> w(size_t((last - first) * k));
    rows(first, last, w.data());
    ok[i] = format::quantizeRTN(enc, w.data(), last - first, k, pieces[i],
                                errors[i]);
  });
  for (size_t i = 0; i < count; ++i)
    if (!ok[i]) {
      // The single call's message names rows from 0: redo it whole.
      error.clear();
      return wholeTensor(enc, n, k, rows, components, error);
    }
  components.clear();
  for (const format::ComponentSpec &spec : specs) {
    format::Tensor whole(spec.dtype, spec.shape);
    size_t at = 0;
    for (format::TensorMap &piece : pieces) {
      auto it = piece.find(spec.name);
      if (it == piece.end() || at + it->second.data.size() > whole.data.size())
        return wholeTensor(enc, n, k, rows, components, error);
      std::memcpy(whole.data.data() + at, it->second.data.data(),
                  it->second.data.size());
      at += it->second.data.size();
      format::Tensor().data.swap(it->second.data);
    }
    if (at != whole.data.size())
      return wholeTensor(enc, n, k, rows, components, error);
    components.emplace(spec.name, std::move(whole));
  }
  return true;
}

} // namespace qfuse::runtime
