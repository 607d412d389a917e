//===- BitsAndBytes.cpp - bitsandbytes NF4 <-> qf components --------------===//
//
// bitsandbytes flattens W row-major and quantizes blocks of `blocksize`
// elements with one f32 absmax each. When blocks do not cross rows that is
// qf's nf4 with group = blocksize; the only byte difference is the nibble
// order (bitsandbytes puts the even element in the HIGH nibble).
//
//===----------------------------------------------------------------------===//

#include "CheckpointUtils.h"

#include <algorithm>

namespace qfuse::format {

using namespace detail;

namespace {

uint8_t swapNibbles(uint8_t b) { return uint8_t(b >> 4 | b << 4); }

} // namespace

bool fromBnbNF4(const BnbNF4Tensors &t, int64_t n, int64_t k,
                int64_t blocksize, PackedWeight &out, std::string &error) {
  const std::string layout = "bitsandbytes NF4";
  if (blocksize < 2)
    return fail(error, layout + ": blocksize must be at least 2, got " +
                           std::to_string(blocksize));
  if (k > 0 && k % blocksize != 0)
    return fail(error, layout + ": blocks of " + std::to_string(blocksize) +
                           " cross rows because K = " + std::to_string(k) +
                           " is not a multiple; qf groups stay within a row");
  Encoding enc;
  enc.format = ElementFormat::NF4;
  enc.groupSize = blocksize;
  enc.scaleType = ScalarType::F32;
  if (!allocateWeight(enc, n, k, out, error)) {
    error = layout + ": " + error;
    return false;
  }
  const int64_t bytes = n * k / 2;
  std::vector<int64_t> weightShape = {bytes, 1};
  if (t.weight.shape.size() == 1)
    weightShape = {bytes};
  const std::string shapeText = "N = " + std::to_string(n) + ", K = " +
                                std::to_string(k) + ", blocksize = " +
                                std::to_string(blocksize);
  if (!checkTensor(t.weight, layout + " weight", DType::U8, weightShape, error,
                   "N * K / 2 bytes for " + shapeText) ||
      !checkTensor(t.absmax, layout + " absmax", DType::F32,
                   {n * k / blocksize}, error,
                   "one per block for " + shapeText))
    return false;

  uint8_t *codes = component(out, kCodes).data.data();
  for (int64_t i = 0; i < bytes; ++i)
    codes[i] = swapNibbles(t.weight.data[i]);
  std::copy(t.absmax.data, t.absmax.data + 4 * (n * k / blocksize),
            component(out, kScales).data.data());
  return true;
}

bool toBnbNF4(const PackedWeight &weight, TensorMap &tensors,
              std::string &error) {
  const Encoding &enc = weight.encoding;
  const int64_t n = weight.n, k = weight.k;
  if (enc.format != ElementFormat::NF4 || enc.actOrder)
    return fail(error, "bitsandbytes NF4 holds nf4 without act_order, not <" +
                           printEncoding(enc) + ">");
  if (!checkComponents(enc, weight.components, n, k, error))
    return false;
  const int64_t groups = numGroups(enc, k);
  const Tensor &codes = component(weight, kCodes);
  const Tensor &scales = component(weight, kScales);

  Tensor outWeight(DType::U8, {n * k / 2, 1});
  for (size_t i = 0; i < codes.data.size(); ++i)
    outWeight.data[i] = swapNibbles(codes.data[i]);
  // Widening f16/bf16 scales to f32 is exact.
  Tensor absmax(DType::F32, {n * groups});
  for (int64_t i = 0; i < n * groups; ++i)
    storeF32(absmax.data.data() + 4 * i,
             readScalar(enc.scaleType, scales.data.data(), i));

  TensorMap out;
  out["weight"] = std::move(outWeight);
  out["absmax"] = std::move(absmax);
  tensors = std::move(out);
  return true;
}

} // namespace qfuse::format
