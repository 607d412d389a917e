//===- DenseAsStoredTest.cpp - stored f16/bf16 bytes as their codes --------===//
//
// packDenseAsStored against the path it short-cuts (the values widened to
// f32, format::quantizeRTN into the unquantized encoding, format::pack) on
// fresh random bit patterns of every kind but NaN (zeros of both signs,
// subnormals, infinities), and its refusals: a NaN anywhere, another dtype,
// a quantized encoding. packDenseConverted against the same path on every
// bit pattern of bf16 into f16 and of f16 into bf16, and on fresh random
// f32 values of every kind (NaN, overflow and subnormals included).
//
//===----------------------------------------------------------------------===//

#include "qfuse/runtime/checkpoint/DenseAsStored.h"

#include "qfuse/format/Numerics.h"
#include "qfuse/format/Packing.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

using namespace qfuse;
using namespace qfuse::runtime;

namespace {

format::Encoding named(const char *text) {
  format::Encoding enc;
  std::string error;
  EXPECT_TRUE(format::parseEncoding(text, enc, error)) << error;
  return enc;
}

/// Every component of `expected` in `got`, the same dtype, shape and bytes.
void expectSameComponents(const format::TensorMap &expected,
                          const format::TensorMap &got) {
  ASSERT_EQ(got.size(), expected.size());
  for (const auto &[name, tensor] : expected) {
    ASSERT_TRUE(got.count(name)) << name;
    EXPECT_EQ(got.at(name).dtype, tensor.dtype) << name;
    EXPECT_EQ(got.at(name).shape, tensor.shape) << name;
    EXPECT_EQ(got.at(name).data, tensor.data) << name;
  }
}

void check(bool bf16, uint64_t seed) {
  SCOPED_TRACE(std::string(bf16 ? "bf16" : "f16") + ", seed " +
               std::to_string(seed));
  const int64_t n = 33, k = 130;
  std::mt19937_64 rng(seed);
  std::vector<uint16_t> bits(size_t(n * k));
  const uint16_t expMask = bf16 ? 0x7F80 : 0x7C00;
  const uint16_t mantMask = bf16 ? 0x007F : 0x03FF;
  for (uint16_t &h : bits) {
    do
      h = uint16_t(rng());
    while ((h & expMask) == expMask && (h & mantMask) != 0);
  }
  bits[0] = 0x8000;            // -0
  bits[1] = expMask;           // +inf
  bits[2] = 0x0001;            // smallest subnormal
  std::vector<float> w(bits.size());
  for (size_t i = 0; i < bits.size(); ++i)
    w[i] = bf16 ? format::bfloat16ToFloat(bits[i]) : format::halfToFloat(bits[i]);
  const format::Encoding enc = named(bf16 ? "bf16" : "f16");
  format::TensorMap expected, got;
  std::string error;
  ASSERT_TRUE(format::quantizeRTN(enc, w.data(), n, k, expected, error))
      << error;
  const auto *data = reinterpret_cast<const uint8_t *>(bits.data());
  ASSERT_TRUE(packDenseAsStored(enc, bf16 ? DType::BF16 : DType::F16, data, n,
                                k, got));
  expectSameComponents(expected, got);
  // A NaN anywhere: not taken.
  bits[size_t(n * k / 2)] = uint16_t(expMask | 1);
  format::TensorMap none;
  EXPECT_FALSE(packDenseAsStored(enc, bf16 ? DType::BF16 : DType::F16, data,
                                 n, k, none));
  EXPECT_TRUE(none.empty());
}

TEST(DenseAsStored, BytesAreTheCodesOfTheSameDtype) {
  const uint64_t seed = std::random_device{}();
  check(false, seed);
  check(true, seed);
}

TEST(DenseAsStored, OtherDtypesAndQuantizedEncodingsAreNotTaken) {
  std::vector<uint16_t> bits(64 * 128, 0x3C00);
  const auto *data = reinterpret_cast<const uint8_t *>(bits.data());
  format::TensorMap out;
  EXPECT_FALSE(packDenseAsStored(named("f16"), DType::BF16, data, 64, 128, out));
  EXPECT_FALSE(packDenseAsStored(named("bf16"), DType::F16, data, 64, 128, out));
  EXPECT_FALSE(packDenseAsStored(named("int4, group = 128, scale = f16"),
                                 DType::F16, data, 64, 128, out));
  EXPECT_TRUE(out.empty());
}

// The NaN scan on any number of threads (BackgroundLoad's workers scan on
// one each): the same view, and a NaN found in whichever part it lies.
TEST(DenseAsStored, ScanThreadsDoNotChangeTheAnswer) {
  const int64_t n = 2048, k = 1024; // 2M elements: parts of 1M on 3 threads
  std::vector<uint16_t> bits(size_t(n * k), 0x3C00);
  const auto *data = reinterpret_cast<const uint8_t *>(bits.data());
  const format::Encoding enc = named("f16");
  for (unsigned threads : {0u, 1u, 2u, 3u, 64u}) {
    SCOPED_TRACE("threads " + std::to_string(threads));
    std::optional<format::TensorView> view =
        denseCodesAsStored(enc, DType::F16, data, n, k, threads);
    ASSERT_TRUE(view);
    EXPECT_EQ(view->data, data);
    EXPECT_EQ(view->numBytes, bits.size() * 2);
    for (size_t at : {size_t(0), bits.size() / 2, bits.size() - 1}) {
      bits[at] = 0x7C01;
      EXPECT_FALSE(denseCodesAsStored(enc, DType::F16, data, n, k, threads))
          << "NaN at " << at;
      bits[at] = 0x3C00;
    }
  }
}

/// packDenseConverted of `values` (n x k of `dtype`, raw bytes) into
/// `encoding` against format::quantizeRTN of the same values widened as
/// toFloats widens them.
void checkConverted(const char *encoding, DType dtype,
                    const std::vector<uint8_t> &bytes, int64_t n, int64_t k) {
  SCOPED_TRACE(std::string(encoding) + " from " +
               std::string(safetensorsName(dtype)));
  std::vector<float> w(size_t(n * k));
  for (size_t i = 0; i < w.size(); ++i) {
    uint16_t h;
    if (dtype == DType::F32) {
      std::memcpy(&w[i], bytes.data() + 4 * i, 4);
      continue;
    }
    std::memcpy(&h, bytes.data() + 2 * i, 2);
    w[i] = dtype == DType::BF16 ? format::bfloat16ToFloat(h)
                                : format::halfToFloat(h);
  }
  const format::Encoding enc = named(encoding);
  format::TensorMap expected, got;
  std::string error;
  ASSERT_TRUE(format::quantizeRTN(enc, w.data(), n, k, expected, error))
      << error;
  ASSERT_TRUE(packDenseConverted(enc, dtype, bytes.data(), n, k, got));
  expectSameComponents(expected, got);
}

TEST(DenseConverted, EveryBitPatternBetweenF16AndBf16) {
  // 65536 patterns as 256 x 256: NaNs, infinities, overflow of f16,
  // subnormals of both, zeros of both signs.
  std::vector<uint8_t> bytes(65536 * 2);
  for (uint32_t h = 0; h < 65536; ++h) {
    bytes[2 * h] = uint8_t(h & 0xFF);
    bytes[2 * h + 1] = uint8_t(h >> 8);
  }
  checkConverted("f16", DType::BF16, bytes, 256, 256);
  checkConverted("bf16", DType::F16, bytes, 256, 256);
}

TEST(DenseConverted, RandomF32) {
  const uint64_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  // 1500 x 1400: more than one part of 1M elements.
  const int64_t n = 1500, k = 1400;
  std::vector<uint8_t> bytes(size_t(n * k) * 4);
  for (size_t i = 0; i < size_t(n * k); ++i) {
    uint32_t bits = uint32_t(rng());
    if (i % 3 == 0) { // a value near f16's range, either sign
      float f = std::ldexp(float(rng() % 4096) / 4096.0f, int(rng() % 44) - 28);
      std::memcpy(&bits, &f, 4);
      bits |= uint32_t(rng() & 1) << 31;
    }
    std::memcpy(bytes.data() + 4 * i, &bits, 4);
  }
  checkConverted("f16", DType::F32, bytes, n, k);
  checkConverted("bf16", DType::F32, bytes, n, k);
}

TEST(DenseConverted, SameDtypeAndQuantizedEncodingsAreNotTaken) {
  std::vector<uint8_t> bytes(64 * 128 * 4, 0x3C);
  format::TensorMap out;
  EXPECT_FALSE(packDenseConverted(named("f16"), DType::F16, bytes.data(), 64, 128, out));
  EXPECT_FALSE(packDenseConverted(named("bf16"), DType::BF16, bytes.data(), 64, 128, out));
  EXPECT_FALSE(packDenseConverted(named("int4, group = 128, scale = f16"),
                                  DType::BF16, bytes.data(), 64, 128, out));
  EXPECT_TRUE(out.empty());
}

} // namespace
