//===- GatherCases.h - every encoding x layout, with random codes -*- C++ -*-===//
//
// The cases the field-gather tests run (FieldGatherTest on the host,
// DeviceGatherGpuTest on the GPU): encodings of every code width and
// format the artifact can list, each with every layout repack defines,
// at shapes that pad the mma tiles; the random row-major components of a
// case come from format::quantizeRTN of random weights (act_order with a
// random g_idx of whole groups).
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_UNITTESTS_FORMAT_GATHERCASES_H
#define QFUSE_UNITTESTS_FORMAT_GATHERCASES_H

#include "qfuse/format/Layout.h"
#include "qfuse/format/Packing.h"

#include <algorithm>
#include <random>
#include <string>
#include <vector>

namespace qfuse::format::test {

inline const std::vector<std::string> &gatherEncodings() {
  static const std::vector<std::string> list = {
      "int4, group = 32, scale = f16",
      "int4, group = 16, scale = f16, act_order",
      "uint4, group = 32, scale = f16, zero = int",
      "uint4, group = 16, scale = f16, zero = float, act_order",
      "nf4, group = 64, scale = f32",
      "fp4e2m1, group = 16, scale = f8E4M3FN, global_scale",
      "fp4e2m1, group = 32, scale = f8E8M0FNU",
      "fp8e4m3, per_channel, scale = f32",
      "int8, per_channel, scale = f16",
      "int8, group = 32, scale = f16, act_order",
      "uint8, group = 32, scale = f16, zero = int",
      "codebook, bits = 2, table = \"t\" : f16, per_channel, scale = f16",
      "codebook, bits = 3, table = \"t\" : f16, per_channel, scale = f16",
      "codebook, bits = 3, table = \"t\" : f16, group = 32, scale = f16, act_order",
      "codebook, bits = 5, table = \"t\" : f16, group = 32, scale = f16",
      "codebook, bits = 6, table = \"t\" : f32, per_channel, scale = f16",
      "codebook, bits = 7, table = \"t\" : f16, group = 64, scale = f16, act_order",
      "codebook, bits = 4, table = \"t\" : f32, group = 32, scale = f16",
      "int4, group = 32, scale = f16, sparse = 2:4",
      "f16, sparse = 2:4",
  };
  return list;
}

inline const std::vector<std::string> &gatherLayouts() {
  static const std::vector<std::string> list = {
      "row_major", "tiled, tile_n = 1, tile_k = 64",
      "tiled, tile_n = 1, tile_k = 8", "tiled, tile_n = 32, tile_k = 32",
      "tiled, tile_n = 32, tile_k = 64"};
  return list;
}

/// [N, K] shapes: whole tiles, and N, K that pad them.
inline const std::vector<std::pair<int64_t, int64_t>> &gatherShapes() {
  static const std::vector<std::pair<int64_t, int64_t>> list = {
      {64, 128}, {45, 96}, {7, 320}};
  return list;
}

/// Random row-major components of `enc` at [n, k]: quantizeRTN of random
/// weights. `u` gets the unpacked form (its codes, and params without
/// them for packCodeBytes). False when the encoding does not take [n, k].
inline bool randomComponents(const Encoding &enc, int64_t n, int64_t k,
                             std::mt19937 &rng, TensorMap &components,
                             Unpacked &u) {
  std::string error;
  if (!validate(enc, n, k, error))
    return false;
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> w(size_t(n * k));
  for (float &x : w)
    x = normal(rng);
  QuantizeOptions options;
  std::vector<int32_t> gIdx;
  if (enc.actOrder) {
    for (int64_t c = 0; c < k; ++c)
      gIdx.push_back(int32_t(c / enc.groupSize));
    std::shuffle(gIdx.begin(), gIdx.end(), rng);
    options.gIdx = gIdx.data();
  }
  std::vector<float> table;
  if (enc.format == ElementFormat::Codebook && enc.hasNamedTable()) {
    for (int64_t i = 0; i < (int64_t(1) << enc.indexBits); ++i)
      table.push_back(float(i) - float(int64_t(1) << (enc.indexBits - 1)));
    options.table = table.data();
  }
  if (!quantizeRTN(enc, w.data(), n, k, u, error, options) ||
      !pack(enc, u, n, k, components, error))
    return false;
  return true;
}

/// 2:4 encodings of every kept-value width the 2:4 fragment layout
/// defines (16-bit kept values too: 16-bit fields).
inline const std::vector<std::string> &sparseGatherEncodings() {
  static const std::vector<std::string> list = {
      "int4, group = 32, scale = f16, sparse = 2:4",
      "uint4, group = 16, scale = f16, zero = int, sparse = 2:4",
      "int8, per_channel, scale = f16, sparse = 2:4",
      "uint8, group = 32, scale = bf16, zero = int, sparse = 2:4",
      "fp8e4m3, per_channel, scale = f32, sparse = 2:4",
      "f16, sparse = 2:4",
  };
  return list;
}

inline const char *sparseGatherLayout() { return "tiled, tile_n = 32, tile_k = 64"; }

/// [N, K]: whole tiles, padded rows, padded columns, both, several tiles.
inline const std::vector<std::pair<int64_t, int64_t>> &sparseGatherShapes() {
  static const std::vector<std::pair<int64_t, int64_t>> list = {
      {32, 128}, {45, 128}, {64, 96}, {7, 320}, {96, 512}};
  return list;
}

/// The matvec's layout of 2:4 weights (one gather of the kept codes; the
/// metadata stays row-major).
inline const char *sparseMatvecLayout() { return "tiled, tile_n = 1, tile_k = 32"; }

/// [N, K] for it: one tile, odd N, several words per row, and K that no
/// tile_k = 32 divides (repack refuses them, so must the plan).
inline const std::vector<std::pair<int64_t, int64_t>> &sparseMatvecShapes() {
  static const std::vector<std::pair<int64_t, int64_t>> list = {
      {1, 32}, {3, 96}, {45, 128}, {7, 320}, {64, 4096}, {5, 208}, {9, 48}};
  return list;
}

/// Overwrites the codes and meta of 2:4 components with random bytes:
/// the layouts move bits, so every bit pattern must arrive.
inline void randomizeSparseBits(TensorMap &components, std::mt19937 &rng) {
  std::uniform_int_distribution<int> byte(0, 255);
  for (const char *name : {kCodes, kMetadata})
    for (uint8_t &b : components.at(name).data)
      b = uint8_t(byte(rng));
}

/// The low byte of every logical code (GPTQ's code bytes).
inline std::vector<uint8_t> codeBytesOf(const Unpacked &u) {
  std::vector<uint8_t> bytes(u.codes.size());
  for (size_t i = 0; i < bytes.size(); ++i)
    bytes[i] = uint8_t(u.codes[i]);
  return bytes;
}

} // namespace qfuse::format::test

#endif // QFUSE_UNITTESTS_FORMAT_GATHERCASES_H
