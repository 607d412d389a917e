//===- KeptValuesGpuTest.cpp - unquantized 2:4 kept on the GPU ------------===//
//
// The qf.quantize kernels of unquantized 2:4 encodings ("f16, sparse = 2:4",
// "bf16, sparse = 2:4") in the quantize test artifact (QuantizeGpuTest's;
// QFUSE_QUANTIZE_QFA overrides the path) against format::quantizeRTN, byte
// for byte, through DeviceQuantizer::quantizeHost (upload, launch,
// download): every f16 and bf16 bit pattern (NaN payloads, subnormals,
// infinities, signed zeros) and f32 patterns around every rounding
// boundary, each the kept value of its quad ([x, +0, +0, +0]: select24
// keeps position 0 whatever x is), from the raw input bytes the way the
// runtime reads a checkpoint. The host never refuses these weights, so a
// NaN or an overflow to inf must not set the status either.
//
//===----------------------------------------------------------------------===//

#include "QuantizeArtifactFixture.h"

#include "qfuse/format/Numerics.h"
#include "qfuse/format/Packing.h"
#include "qfuse/runtime/device/DeviceQuantizer.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <random>
#include <set>

namespace qfuse::testing {
namespace {

using runtime::DeviceQuantizer;
using runtime::DType;

/// The input patterns of `t`: every 16-bit pattern, or for f32 each
/// 16-bit pattern's high half with low halves at and around the f16 and
/// bf16 rounding points (ties, one below, one above) and random ones.
std::vector<uint32_t> patterns(DType t) {
  std::vector<uint32_t> out;
  if (t != DType::F32) {
    for (uint32_t p = 0; p < 0x10000; ++p)
      out.push_back(p);
    return out;
  }
  std::mt19937 rng(7);
  for (uint32_t hi = 0; hi < 0x10000; ++hi)
    for (uint32_t lo : {0x0000u, 0x7FFFu, 0x8000u, 0x8001u, 0x0FFFu, 0x1000u,
                        0x1001u, 0xFFFFu, uint32_t(rng()) & 0xFFFFu})
      out.push_back(hi << 16 | lo);
  return out;
}

/// The host's f32 of pattern `p` of `t` (what the runtime's --rtn check and
/// the host's toFloats give quantizeRTN).
float hostValue(uint32_t p, DType t) {
  if (t == DType::F16)
    return format::halfToFloat(uint16_t(p));
  if (t == DType::BF16)
    return format::bfloat16ToFloat(uint16_t(p));
  float f;
  std::memcpy(&f, &p, 4);
  return f;
}

class KeptValuesGpuTest : public QuantizeArtifactFixture {
protected:
  void SetUp() override {
    QuantizeArtifactFixture::SetUp();
    if (IsSkipped())
      return;
    quantizer.emplace(*artifact, *context);
  }
  std::optional<DeviceQuantizer> quantizer;
};

TEST_F(KeptValuesGpuTest, EveryBitPatternIsKeptAsTheHostRoundsIt) {
  std::set<std::string> covered;
  for (const DeviceQuantizer::Key &key : quantizer->keys()) {
    if (key.encoding.isQuantized())
      continue;
    const std::string label = format::printEncoding(key.encoding) +
                              " K=" + std::to_string(key.k) + " " +
                              std::string(runtime::safetensorsName(key.input));
    const std::vector<uint32_t> values = patterns(key.input);
    const int64_t quads = key.k / 4;
    const int64_t n = (int64_t(values.size()) + quads - 1) / quads;
    const size_t size = key.input == DType::F32 ? 4 : 2;
    std::vector<float> w(size_t(n * key.k), 0.0f);
    std::vector<uint8_t> bytes(w.size() * size, 0);
    for (size_t i = 0; i < values.size(); ++i) {
      const size_t at = 4 * i; // quad i's first column
      w[at] = hostValue(values[i], key.input);
      std::memcpy(&bytes[at * size], &values[i], size); // little-endian
    }
    format::TensorMap expected, got;
    std::string error, why;
    ASSERT_TRUE(format::quantizeRTN(key.encoding, w.data(), n, key.k,
                                    expected, error))
        << label << ": " << error;
    ASSERT_TRUE(quantizer->quantizeHost(key.encoding, bytes.data(), n, key.k,
                                        key.input, got, why))
        << label << ": the kernel set the status (" << why << ")";
    ASSERT_EQ(got.size(), expected.size()) << label;
    for (const auto &[name, tensor] : expected) {
      const std::vector<uint8_t> &a = got.at(name).data;
      ASSERT_EQ(a.size(), tensor.data.size()) << label << " " << name;
      auto miss = std::mismatch(a.begin(), a.end(), tensor.data.begin());
      EXPECT_TRUE(miss.first == a.end())
          << label << " " << name << ": byte " << (miss.first - a.begin())
          << " is " << int(*miss.first) << ", quantizeRTN wrote "
          << int(*miss.second);
    }
    covered.insert(format::printEncoding(key.encoding) + " " +
                   std::string(runtime::safetensorsName(key.input)));
  }
  // quantize-formats.mlir's unquantized 2:4 (#35-#40): f16 from f16, bf16
  // and f32; bf16 from bf16, f16 and f32.
  EXPECT_EQ(covered.size(), 6u)
      << artifactPath() << " predates unquantized 2:4 kernels (recompile "
      << "it: bench/quantize-at-load/make-artifacts.sh)";
}

} // namespace
} // namespace qfuse::testing
