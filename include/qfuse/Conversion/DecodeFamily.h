//===- DecodeFamily.h - how the fused kernels decode a format --*- C++ -*-===//
//
// The decode families of the fused kernels, one per way codes become f16
// (or bf16) values, each emitted by one decoder in
// lib/Conversion/QFToGPU/Decode/ that the matvec and the tensor-core
// generators share. Defined once for those generators and for the cost
// model, which prices a family's instructions (MmaTimeModel.h).
// Header-only: the cost model's library does not link the conversion.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_CONVERSION_DECODEFAMILY_H
#define QFUSE_CONVERSION_DECODEFAMILY_H

#include "qfuse/Dialect/QF/IR/QFDialect.h"

namespace mlir {
namespace qf {

enum class DecodeFamily {
  Int4Magic, ///< int4/uint4 under a magic exponent (lop3), bias subtracted
  Int8Magic, ///< int8/uint8 the same, the bytes placed by prmt
  Fp8Cvt,    ///< fp8 e4m3 by cvt.rn.f16x2.e4m3x2
  Table,     ///< NF4, e2m1 and codebooks: lookups in a shared-memory table
  Half,      ///< unquantized (2:4 f16): the values as stored
};

/// The family that decodes codes of `format`, for the formats a fused
/// kernel takes (TensorCoreSupport.h says which).
inline DecodeFamily getDecodeFamily(ElementFormat format) {
  switch (format) {
  case ElementFormat::Int4:
  case ElementFormat::UInt4:
    return DecodeFamily::Int4Magic;
  case ElementFormat::Int8:
  case ElementFormat::UInt8:
    return DecodeFamily::Int8Magic;
  case ElementFormat::FP8E4M3:
    return DecodeFamily::Fp8Cvt;
  case ElementFormat::NF4:
  case ElementFormat::FP4E2M1:
  case ElementFormat::Codebook:
    return DecodeFamily::Table;
  case ElementFormat::F16:
  case ElementFormat::BF16:
    return DecodeFamily::Half;
  }
  llvm_unreachable("unknown element format");
}

/// Whether codes of `format` in the Table family decode as sign and
/// magnitude, by prmt from registers: e2m1 (Fp4Decode.cpp).
inline bool decodesE2m1BySignMagnitude(ElementFormat format) {
  return format == ElementFormat::FP4E2M1;
}

/// Whether the fused kernels of a table-family weight keep a shared-memory
/// code table: not for 4-bit codes of a table known at compile time (NF4,
/// e2m1, inline codebooks), which decode by their bits (e2m1 with f16) or
/// from registers (Table4Registers.cpp), whatever the activations.
inline bool usesSharedCodeTable(EncodingAttr encoding) {
  return getDecodeFamily(encoding.getFormat()) == DecodeFamily::Table &&
         (encoding.getCodeBits() != 4 || encoding.getTableName());
}

} // namespace qf
} // namespace mlir

#endif // QFUSE_CONVERSION_DECODEFAMILY_H
