//===- TestUtil.h - random data and seeds for the format tests -*- C++ -*-===//
//
// Every test draws fresh random data from a std::mt19937 seeded from
// std::random_device; a failing test prints its seed, and QFUSE_TEST_SEED
// replays it.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_UNITTESTS_FORMAT_TESTUTIL_H
#define QFUSE_UNITTESTS_FORMAT_TESTUTIL_H

#include "qfuse/format/Encoding.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>
#include <random>
#include <string>
#include <vector>

namespace qfuse::format::test {

inline uint32_t freshSeed() {
  if (const char *fixed = std::getenv("QFUSE_TEST_SEED"))
    return uint32_t(std::strtoul(fixed, nullptr, 10));
  return std::random_device{}();
}

/// Mixin that owns the test's random generator and reports its seed.
class Seeded {
protected:
  Seeded() : seed(freshSeed()), rng(seed) {}

  void reportSeedOnFailure() const {
    if (::testing::Test::HasFailure())
      std::cerr << "[ seed     ] QFUSE_TEST_SEED=" << seed
                << " reproduces this test's random data\n";
  }

  std::vector<float> normal(size_t count, float sigma = 1.0f) {
    std::normal_distribution<float> dist(0.0f, sigma);
    std::vector<float> v(count);
    for (float &x : v)
      x = dist(rng);
    return v;
  }

  int64_t uniformInt(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  }

  uint32_t seed;
  std::mt19937 rng;
};

class SeededTest : public ::testing::Test, public Seeded {
protected:
  void TearDown() override { reportSeedOnFailure(); }
};

template <typename Param>
class SeededParamTest : public ::testing::TestWithParam<Param>, public Seeded {
protected:
  void TearDown() override { reportSeedOnFailure(); }
};

/// Parses or fails the test.
inline Encoding enc(const std::string &text) {
  Encoding e;
  std::string error;
  EXPECT_TRUE(parseEncoding(text, e, error)) << text << ": " << error;
  return e;
}

/// A gtest-safe name for an encoding text (letters, digits, '_').
inline std::string testName(const std::string &text) {
  std::string name;
  for (char c : text)
    name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  while (name.find("__") != std::string::npos)
    name.erase(name.find("__"), 1);
  return name;
}

/// One of each dense quantized encoding (every element format, scale type,
/// zero-point kind, act_order, codebook table source): the sweep of the
/// tests that hold an encoding's quantizer to quantizeRTN.
inline const std::vector<const char *> kDenseQuantizedEncodings = {
    "int4, group = 128, scale = f16",
    "int4, group = 32, scale = bf16",
    "uint4, group = 128, scale = f16, zero = int",
    "uint4, group = 64, scale = bf16, zero = float",
    "int4, group = 64, scale = f16, act_order",
    "int8, per_channel, scale = f16",
    "int8, group = 32, scale = f8E8M0FNU",
    "uint8, group = 32, scale = f32, zero = int",
    "uint8, per_channel, scale = f16, zero = float",
    "fp8e4m3, per_channel, scale = f32",
    "fp8e4m3, group = 32, scale = f8E8M0FNU",
    "fp4e2m1, group = 16, scale = f8E4M3FN, global_scale",
    "fp4e2m1, group = 32, scale = f8E8M0FNU",
    "fp4e2m1, group = 32, scale = f16",
    "nf4, group = 64, scale = f32",
    "nf4, group = 128, scale = f16",
    "codebook, bits = 3, table = dense<[-1.0, -0.6, -0.3, -0.1, 0.1, 0.3, "
    "0.6, 0.9]> : tensor<8xf16>, group = 128, scale = f16",
    "codebook, bits = 2, table = dense<[-0.5, 0.0, 0.5, 1.5]> : tensor<4xf32>, "
    "per_channel, scale = f32",
    "codebook, bits = 4, table = \"lut\" : f32, group = 64, scale = bf16",
};

} // namespace qfuse::format::test

#endif // QFUSE_UNITTESTS_FORMAT_TESTUTIL_H
