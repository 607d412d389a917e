//===- QuantizeRules.h - rounding rules shared by RTN and GPTQ --*- C++ -*-===//
//
// The two choices every quantizer of a format must make the same way, so
// that GPTQ (runtime/src/gptq/reference) lands on exactly the grid round-to-nearest
// (Quantize.cpp) uses: how a computed scale is stored, and which codebook
// entry a value maps to.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_FORMAT_QUANTIZERULES_H
#define QFUSE_FORMAT_QUANTIZERULES_H

#include "qfuse/format/Encoding.h"

#include <cstdint>
#include <vector>

namespace qfuse::format {

/// The smallest value of `type` that is >= s (s > 0): a scale rounded up, so
/// that amax / scale never exceeds the format's largest code. E4M3 (NVFP4)
/// rounds to nearest instead, as the NVFP4 recipe does.
float storeScale(double s, ScalarType type);

/// Nearest-entry search in a codebook: entries sorted by value, equal values
/// collapsed to their lowest index.
class NearestEntry {
public:
  NearestEntry(const float *table, int64_t size);
  /// The index of the entry nearest to x; on a tie, the lower index.
  int32_t operator()(double x) const;

private:
  struct Entry {
    float value;
    int32_t index;
  };
  std::vector<Entry> entries;
};

} // namespace qfuse::format

#endif // QFUSE_FORMAT_QUANTIZERULES_H
