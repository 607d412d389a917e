//===- GPTQ.cpp - AutoGPTQ v1 checkpoints <-> qf components ---------------===//
//
// GPTQ packs codes along K inside int32 words, LSB first, with rows of words
// indexed by K and columns by N. qf packs the same bit stream per output row,
// so word (r, n) of qweight is exactly bytes 4r..4r+3 of qf row n: the code
// conversion is a transpose of 32-bit words.
//
//===----------------------------------------------------------------------===//

#include "CheckpointUtils.h"

namespace qfuse::format {

using namespace detail;

bool fromGPTQv1(const GPTQv1Tensors &t, const LinearConfig &config,
                PackedWeight &out, std::string &error) {
  if (!checkConfig(config, "GPTQ", error))
    return false;
  const int64_t n = config.n, k = config.k;
  const int bits = config.bits, per = 32 / bits;
  const uint32_t mask = (1u << bits) - 1;
  if (k % per != 0)
    return fail(error, "GPTQ qweight: K = " + std::to_string(k) +
                           " is not a multiple of the " + std::to_string(per) +
                           " codes packed per int32");
  if (n % per != 0)
    return fail(error, "GPTQ qzeros: N = " + std::to_string(n) +
                           " is not a multiple of the " + std::to_string(per) +
                           " zero points packed per int32");
  const int64_t groups = configGroups(config);
  ScalarType scaleType;
  if (!scaleTypeOf(t.scales, "GPTQ scales", scaleType, error) ||
      !checkTensor(t.qweight, "GPTQ qweight", DType::I32, {k / per, n}, error,
                   "K * bits / 32 x N for " + configText(config)) ||
      !checkTensor(t.qzeros, "GPTQ qzeros", DType::I32, {groups, n / per},
                   error, "groups x N * bits / 32 for " + configText(config)) ||
      !checkTensor(t.scales, "GPTQ scales", t.scales.dtype, {groups, n}, error,
                   "groups x N for " + configText(config)))
    return false;
  std::vector<int32_t> gIdx;
  bool actOrder;
  if (!readGIdx(t.gIdx, "GPTQ g_idx", config, gIdx, actOrder, error))
    return false;

  // Zero points: v1 stores z - 1. z = 2^(b-1) everywhere is the symmetric case.
  std::vector<uint32_t> zeros(size_t(groups * n));
  bool symmetric = true;
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t col = 0; col < n; ++col) {
      uint32_t stored =
          (wordAt(t.qzeros, g * (n / per) + col / per) >> (bits * (col % per))) &
          mask;
      if (stored == mask)
        return fail(error,
                    "GPTQ qzeros: group " + std::to_string(g) + ", column " +
                        std::to_string(col) + " stores z - 1 = " +
                        std::to_string(mask) + ", so z = " +
                        std::to_string(mask + 1) + " does not fit " +
                        std::to_string(bits) +
                        " bits (v1 wraps z = 0 to this); re-export as GPTQ "
                        "v2 or compressed-tensors");
      zeros[g * n + col] = stored + 1;
      symmetric = symmetric && stored + 1 == (1u << (bits - 1));
    }

  Encoding enc =
      integerEncoding(bits, symmetric, config.groupSize, scaleType, actOrder);
  if (!allocateWeight(enc, n, k, out, error)) {
    error = "GPTQ: " + error;
    return false;
  }

  // Codes: transpose the words. Symmetric 8-bit codes q + 128 become q.
  const int64_t rowBytes = k * bits / 8;
  const uint8_t flip = (bits == 8 && symmetric) ? 0x80 : 0x00;
  uint8_t *codes = component(out, kCodes).data.data();
  for (int64_t r = 0; r < k / per; ++r)
    for (int64_t col = 0; col < n; ++col) {
      const uint8_t *word = t.qweight.data + 4 * (r * n + col);
      uint8_t *dst = codes + col * rowBytes + 4 * r;
      for (int b = 0; b < 4; ++b)
        dst[b] = word[b] ^ flip;
    }

  transposeCopy(t.scales.data, groups, n, dtypeBytes(t.scales.dtype),
                component(out, kScales).data.data());
  if (!symmetric) {
    Tensor &z = component(out, kZeros);
    const int64_t zeroRowBytes = z.shape[1];
    for (int64_t g = 0; g < groups; ++g)
      for (int64_t col = 0; col < n; ++col)
        putBits(z.data.data() + col * zeroRowBytes, g, bits,
                zeros[g * n + col]);
  }
  if (actOrder)
    storeGIdx(out, gIdx);
  return true;
}

bool toGPTQv1(const PackedWeight &weight, TensorMap &tensors,
              std::string &error) {
  const Encoding &enc = weight.encoding;
  const int64_t n = weight.n, k = weight.k;
  if (!checkComponents(enc, weight.components, n, k, error))
    return false;
  if (!checkIntegerCheckpointEncoding(enc, "GPTQ", error))
    return false;
  const bool symmetric = enc.format == ElementFormat::Int4 ||
                         enc.format == ElementFormat::Int8;
  const int bits = int(codeBits(enc)), per = 32 / bits;
  if (k % per != 0 || n % per != 0)
    return fail(error, "GPTQ packs " + std::to_string(per) +
                           " codes per int32 along K and zero points along N; " +
                           std::to_string(n) + "x" + std::to_string(k) +
                           " is not a multiple");
  const int64_t groups = numGroups(enc, k);
  const uint32_t mask = (1u << bits) - 1;

  Tensor qweight(DType::I32, {k / per, n});
  const int64_t rowBytes = k * bits / 8;
  const uint8_t flip = bits == 8 && symmetric ? 0x80 : 0x00;
  const uint8_t *codes = component(weight, kCodes).data.data();
  for (int64_t r = 0; r < k / per; ++r)
    for (int64_t col = 0; col < n; ++col)
      for (int b = 0; b < 4; ++b)
        qweight.data[4 * (r * n + col) + b] =
            codes[col * rowBytes + 4 * r + b] ^ flip;

  Tensor qzeros(DType::I32, {groups, n / per});
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t col = 0; col < n; ++col) {
      uint32_t z = 1u << (bits - 1);
      if (!symmetric) {
        const Tensor &zt = component(weight, kZeros);
        z = getBits(zt.data.data() + col * zt.shape[1], g, bits);
      }
      if (z == 0)
        return fail(error, "GPTQ v1 stores z - 1 and cannot hold the zero "
                           "point 0 of row " +
                               std::to_string(col) + ", group " +
                               std::to_string(g));
      uint8_t *word = qzeros.data.data() + 4 * (g * (n / per) + col / per);
      storeLE32(word, loadLE32(word) |
                          (((z - 1) & mask) << (bits * (col % per))));
    }

  const Tensor &scales = component(weight, kScales);
  Tensor scalesOut(scales.dtype, {groups, n});
  transposeCopy(scales.data.data(), n, groups, dtypeBytes(scales.dtype),
                scalesOut.data.data());

  Tensor gIdx(DType::I32, {k});
  for (int64_t col = 0; col < k; ++col) {
    uint32_t g = enc.actOrder
                     ? loadLE32(component(weight, kGIdx).data.data() + 4 * col)
                     : uint32_t(enc.isPerChannel() ? 0 : col / enc.groupSize);
    storeLE32(gIdx.data.data() + 4 * col, g);
  }

  TensorMap out;
  out["qweight"] = std::move(qweight);
  out["qzeros"] = std::move(qzeros);
  out["scales"] = std::move(scalesOut);
  out["g_idx"] = std::move(gIdx);
  tensors = std::move(out);
  return true;
}

} // namespace qfuse::format
