//===- PackingTest.cpp - row-major components: bytes, round trips, errors -===//
//
// Byte layouts checked against hand-computed bytes (the diagrams in
// Packing.h), pack/unpack round trips for every format on random values,
// dequantize against the formula written out here, and every error path.
//
//===----------------------------------------------------------------------===//

#include "qfuse/format/Packing.h"

#include "TestUtil.h"

#include <cmath>
#include <cstring>

using namespace qfuse::format;
using qfuse::format::test::enc;
using qfuse::format::test::SeededParamTest;
using qfuse::format::test::SeededTest;
using qfuse::format::test::testName;

namespace {

//===----------------------------------------------------------------------===//
// Hand-computed bytes
//===----------------------------------------------------------------------===//

/// Packs one row of codes (plus whatever else `u` holds) and returns the
/// components, failing the test on error.
TensorMap packOrFail(const std::string &text, Unpacked u, int64_t n,
                     int64_t k) {
  TensorMap c;
  std::string error;
  EXPECT_TRUE(pack(enc(text), u, n, k, c, error)) << text << ": " << error;
  return c;
}

std::vector<uint8_t> bytes(std::initializer_list<int> values) {
  std::vector<uint8_t> out;
  for (int v : values)
    out.push_back(uint8_t(v));
  return out;
}

TEST(PackingBytesTest, Int4IsOffsetBinaryLowNibbleFirst) {
  Unpacked u;
  u.codes = {-8, 7, 0, -1, 3, -3, 5, 1};
  u.scales = {1.0f};
  TensorMap c = packOrFail("int4, per_channel, scale = f16", u, 1, 8);
  // nibbles q + 8 = 0, 15, 8, 7, 11, 5, 13, 9; element 2j in the low nibble.
  EXPECT_EQ(c[kCodes].data, bytes({0xF0, 0x78, 0x5B, 0x9D}));
  EXPECT_EQ(c[kScales].data, bytes({0x00, 0x3C})); // f16 1.0, little-endian
}

TEST(PackingBytesTest, Int8IsTwosComplement) {
  Unpacked u;
  u.codes = {-1, -128, 127, 0, 5, -5, 64, -64};
  u.scales = {1.0f};
  TensorMap c = packOrFail("int8, per_channel, scale = bf16", u, 1, 8);
  EXPECT_EQ(c[kCodes].data,
            bytes({0xFF, 0x80, 0x7F, 0x00, 0x05, 0xFB, 0x40, 0xC0}));
  EXPECT_EQ(c[kScales].data, bytes({0x80, 0x3F})); // bf16 1.0
}

TEST(PackingBytesTest, ThreeBitCodesCrossBytes) {
  const int codes[8] = {5, 3, 6, 1, 7, 2, 4, 0};
  Unpacked u;
  uint32_t stream = 0; // element i at bits 3i..3i+2
  for (int i = 0; i < 8; ++i) {
    u.codes.push_back(codes[i]);
    stream |= uint32_t(codes[i]) << (3 * i);
  }
  u.scales = {1.0f};
  u.table = {0, 1, 2, 3, 4, 5, 6, 7};
  TensorMap c = packOrFail(
      "codebook, bits = 3, table = \"t\" : f16, per_channel, scale = f16", u,
      1, 8);
  EXPECT_EQ(c[kCodes].data, bytes({int(stream & 0xFF), int(stream >> 8 & 0xFF),
                                   int(stream >> 16 & 0xFF)}));
  EXPECT_EQ(c[kTable].shape, std::vector<int64_t>{8});
}

TEST(PackingBytesTest, FP4AndF16) {
  // A whole group of 32: codes, then the E8M0 byte of 1.0 (127).
  Unpacked v;
  v.codes.assign(32, 0);
  v.codes[0] = 0xF; // -6 in the low nibble of byte 0
  v.codes[1] = 0x1; // 0.5 in the high nibble
  v.scales = {1.0f};
  TensorMap d = packOrFail("fp4e2m1, group = 32, scale = f8E8M0FNU", v, 1, 32);
  EXPECT_EQ(d[kCodes].data[0], 0x1F);
  EXPECT_EQ(d[kScales].data, bytes({127}));
  EXPECT_EQ(d[kScales].dtype, DType::F8E8M0);

  Unpacked h;
  h.codes = {floatToHalf(1.0f), floatToHalf(-2.0f)};
  TensorMap e = packOrFail("f16", h, 1, 2);
  EXPECT_EQ(e[kCodes].data, bytes({0x00, 0x3C, 0x00, 0xC0}));
}

TEST(PackingBytesTest, IntegerZerosPackAlongGroups) {
  Unpacked u;
  u.codes.assign(6, 0);
  u.scales = {1.0f, 1.0f, 1.0f};
  u.zeros = {1, 2, 3};
  TensorMap c = packOrFail("uint4, group = 2, scale = f32, zero = int", u, 1, 6);
  EXPECT_EQ(c[kZeros].shape, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(c[kZeros].data, bytes({0x21, 0x03}));
}

TEST(PackingBytesTest, TwoFourMetadata) {
  Unpacked u;
  // Quad 0 keeps columns 0 and 3, quad 1 keeps 1 and 2.
  u.codes = {floatToHalf(1), floatToHalf(2), floatToHalf(3), floatToHalf(4)};
  u.positions = {0, 3, 1, 2};
  TensorMap c = packOrFail("f16, sparse = 2:4", u, 1, 8);
  EXPECT_EQ(c[kMetadata].data, bytes({0 | 3 << 2 | 1 << 4 | 2 << 6}));
  EXPECT_EQ(c[kCodes].shape, (std::vector<int64_t>{1, 8})); // 4 kept x 2 bytes

  std::vector<float> w;
  std::string error;
  ASSERT_TRUE(dequantize(enc("f16, sparse = 2:4"), c, 1, 8, w, error)) << error;
  EXPECT_EQ(w, (std::vector<float>{1, 0, 0, 2, 0, 3, 4, 0}));
}

TEST(PackingBytesTest, ComponentTable) {
  std::vector<ComponentSpec> specs;
  std::string error;
  ASSERT_TRUE(componentSpecs(
      enc("uint4, group = 128, scale = bf16, zero = int, act_order, "
          "sparse = 2:4"),
      96, 1024, specs, error))
      << error;
  ASSERT_EQ(specs.size(), 5u);
  auto expect = [&](size_t i, const char *name, DType dtype,
                    std::vector<int64_t> shape) {
    EXPECT_EQ(specs[i].name, name);
    EXPECT_EQ(specs[i].dtype, dtype) << name;
    EXPECT_EQ(specs[i].shape, shape) << name;
  };
  expect(0, "codes", DType::U8, {96, 256});  // 512 kept x 4 bits
  expect(1, "scales", DType::BF16, {96, 8});
  expect(2, "zeros", DType::U8, {96, 4});    // 8 groups x 4 bits
  expect(3, "g_idx", DType::I32, {1024});
  expect(4, "meta", DType::U8, {96, 128});

  ASSERT_TRUE(componentSpecs(
      enc("fp4e2m1, group = 16, scale = f8E4M3FN, global_scale"), 2, 64,
      specs, error));
  ASSERT_EQ(specs.size(), 3u);
  expect(1, "scales", DType::F8E4M3, {2, 4});
  expect(2, "global_scale", DType::F32, {1});

  ASSERT_TRUE(componentSpecs(
      enc("uint8, per_channel, scale = f16, zero = float"), 2, 64, specs,
      error));
  expect(2, "zeros", DType::F16, {2, 1});

  EXPECT_FALSE(componentSpecs(enc("int4, group = 128, scale = f16"), 2, 64,
                              specs, error));
  EXPECT_EQ(error, "group size 128 does not divide K = 64");
}

//===----------------------------------------------------------------------===//
// Bit streams
//===----------------------------------------------------------------------===//

class BitStreamTest : public SeededTest {};

TEST_F(BitStreamTest, PutGetRoundTripsAndKeepsNeighbours) {
  for (unsigned bits : {1u, 2u, 3u, 4u, 5u, 6u, 7u, 8u, 11u, 16u, 32u}) {
    const int64_t count = uniformInt(1, 70);
    std::vector<uint32_t> values(static_cast<size_t>(count));
    uint64_t limit = bits == 32 ? 0xFFFFFFFFull : (1ull << bits) - 1;
    for (uint32_t &v : values)
      v = uint32_t(uniformInt(0, int64_t(limit)));
    std::vector<uint8_t> stream(size_t((count * bits + 7) / 8), 0);
    for (int64_t i = 0; i < count; ++i)
      putBits(stream.data(), i, bits, values[i]);
    for (int64_t i = 0; i < count; ++i)
      ASSERT_EQ(getBits(stream.data(), i, bits), values[i])
          << bits << " bits, element " << i;
    // The same stream, bit by bit, from the definition.
    for (int64_t bit = 0; bit < count * bits; ++bit) {
      uint32_t expected = (values[bit / bits] >> (bit % bits)) & 1;
      ASSERT_EQ((stream[bit / 8] >> (bit % 8)) & 1, expected)
          << bits << " bits, stream bit " << bit;
    }
  }
}

TEST(CodesTest, StoredAndLogicalCodes) {
  for (int32_t q = -8; q <= 7; ++q) {
    EXPECT_EQ(storedCode(ElementFormat::Int4, q), uint32_t(q + 8));
    EXPECT_EQ(logicalCode(ElementFormat::Int4, uint32_t(q + 8)), q);
  }
  for (int32_t q = -128; q <= 127; ++q)
    EXPECT_EQ(logicalCode(ElementFormat::Int8, storedCode(ElementFormat::Int8, q)),
              q);
  EXPECT_EQ(storedCode(ElementFormat::UInt4, 13), 13u);
  int32_t lo, hi;
  codeRange(ElementFormat::Codebook, 5, lo, hi);
  EXPECT_EQ(lo, 0);
  EXPECT_EQ(hi, 31);
  codeRange(ElementFormat::Int8, 8, lo, hi);
  EXPECT_EQ(lo, -128);
  EXPECT_EQ(hi, 127);
}

//===----------------------------------------------------------------------===//
// Every format: random values -> pack -> unpack, and dequantize's formula
//===----------------------------------------------------------------------===//

const char *const kFormats[] = {
    "int4, group = 128, scale = f16",
    "uint4, group = 128, scale = f16, zero = int",
    "uint4, group = 64, scale = bf16, zero = float",
    "int4, group = 32, scale = f32, act_order",
    "int8, per_channel, scale = bf16",
    "uint8, group = 32, scale = f32, zero = int",
    "uint8, group = 16, scale = f16, zero = float, act_order",
    "fp8e4m3, per_channel, scale = f32",
    "fp8e4m3, group = 32, scale = f8E8M0FNU",
    "int8, group = 32, scale = f8E8M0FNU",
    "fp4e2m1, group = 16, scale = f8E4M3FN, global_scale",
    "fp4e2m1, group = 32, scale = f8E8M0FNU",
    "fp4e2m1, group = 32, scale = bf16",
    "nf4, group = 64, scale = f32",
    "codebook, bits = 2, table = dense<[-1.0, -0.25, 0.25, 1.0]> : "
    "tensor<4xf32>, per_channel, scale = f16",
    "codebook, bits = 3, table = dense<[-1.0, -0.5, -0.25, 0.0, 0.25, 0.5, "
    "0.75, 1.0]> : tensor<8xf16>, group = 128, scale = f16",
    "codebook, bits = 4, table = \"lut.layer0\" : f32, per_channel, "
    "scale = f16",
    "codebook, bits = 5, table = \"lut5\" : f16, group = 32, scale = bf16",
    "codebook, bits = 7, table = \"lut7\" : f16, group = 64, scale = f16",
    "codebook, bits = 8, table = \"lut8\" : f32, group = 16, scale = f32",
    "f16",
    "bf16",
    "f16, sparse = 2:4",
    "bf16, sparse = 2:4",
    "int4, group = 128, scale = f16, sparse = 2:4",
    "uint4, group = 64, scale = f16, zero = int, act_order, sparse = 2:4",
    "int8, per_channel, scale = f16, sparse = 2:4",
    "uint8, group = 32, scale = bf16, zero = float, sparse = 2:4",
    "fp8e4m3, per_channel, scale = f32, sparse = 2:4",
};

class FormatTest : public SeededParamTest<const char *> {
protected:
  void SetUp() override {
    e = enc(GetParam());
    // K: whole groups, whole bytes of 3/5/7-bit codes, whole 2:4 quads.
    int64_t unit = e.isQuantized() && !e.isPerChannel() ? e.groupSize : 8;
    while (unit % 16)
      unit *= 2;
    n = uniformInt(1, 9);
    k = unit * uniformInt(1, 3);
  }

  /// A random value of a scale type (finite, non-zero).
  float randomScalar(ScalarType type) {
    switch (type) {
    case ScalarType::F8E8M0FNU:
      return decodeE8M0(uint8_t(uniformInt(100, 150)));
    case ScalarType::F8E4M3FN: {
      uint8_t b;
      do
        b = uint8_t(uniformInt(1, 0xFE));
      while ((b & 0x7F) == 0x7F || (b & 0x7F) == 0);
      return decodeE4M3(b);
    }
    default:
      return roundToScalarType(
          std::uniform_real_distribution<float>(-4.0f, 4.0f)(rng), type);
    }
  }

  Unpacked randomUnpacked() {
    Unpacked u;
    const int64_t stored = storedPerRow(e, k);
    const int64_t groups = numGroups(e, k);
    int32_t lo, hi;
    codeRange(e.format, codeBits(e), lo, hi);
    for (int64_t i = 0; i < n * stored; ++i)
      u.codes.push_back(int32_t(uniformInt(lo, hi)));
    if (e.isSparse24())
      for (int64_t i = 0; i < n * stored; i += 2) {
        int a = int(uniformInt(0, 2));
        u.positions.push_back(uint8_t(a));
        u.positions.push_back(uint8_t(uniformInt(a + 1, 3)));
      }
    for (int64_t i = 0; i < n * groups; ++i)
      u.scales.push_back(randomScalar(e.scaleType));
    if (e.zeroPoint == ZeroPointKind::Int)
      for (int64_t i = 0; i < n * groups; ++i)
        u.zeros.push_back(float(uniformInt(0, (1 << codeBits(e)) - 1)));
    if (e.zeroPoint == ZeroPointKind::Float)
      for (int64_t i = 0; i < n * groups; ++i)
        u.zeros.push_back(randomScalar(e.scaleType));
    if (e.globalScale)
      u.globalScale = std::uniform_real_distribution<float>(1.0f, 3000.0f)(rng);
    if (e.actOrder)
      for (int64_t col = 0; col < k; ++col)
        u.gIdx.push_back(int32_t(uniformInt(0, groups - 1)));
    if (e.hasNamedTable())
      for (int64_t i = 0; i < (int64_t(1) << codeBits(e)); ++i)
        u.table.push_back(randomScalar(e.tableType));
    return u;
  }

  Encoding e;
  int64_t n = 0, k = 0;
};

template <typename T>
bool sameBits(const std::vector<T> &a, const std::vector<T> &b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

TEST_P(FormatTest, PackUnpackRoundTrips) {
  Unpacked u = randomUnpacked();
  TensorMap c;
  std::string error;
  ASSERT_TRUE(pack(e, u, n, k, c, error)) << error;
  ASSERT_TRUE(checkComponents(e, c, n, k, error)) << error;
  Unpacked back;
  ASSERT_TRUE(unpack(e, c, n, k, back, error)) << error;
  EXPECT_EQ(back.codes, u.codes);
  EXPECT_EQ(back.positions, u.positions);
  EXPECT_TRUE(sameBits(back.scales, u.scales));
  EXPECT_TRUE(sameBits(back.zeros, u.zeros));
  EXPECT_EQ(back.globalScale, u.globalScale);
  EXPECT_EQ(back.gIdx, u.gIdx);
  EXPECT_TRUE(sameBits(back.table, u.table));
  // And the bytes survive the trip the other way.
  TensorMap again;
  ASSERT_TRUE(pack(e, back, n, k, again, error)) << error;
  for (const auto &[name, tensor] : c)
    EXPECT_EQ(again[name].data, tensor.data) << name;
}

// packCodeBytes (GPTQ's codes as the kernel stores them: each code's low
// byte) writes what pack() writes from the same codes as int32; encodings
// it does not take (2:4, codes over 8 bits) are refused by name.
TEST_P(FormatTest, PackCodeBytesIsPack) {
  Unpacked u = randomUnpacked();
  TensorMap expected, got;
  std::string error;
  ASSERT_TRUE(pack(e, u, n, k, expected, error)) << error;
  Unpacked params = u;
  params.codes.clear();
  if (e.isSparse24() || codeBits(e) > 8) {
    EXPECT_FALSE(packCodeBytes(e, nullptr, params, n, k, got, error));
    EXPECT_NE(error.find("at most 8 bits"), std::string::npos) << error;
    return;
  }
  std::vector<uint8_t> bytes;
  for (int32_t code : u.codes) {
    bytes.push_back(uint8_t(code & 0xFF));
    ASSERT_EQ(codeFromByte(e.format, bytes.back()), code);
  }
  ASSERT_TRUE(packCodeBytes(e, bytes.data(), params, n, k, got, error))
      << error;
  ASSERT_EQ(got.size(), expected.size());
  for (const auto &[name, tensor] : expected)
    EXPECT_EQ(got[name].data, tensor.data) << name;
  // A code out of the format's range is an error, as in pack().
  if (codeBits(e) < 8) {
    bytes[0] = uint8_t(1 << codeBits(e)) | 0x40;
    EXPECT_FALSE(packCodeBytes(e, bytes.data(), params, n, k, got, error));
    EXPECT_NE(error.find("is outside"), std::string::npos) << error;
  }
  // The codes come from the bytes only.
  params.codes = {0};
  EXPECT_FALSE(packCodeBytes(e, bytes.data(), params, n, k, got, error));
}

TEST_P(FormatTest, DequantizeIsTheFormula) {
  Unpacked u = randomUnpacked();
  TensorMap c;
  std::string error;
  ASSERT_TRUE(pack(e, u, n, k, c, error)) << error;
  std::vector<float> w;
  ASSERT_TRUE(dequantize(e, c, n, k, w, error)) << error;
  ASSERT_EQ(w.size(), size_t(n * k));

  // The formulas of #qf.enc (QFAttrs.td), written out independently.
  const int64_t stored = storedPerRow(e, k);
  const int64_t groups = numGroups(e, k);
  std::vector<float> table = codebookValues(e);
  if (e.hasNamedTable())
    table = u.table;
  std::vector<float> expected(size_t(n * k), 0.0f);
  for (int64_t row = 0; row < n; ++row)
    for (int64_t j = 0; j < stored; ++j) {
      int64_t col = e.isSparse24()
                        ? (j / 2) * 4 + u.positions[row * stored + j]
                        : j;
      int32_t q = u.codes[row * stored + j];
      float v;
      switch (e.format) {
      case ElementFormat::FP8E4M3:
        v = decodeE4M3(uint8_t(q));
        break;
      case ElementFormat::FP4E2M1:
        v = decodeE2M1(uint8_t(q));
        break;
      case ElementFormat::NF4:
      case ElementFormat::Codebook:
        v = table[q];
        break;
      case ElementFormat::F16:
        v = halfToFloat(uint16_t(q));
        break;
      case ElementFormat::BF16:
        v = bfloat16ToFloat(uint16_t(q));
        break;
      default:
        v = float(q);
      }
      if (!e.isQuantized()) {
        expected[row * k + col] = v;
        continue;
      }
      int64_t g = e.actOrder ? u.gIdx[col]
                             : (e.isPerChannel() ? 0 : col / e.groupSize);
      float s = u.scales[row * groups + g];
      if (e.zeroPoint != ZeroPointKind::None)
        expected[row * k + col] = s * (float(q) - u.zeros[row * groups + g]);
      else if (e.globalScale)
        expected[row * k + col] = v * s / u.globalScale;
      else
        expected[row * k + col] = s * v;
    }
  for (size_t i = 0; i < w.size(); ++i) {
    if (std::isnan(expected[i]))
      ASSERT_TRUE(std::isnan(w[i])) << i;
    else
      ASSERT_EQ(w[i], expected[i]) << "element (" << i / k << ", " << i % k
                                   << ")";
  }
}

INSTANTIATE_TEST_SUITE_P(Formats, FormatTest, ::testing::ValuesIn(kFormats),
                         [](const auto &info) {
                           return std::to_string(info.index) + "_" +
                                  testName(info.param).substr(0, 48);
                         });

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

TEST(PackingErrorTest, CheckComponentsNamesTheComponent) {
  Encoding e = enc("int4, group = 128, scale = f16");
  TensorMap c;
  std::string error;
  c[kCodes] = Tensor(DType::U8, {2, 64});
  EXPECT_FALSE(checkComponents(e, c, 2, 128, error));
  EXPECT_EQ(error, "missing component 'scales' (F16 [2, 1]) of a 2x128 weight "
                   "with encoding <int4, group = 128, scale = f16>");
  c[kScales] = Tensor(DType::F16, {2, 1});
  c[kCodes] = Tensor(DType::U8, {2, 63});
  EXPECT_FALSE(checkComponents(e, c, 2, 128, error));
  EXPECT_EQ(error, "component 'codes': expected U8 [2, 64], got U8 [2, 63]");
  c[kCodes] = Tensor(DType::U8, {2, 64});
  c[kScales] = Tensor(DType::BF16, {2, 1});
  EXPECT_FALSE(checkComponents(e, c, 2, 128, error));
  EXPECT_EQ(error, "component 'scales': expected F16 [2, 1], got BF16 [2, 1]");
  c[kScales] = Tensor(DType::F16, {2, 1});
  c[kZeros] = Tensor(DType::U8, {2, 1});
  EXPECT_FALSE(checkComponents(e, c, 2, 128, error));
  EXPECT_EQ(error, "unexpected component 'zeros' for encoding <int4, group = "
                   "128, scale = f16>");
  c.erase(kZeros);
  c[kCodes].data.pop_back(); // shape right, bytes short
  EXPECT_FALSE(checkComponents(e, c, 2, 128, error));
  EXPECT_EQ(error, "component 'codes': U8 [2, 64] needs 128 bytes, got 127");
}

TEST(PackingErrorTest, PackRejectsBadValues) {
  std::string error;
  TensorMap c;
  Unpacked u;
  u.codes = {0, 8};
  u.scales = {1.0f};
  EXPECT_FALSE(pack(enc("int4, per_channel, scale = f16"), u, 1, 2, c, error));
  EXPECT_EQ(error, "code (0, 1) = 8 is outside [-8, 7] of int4");

  u.codes = {0};
  EXPECT_FALSE(pack(enc("int4, per_channel, scale = f16"), u, 1, 2, c, error));
  EXPECT_EQ(error, "codes: expected 2 values, got 1");

  u.codes = {0, 0};
  u.scales = {0.1f};
  EXPECT_FALSE(pack(enc("int4, per_channel, scale = f16"), u, 1, 2, c, error));
  EXPECT_EQ(error, "scale (0, 0) = 0.100000 is not representable in f16");

  u.scales = {0.75f};
  EXPECT_FALSE(pack(enc("fp4e2m1, group = 32, scale = f8E8M0FNU"), u, 1, 2, c,
                    error));
  u.codes.assign(32, 0);
  EXPECT_FALSE(pack(enc("fp4e2m1, group = 32, scale = f8E8M0FNU"), u, 1, 32, c,
                    error));
  EXPECT_EQ(error, "scale (0, 0) = 0.750000 is not representable in f8E8M0FNU");

  Unpacked z;
  z.codes = {0, 0};
  z.scales = {1.0f};
  z.zeros = {16.0f};
  EXPECT_FALSE(pack(enc("uint4, per_channel, scale = f16, zero = int"), z, 1, 2,
                    c, error));
  EXPECT_EQ(error, "zero point (0, 0) = 16.000000 is not an integer in [0, 15]");
  z.zeros = {2.5f};
  EXPECT_FALSE(pack(enc("uint4, per_channel, scale = f16, zero = int"), z, 1, 2,
                    c, error));
  z.zeros = {1.0f};
  EXPECT_FALSE(pack(enc("int4, per_channel, scale = f16"), z, 1, 2, c, error));
  EXPECT_EQ(error, "zero points given for an encoding without them");

  Unpacked s;
  s.codes = {0, 0};
  s.positions = {2, 1};
  EXPECT_FALSE(pack(enc("f16, sparse = 2:4"), s, 1, 4, c, error));
  EXPECT_EQ(error, "2:4 positions of row 0, columns 0..3 are 2, 1; expected "
                   "two increasing positions in 0..3");

  Unpacked g;
  g.codes.assign(4, 0);
  g.scales = {1.0f, 1.0f};
  g.gIdx = {0, 1, 2, 0};
  EXPECT_FALSE(pack(enc("int4, group = 2, scale = f16, act_order"), g, 1, 4, c,
                    error));
  EXPECT_EQ(error, "g_idx[2] = 2 is outside [0, 2)");

  Unpacked t;
  t.codes = {0, 0};
  t.scales = {1.0f};
  EXPECT_FALSE(pack(enc("codebook, bits = 4, table = \"lut\" : f16, "
                        "per_channel, scale = f16"),
                    t, 1, 2, c, error));
  EXPECT_EQ(error, "codebook table 'lut': expected 16 values, got 0");
}

TEST(PackingErrorTest, UnpackRejectsBadMetadataAndGIdx) {
  Encoding e = enc("f16, sparse = 2:4");
  Unpacked u;
  u.codes = {0, 0};
  u.positions = {0, 1};
  TensorMap c;
  std::string error;
  ASSERT_TRUE(pack(e, u, 1, 4, c, error)) << error;
  c[kMetadata].data[0] = 3 | 3 << 2;
  EXPECT_FALSE(unpack(e, c, 1, 4, u, error));
  EXPECT_EQ(error, "component 'meta': positions of row 0, columns 0..3 are 3, "
                   "3; expected first < second");

  Encoding a = enc("int4, group = 2, scale = f16, act_order");
  Unpacked v;
  v.codes.assign(4, 0);
  v.scales = {1.0f, 1.0f};
  v.gIdx = {0, 1, 1, 0};
  ASSERT_TRUE(pack(a, v, 1, 4, c, error)) << error;
  c[kGIdx].data[4] = 7;
  EXPECT_FALSE(unpack(a, c, 1, 4, v, error));
  EXPECT_EQ(error, "component 'g_idx': g_idx[1] = 7 is outside [0, 2)");
}

} // namespace
