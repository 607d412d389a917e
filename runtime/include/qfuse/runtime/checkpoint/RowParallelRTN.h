//===- RowParallelRTN.h - round to nearest, rows over the cores -*- C++ -*-===//
//
// Writing a GPTQ checkpoint for an artifact whose lm_head is quantized, and
// binding a dense checkpoint into a quantized artifact, round whole
// checkpoint tensors to nearest on the host (format::quantizeRTN). One call
// for Llama-3-8B's lm_head is 525 M elements on one core. Every row is
// quantized on its own unless the encoding has a tensor-wide parameter
// (NVFP4's global scale) or act_order's g_idx, so the rows are split over
// the cores and the row-major components concatenated: the same bytes as
// the single call.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_RUNTIME_CHECKPOINT_ROWPARALLELRTN_H
#define QFUSE_RUNTIME_CHECKPOINT_ROWPARALLELRTN_H

#include "qfuse/format/Encoding.h"
#include "qfuse/format/Tensor.h"

#include <cstdint>
#include <functional>
#include <string>

namespace qfuse::runtime {

/// Writes rows [first, last) of the weight as f32 into `out`
/// ((last - first) * k values).
using RowsAsF32 =
    std::function<void(int64_t first, int64_t last, float *out)>;

/// format::quantizeRTN (into row-major components, as format::pack makes
/// them) of the [n, k] weight that `rows` produces, with rows split over
/// the cores where the encoding allows it; bit for bit the single call's
/// result. Returns false with `error` as quantizeRTN does.
bool quantizeRTNByRows(const format::Encoding &enc, int64_t n, int64_t k,
                       const RowsAsF32 &rows, format::TensorMap &components,
                       std::string &error);

} // namespace qfuse::runtime

#endif // QFUSE_RUNTIME_CHECKPOINT_ROWPARALLELRTN_H
