//===- RowParallelRTNTest.cpp - RTN by rows against one call ---------------===//
//
// quantizeRTNByRows against format::quantizeRTN of the whole weight, bit for
// bit, on fresh random weights large enough to be split, for encodings that
// split (integer, zero points, codebook, fp8, 16-bit) and ones that do not
// (NVFP4's tensor-wide global scale); and the same error as the single call.
//
//===----------------------------------------------------------------------===//

#include "qfuse/runtime/checkpoint/RowParallelRTN.h"

#include "qfuse/format/Packing.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>

using namespace qfuse;
using namespace qfuse::runtime;

namespace {

format::Encoding parse(const char *name) {
  format::Encoding enc;
  std::string error;
  EXPECT_TRUE(format::encodingFromName(name, enc, error) ||
              format::parseEncoding(name, enc, error))
      << error;
  return enc;
}

TEST(RowParallelRTN, SameComponentsAsOneCall) {
  const uint64_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal;
  // 4 M elements per part at least: 1031 x 8192 splits in two or more.
  const int64_t n = 1031, k = 8192;
  std::vector<float> w(size_t(n * k));
  for (float &x : w)
    x = normal(rng);
  auto rows = [&](int64_t first, int64_t last, float *out) {
    std::memcpy(out, w.data() + first * k, size_t((last - first) * k) * 4);
  };
  for (const char *name : {"int4-g128", "uint4-g128-asym", "nf4", "nvfp4",
                           "mxfp4", "fp8", "int8", "f16"}) {
    SCOPED_TRACE(name);
    const format::Encoding enc = parse(name);
    format::TensorMap expected, got;
    std::string error;
    ASSERT_TRUE(format::quantizeRTN(enc, w.data(), n, k, expected, error))
        << error;
    ASSERT_TRUE(quantizeRTNByRows(enc, n, k, rows, got, error)) << error;
    ASSERT_EQ(got.size(), expected.size());
    for (const auto &[component, tensor] : expected) {
      ASSERT_TRUE(got.count(component)) << component;
      EXPECT_EQ(got.at(component).shape, tensor.shape) << component;
      EXPECT_TRUE(got.at(component).data == tensor.data) << component;
    }
  }
}

TEST(RowParallelRTN, SameErrorAsOneCall) {
  // A scale past f16's range in the last rows: the error names the row as
  // the single call does.
  const int64_t n = 1024, k = 8192;
  std::vector<float> w(size_t(n * k), 1.0f);
  w[size_t((n - 1) * k)] = 1e9f;
  auto rows = [&](int64_t first, int64_t last, float *out) {
    std::memcpy(out, w.data() + first * k, size_t((last - first) * k) * 4);
  };
  const format::Encoding enc = parse("int4-g128");
  format::TensorMap expected, got;
  std::string expectedError, error;
  EXPECT_FALSE(
      format::quantizeRTN(enc, w.data(), n, k, expected, expectedError));
  EXPECT_FALSE(quantizeRTNByRows(enc, n, k, rows, got, error));
  EXPECT_EQ(error, expectedError);
}

} // namespace
