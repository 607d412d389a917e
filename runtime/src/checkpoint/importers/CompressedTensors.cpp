//===- CompressedTensors.cpp - pack-quantized <-> qf components -----------===//
//
// compressed-tensors "pack-quantized" is qf's row-major layout in int32
// words: the same LSB-first bit stream per output row, padded to a whole
// word. Codes carry a +2^(b-1) offset, which is qf's int4 offset-binary for
// 4 bits and bit 7 flipped against int8's two's complement for 8 bits; zero
// points carry the same offset, so asymmetric codes and zeros copy unchanged.
//
//===----------------------------------------------------------------------===//

#include "CheckpointUtils.h"

#include <cstring>

namespace qfuse::format {

using namespace detail;

namespace {

bool checkWeightShape(const TensorView &shape, int64_t n, int64_t k,
                      std::string &error) {
  const std::string what = "compressed-tensors weight_shape";
  if (shape.dtype != DType::I64 && shape.dtype != DType::I32)
    return fail(error, what + ": expected I64 [2] or I32 [2], got " +
                           describe(shape.dtype, shape.shape));
  if (!checkTensor(shape, what, shape.dtype, {2}, error, "[N, K]"))
    return false;
  int64_t dims[2];
  for (int i = 0; i < 2; ++i)
    dims[i] = shape.dtype == DType::I32
                  ? int64_t(int32_t(loadLE32(shape.data + 4 * i)))
                  : int64_t(uint64_t(loadLE32(shape.data + 8 * i)) |
                            uint64_t(loadLE32(shape.data + 8 * i + 4)) << 32);
  if (dims[0] != n || dims[1] != k)
    return fail(error, what + ": says [" + std::to_string(dims[0]) + ", " +
                           std::to_string(dims[1]) + "], expected [" +
                           std::to_string(n) + ", " + std::to_string(k) + "]");
  return true;
}

} // namespace

bool fromCompressedTensors(const CompressedTensorsPacked &t,
                           const LinearConfig &config, PackedWeight &out,
                           std::string &error) {
  const std::string layout = "compressed-tensors";
  if (!checkConfig(config, layout, error))
    return false;
  const int64_t n = config.n, k = config.k;
  const int bits = config.bits, per = 32 / bits;
  const uint32_t mask = (1u << bits) - 1;
  const int64_t wordsPerRow = (k * bits + 31) / 32;
  const int64_t groups = configGroups(config);
  ScalarType scaleType;
  if (!scaleTypeOf(t.weightScale, layout + " weight_scale", scaleType, error) ||
      !checkTensor(t.weightPacked, layout + " weight_packed", DType::I32,
                   {n, wordsPerRow}, error,
                   "N x ceil(K * bits / 32) for " + configText(config)) ||
      !checkTensor(t.weightScale, layout + " weight_scale", t.weightScale.dtype,
                   {n, groups}, error, "N x groups for " + configText(config)))
    return false;
  if (t.weightShape && !checkWeightShape(*t.weightShape, n, k, error))
    return false;
  const bool symmetric = !t.weightZeroPoint;
  if (!symmetric &&
      !checkTensor(*t.weightZeroPoint, layout + " weight_zero_point",
                   DType::I32, {(n + per - 1) / per, groups}, error,
                   "ceil(N * bits / 32) x groups, packed along dim 0, for " +
                       configText(config)))
    return false;
  std::vector<int32_t> gIdx;
  bool actOrder;
  if (!readGIdx(t.weightGIdx, layout + " weight_g_idx", config, gIdx,
                actOrder, error))
    return false;

  Encoding enc =
      integerEncoding(bits, symmetric, config.groupSize, scaleType, actOrder);
  if (!allocateWeight(enc, n, k, out, error)) {
    error = layout + ": " + error;
    return false;
  }

  // Codes: the first rowBytes bytes of each row's words.
  const int64_t rowBytes = k * bits / 8;
  const uint8_t flip = (bits == 8 && symmetric) ? 0x80 : 0x00;
  uint8_t *codes = component(out, kCodes).data.data();
  for (int64_t row = 0; row < n; ++row) {
    const uint8_t *src = t.weightPacked.data + 4 * row * wordsPerRow;
    for (int64_t b = 0; b < rowBytes; ++b)
      codes[row * rowBytes + b] = src[b] ^ flip;
  }

  std::memcpy(component(out, kScales).data.data(), t.weightScale.data,
              size_t(n * groups) * dtypeBytes(t.weightScale.dtype));
  if (!symmetric) {
    Tensor &z = component(out, kZeros);
    for (int64_t row = 0; row < n; ++row)
      for (int64_t g = 0; g < groups; ++g) {
        uint32_t stored =
            (wordAt(*t.weightZeroPoint, (row / per) * groups + g) >>
             (bits * (row % per))) &
            mask;
        putBits(z.data.data() + row * z.shape[1], g, bits, stored);
      }
  }
  if (actOrder)
    storeGIdx(out, gIdx);
  return true;
}

bool toCompressedTensors(const PackedWeight &weight, TensorMap &tensors,
                         std::string &error) {
  const Encoding &enc = weight.encoding;
  const int64_t n = weight.n, k = weight.k;
  if (!checkComponents(enc, weight.components, n, k, error))
    return false;
  if (!checkIntegerCheckpointEncoding(enc, "pack-quantized", error))
    return false;
  const bool symmetric = enc.format == ElementFormat::Int4 ||
                         enc.format == ElementFormat::Int8;
  const int bits = int(codeBits(enc)), per = 32 / bits;
  const int64_t wordsPerRow = (k * bits + 31) / 32;
  const int64_t groups = numGroups(enc, k);
  const int64_t rowBytes = k * bits / 8;
  const uint8_t flip = (bits == 8 && symmetric) ? 0x80 : 0x00;

  Tensor packed(DType::I32, {n, wordsPerRow});
  const uint8_t *codes = component(weight, kCodes).data.data();
  for (int64_t row = 0; row < n; ++row)
    for (int64_t b = 0; b < rowBytes; ++b)
      packed.data[4 * row * wordsPerRow + b] = codes[row * rowBytes + b] ^ flip;

  TensorMap out;
  out["weight_packed"] = std::move(packed);
  out["weight_scale"] = component(weight, kScales);
  Tensor shape(DType::I64, {2});
  storeLE32(shape.data.data(), uint32_t(n));
  storeLE32(shape.data.data() + 4, uint32_t(uint64_t(n) >> 32));
  storeLE32(shape.data.data() + 8, uint32_t(k));
  storeLE32(shape.data.data() + 12, uint32_t(uint64_t(k) >> 32));
  out["weight_shape"] = std::move(shape);
  if (!symmetric) {
    const Tensor &z = component(weight, kZeros);
    Tensor zp(DType::I32, {(n + per - 1) / per, groups});
    for (int64_t row = 0; row < n; ++row)
      for (int64_t g = 0; g < groups; ++g) {
        uint8_t *word = zp.data.data() + 4 * ((row / per) * groups + g);
        uint32_t value = getBits(z.data.data() + row * z.shape[1], g, bits);
        storeLE32(word, loadLE32(word) | value << (bits * (row % per)));
      }
    out["weight_zero_point"] = std::move(zp);
  }
  if (enc.actOrder)
    out["weight_g_idx"] = component(weight, kGIdx);
  tensors = std::move(out);
  return true;
}

} // namespace qfuse::format
