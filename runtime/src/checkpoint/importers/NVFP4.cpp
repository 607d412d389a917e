//===- NVFP4.cpp - compressed-tensors nvfp4-pack-quantized <-> qf ---------===//
//
// NVFP4 checkpoints already store qf's layout: E2M1 nibbles LSB first along
// K, one E4M3 byte per block of 16, one f32 global scale. Conversion is a
// checked copy.
//
//===----------------------------------------------------------------------===//

#include "CheckpointUtils.h"

#include <cstring>

namespace qfuse::format {

using namespace detail;

namespace {

Encoding nvfp4Encoding() {
  Encoding enc;
  enc.format = ElementFormat::FP4E2M1;
  enc.groupSize = 16;
  enc.scaleType = ScalarType::F8E4M3FN;
  enc.globalScale = true;
  return enc;
}

} // namespace

bool fromNVFP4(const NVFP4Tensors &t, int64_t n, int64_t k, PackedWeight &out,
               std::string &error) {
  const std::string layout = "NVFP4";
  if (!allocateWeight(nvfp4Encoding(), n, k, out, error)) {
    error = layout + ": " + error;
    return false;
  }
  const std::string shapeText =
      "N = " + std::to_string(n) + ", K = " + std::to_string(k);
  if (!checkTensor(t.weightPacked, layout + " weight_packed", DType::U8,
                   {n, k / 2}, error, "N x K / 2 for " + shapeText))
    return false;
  // Some exports store the E4M3 bytes as U8; the bytes are the same.
  DType scaleDType =
      t.weightScale.dtype == DType::U8 ? DType::U8 : DType::F8E4M3;
  if (!checkTensor(t.weightScale, layout + " weight_scale", scaleDType,
                   {n, k / 16}, error, "N x K / 16 for " + shapeText))
    return false;
  // [1] as compressed-tensors writes it, or a 0-d scalar.
  std::vector<int64_t> globalShape;
  if (!t.weightGlobalScale.shape.empty())
    globalShape = {1};
  if (!checkTensor(t.weightGlobalScale, layout + " weight_global_scale",
                   DType::F32, globalShape, error, "one f32"))
    return false;

  std::memcpy(component(out, kCodes).data.data(), t.weightPacked.data,
              size_t(n * (k / 2)));
  std::memcpy(component(out, kScales).data.data(), t.weightScale.data,
              size_t(n * (k / 16)));
  std::memcpy(component(out, kGlobalScale).data.data(),
              t.weightGlobalScale.data, 4);
  return true;
}

bool toNVFP4(const PackedWeight &weight, TensorMap &tensors,
             std::string &error) {
  if (weight.encoding != nvfp4Encoding())
    return fail(error, "NVFP4 checkpoints hold <" +
                           printEncoding(nvfp4Encoding()) + ">, not <" +
                           printEncoding(weight.encoding) + ">");
  if (!checkComponents(weight.encoding, weight.components, weight.n, weight.k,
                       error))
    return false;
  TensorMap out;
  out["weight_packed"] = component(weight, kCodes);
  out["weight_scale"] = component(weight, kScales);
  out["weight_global_scale"] = component(weight, kGlobalScale);
  tensors = std::move(out);
  return true;
}

} // namespace qfuse::format
