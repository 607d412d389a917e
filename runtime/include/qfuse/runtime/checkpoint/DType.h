//===- DType.h - Element types of stored tensors and buffers ----*- C++ -*-===//
//
// One enum for the element types the runtime moves around, with the two
// spellings it reads: safetensors' ("F16", "BF16", "F8_E4M3") and the
// artifact's lower-case MLIR-like names ("f16", "bf16", "f8e4m3").
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_RUNTIME_CHECKPOINT_DTYPE_H
#define QFUSE_RUNTIME_CHECKPOINT_DTYPE_H

#include <cstdint>
#include <optional>
#include <string_view>

namespace qfuse::runtime {

enum class DType : uint8_t {
  Bool,
  U8,
  I8,
  I16,
  U16,
  F16,
  BF16,
  I32,
  U32,
  F32,
  F64,
  I64,
  U64,
  F8E4M3,
  F8E5M2,
  F8E8M0,
  F4, // float4_e2m1, two per byte
};

/// Bits of one element (4 for F4, 8 * bytes otherwise).
unsigned dtypeBits(DType type);

/// Bytes of `numElements` elements; nullopt when the count of bits is not a
/// whole number of bytes (an odd number of F4 elements) or overflows.
std::optional<uint64_t> dtypeStorageBytes(DType type, uint64_t numElements);

/// The safetensors spelling: "F16", "BF16", "F8_E4M3", ...
std::string_view safetensorsName(DType type);
std::optional<DType> parseSafetensorsDType(std::string_view name);

/// The artifact spelling: "f16", "bf16", "i32", "f8e4m3", ...
std::string_view artifactName(DType type);
std::optional<DType> parseArtifactDType(std::string_view name);

} // namespace qfuse::runtime

#endif // QFUSE_RUNTIME_CHECKPOINT_DTYPE_H
