//===- ScalarIO.h - scale/table values <-> little-endian bytes -*- C++ -*-===//
//
// How one value of a scale or table type is laid out
// in a component buffer, and little-endian integer access for checkpoint
// words. Byte-wise, so the host's endianness never matters.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_FORMAT_SCALARIO_H
#define QFUSE_FORMAT_SCALARIO_H

#include "qfuse/format/Encoding.h"

#include <cstdint>
#include <cstring>

namespace qfuse::format::detail {

inline uint32_t loadLE32(const uint8_t *p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 |
         uint32_t(p[3]) << 24;
}

inline void storeLE32(uint8_t *p, uint32_t v) {
  p[0] = uint8_t(v);
  p[1] = uint8_t(v >> 8);
  p[2] = uint8_t(v >> 16);
  p[3] = uint8_t(v >> 24);
}

inline uint16_t loadLE16(const uint8_t *p) {
  return uint16_t(p[0] | p[1] << 8);
}

inline void storeLE16(uint8_t *p, uint16_t v) {
  p[0] = uint8_t(v);
  p[1] = uint8_t(v >> 8);
}

inline float loadF32(const uint8_t *p) {
  uint32_t bits = loadLE32(p);
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

inline void storeF32(uint8_t *p, float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof(bits));
  storeLE32(p, bits);
}

/// Reads value `index` of a buffer of `type` values.
inline float readScalar(ScalarType type, const uint8_t *data, int64_t index) {
  const uint8_t *p = data + index * int64_t(scalarTypeBytes(type));
  switch (type) {
  case ScalarType::F16:
    return halfToFloat(loadLE16(p));
  case ScalarType::BF16:
    return bfloat16ToFloat(loadLE16(p));
  case ScalarType::F32:
    return loadF32(p);
  case ScalarType::F8E4M3FN:
    return decodeE4M3(p[0]);
  case ScalarType::F8E8M0FNU:
    return decodeE8M0(p[0]);
  case ScalarType::None:
    break;
  }
  return 0.0f;
}

/// Writes `value` as value `index` of a buffer of `type` values and returns
/// whether it was exactly representable (E8M0 rounds up, others to nearest).
inline bool writeScalar(ScalarType type, uint8_t *data, int64_t index,
                        float value) {
  uint8_t *p = data + index * int64_t(scalarTypeBytes(type));
  switch (type) {
  case ScalarType::F16:
    storeLE16(p, floatToHalf(value));
    break;
  case ScalarType::BF16:
    storeLE16(p, floatToBFloat16(value));
    break;
  case ScalarType::F32:
    storeF32(p, value);
    break;
  case ScalarType::F8E4M3FN:
    p[0] = encodeE4M3(value);
    break;
  case ScalarType::F8E8M0FNU:
    p[0] = encodeE8M0Ceil(value);
    break;
  case ScalarType::None:
    return false;
  }
  float back = readScalar(type, data, index);
  return std::memcmp(&back, &value, sizeof(float)) == 0;
}

} // namespace qfuse::format::detail

#endif // QFUSE_FORMAT_SCALARIO_H
