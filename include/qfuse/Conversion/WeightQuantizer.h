//===- WeightQuantizer.h - round-to-nearest of one weight row span -*- C++
//-*-===//
//
// The one IR definition of qf.quantize: format::quantizeRTN (Packing.h,
// QuantizeRules.h) written as scalar scf/arith/math over memrefs, f64 where
// the C++ uses double, math.roundeven for rint, selects that keep
// std::min/std::max's operand order (signed zeros). Two consumers: the CPU
// reference of qf.quantize (qf-to-cpu) and the GPU quantize kernel
// (qf-to-gpu, Ops/QuantizeKernel.cpp). Both write the row-major packed
// components of Packing.h byte for byte.
//
// The unit of work is a span of consecutive groups of one row whose codes
// and integer zero points fill whole bytes (uint4 zero points pack two
// groups per byte, so their span is two groups): units never share a byte,
// so a GPU thread per unit needs no atomics and no zeroed output.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_CONVERSION_WEIGHTQUANTIZER_H
#define QFUSE_CONVERSION_WEIGHTQUANTIZER_H

#include "qfuse/Conversion/WeightDecoder.h"
#include "qfuse/format/Encoding.h"

#include <string>

namespace mlir {
namespace qf {

/// Why the generated quantizer does not take `enc` over `k` input columns
/// (those weights stay with the host's format::quantizeRTN), or "" when it
/// does. Not taken: unquantized formats, NVFP4's global scale (a reduction
/// over the whole tensor), act_order, 2:4, named codebook tables, float zero
/// points in an f8 scale type, groups whose codes do not fill whole bytes.
std::string quantizeUnsupportedReason(const qfuse::format::Encoding &enc,
                                      int64_t k);

/// The memrefs one quantization reads and writes; N (the leading dimension)
/// may be dynamic.
struct QuantizeBuffers {
  Value input;  ///< [N, K] f16, bf16 or f32
  Value codes;  ///< [N, rowBytes] i8
  Value scales; ///< [N, G] in storageType(scale type)
  Value zeros;  ///< [N, ceil(G*bits/8)] i8 or [N, G] scale type; null if none
};

/// The memref types of `QuantizeBuffers` for `enc` over `k` columns with
/// rows `n` (ShapedType::kDynamic allowed), named codes, scales[, zeros].
SmallVector<std::pair<std::string, MemRefType>>
quantizeComponentTypes(MLIRContext *ctx, const qfuse::format::Encoding &enc,
                       int64_t n, int64_t k);

class WeightQuantizer {
public:
  /// `enc` must pass quantizeUnsupportedReason(enc, k).
  WeightQuantizer(ScalarEmitter &e, const qfuse::format::Encoding &enc,
                  int64_t k, const QuantizeBuffers &buffers);

  /// Work units per row (ceil(G / groups per unit)).
  int64_t unitsPerRow() const;

  /// Quantizes unit `u` of row `n` (index values): statistics, scale, zero
  /// point and codes of each of its groups, written to the buffers. Returns
  /// an i1 that is true when every weight was finite and every scale fits
  /// its type; where it is false the caller must fall back to the host
  /// quantizer, which reports the error (the written bytes are unspecified).
  Value quantizeUnit(Value n, Value u);

private:
  /// One group: returns (ok, zero point bits for the zero byte or 0).
  std::pair<Value, Value> quantizeGroup(Value n, Value g);
  /// The bits one weight stores, from its scale and zero point (f64).
  Value storedCode(Value v, Value scale, Value zero);

  ScalarEmitter &e;
  const qfuse::format::Encoding &enc;
  int64_t k, groups, groupCols, unitGroups;
  unsigned bits;
  QuantizeBuffers buf;
};

} // namespace qf
} // namespace mlir

#endif // QFUSE_CONVERSION_WEIGHTQUANTIZER_H
