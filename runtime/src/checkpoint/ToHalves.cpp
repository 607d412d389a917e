//===- ToHalves.cpp - float elements rounded to f16 or bf16 ---------------===//

#include "ToHalves.h"

#include "qfuse/format/Numerics.h"

#include <cstring>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace qfuse::runtime {
namespace {

/// f16 of elements [first, last) of bf16 or f32 `data` by the F16C
/// convert, 8 at a time; the tail of fewer than 8 is left to the caller.
/// Returns where it stopped.
#if defined(__x86_64__)
__attribute__((target("avx2,f16c"))) size_t
halvesByF16c(DType dtype, const uint8_t *data, size_t first, size_t last,
             uint8_t *out) {
  size_t i = first;
  for (; i + 8 <= last; i += 8) {
    __m256 v;
    if (dtype == DType::BF16) {
      __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i *>(data + 2 * i));
      v = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(b), 16));
    } else {
      v = _mm256_loadu_ps(reinterpret_cast<const float *>(data + 4 * i));
    }
    _mm_storeu_si128(reinterpret_cast<__m128i *>(out + 2 * i),
                     _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
  }
  return i;
}

bool hasF16c() {
  // F16C from CPUID leaf 1 (not every compiler's __builtin_cpu_supports
  // knows it).
  static const bool yes = [] {
    unsigned a, b, c, d;
    return __builtin_cpu_supports("avx2") && __get_cpuid(1, &a, &b, &c, &d) &&
           (c & bit_F16C) != 0;
  }();
  return yes;
}
#else
size_t halvesByF16c(DType, const uint8_t *, size_t first, size_t, uint8_t *) {
  return first;
}
bool hasF16c() { return false; }
#endif

} // namespace

float widenedElement(DType from, const uint8_t *data, size_t i) {
  uint16_t h;
  switch (from) {
  case DType::F16:
    std::memcpy(&h, data + 2 * i, 2);
    return format::halfToFloat(h);
  case DType::BF16:
    std::memcpy(&h, data + 2 * i, 2);
    return format::bfloat16ToFloat(h);
  default: {
    float f;
    std::memcpy(&f, data + 4 * i, 4);
    return f;
  }
  }
}

void roundToHalves(DType from, const uint8_t *data, size_t first,
                   size_t last, DType to, uint8_t *out) {
  const bool toF16 = to == DType::F16;
  size_t i = first;
  if (toF16 && from != DType::F16 && hasF16c())
    i = halvesByF16c(from, data, first, last, out);
  for (; i < last; ++i) {
    const float v = widenedElement(from, data, i);
    const uint16_t c =
        toF16 ? format::floatToHalf(v) : format::floatToBFloat16(v);
    out[2 * i] = uint8_t(c & 0xFF);
    out[2 * i + 1] = uint8_t(c >> 8);
  }
}

} // namespace qfuse::runtime
