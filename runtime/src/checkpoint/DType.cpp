//===- DType.cpp - Element types of stored tensors and buffers ------------===//

#include "qfuse/runtime/checkpoint/DType.h"

#include <array>

namespace qfuse::runtime {
namespace {

struct DTypeInfo {
  DType type;
  unsigned bits;
  std::string_view safetensors;
  std::string_view artifact;
};

constexpr std::array<DTypeInfo, 17> kDTypes = {{
    {DType::Bool, 8, "BOOL", "i1"},
    {DType::U8, 8, "U8", "u8"},
    {DType::I8, 8, "I8", "i8"},
    {DType::I16, 16, "I16", "i16"},
    {DType::U16, 16, "U16", "u16"},
    {DType::F16, 16, "F16", "f16"},
    {DType::BF16, 16, "BF16", "bf16"},
    {DType::I32, 32, "I32", "i32"},
    {DType::U32, 32, "U32", "u32"},
    {DType::F32, 32, "F32", "f32"},
    {DType::F64, 64, "F64", "f64"},
    {DType::I64, 64, "I64", "i64"},
    {DType::U64, 64, "U64", "u64"},
    {DType::F8E4M3, 8, "F8_E4M3", "f8e4m3"},
    {DType::F8E5M2, 8, "F8_E5M2", "f8e5m2"},
    {DType::F8E8M0, 8, "F8_E8M0", "f8e8m0"},
    {DType::F4, 4, "F4", "f4e2m1"},
}};

constexpr bool tableFollowsEnum() {
  for (size_t i = 0; i < kDTypes.size(); ++i)
    if (static_cast<size_t>(kDTypes[i].type) != i)
      return false;
  return true;
}
static_assert(tableFollowsEnum(), "kDTypes must list DType in enum order");

const DTypeInfo &info(DType type) { return kDTypes[static_cast<size_t>(type)]; }

} // namespace

unsigned dtypeBits(DType type) { return info(type).bits; }

std::optional<uint64_t> dtypeStorageBytes(DType type, uint64_t numElements) {
  uint64_t bits;
  if (__builtin_mul_overflow(numElements, uint64_t(dtypeBits(type)), &bits))
    return std::nullopt;
  if (bits % 8 != 0)
    return std::nullopt;
  return bits / 8;
}

std::string_view safetensorsName(DType type) { return info(type).safetensors; }

std::optional<DType> parseSafetensorsDType(std::string_view name) {
  for (const DTypeInfo &entry : kDTypes)
    if (entry.safetensors == name)
      return entry.type;
  return std::nullopt;
}

std::string_view artifactName(DType type) { return info(type).artifact; }

std::optional<DType> parseArtifactDType(std::string_view name) {
  for (const DTypeInfo &entry : kDTypes)
    if (entry.artifact == name)
      return entry.type;
  return std::nullopt;
}

} // namespace qfuse::runtime
