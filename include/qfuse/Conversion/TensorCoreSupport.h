//===- TensorCoreSupport.h - what the fused kernels lower -------*- C++ -*-===//
//
// The encodings and shapes the tensor-core kernel and the matvec take,
// defined once for their generators (TensorCorePlan.cpp, MatVecPlan.cpp,
// which turn a refusal into the op's diagnostic) and for the cost model,
// which must not pick a kernel for a weight it cannot run: where neither
// takes it, the dequantize + cuBLAS fallback does (docs/fallback.md).
// Header-only: the cost model's library does not link the conversion.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_CONVERSION_TENSORCORESUPPORT_H
#define QFUSE_CONVERSION_TENSORCORESUPPORT_H

#include "qfuse/Dialect/QF/IR/QFDialect.h"
#include "qfuse/format/MmaLayout.h"

#include <optional>
#include <string>

namespace mlir {
namespace qf {

/// Why neither fused kernel takes act_order + 2:4 (the fallback does).
inline constexpr const char *kUnsortedActOrder =
    "act_order with 2:4 sparsity keeps its columns in checkpoint order "
    "(sorting them by group would break the quads)";

/// Why the tensor-core kernel cannot lower weights of encoding `enc` on
/// sm_`smVersion`, or nullopt when it can. Shapes are checked against the
/// tiling by the generator; see tensorCoreRefusesShape for the cost model.
/// act_order weights it takes as plain ones, on activations qf-to-gpu
/// permutes first (Ops/PermuteKernel.cpp), but for act_order + 2:4, whose
/// columns are not sorted (format::sortsColumns): the fallback takes those.
inline std::optional<std::string>
tensorCoreRefusesEncoding(EncodingAttr enc, int64_t smVersion) {
  std::string sm = "; target is sm_" + std::to_string(smVersion);
  if (enc.getActOrder() && enc.isSparse24())
    return std::string(kUnsortedActOrder);
  if (enc.isSparse24()) {
    // mma.sp decodes the kept codes straight into its sparse A fragments
    // (TensorCore/TensorCoreSparse.cpp): f16 values, and the integer and
    // fp8 codes whose decode is a permute under a magic exponent.
    switch (enc.getFormat()) {
    case ElementFormat::F16:
    case ElementFormat::Int4:
    case ElementFormat::UInt4:
    case ElementFormat::Int8:
    case ElementFormat::UInt8:
      break;
    case ElementFormat::FP8E4M3:
      if (smVersion < 89)
        return "fp8 codes decode with cvt.f16x2.e4m3x2 (sm_89 or newer)" + sm;
      break;
    default:
      return "the mma.sp kernel lowers 2:4 weights of f16, int4, uint4, "
             "int8, uint8 and fp8e4m3 codes; got '" +
             stringifyElementFormat(enc.getFormat()).str() + "'";
    }
    if (isa_and_present<Float8E4M3FNType>(enc.getScaleType()) &&
        smVersion < 89)
      return "E4M3 scales need cvt.f16x2.e4m3x2 (sm_89 or newer)" + sm;
    return std::nullopt;
  }
  switch (enc.getFormat()) {
  case ElementFormat::Int4:
  case ElementFormat::UInt4:
  case ElementFormat::Int8:
  case ElementFormat::UInt8:
  case ElementFormat::NF4:
  case ElementFormat::FP4E2M1:
    break;
  case ElementFormat::FP8E4M3:
    if (smVersion < 89)
      return "fp8 codes decode with cvt.f16x2.e4m3x2 (sm_89 or newer)" + sm;
    break;
  case ElementFormat::Codebook:
    // The fragment layout is defined for these widths (MmaLayout.h).
    if (!qfuse::format::isMmaCodeBits(enc.getIndexBits()))
      return "the tensor-core generator lowers 2-, 3-, 4- and 8-bit "
             "codebooks (the widths the mma fragment layout defines); got " +
             std::to_string(enc.getIndexBits()) + "-bit indices";
    break;
  default:
    return "the tensor-core generator lowers 2- to 8-bit codes (int4, "
           "uint4, nf4, fp4e2m1, int8, uint8, fp8e4m3, 2-, 3-, 4- and 8-bit "
           "codebooks); got '" +
           stringifyElementFormat(enc.getFormat()).str() + "'";
  }
  if (isa_and_present<Float8E4M3FNType>(enc.getScaleType()) && smVersion < 89)
    return "E4M3 scales need cvt.f16x2.e4m3x2 (sm_89 or newer)" + sm;
  return std::nullopt;
}

/// Why the matvec kernel cannot lower weights of encoding `enc` on
/// sm_`smVersion`, or nullopt when it can (its layout is qf-choose-layout's).
inline std::optional<std::string>
matvecRefusesEncoding(EncodingAttr enc, int64_t smVersion) {
  if (enc.getActOrder() && enc.isSparse24())
    return std::string(kUnsortedActOrder);
  if ((enc.getFormat() == ElementFormat::F16 && !enc.isSparse24()) ||
      enc.getFormat() == ElementFormat::BF16)
    return std::string("unquantized dense weights take the cuBLAS path, not "
                       "the matvec generator");
  bool fp8 = enc.getFormat() == ElementFormat::FP8E4M3 ||
             isa_and_present<Float8E4M3FNType>(enc.getScaleType());
  if (fp8 && smVersion < 89)
    return "fp8 E4M3 values or scales need cvt.f16x2.e4m3x2 (sm_89 or "
           "newer); target is sm_" +
           std::to_string(smVersion);
  return std::nullopt;
}

/// Why no tensor-core tiling fits an N x K weight of `enc`, or nullopt when
/// one does. Any N and K the kernel pads to whole tiles (rows past N are not
/// stored, activations past K are zero-filled) as long as an activation row
/// is whole 16-byte copies (K % 8 == 0); groups must be multiples of 16
/// that divide or are multiples of block_k = 64. 2:4 weights are read in
/// their row-major order, whole block_k = 64 steps of a row at a time (K %
/// 64 == 0: the kept int4 codes of a step are one 16-byte copy, its
/// metadata one 8-byte copy), and an mma.sp's k32 slab takes one group's
/// scale (groups of multiples of 32 logical columns).
inline std::optional<std::string>
tensorCoreRefusesShape(EncodingAttr enc, int64_t n, int64_t k) {
  (void)n;
  if (enc.isSparse24()) {
    if (k % 64 != 0)
      return "K = " + std::to_string(k) +
             " is not a multiple of 64 (the mma.sp kernel copies whole "
             "64-column steps of a 2:4 row)";
    if (enc.isQuantized() && !enc.isPerChannel() &&
        enc.getGroupSize() % 32 != 0)
      return "group size " + std::to_string(enc.getGroupSize()) +
             " is not a multiple of 32 (an mma.sp slab of 32 columns takes "
             "one scale)";
  }
  if (k % 8 != 0)
    return "K = " + std::to_string(k) +
           " is not a multiple of 8 (activation rows move in 16-byte "
           "copies)";
  if (enc.isQuantized() && !enc.isPerChannel()) {
    int64_t group = enc.getGroupSize();
    bool fits = group % 16 == 0 && (group % 64 == 0 || 64 % group == 0);
    if (!fits)
      return "group size " + std::to_string(group) +
             " neither divides nor is a multiple of block_k";
  }
  return std::nullopt;
}

} // namespace qf
} // namespace mlir

#endif // QFUSE_CONVERSION_TENSORCORESUPPORT_H
