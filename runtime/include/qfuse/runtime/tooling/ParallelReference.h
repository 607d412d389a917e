//===- ParallelReference.h - the reference matmul on all cores --*- C++ -*-===//
//
// `qfuse-bench --check` compares every launch with format::referenceMatmul
// (double accumulation); for Llama-sized launches that host loop is most of
// a GPU round's time. Its rows are independent, so they are split across
// the host's cores, each output computed exactly as the serial reference
// does.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_RUNTIME_TOOLING_PARALLELREFERENCE_H
#define QFUSE_RUNTIME_TOOLING_PARALLELREFERENCE_H

#include <cstdint>
#include <vector>

namespace qfuse::runtime {

/// format::referenceMatmul(x, w, m, n, k), or format::referenceGatedMatmul
/// (x, w, up, m, n, k) when `up` is given, with the weight's rows split
/// across the host's cores: the same values.
std::vector<float> referenceOnAllCores(const float *x, const float *w,
                                       const float *up, int64_t m, int64_t n,
                                       int64_t k);

} // namespace qfuse::runtime

#endif // QFUSE_RUNTIME_TOOLING_PARALLELREFERENCE_H
