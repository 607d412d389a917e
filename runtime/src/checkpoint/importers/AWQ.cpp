//===- AWQ.cpp - AutoAWQ GEMM checkpoints <-> qf components ---------------===//
//
// AWQ packs 4-bit codes along the OUTPUT dimension with an interleave that
// suits its GEMM kernel's dequantization: nibble slot i of word c holds
// column 8c + ORDER[i]. qf rows run along K, so every nibble moves.
//
//===----------------------------------------------------------------------===//

#include "CheckpointUtils.h"

namespace qfuse::format {

using namespace detail;

namespace {
/// Column offset (within its 8) stored in nibble slot i.
constexpr int kAWQOrder[8] = {0, 2, 4, 6, 1, 3, 5, 7};
} // namespace

bool fromAWQ(const AWQTensors &t, const LinearConfig &config,
             PackedWeight &out, std::string &error) {
  if (!checkConfig(config, "AWQ", error, /*onlyBits=*/4))
    return false;
  const int64_t n = config.n, k = config.k;
  if (n % 8 != 0)
    return fail(error, "AWQ qweight: N = " + std::to_string(n) +
                           " is not a multiple of the 8 columns packed per "
                           "int32");
  const int64_t groups = configGroups(config);
  ScalarType scaleType;
  if (!scaleTypeOf(t.scales, "AWQ scales", scaleType, error) ||
      !checkTensor(t.qweight, "AWQ qweight", DType::I32, {k, n / 8}, error,
                   "K x N / 8 for " + configText(config)) ||
      !checkTensor(t.qzeros, "AWQ qzeros", DType::I32, {groups, n / 8}, error,
                   "groups x N / 8 for " + configText(config)) ||
      !checkTensor(t.scales, "AWQ scales", t.scales.dtype, {groups, n}, error,
                   "groups x N for " + configText(config)))
    return false;

  // z[g, n], de-interleaved; all 8 is the symmetric case.
  std::vector<uint32_t> zeros(size_t(groups * n));
  bool symmetric = true;
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t c = 0; c < n / 8; ++c) {
      uint32_t word = wordAt(t.qzeros, g * (n / 8) + c);
      for (int i = 0; i < 8; ++i) {
        uint32_t z = (word >> (4 * i)) & 0xF;
        zeros[g * n + 8 * c + kAWQOrder[i]] = z;
        symmetric = symmetric && z == 8;
      }
    }

  Encoding enc = integerEncoding(4, symmetric, config.groupSize, scaleType,
                                 /*actOrder=*/false);
  if (!allocateWeight(enc, n, k, out, error)) {
    error = "AWQ: " + error;
    return false;
  }

  // Codes: nibble (k, 8c + ORDER[i]) -> qf row 8c + ORDER[i], element k. The
  // stored nibble is the same for uint4 (q) and int4 (offset-binary q + 8).
  const int64_t rowBytes = k / 2;
  uint8_t *codes = component(out, kCodes).data.data();
  for (int64_t row = 0; row < k; ++row)
    for (int64_t c = 0; c < n / 8; ++c) {
      uint32_t word = wordAt(t.qweight, row * (n / 8) + c);
      for (int i = 0; i < 8; ++i) {
        uint8_t q = uint8_t((word >> (4 * i)) & 0xF);
        codes[(8 * c + kAWQOrder[i]) * rowBytes + row / 2] |=
            uint8_t(q << (4 * (row & 1)));
      }
    }

  transposeCopy(t.scales.data, groups, n, dtypeBytes(t.scales.dtype),
                component(out, kScales).data.data());
  if (!symmetric) {
    Tensor &z = component(out, kZeros);
    for (int64_t g = 0; g < groups; ++g)
      for (int64_t col = 0; col < n; ++col)
        putBits(z.data.data() + col * z.shape[1], g, 4, zeros[g * n + col]);
  }
  return true;
}

bool toAWQ(const PackedWeight &weight, TensorMap &tensors, std::string &error) {
  const Encoding &enc = weight.encoding;
  const int64_t n = weight.n, k = weight.k;
  if (!checkComponents(enc, weight.components, n, k, error))
    return false;
  const bool symmetric = enc.format == ElementFormat::Int4;
  if ((!symmetric && enc.format != ElementFormat::UInt4) ||
      enc.zeroPoint == ZeroPointKind::Float || enc.isSparse24() ||
      enc.actOrder)
    return fail(error, "AWQ stores dense int4/uint4 with integer zero points "
                       "and no act_order, not <" +
                           printEncoding(enc) + ">");
  if (n % 8 != 0)
    return fail(error, "AWQ packs 8 columns per int32; N = " +
                           std::to_string(n) + " is not a multiple of 8");
  const int64_t groups = numGroups(enc, k);
  const int64_t rowBytes = k / 2;
  const uint8_t *codes = component(weight, kCodes).data.data();

  Tensor qweight(DType::I32, {k, n / 8});
  for (int64_t row = 0; row < k; ++row)
    for (int64_t c = 0; c < n / 8; ++c) {
      uint32_t word = 0;
      for (int i = 0; i < 8; ++i) {
        uint32_t q = (codes[(8 * c + kAWQOrder[i]) * rowBytes + row / 2] >>
                      (4 * (row & 1))) &
                     0xF;
        word |= q << (4 * i);
      }
      storeLE32(qweight.data.data() + 4 * (row * (n / 8) + c), word);
    }

  Tensor qzeros(DType::I32, {groups, n / 8});
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t c = 0; c < n / 8; ++c) {
      uint32_t word = 0;
      for (int i = 0; i < 8; ++i) {
        int64_t col = 8 * c + kAWQOrder[i];
        uint32_t z = 8;
        if (!symmetric) {
          const Tensor &zt = component(weight, kZeros);
          z = getBits(zt.data.data() + col * zt.shape[1], g, 4);
        }
        word |= z << (4 * i);
      }
      storeLE32(qzeros.data.data() + 4 * (g * (n / 8) + c), word);
    }

  const Tensor &scales = component(weight, kScales);
  Tensor scalesOut(scales.dtype, {groups, n});
  transposeCopy(scales.data.data(), n, groups, dtypeBytes(scales.dtype),
                scalesOut.data.data());

  TensorMap out;
  out["qweight"] = std::move(qweight);
  out["qzeros"] = std::move(qzeros);
  out["scales"] = std::move(scalesOut);
  tensors = std::move(out);
  return true;
}

} // namespace qfuse::format
