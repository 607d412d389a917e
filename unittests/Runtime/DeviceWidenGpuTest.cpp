//===- DeviceWidenGpuTest.cpp - f16/bf16 widened to f32 on the GPU --------===//
//
// The generated qf_widen_f16_to_f32 and qf_widen_bf16_to_f32 kernels of the
// quantize test artifact (quantize-formats.qfa, as QuantizeGpuTest;
// QFUSE_QUANTIZE_QFA overrides the path) against the host's conversions
// (format::halfToFloat, format::bfloat16ToFloat), bit for bit, on every
// 16-bit pattern (-0, subnormals, inf, NaNs with their payloads) and on
// counts that are no multiple of the block, into destinations poisoned
// with 0xFF whose bytes past the count must stay poisoned.
//
//===----------------------------------------------------------------------===//

#include "QuantizeArtifactFixture.h"

#include "qfuse/format/Numerics.h"
#include "qfuse/runtime/device/DeviceWiden.h"

#include <cstring>

namespace qfuse::testing {
namespace {

using runtime::DeviceWiden;
using runtime::DType;
namespace cuda = runtime::cuda;

constexpr size_t kSlack = 64; // poisoned f32 words past the count

class DeviceWidenGpuTest : public QuantizeArtifactFixture {
protected:
  void SetUp() override {
    QuantizeArtifactFixture::SetUp();
    if (IsSkipped())
      return;
    widen.emplace(*artifact, *context);
    if (!widen->has(DType::F16) || !widen->has(DType::BF16))
      GTEST_SKIP() << "qfuse-gpu-skip: " << artifactPath()
                   << " lacks a qf_widen_*_to_f32 kernel (compiled before "
                      "them; bench/quantize-at-load/make-artifacts.sh)";
  }

  /// Widens `bits` of `type` on the device into a destination poisoned
  /// with 0xFF; returns the f32 bits, kSlack words past the count included.
  std::vector<uint32_t> launch(DType type, const std::vector<uint16_t> &bits) {
    const size_t words = bits.size() + kSlack;
    cuda::DeviceBuffer src(std::max<size_t>(bits.size() * 2, 2), "16-bit"),
        dst(words * 4, "f32");
    src.upload(bits.data(), bits.size() * 2);
    dst.fill(0xFF, stream->get());
    widen->enqueue(type, src.ptr(), dst.ptr(), bits.size(), stream->get());
    stream->synchronize();
    std::vector<uint32_t> out(words);
    dst.download(out.data(), words * 4);
    return out;
  }

  static uint32_t hostBits(DType type, uint16_t h) {
    const float v = type == DType::F16 ? format::halfToFloat(h)
                                       : format::bfloat16ToFloat(h);
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    return bits;
  }

  /// Every element's bits against the host's, and the slack untouched.
  static void expectHostBits(DType type, const std::vector<uint16_t> &bits,
                             const std::vector<uint32_t> &got) {
    size_t mismatches = 0;
    for (size_t i = 0; i < bits.size(); ++i)
      if (got[i] != hostBits(type, bits[i]) && mismatches++ < 8)
        ADD_FAILURE() << (type == DType::F16 ? "f16" : "bf16") << " 0x"
                      << std::hex << bits[i] << ": device 0x" << got[i]
                      << ", host 0x" << hostBits(type, bits[i]);
    EXPECT_EQ(mismatches, 0u) << "of " << bits.size();
    for (size_t i = bits.size(); i < got.size(); ++i)
      ASSERT_EQ(got[i], 0xFFFFFFFFu) << "written past the count at " << i;
  }

  std::optional<DeviceWiden> widen;
};

TEST_F(DeviceWidenGpuTest, EveryPatternIsTheHostsF32) {
  std::vector<uint16_t> bits(65536);
  for (size_t i = 0; i < bits.size(); ++i)
    bits[i] = uint16_t(i);
  for (DType type : {DType::F16, DType::BF16}) {
    SCOPED_TRACE(type == DType::F16 ? "f16" : "bf16");
    expectHostBits(type, bits, launch(type, bits));
  }
  // -0 stays -0 (a cuBLAS product x * 1 summed from +0 makes it +0).
  EXPECT_EQ(launch(DType::F16, {0x8000})[0], 0x80000000u);
  EXPECT_EQ(launch(DType::BF16, {0x8000})[0], 0x80000000u);
}

TEST_F(DeviceWidenGpuTest, CountsThatAreNoMultipleOfTheBlock) {
  for (size_t count : {size_t(1), size_t(255), size_t(257), size_t(100003)}) {
    std::vector<uint16_t> bits(count);
    for (size_t i = 0; i < count; ++i)
      bits[i] = uint16_t((i * 40503u + 7) & 0xFFFF);
    for (DType type : {DType::F16, DType::BF16}) {
      SCOPED_TRACE("count " + std::to_string(count) +
                   (type == DType::F16 ? " f16" : " bf16"));
      expectHostBits(type, bits, launch(type, bits));
    }
  }
}

} // namespace
} // namespace qfuse::testing
