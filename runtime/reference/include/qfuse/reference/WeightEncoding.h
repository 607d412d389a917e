//===- WeightEncoding.h - Weights as the artifact has them ------*- C++ -*-===//
//
// The compiled model does not see the checkpoint's values: the runtime
// quantizes every projection with round-to-nearest into its encoding and
// converts dense tensors (embeddings, norms, biases) to f16. This file turns
// checkpoint weights into exactly those values -- qfuse_format's quantizeRTN
// followed by its dequantize, no arithmetic of its own -- so the reference
// decoder computes with what the GPU computes with.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_REFERENCE_WEIGHTENCODING_H
#define QFUSE_REFERENCE_WEIGHTENCODING_H

#include "qfuse/reference/ModelWeights.h"

#include <map>
#include <string>
#include <vector>

namespace qfuse::reference {

/// The encoding of every projection: a default plus per-kind overrides, as
/// `qfuse emit --encoding E --override lm_head=fp16,...` chooses them. An
/// encoding is "fp16" (dense f16, the fp16 baseline), a name
/// encodingFromName() knows ("int4-g128", "nf4", "nvfp4", "int8", ...), or
/// the body of a #qf.enc<...> ("uint4, group = 64, scale = f16, zero = int").
struct EncodingPlan {
  std::string defaultEncoding = "fp16";
  /// Keys: projection kinds ("q_proj", ..., "down_proj", "lm_head").
  std::map<std::string, std::string> overrides;

  /// The encoding of projection `p`.
  const std::string &encodingFor(Projection p) const;
};

/// `w` [n, k] quantized with round-to-nearest into `encoding` and
/// dequantized back (f32 values, the formulas of qfuse/format/Packing.h);
/// "fp16" rounds each value to f16. `what` names the weight in errors (an
/// encoding that does not fit the shape, e.g. group 128 with k = 96).
std::vector<float> quantizeDequantize(const std::string &encoding,
                                      const std::vector<float> &w, int64_t n,
                                      int64_t k, const std::string &what);

/// Replaces every projection of `weights` by quantizeDequantize under its
/// encoding in `plan`, and rounds every dense tensor (embedding, norms,
/// biases) to f16 as the runtime does when it loads them into an f16
/// artifact. A tied lm_head is quantized from the embedding's values while
/// the embedding itself stays dense.
void applyEncodingPlan(ModelWeights &weights, const EncodingPlan &plan);

} // namespace qfuse::reference

#endif // QFUSE_REFERENCE_WEIGHTENCODING_H
