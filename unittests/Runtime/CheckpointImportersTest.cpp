//===- CheckpointTest.cpp - checkpoint layouts, built by hand -------------===//
//
// Each test packs random codes, zeros and scales into a checkpoint's tensors
// exactly as ../shared/notes/formats.md describes them (independently of
// the converters), converts, and checks that the dequantized weight equals
// the checkpoint's own formula bit for bit, that converting back gives the
// same tensors, and that wrong shapes are rejected naming the tensor.
//
//===----------------------------------------------------------------------===//

#include "qfuse/format/Layout.h"
#include "qfuse/runtime/artifact/PermGuards.h"
#include "qfuse/runtime/checkpoint/Importers.h"

#include "TestUtil.h"

#include <algorithm>
#include <cstring>

using namespace qfuse::format;
using qfuse::format::test::SeededTest;

namespace {

Tensor int32Tensor(const std::vector<uint32_t> &words,
                   std::vector<int64_t> shape) {
  Tensor t(DType::I32, std::move(shape));
  EXPECT_EQ(t.data.size(), 4 * words.size());
  for (size_t i = 0; i < words.size(); ++i)
    for (int b = 0; b < 4; ++b)
      t.data[4 * i + b] = uint8_t(words[i] >> (8 * b));
  return t;
}

Tensor halfTensor(const std::vector<float> &values, std::vector<int64_t> shape,
                  DType dtype = DType::F16) {
  Tensor t(dtype, std::move(shape));
  for (size_t i = 0; i < values.size(); ++i) {
    uint16_t h = dtype == DType::F16 ? floatToHalf(values[i])
                                     : floatToBFloat16(values[i]);
    t.data[2 * i] = uint8_t(h);
    t.data[2 * i + 1] = uint8_t(h >> 8);
  }
  return t;
}

Tensor floatTensor(const std::vector<float> &values,
                   std::vector<int64_t> shape) {
  Tensor t(DType::F32, std::move(shape));
  std::memcpy(t.data.data(), values.data(), 4 * values.size());
  return t;
}

class CheckpointTest : public SeededTest {
protected:
  /// Random values already exact in f16 (or bf16).
  std::vector<float> randomScales(size_t count, DType dtype = DType::F16) {
    std::vector<float> v = normal(count, 0.05f);
    for (float &x : v)
      x = dtype == DType::F16 ? halfToFloat(floatToHalf(x))
                              : bfloat16ToFloat(floatToBFloat16(x));
    return v;
  }

  std::vector<float> dequantized(const PackedWeight &w) {
    std::vector<float> out;
    std::string error;
    EXPECT_TRUE(dequantize(w.encoding, w.components, w.n, w.k, out, error))
        << error;
    return out;
  }

  static void expectSameTensors(const TensorMap &actual,
                                const TensorMap &expected) {
    EXPECT_EQ(actual.size(), expected.size());
    for (const auto &[name, tensor] : expected) {
      auto it = actual.find(name);
      ASSERT_NE(it, actual.end()) << name;
      EXPECT_EQ(it->second.dtype, tensor.dtype) << name;
      EXPECT_EQ(it->second.shape, tensor.shape) << name;
      EXPECT_EQ(it->second.data, tensor.data) << name;
    }
  }
};

//===----------------------------------------------------------------------===//
// GPTQ v1
//===----------------------------------------------------------------------===//

/// A GPTQ v1 layer: q[k][n], z[g][n], s[g][n] and g_idx, packed per
/// formats.md.
struct GPTQCase {
  int64_t n, k, group;
  int bits;
  std::vector<uint32_t> q, z; // q [K, N], z [G, N]
  std::vector<float> s;       // [G, N]
  std::vector<int32_t> gIdx;  // [K]
  TensorMap tensors;

  void pack() {
    const int per = 32 / bits;
    const int64_t groups = k / group;
    std::vector<uint32_t> qweight(size_t(k / per * n), 0);
    for (int64_t r = 0; r < k / per; ++r)
      for (int64_t col = 0; col < n; ++col)
        for (int j = 0; j < per; ++j)
          qweight[r * n + col] |= q[(r * per + j) * n + col] << (bits * j);
    std::vector<uint32_t> qzeros(size_t(groups * n / per), 0);
    for (int64_t g = 0; g < groups; ++g)
      for (int64_t c = 0; c < n / per; ++c)
        for (int j = 0; j < per; ++j)
          qzeros[g * (n / per) + c] |= (z[g * n + c * per + j] - 1)
                                       << (bits * j); // v1 stores z - 1
    tensors["qweight"] = int32Tensor(qweight, {k / per, n});
    tensors["qzeros"] = int32Tensor(qzeros, {groups, n / per});
    tensors["scales"] = halfTensor(s, {groups, n});
    std::vector<uint32_t> g(gIdx.begin(), gIdx.end());
    tensors["g_idx"] = int32Tensor(g, {k});
  }

  GPTQv1Tensors views(bool withGIdx = true) const {
    GPTQv1Tensors t;
    t.qweight = tensors.at("qweight").view();
    t.qzeros = tensors.at("qzeros").view();
    t.scales = tensors.at("scales").view();
    if (withGIdx)
      t.gIdx = tensors.at("g_idx").view();
    return t;
  }

  /// formats.md: w = s[g_idx[i], n] * (q - z).
  float formula(int64_t row, int64_t col) const {
    int64_t g = gIdx[col];
    return s[g * n + row] *
           (float(q[col * n + row]) - float(z[g * n + row]));
  }
};

TEST_F(CheckpointTest, GPTQv1) {
  for (int bits : {4, 8})
    for (int variant = 0; variant < 3; ++variant) { // asym, sym, act-order
      GPTQCase c;
      c.bits = bits;
      c.n = 32 * uniformInt(1, 2);
      c.group = 32;
      c.k = c.group * uniformInt(2, 4); // act-order needs two groups to show
      const int64_t groups = c.k / c.group;
      const uint32_t top = (1u << bits) - 1;
      for (int64_t i = 0; i < c.k * c.n; ++i)
        c.q.push_back(uint32_t(uniformInt(0, top)));
      for (int64_t i = 0; i < groups * c.n; ++i)
        c.z.push_back(variant == 1 ? 1u << (bits - 1)
                                   : uint32_t(uniformInt(1, top)));
      c.s = randomScales(size_t(groups * c.n));
      for (int64_t col = 0; col < c.k; ++col)
        c.gIdx.push_back(int32_t(col / c.group));
      if (variant == 2)
        std::shuffle(c.gIdx.begin(), c.gIdx.end(), rng);
      c.pack();

      SCOPED_TRACE("bits " + std::to_string(bits) + ", variant " +
                   std::to_string(variant));
      PackedWeight w;
      std::string error;
      LinearConfig config{c.n, c.k, bits, c.group};
      ASSERT_TRUE(fromGPTQv1(c.views(), config, w, error)) << error;
      std::string expected = variant == 1 ? (bits == 4 ? "int4" : "int8")
                                          : (bits == 4 ? "uint4" : "uint8");
      expected += ", group = 32, scale = f16";
      if (variant != 1)
        expected += ", zero = int";
      if (variant == 2)
        expected += ", act_order";
      EXPECT_EQ(printEncoding(w.encoding), expected);

      std::vector<float> out = dequantized(w);
      for (int64_t row = 0; row < c.n; ++row)
        for (int64_t col = 0; col < c.k; ++col)
          ASSERT_EQ(out[row * c.k + col], c.formula(row, col))
              << "(" << row << ", " << col << ")";

      TensorMap back;
      ASSERT_TRUE(toGPTQv1(w, back, error)) << error;
      expectSameTensors(back, c.tensors);
    }
}

/// AutoGPTQ q/k/v with desc_act: the perms the loaders make from g_idx
/// (the repack into a kernel layout) are what the executor compares for an
/// act_order group (PermGuards.h): one g_idx per input gives equal perms
/// (the fused group runs), a g_idx of v's own makes them differ (the
/// fallback runs).
TEST_F(CheckpointTest, GPTQv1ActOrderGroupPerms) {
  const int64_t k = 128, group = 32;
  std::vector<int32_t> shared;
  for (int64_t col = 0; col < k; ++col)
    shared.push_back(int32_t(col / group));
  std::shuffle(shared.begin(), shared.end(), rng);
  std::vector<int32_t> own = shared;
  std::shuffle(own.begin(), own.end(), rng);
  auto loadedPerm = [&](int64_t n, const std::vector<int32_t> &gIdx) {
    GPTQCase c;
    c.bits = 4;
    c.n = n;
    c.k = k;
    c.group = group;
    for (int64_t i = 0; i < c.k * c.n; ++i)
      c.q.push_back(uint32_t(uniformInt(0, 15)));
    for (int64_t i = 0; i < (k / group) * n; ++i)
      c.z.push_back(uint32_t(uniformInt(1, 15)));
    c.s = randomScales(size_t((k / group) * n));
    c.gIdx = gIdx;
    c.pack();
    PackedWeight w;
    std::string error;
    LinearConfig config{c.n, c.k, 4, c.group};
    EXPECT_TRUE(fromGPTQv1(c.views(), config, w, error)) << error;
    EXPECT_TRUE(w.encoding.actOrder);
    // The tensor-core kernel's layout, as the executor repacks it.
    Layout mma;
    EXPECT_TRUE(parseLayout("tiled, tile_n = 32, tile_k = 32", mma, error));
    TensorMap packed;
    EXPECT_TRUE(repack(w.encoding, mma, w.components, c.n, c.k, packed, error))
        << error;
    return packed.at(kPerm);
  };
  using qfuse::runtime::BoundPerms;
  using qfuse::runtime::PermGuard;
  PermGuard equal, differ;
  equal.when = PermGuard::When::PermsEqual;
  differ.when = PermGuard::When::PermsDiffer;
  equal.weights = differ.weights = {"q", "k", "v"};
  BoundPerms perms;
  for (auto [name, n] :
       {std::pair<const char *, int64_t>{"q", 64}, {"k", 32}, {"v", 32}}) {
    Tensor perm = loadedPerm(n, shared);
    perms.set(name, perm.data.data(), perm.data.size());
  }
  EXPECT_TRUE(perms.holds(equal));
  EXPECT_FALSE(perms.holds(differ));
  Tensor vPerm = loadedPerm(32, own);
  perms.set("v", vPerm.data.data(), vPerm.data.size());
  EXPECT_FALSE(perms.holds(equal));
  EXPECT_TRUE(perms.holds(differ));
}

TEST_F(CheckpointTest, GPTQv1WithoutGIdxAndPerChannel) {
  GPTQCase c;
  c.bits = 4;
  c.n = 8;
  c.k = 64;
  c.group = 64; // one group: the per-channel case (GPTQ group_size = -1)
  for (int64_t i = 0; i < c.k * c.n; ++i)
    c.q.push_back(uint32_t(uniformInt(0, 15)));
  for (int64_t i = 0; i < c.n; ++i)
    c.z.push_back(uint32_t(uniformInt(1, 15)));
  c.s = randomScales(size_t(c.n));
  c.gIdx.assign(size_t(c.k), 0);
  c.pack();
  PackedWeight w;
  std::string error;
  ASSERT_TRUE(fromGPTQv1(c.views(/*withGIdx=*/false), {c.n, c.k, 4, -1}, w,
                         error))
      << error;
  EXPECT_EQ(printEncoding(w.encoding),
            "uint4, per_channel, scale = f16, zero = int");
  std::vector<float> out = dequantized(w);
  for (int64_t row = 0; row < c.n; ++row)
    for (int64_t col = 0; col < c.k; ++col)
      ASSERT_EQ(out[row * c.k + col], c.formula(row, col));
}

TEST_F(CheckpointTest, GPTQv1Errors) {
  GPTQCase c;
  c.bits = 4;
  c.n = 16;
  c.k = 64;
  c.group = 32;
  c.q.assign(size_t(c.k * c.n), 3);
  c.z.assign(size_t(2 * c.n), 5);
  c.s.assign(size_t(2 * c.n), 0.5f);
  for (int64_t col = 0; col < c.k; ++col)
    c.gIdx.push_back(int32_t(col / 32));
  c.pack();
  LinearConfig config{c.n, c.k, 4, 32};
  PackedWeight w;
  std::string error;

  GPTQv1Tensors t = c.views();
  Tensor shortQ = int32Tensor(std::vector<uint32_t>(8 * 15), {8, 15});
  t.qweight = shortQ.view();
  EXPECT_FALSE(fromGPTQv1(t, config, w, error));
  EXPECT_EQ(error, "GPTQ qweight: expected I32 [8, 16], got I32 [8, 15] (K * "
                   "bits / 32 x N for N = 16, K = 64, bits = 4, group = 32)");

  t = c.views();
  Tensor wrongZ = int32Tensor(std::vector<uint32_t>(6), {2, 3});
  t.qzeros = wrongZ.view();
  EXPECT_FALSE(fromGPTQv1(t, config, w, error));
  EXPECT_EQ(error, "GPTQ qzeros: expected I32 [2, 2], got I32 [2, 3] (groups "
                   "x N * bits / 32 for N = 16, K = 64, bits = 4, group = 32)");

  t = c.views();
  Tensor intScales = int32Tensor(std::vector<uint32_t>(32), {2, 16});
  t.scales = intScales.view();
  EXPECT_FALSE(fromGPTQv1(t, config, w, error));
  EXPECT_EQ(error, "GPTQ scales: expected F16, BF16 or F32 scales, got I32 "
                   "[2, 16]");

  t = c.views();
  Tensor badG = int32Tensor(std::vector<uint32_t>(64, 5), {64});
  t.gIdx = badG.view();
  EXPECT_FALSE(fromGPTQv1(t, config, w, error));
  EXPECT_EQ(error, "GPTQ g_idx[0] = 5 is outside [0, 2) for N = 16, K = 64, "
                   "bits = 4, group = 32");

  // z = 16 (stored 15): v1's wrap-around of z = 0.
  c.z[3] = 16;
  c.pack();
  EXPECT_FALSE(fromGPTQv1(c.views(), config, w, error));
  EXPECT_EQ(error, "GPTQ qzeros: group 0, column 3 stores z - 1 = 15, so z = "
                   "16 does not fit 4 bits (v1 wraps z = 0 to this); re-export "
                   "as GPTQ v2 or compressed-tensors");

  EXPECT_FALSE(fromGPTQv1(c.views(), {c.n, c.k, 3, 32}, w, error));
  EXPECT_EQ(error, "GPTQ: 3-bit weights are not supported; expected 4 or 8 "
                   "bits");
}

//===----------------------------------------------------------------------===//
// compressed-tensors pack-quantized
//===----------------------------------------------------------------------===//

TEST_F(CheckpointTest, CompressedTensorsPackQuantized) {
  for (int bits : {4, 8})
    for (bool symmetric : {true, false})
      for (bool actOrder : {false, true}) {
        SCOPED_TRACE("bits " + std::to_string(bits) +
                     (symmetric ? ", sym" : ", asym") +
                     (actOrder ? ", actorder" : ""));
        // K = 36 is 4.5 words of 4-bit codes: rows end in padding.
        const int64_t n = uniformInt(1, 20), k = 36, group = 12, groups = 3;
        const int per = 32 / bits;
        const int32_t lo = -(1 << (bits - 1)), hi = (1 << (bits - 1)) - 1;
        const uint32_t offset = 1u << (bits - 1), mask = (1u << bits) - 1;
        std::vector<int32_t> q, zp(size_t(n * groups), 0), gIdx;
        for (int64_t i = 0; i < n * k; ++i)
          q.push_back(int32_t(uniformInt(lo, hi)));
        if (!symmetric)
          for (int32_t &z : zp)
            z = int32_t(uniformInt(lo, hi));
        for (int64_t col = 0; col < k; ++col)
          gIdx.push_back(int32_t(col / group));
        if (actOrder)
          std::shuffle(gIdx.begin(), gIdx.end(), rng);
        std::vector<float> s = randomScales(size_t(n * groups), DType::BF16);

        // formats.md: element i at bit i*b of the row's words, value q + 2^(b-1).
        const int64_t words = (k * bits + 31) / 32;
        std::vector<uint32_t> packed(size_t(n * words), 0);
        for (int64_t row = 0; row < n; ++row)
          for (int64_t col = 0; col < k; ++col)
            packed[row * words + col / per] |=
                ((uint32_t(q[row * k + col]) + offset) & mask)
                << (bits * (col % per));
        TensorMap tensors;
        tensors["weight_packed"] = int32Tensor(packed, {n, words});
        tensors["weight_scale"] = halfTensor(s, {n, groups}, DType::BF16);
        Tensor shape(DType::I64, {2});
        shape.data[0] = uint8_t(n);
        shape.data[8] = uint8_t(k);
        tensors["weight_shape"] = shape;
        CompressedTensorsPacked t;
        t.weightPacked = tensors["weight_packed"].view();
        t.weightScale = tensors["weight_scale"].view();
        t.weightShape = tensors["weight_shape"].view();
        if (!symmetric) { // packed along dim 0, same offset
          std::vector<uint32_t> zpWords(size_t((n + per - 1) / per * groups), 0);
          for (int64_t row = 0; row < n; ++row)
            for (int64_t g = 0; g < groups; ++g)
              zpWords[(row / per) * groups + g] |=
                  ((uint32_t(zp[row * groups + g]) + offset) & mask)
                  << (bits * (row % per));
          tensors["weight_zero_point"] =
              int32Tensor(zpWords, {(n + per - 1) / per, groups});
          t.weightZeroPoint = tensors["weight_zero_point"].view();
        }
        if (actOrder) {
          tensors["weight_g_idx"] = int32Tensor(
              std::vector<uint32_t>(gIdx.begin(), gIdx.end()), {k});
          t.weightGIdx = tensors["weight_g_idx"].view();
        }

        PackedWeight w;
        std::string error;
        ASSERT_TRUE(fromCompressedTensors(t, {n, k, bits, group}, w, error))
            << error;
        std::vector<float> out = dequantized(w);
        for (int64_t row = 0; row < n; ++row)
          for (int64_t col = 0; col < k; ++col) {
            int64_t g = gIdx[col];
            // w = (q - zp) * scale
            float expected = float(q[row * k + col] - zp[row * groups + g]) *
                             s[row * groups + g];
            ASSERT_EQ(out[row * k + col], expected)
                << "(" << row << ", " << col << ")";
          }
        TensorMap back;
        ASSERT_TRUE(toCompressedTensors(w, back, error)) << error;
        expectSameTensors(back, tensors);
      }
}

TEST_F(CheckpointTest, CompressedTensorsErrors) {
  Tensor packed = int32Tensor(std::vector<uint32_t>(4 * 4), {4, 4});
  Tensor scale = halfTensor(std::vector<float>(4, 1.0f), {4, 1});
  Tensor shape(DType::I64, {2});
  shape.data[0] = 4;
  shape.data[8] = 33;
  CompressedTensorsPacked t;
  t.weightPacked = packed.view();
  t.weightScale = scale.view();
  PackedWeight w;
  std::string error;
  ASSERT_TRUE(fromCompressedTensors(t, {4, 32, 4, 0}, w, error)) << error;
  EXPECT_EQ(printEncoding(w.encoding), "int4, per_channel, scale = f16");

  EXPECT_FALSE(fromCompressedTensors(t, {4, 40, 4, 0}, w, error));
  EXPECT_EQ(error, "compressed-tensors weight_packed: expected I32 [4, 5], got "
                   "I32 [4, 4] (N x ceil(K * bits / 32) for N = 4, K = 40, "
                   "bits = 4, group = per channel)");
  EXPECT_FALSE(fromCompressedTensors(t, {4, 32, 4, 16}, w, error));
  EXPECT_EQ(error, "compressed-tensors weight_scale: expected F16 [4, 2], got "
                   "F16 [4, 1] (N x groups for N = 4, K = 32, bits = 4, group "
                   "= 16)");
  t.weightShape = shape.view();
  EXPECT_FALSE(fromCompressedTensors(t, {4, 32, 4, 0}, w, error));
  EXPECT_EQ(error, "compressed-tensors weight_shape: says [4, 33], expected "
                   "[4, 32]");
  t.weightShape.reset();
  Tensor zp = int32Tensor(std::vector<uint32_t>(2), {2, 1});
  t.weightZeroPoint = zp.view();
  EXPECT_FALSE(fromCompressedTensors(t, {4, 32, 4, 0}, w, error));
  EXPECT_EQ(error, "compressed-tensors weight_zero_point: expected I32 [1, 1], "
                   "got I32 [2, 1] (ceil(N * bits / 32) x groups, packed along "
                   "dim 0, for N = 4, K = 32, bits = 4, group = per channel)");
}

//===----------------------------------------------------------------------===//
// NVFP4
//===----------------------------------------------------------------------===//

TEST_F(CheckpointTest, NVFP4) {
  const int64_t n = uniformInt(1, 8), k = 16 * uniformInt(1, 4);
  Tensor packed(DType::U8, {n, k / 2}), scale(DType::F8E4M3, {n, k / 16});
  for (uint8_t &b : packed.data)
    b = uint8_t(uniformInt(0, 255));
  for (uint8_t &b : scale.data) {
    do
      b = uint8_t(uniformInt(0, 255));
    while ((b & 0x7F) == 0x7F);
  }
  const float global = std::uniform_real_distribution<float>(1, 5000)(rng);
  Tensor globalScale = floatTensor({global}, {1});
  NVFP4Tensors t{packed.view(), scale.view(), globalScale.view()};
  PackedWeight w;
  std::string error;
  ASSERT_TRUE(fromNVFP4(t, n, k, w, error)) << error;
  EXPECT_EQ(printEncoding(w.encoding),
            "fp4e2m1, group = 16, scale = f8E4M3FN, global_scale");
  std::vector<float> out = dequantized(w);
  for (int64_t row = 0; row < n; ++row)
    for (int64_t col = 0; col < k; ++col) {
      // Element 2j in the low nibble, 2j+1 in the high one.
      uint8_t byte = packed.data[row * (k / 2) + col / 2];
      uint8_t nibble = col % 2 ? byte >> 4 : byte & 0xF;
      float expected = decodeE2M1(nibble) *
                       decodeE4M3(scale.data[row * (k / 16) + col / 16]) /
                       global;
      ASSERT_EQ(out[row * k + col], expected) << "(" << row << ", " << col << ")";
    }
  TensorMap back;
  ASSERT_TRUE(toNVFP4(w, back, error)) << error;
  expectSameTensors(back, {{"weight_packed", packed},
                           {"weight_scale", scale},
                           {"weight_global_scale", globalScale}});

  Tensor wrong(DType::U8, {n, k / 4});
  t.weightPacked = wrong.view();
  EXPECT_FALSE(fromNVFP4(t, n, k, w, error));
  EXPECT_EQ(error, "NVFP4 weight_packed: expected U8 [" + std::to_string(n) +
                       ", " + std::to_string(k / 2) + "], got U8 [" +
                       std::to_string(n) + ", " + std::to_string(k / 4) +
                       "] (N x K / 2 for N = " + std::to_string(n) +
                       ", K = " + std::to_string(k) + ")");
  EXPECT_FALSE(fromNVFP4(t, n, 40, w, error));
  EXPECT_EQ(error, "NVFP4: group size 16 does not divide K = 40");
}

//===----------------------------------------------------------------------===//
// bitsandbytes NF4
//===----------------------------------------------------------------------===//

TEST_F(CheckpointTest, BitsAndBytesNF4) {
  const int64_t n = uniformInt(1, 6), k = 64 * uniformInt(1, 3), block = 64;
  Tensor weight(DType::U8, {n * k / 2, 1});
  for (uint8_t &b : weight.data)
    b = uint8_t(uniformInt(0, 255));
  std::vector<float> absmax;
  for (int64_t i = 0; i < n * k / block; ++i)
    absmax.push_back(std::uniform_real_distribution<float>(0.01f, 2)(rng));
  Tensor absmaxTensor = floatTensor(absmax, {n * k / block});
  PackedWeight w;
  std::string error;
  ASSERT_TRUE(fromBnbNF4({weight.view(), absmaxTensor.view()}, n, k, block, w,
                         error))
      << error;
  EXPECT_EQ(printEncoding(w.encoding), "nf4, group = 64, scale = f32");
  std::vector<float> out = dequantized(w);
  for (int64_t i = 0; i < n * k; ++i) {
    // Flattened row-major; element 2j in the HIGH nibble of byte j.
    uint8_t byte = weight.data[i / 2];
    uint8_t code = i % 2 ? byte & 0xF : byte >> 4;
    ASSERT_EQ(out[i], kNF4Table[code] * absmax[i / block]) << i;
  }
  TensorMap back;
  ASSERT_TRUE(toBnbNF4(w, back, error)) << error;
  expectSameTensors(back, {{"weight", weight}, {"absmax", absmaxTensor}});

  // K = 96: the second block of 64 would span two rows.
  EXPECT_FALSE(fromBnbNF4({weight.view(), absmaxTensor.view()}, 2, 96, block,
                          w, error));
  EXPECT_EQ(error, "bitsandbytes NF4: blocks of 64 cross rows because K = 96 "
                   "is not a multiple; qf groups stay within a row");
  const int64_t blocks = n * k / block;
  Tensor longAbsmax =
      floatTensor(std::vector<float>(size_t(blocks + 1), 1.0f), {blocks + 1});
  EXPECT_FALSE(fromBnbNF4({weight.view(), longAbsmax.view()}, n, k, block, w,
                          error));
  EXPECT_EQ(error, "bitsandbytes NF4 absmax: expected F32 [" +
                       std::to_string(blocks) + "], got F32 [" +
                       std::to_string(blocks + 1) +
                       "] (one per block for N = " + std::to_string(n) +
                       ", K = " + std::to_string(k) + ", blocksize = 64)");
}

//===----------------------------------------------------------------------===//
// AWQ
//===----------------------------------------------------------------------===//

TEST_F(CheckpointTest, AWQ) {
  const int order[8] = {0, 2, 4, 6, 1, 3, 5, 7};
  for (bool symmetric : {false, true}) {
    const int64_t n = 8 * uniformInt(1, 4), group = 32,
                  k = group * uniformInt(1, 3), groups = k / group;
    std::vector<uint32_t> q, z;
    for (int64_t i = 0; i < k * n; ++i)
      q.push_back(uint32_t(uniformInt(0, 15))); // q[k][n]
    for (int64_t i = 0; i < groups * n; ++i)
      z.push_back(symmetric ? 8 : uint32_t(uniformInt(0, 15))); // z[g][n]
    std::vector<float> s = randomScales(size_t(groups * n));
    // formats.md: nibble slot i of word c holds column 8c + ORDER[i].
    std::vector<uint32_t> qweight(size_t(k * n / 8), 0),
        qzeros(size_t(groups * n / 8), 0);
    for (int64_t row = 0; row < k; ++row)
      for (int64_t c = 0; c < n / 8; ++c)
        for (int i = 0; i < 8; ++i)
          qweight[row * (n / 8) + c] |= q[row * n + 8 * c + order[i]] << (4 * i);
    for (int64_t g = 0; g < groups; ++g)
      for (int64_t c = 0; c < n / 8; ++c)
        for (int i = 0; i < 8; ++i)
          qzeros[g * (n / 8) + c] |= z[g * n + 8 * c + order[i]] << (4 * i);
    TensorMap tensors;
    tensors["qweight"] = int32Tensor(qweight, {k, n / 8});
    tensors["qzeros"] = int32Tensor(qzeros, {groups, n / 8});
    tensors["scales"] = halfTensor(s, {groups, n});
    AWQTensors t{tensors["qweight"].view(), tensors["qzeros"].view(),
                 tensors["scales"].view()};
    PackedWeight w;
    std::string error;
    ASSERT_TRUE(fromAWQ(t, {n, k, 4, group}, w, error)) << error;
    EXPECT_EQ(printEncoding(w.encoding),
              symmetric ? "int4, group = 32, scale = f16"
                        : "uint4, group = 32, scale = f16, zero = int");
    std::vector<float> out = dequantized(w);
    for (int64_t row = 0; row < n; ++row)
      for (int64_t col = 0; col < k; ++col) {
        int64_t g = col / group;
        float expected = s[g * n + row] * (float(q[col * n + row]) -
                                           float(z[g * n + row]));
        ASSERT_EQ(out[row * k + col], expected) << "(" << row << ", " << col
                                                << ")";
      }
    TensorMap back;
    ASSERT_TRUE(toAWQ(w, back, error)) << error;
    expectSameTensors(back, tensors);

    EXPECT_FALSE(fromAWQ(t, {n, k, 4, group / 2}, w, error));
    EXPECT_EQ(error, "AWQ qzeros: expected I32 [" + std::to_string(2 * groups) +
                         ", " + std::to_string(n / 8) + "], got I32 [" +
                         std::to_string(groups) + ", " + std::to_string(n / 8) +
                         "] (groups x N / 8 for N = " + std::to_string(n) +
                         ", K = " + std::to_string(k) +
                         ", bits = 4, group = 16)");
  }
  PackedWeight w;
  std::string error;
  Tensor dummy = int32Tensor({0}, {1, 1});
  EXPECT_FALSE(fromAWQ({dummy.view(), dummy.view(), dummy.view()},
                       {12, 32, 4, 32}, w, error));
  EXPECT_EQ(error, "AWQ qweight: N = 12 is not a multiple of the 8 columns "
                   "packed per int32");
}

TEST_F(CheckpointTest, ExportRejectsOtherEncodings) {
  std::vector<float> values = normal(8 * 64);
  PackedWeight w;
  w.n = 8;
  w.k = 64;
  std::string error;
  ASSERT_TRUE(parseEncoding("nf4, group = 64, scale = f32", w.encoding, error));
  ASSERT_TRUE(quantizeRTN(w.encoding, values.data(), 8, 64, w.components, error));
  TensorMap out;
  EXPECT_FALSE(toGPTQv1(w, out, error));
  EXPECT_EQ(error, "GPTQ stores dense int4/uint4/int8/uint8 with integer zero "
                   "points and float scales, not <nf4, group = 64, scale = f32>");
  EXPECT_FALSE(toAWQ(w, out, error));
  EXPECT_FALSE(toCompressedTensors(w, out, error));
  EXPECT_FALSE(toNVFP4(w, out, error));
  EXPECT_TRUE(toBnbNF4(w, out, error)) << error;

  // GPTQ v1 cannot store a zero point of 0 (it would write z - 1 = -1).
  ASSERT_TRUE(parseEncoding("uint4, group = 32, scale = f16, zero = int",
                            w.encoding, error));
  std::vector<float> positive(8 * 64, 1.0f);
  ASSERT_TRUE(quantizeRTN(w.encoding, positive.data(), 8, 64, w.components,
                          error));
  EXPECT_FALSE(toGPTQv1(w, out, error));
  EXPECT_EQ(error, "GPTQ v1 stores z - 1 and cannot hold the zero point 0 of "
                   "row 0, group 0");
  EXPECT_TRUE(toAWQ(w, out, error)) << error;
}

} // namespace
