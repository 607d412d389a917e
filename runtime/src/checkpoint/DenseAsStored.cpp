//===- DenseAsStored.cpp - f16/bf16 checkpoint tensors as their own codes -===//

#include "qfuse/runtime/checkpoint/DenseAsStored.h"

#include "ParallelJobs.h"
#include "ToHalves.h"

#include "qfuse/format/Packing.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

namespace qfuse::runtime {

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
  // quantizeRTN's unquantized path rounds each value as roundToHalves does.
  const size_t count = size_t(n) * size_t(k);
  constexpr size_t kPart = size_t(1) << 20;
  const DType to = toF16 ? DType::F16 : DType::BF16;
  detail::parallelJobs((count + kPart - 1) / kPart, [&](size_t part) {
    const size_t first = part * kPart;
    roundToHalves(dtype, data, first, std::min(count, first + kPart), to,
                  out);
  });
  components.clear();
  components.emplace(format::kCodes, std::move(codes));
  return true;
}

} // namespace qfuse::runtime
