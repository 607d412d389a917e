//===- DenseAsStored.cpp - f16/bf16 checkpoint tensors as their own codes -===//

#include "qfuse/runtime/checkpoint/DenseAsStored.h"

#include "ParallelJobs.h"

#include "qfuse/format/Numerics.h"
#include "qfuse/format/Packing.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace qfuse::runtime {

namespace {

/// f16 codes of elements [first, last) of bf16 or f32 `data` by the F16C
/// convert, 8 at a time: round to nearest even with subnormals, overflow to
/// inf and quiet NaNs with their top payload bits, as format::floatToHalf
/// (DenseAsStoredTest compares every bf16 pattern). The tail of fewer than 8
/// is left to the caller. Returns where it stopped.
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
  static const bool yes =
      __builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c");
  return yes;
}
#else
size_t halvesByF16c(DType, const uint8_t *, size_t first, size_t, uint8_t *) {
  return first;
}
bool hasF16c() { return false; }
#endif

} // namespace

std::optional<format::TensorView>
denseCodesAsStored(const format::Encoding &enc, DType dtype,
                   const uint8_t *data, int64_t n, int64_t k,
                   unsigned threads) {
  const bool f16 = dtype == DType::F16 &&
                   enc.format == format::ElementFormat::F16;
  const bool bf16 = dtype == DType::BF16 &&
                    enc.format == format::ElementFormat::BF16;
  if ((!f16 && !bf16) || enc.isQuantized() || enc.isSparse24() || n <= 0 ||
      k <= 0)
    return std::nullopt;
  // The encoding's components must be exactly the codes as 2 bytes per
  // element, row-major.
  std::vector<format::ComponentSpec> specs;
  std::string error;
  if (!format::componentSpecs(enc, n, k, specs, error) || specs.size() != 1 ||
      specs[0].name != format::kCodes ||
      specs[0].shape != std::vector<int64_t>{n, 2 * k})
    return std::nullopt;
  // NaN: exponent all ones and a non-zero mantissa.
  const uint16_t expMask = f16 ? 0x7C00 : 0x7F80;
  const uint16_t mantMask = f16 ? 0x03FF : 0x007F;
  const size_t count = size_t(n) * size_t(k);
  std::atomic<bool> nan{false};
  const unsigned workers =
      std::max(1u, std::min<unsigned>(
                       threads ? threads : std::thread::hardware_concurrency(),
                       unsigned(count / (1u << 20)) + 1));
  auto scan = [&](size_t first, size_t last) {
    const uint8_t *bytes = data;
    bool found = false;
    for (size_t i = first; i < last; ++i) {
      const uint16_t h = uint16_t(bytes[2 * i] | (bytes[2 * i + 1] << 8));
      found |= (h & expMask) == expMask && (h & mantMask) != 0;
    }
    if (found)
      nan = true;
  };
  std::vector<std::thread> pool;
  const size_t per = (count + workers - 1) / workers;
  for (unsigned w = 1; w < workers; ++w)
    pool.emplace_back(scan, std::min(count, w * per),
                      std::min(count, (w + 1) * per));
  scan(0, std::min(count, per));
  for (std::thread &t : pool)
    t.join();
  if (nan)
    return std::nullopt;
  return format::TensorView{specs[0].dtype, specs[0].shape, data, count * 2};
}

bool packDenseAsStored(const format::Encoding &enc, DType dtype,
                       const uint8_t *data, int64_t n, int64_t k,
                       format::TensorMap &components) {
  std::optional<format::TensorView> view =
      denseCodesAsStored(enc, dtype, data, n, k);
  if (!view)
    return false;
  format::Tensor codes(view->dtype, view->shape);
  std::memcpy(codes.data.data(), view->data, view->numBytes);
  components.clear();
  components.emplace(format::kCodes, std::move(codes));
  return true;
}

bool packDenseConverted(const format::Encoding &enc, DType dtype,
                        const uint8_t *data, int64_t n, int64_t k,
                        format::TensorMap &components) {
  const bool toF16 = enc.format == format::ElementFormat::F16;
  if ((!toF16 && enc.format != format::ElementFormat::BF16) ||
      enc.isQuantized() || enc.isSparse24() || n <= 0 || k <= 0)
    return false;
  // Another float type only: a tensor of the encoding's own dtype is taken
  // as stored (packDenseAsStored) or, holding a NaN, by quantizeRTN.
  if (dtype != DType::F16 && dtype != DType::BF16 && dtype != DType::F32)
    return false;
  if (dtype == (toF16 ? DType::F16 : DType::BF16))
    return false;
  std::vector<format::ComponentSpec> specs;
  std::string error;
  if (!format::componentSpecs(enc, n, k, specs, error) || specs.size() != 1 ||
      specs[0].name != format::kCodes ||
      specs[0].shape != std::vector<int64_t>{n, 2 * k})
    return false;
  format::Tensor codes(specs[0].dtype, specs[0].shape);
  uint8_t *out = codes.data.data();
  // The value as toFloats widens it, rounded as quantizeRTN's unquantized
  // path rounds it (floatToHalf / floatToBFloat16), in parts of 1M elements.
  auto value = [&](size_t i) -> float {
    uint16_t h;
    switch (dtype) {
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
  };
  const size_t count = size_t(n) * size_t(k);
  constexpr size_t kPart = size_t(1) << 20;
  detail::parallelJobs((count + kPart - 1) / kPart, [&](size_t part) {
    const size_t first = part * kPart, last = std::min(count, first + kPart);
    size_t i = first;
    if (toF16 && dtype != DType::F16 && hasF16c())
      i = halvesByF16c(dtype, data, first, last, out);
    for (; i < last; ++i) {
      const float v = value(i);
      const uint16_t c =
          toF16 ? format::floatToHalf(v) : format::floatToBFloat16(v);
      out[2 * i] = uint8_t(c & 0xFF);
      out[2 * i + 1] = uint8_t(c >> 8);
    }
  });
  components.clear();
  components.emplace(format::kCodes, std::move(codes));
  return true;
}

} // namespace qfuse::runtime
