//===- CheckpointUtils.cpp - shared pieces of the checkpoint converters ---===//

#include "CheckpointUtils.h"

#include <cstring>

namespace qfuse::format::detail {

bool checkConfig(const LinearConfig &config, const std::string &layout,
                 std::string &error, int onlyBits) {
  if (config.n <= 0 || config.k <= 0)
    return fail(error, layout + ": layer shape must be positive, got N = " +
                           std::to_string(config.n) +
                           ", K = " + std::to_string(config.k));
  if (onlyBits ? config.bits != onlyBits
               : (config.bits != 4 && config.bits != 8))
    return fail(error, layout + ": " + std::to_string(config.bits) +
                           "-bit weights are not supported; expected " +
                           (onlyBits ? std::to_string(onlyBits)
                                     : std::string("4 or 8")) +
                           " bits");
  return true;
}

int64_t configGroups(const LinearConfig &config) {
  if (config.groupSize <= 0)
    return 1;
  return (config.k + config.groupSize - 1) / config.groupSize;
}

std::string configText(const LinearConfig &config) {
  return "N = " + std::to_string(config.n) + ", K = " +
         std::to_string(config.k) + ", bits = " + std::to_string(config.bits) +
         ", group = " +
         (config.groupSize <= 0 ? std::string("per channel")
                                : std::to_string(config.groupSize));
}

bool scaleTypeOf(const TensorView &scales, const std::string &what,
                 ScalarType &type, std::string &error) {
  switch (scales.dtype) {
  case DType::F16:
    type = ScalarType::F16;
    return true;
  case DType::BF16:
    type = ScalarType::BF16;
    return true;
  case DType::F32:
    type = ScalarType::F32;
    return true;
  default:
    return fail(error, what + ": expected F16, BF16 or F32 scales, got " +
                           describe(scales.dtype, scales.shape));
  }
}

Encoding integerEncoding(int bits, bool symmetric, int64_t groupSize,
                         ScalarType scaleType, bool actOrder) {
  Encoding enc;
  if (bits == 4)
    enc.format = symmetric ? ElementFormat::Int4 : ElementFormat::UInt4;
  else
    enc.format = symmetric ? ElementFormat::Int8 : ElementFormat::UInt8;
  enc.groupSize = groupSize <= 0 ? Encoding::kPerChannel : groupSize;
  enc.scaleType = scaleType;
  enc.zeroPoint = symmetric ? ZeroPointKind::None : ZeroPointKind::Int;
  enc.actOrder = actOrder;
  return enc;
}

bool readGIdx(const std::optional<TensorView> &gIdx, const std::string &what,
              const LinearConfig &config, std::vector<int32_t> &values,
              bool &actOrder, std::string &error) {
  actOrder = false;
  values.clear();
  if (!gIdx)
    return true;
  if (!checkTensor(*gIdx, what, DType::I32, {config.k}, error,
                   "one group per input column, K = " +
                       std::to_string(config.k)))
    return false;
  const int64_t groups = configGroups(config);
  values.resize(size_t(config.k));
  for (int64_t col = 0; col < config.k; ++col) {
    int32_t g = int32_t(wordAt(*gIdx, col));
    if (g < 0 || g >= groups)
      return fail(error, what + "[" + std::to_string(col) + "] = " +
                             std::to_string(g) + " is outside [0, " +
                             std::to_string(groups) + ") for " +
                             configText(config));
    values[col] = g;
    int64_t trivial = config.groupSize <= 0 ? 0 : col / config.groupSize;
    actOrder = actOrder || g != trivial;
  }
  if (actOrder && config.groupSize <= 0)
    return fail(error, what + ": per-channel weights have one group; "
                              "expected all zeros");
  return true;
}

bool allocateWeight(const Encoding &enc, int64_t n, int64_t k,
                    PackedWeight &out, std::string &error) {
  std::vector<ComponentSpec> specs;
  if (!componentSpecs(enc, n, k, specs, error))
    return false;
  out = PackedWeight();
  out.encoding = enc;
  out.n = n;
  out.k = k;
  for (const ComponentSpec &spec : specs)
    out.components[spec.name] = Tensor(spec.dtype, spec.shape);
  return true;
}

void transposeCopy(const uint8_t *src, int64_t rows, int64_t cols,
                   size_t elementBytes, uint8_t *dst) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      std::memcpy(dst + (c * rows + r) * elementBytes,
                  src + (r * cols + c) * elementBytes, elementBytes);
}

bool checkIntegerCheckpointEncoding(const Encoding &enc,
                                    const std::string &layout,
                                    std::string &error) {
  const bool symmetric = enc.format == ElementFormat::Int4 ||
                         enc.format == ElementFormat::Int8;
  if ((!symmetric && !enc.isUnsigned()) ||
      enc.zeroPoint == ZeroPointKind::Float || enc.isSparse24() ||
      enc.scaleType == ScalarType::F8E8M0FNU)
    return fail(error, layout +
                           " stores dense int4/uint4/int8/uint8 with integer "
                           "zero points and float scales, not <" +
                           printEncoding(enc) + ">");
  return true;
}

void storeGIdx(PackedWeight &weight, const std::vector<int32_t> &gIdx) {
  uint8_t *dst = component(weight, kGIdx).data.data();
  for (size_t col = 0; col < gIdx.size(); ++col)
    storeLE32(dst + 4 * col, uint32_t(gIdx[col]));
}

} // namespace qfuse::format::detail
