//===- TensorParts.h - A large tensor split into row ranges ----*- C++ -*-===//
//
// A dense tensor that a load converts (a bf16 checkpoint's 1 GB embedding
// into an f16 artifact) would be made by one worker alone while the others
// wait. BackgroundLoad splits it into parts of whole rows instead: each
// part converted on a worker into its place in one host buffer
// (checkpointTensorPart) and uploaded to its place in one device buffer, so
// the tensor's bytes are the same as made whole. CPU only.
//
//   rowParts(/*rows=*/128256, /*rowElements=*/4096, /*partElements=*/1<<25)
//     -> 16 parts of 8192 rows (the last 5376), in order, covering it
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_RUNTIME_DEVICE_TENSORPARTS_H
#define QFUSE_RUNTIME_DEVICE_TENSORPARTS_H

#include <algorithm>
#include <cstdint>
#include <vector>

namespace qfuse::runtime {

/// Elements [first, first + count) of a tensor.
struct ElementRange {
  uint64_t first = 0, count = 0;
  bool operator==(const ElementRange &o) const {
    return first == o.first && count == o.count;
  }
};

/// `rows` rows of `rowElements` elements in parts of whole rows, each of at
/// most `partElements` elements (but at least one row), in order and
/// covering every element; one part for an empty tensor.
inline std::vector<ElementRange> rowParts(uint64_t rows, uint64_t rowElements,
                                          uint64_t partElements) {
  const uint64_t perPart =
      rowElements ? std::max<uint64_t>(1, partElements / rowElements) : rows;
  std::vector<ElementRange> parts;
  for (uint64_t row = 0; row < rows; row += perPart) {
    const uint64_t n = std::min(perPart, rows - row);
    parts.push_back({row * rowElements, n * rowElements});
  }
  if (parts.empty())
    parts.push_back({0, 0});
  return parts;
}

} // namespace qfuse::runtime

#endif // QFUSE_RUNTIME_DEVICE_TENSORPARTS_H
