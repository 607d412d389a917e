//===- OddWidthCases.h - codes whose fields straddle words ------*- C++ -*-===//
//
// The cases of the odd-width gather tests (OddWidthGatherTest on the host,
// OddWidthGatherGpuTest on the GPU): codebooks of every index width 2..8,
// the widths that do not divide 32 (3, 5, 6, 7) among them, at shapes whose
// rows are not a whole number of 32-bit words (K = 8 at 3 bits is a 24-bit
// row) and whose last word is partly padding, on uniformly random codes
// (every value of the width, never all zeros) from a fixed seed
// (QFUSE_TEST_SEED replaces it).
//
// The references are independent of the gather: format::pack's codes
// component, and a bit-by-bit stream (streamOf) that puts bit b of code i
// at bit i * f + b, LSB first, the rows one after another.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_UNITTESTS_FORMAT_ODDWIDTHCASES_H
#define QFUSE_UNITTESTS_FORMAT_ODDWIDTHCASES_H

#include "qfuse/format/Packing.h"

#include <algorithm>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

namespace qfuse::format::test {

/// Named-table codebooks (the codes are any index of the width): per
/// channel, and act_order with groups of 8, the smallest K that an odd
/// width's row ends on a byte with.
inline const std::vector<std::string> &oddWidthEncodings() {
  static const std::vector<std::string> list = {
      "codebook, bits = 3, table = \"t\" : f16, per_channel, scale = f16",
      "codebook, bits = 5, table = \"t\" : f16, per_channel, scale = f16",
      "codebook, bits = 6, table = \"t\" : f32, per_channel, scale = f16",
      "codebook, bits = 7, table = \"t\" : f16, per_channel, scale = f16",
      "codebook, bits = 2, table = \"t\" : f16, per_channel, scale = f16",
      "codebook, bits = 4, table = \"t\" : f16, per_channel, scale = f16",
      "codebook, bits = 8, table = \"t\" : f16, per_channel, scale = f16",
      "codebook, bits = 3, table = \"t\" : f16, group = 8, scale = f16, "
      "act_order",
      "codebook, bits = 5, table = \"t\" : f16, group = 8, scale = f16, "
      "act_order",
      "codebook, bits = 6, table = \"t\" : f16, group = 8, scale = f16, "
      "act_order",
      "codebook, bits = 7, table = \"t\" : f16, group = 8, scale = f16, "
      "act_order",
  };
  return list;
}

/// [N, K], every K a multiple of 8: one short row (24 bits at 3-bit, the
/// whole stream inside one word), rows of 40 to 1400 bits that start
/// anywhere in a word, and [300, 136], thousands of words (several blocks
/// of the kernel).
inline const std::vector<std::pair<int64_t, int64_t>> &oddWidthShapes() {
  static const std::vector<std::pair<int64_t, int64_t>> list = {
      {1, 8}, {3, 8}, {5, 24}, {13, 40}, {7, 56}, {2, 200}, {300, 136}};
  return list;
}

/// QFUSE_TEST_SEED, or `fixed`.
inline uint32_t seedOr(uint32_t fixed) {
  if (const char *env = std::getenv("QFUSE_TEST_SEED"))
    return uint32_t(std::strtoul(env, nullptr, 10));
  return fixed;
}

/// An unpacked weight of `enc` (a named-table codebook) at [n, k] with
/// uniformly random codes, the last one the width's largest so that the
/// codes are never all zero; scales 1, the table 0 .. 2^bits - 1, and
/// under act_order a shuffled g_idx of whole groups.
inline Unpacked randomCodebook(const Encoding &enc, int64_t n, int64_t k,
                               std::mt19937 &rng) {
  const int32_t top = (int32_t(1) << enc.indexBits) - 1;
  std::uniform_int_distribution<int32_t> code(0, top);
  Unpacked u;
  u.codes.resize(size_t(n * k));
  for (int32_t &c : u.codes)
    c = code(rng);
  u.codes.back() = top;
  u.scales.assign(size_t(n * numGroups(enc, k)), 1.0f);
  for (int32_t i = 0; i <= top; ++i)
    u.table.push_back(float(i));
  if (enc.actOrder) {
    for (int64_t c = 0; c < k; ++c)
      u.gIdx.push_back(int32_t(c / enc.groupSize));
    std::shuffle(u.gIdx.begin(), u.gIdx.end(), rng);
  }
  return u;
}

/// The row-major stream of `codes` at `bits` each, built bit by bit:
/// `bytes` long (the rest of the last byte zero).
inline std::vector<uint8_t> streamOf(const std::vector<int32_t> &codes,
                                     unsigned bits, size_t bytes) {
  std::vector<uint8_t> out(bytes, 0);
  for (size_t i = 0; i < codes.size(); ++i)
    for (unsigned b = 0; b < bits; ++b)
      if (uint32_t(codes[i]) >> b & 1) {
        const size_t at = i * bits + b;
        out[at / 8] |= uint8_t(1u << (at % 8));
      }
  return out;
}

/// Each code's low byte (GPTQ's code bytes).
inline std::vector<uint8_t> lowBytes(const std::vector<int32_t> &codes) {
  std::vector<uint8_t> bytes(codes.size());
  std::transform(codes.begin(), codes.end(), bytes.begin(),
                 [](int32_t c) { return uint8_t(c); });
  return bytes;
}

} // namespace qfuse::format::test

#endif // QFUSE_UNITTESTS_FORMAT_ODDWIDTHCASES_H
