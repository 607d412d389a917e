//===- DeviceHalfRoundGpuTest.cpp - bf16 rounded to f16 on the GPU --------===//
//
// The generated qf_round_bf16_to_f16 kernel of the quantize test artifact
// (quantize-formats.qfa, as QuantizeGpuTest; QFUSE_QUANTIZE_QFA overrides
// the path) against the host's rounding of a bf16 checkpoint into the f16
// calibration plan (packDenseConverted, which DenseAsStoredTest checks
// against quantizeRTN), byte for byte, on every bf16 pattern, into
// destinations poisoned with 0xFF: round to nearest even, subnormals, -0,
// inf, NaNs with their payloads. The status word is 1 exactly where a
// finite value rounds to inf, and the host then names the element as
// convertDense does.
//
//===----------------------------------------------------------------------===//

#include "QuantizeArtifactFixture.h"

#include "qfuse/format/Numerics.h"
#include "qfuse/format/Packing.h"
#include "qfuse/runtime/Error.h"
#include "qfuse/runtime/checkpoint/DenseAsStored.h"
#include "qfuse/runtime/device/DeviceHalfRound.h"

#include <cmath>
#include <cstring>

namespace qfuse::testing {
namespace {

using runtime::DeviceHalfRound;
using runtime::DType;
namespace cuda = runtime::cuda;

class DeviceHalfRoundGpuTest : public QuantizeArtifactFixture {
protected:
  void SetUp() override {
    QuantizeArtifactFixture::SetUp();
    if (IsSkipped())
      return;
    round.emplace(*artifact, *context);
    if (!round->any())
      GTEST_SKIP() << "qfuse-gpu-skip: " << artifactPath()
                   << " has no qf_round_bf16_to_f16 kernel (compiled before "
                      "it; bench/quantize-at-load/make-artifacts.sh)";
  }

  /// Rounds `bits` on the device into a destination poisoned with 0xFF;
  /// returns the status and the f16 bits.
  int32_t launch(const std::vector<uint16_t> &bits,
                 std::vector<uint16_t> &out) {
    const size_t bytes = std::max<size_t>(bits.size() * 2, 2);
    cuda::DeviceBuffer src(bytes, "bf16"), dst(bytes, "f16"),
        status(4, "status");
    src.upload(bits.data(), bits.size() * 2);
    dst.fill(0xFF, stream->get());
    status.zero(stream->get());
    round->enqueue(src.ptr(), dst.ptr(), bits.size(), status.ptr(),
                   stream->get());
    stream->synchronize();
    out.assign(bits.size(), 0);
    dst.download(out.data(), bits.size() * 2);
    int32_t value = 0;
    status.download(&value, 4);
    return value;
  }

  /// The host's f16 codes of the [n, k] bf16 tensor `bits`.
  static std::vector<uint16_t> hostCodes(const std::vector<uint16_t> &bits,
                                         int64_t n, int64_t k) {
    std::string error;
    format::Encoding enc;
    EXPECT_TRUE(format::parseEncoding("f16", enc, error)) << error;
    format::TensorMap components;
    EXPECT_TRUE(runtime::packDenseConverted(
        enc, DType::BF16, reinterpret_cast<const uint8_t *>(bits.data()), n,
        k, components));
    const format::Tensor &codes = components.at(format::kCodes);
    std::vector<uint16_t> out(size_t(n * k));
    std::memcpy(out.data(), codes.data.data(), out.size() * 2);
    return out;
  }

  /// Whether bf16 `h` is finite and rounds past f16's largest finite.
  static bool overflows(uint16_t h) {
    const float v = format::bfloat16ToFloat(h);
    return std::isfinite(v) && std::fabs(v) >= 65520.0f;
  }

  std::optional<DeviceHalfRound> round;
};

TEST_F(DeviceHalfRoundGpuTest, EveryBf16PatternIsTheHostsF16) {
  std::vector<uint16_t> bits(65536);
  for (size_t i = 0; i < bits.size(); ++i)
    bits[i] = uint16_t(i);
  const std::vector<uint16_t> want = hostCodes(bits, 256, 256);
  std::vector<uint16_t> got;
  // Patterns past 65504 (and their negatives) are among them.
  EXPECT_EQ(launch(bits, got), 1);
  size_t mismatches = 0;
  for (size_t i = 0; i < bits.size(); ++i)
    if (got[i] != want[i] && mismatches++ < 8)
      ADD_FAILURE() << "bf16 0x" << std::hex << bits[i] << ": device 0x"
                    << got[i] << ", host 0x" << want[i];
  EXPECT_EQ(mismatches, 0u);

  // Without them the status stays 0, the bytes the same.
  std::vector<uint16_t> inRange;
  for (uint16_t h : bits)
    if (!overflows(h))
      inRange.push_back(h);
  ASSERT_LT(inRange.size(), bits.size());
  EXPECT_EQ(launch(inRange, got), 0);
  for (size_t i = 0; i < inRange.size(); ++i)
    ASSERT_EQ(got[i], format::floatToHalf(format::bfloat16ToFloat(inRange[i])))
        << "bf16 0x" << std::hex << inRange[i];
}

TEST_F(DeviceHalfRoundGpuTest, OverflowSetsTheStatusAndTheHostNamesIt) {
  // A row of 4096 plus a partial block: 65280 (0x477F) rounds to 65280,
  // inf stays inf (no overflow), 65536 (0x4780) at element 4100 overflows.
  std::vector<uint16_t> bits(4096 + 77, 0x3F80); // 1.0
  bits[3] = 0x477F;
  bits[5] = 0x7F80;
  bits[6] = 0xFF80;
  std::vector<uint16_t> got;
  EXPECT_EQ(launch(bits, got), 0);
  EXPECT_EQ(got[3], format::floatToHalf(65280.0f));
  EXPECT_EQ(got[5], 0x7C00);
  EXPECT_EQ(got[6], 0xFC00);
  bits[4100] = 0xC780; // -65536
  EXPECT_EQ(launch(bits, got), 1);
  EXPECT_EQ(got[4100], 0xFC00);
  try {
    runtime::throwHalfOverflow(reinterpret_cast<const uint8_t *>(bits.data()),
                               bits.size(), "tensor 'w'");
    FAIL() << "no error";
  } catch (const Error &e) {
    EXPECT_NE(std::string(e.what()).find(
                  "tensor 'w': element 4100 = -65536.000000 overflows f16"),
              std::string::npos)
        << e.what();
  }
}

TEST_F(DeviceHalfRoundGpuTest, CountsThatAreNoMultipleOfTheBlock) {
  for (size_t count : {size_t(1), size_t(255), size_t(257), size_t(100003)}) {
    std::vector<uint16_t> bits(count);
    for (size_t i = 0; i < count; ++i)
      bits[i] = uint16_t((i * 40503u + 7) & 0xFFFF);
    std::vector<uint16_t> got;
    launch(bits, got);
    for (size_t i = 0; i < count; ++i)
      ASSERT_EQ(got[i], format::floatToHalf(format::bfloat16ToFloat(bits[i])))
          << "count " << count << ", element " << i;
  }
}

} // namespace
} // namespace qfuse::testing
