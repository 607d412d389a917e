//===- CalibrationSamples.h - the token ids GPTQ calibrates on --*- C++ -*-===//
//
// qfuse-quantize's --calibration: "random:N" (N sequences of seqLen uniform
// token ids from a seeded generator) or a JSON file [[ids...], ...] (each
// cut to seqLen tokens).
//
//   auto samples = calibrationSamples("random:128", 512, vocab, /*seed=*/0);
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_RUNTIME_GPTQ_CALIBRATIONSAMPLES_H
#define QFUSE_RUNTIME_GPTQ_CALIBRATIONSAMPLES_H

#include <cstdint>
#include <string>
#include <vector>

namespace qfuse::runtime {

/// The samples `spec` names; throws naming `spec` (and the sample) when it
/// is malformed or holds an id outside [0, vocab) (vocab 0: unchecked).
std::vector<std::vector<int32_t>> calibrationSamples(const std::string &spec,
                                                     int64_t seqLen,
                                                     int64_t vocab,
                                                     uint64_t seed);

} // namespace qfuse::runtime

#endif // QFUSE_RUNTIME_GPTQ_CALIBRATIONSAMPLES_H
