//===- DeviceGatherGpuTest.cpp - packing and layouts on the GPU -----------===//
//
// The generated qf_gather_fields kernels of the quantize test artifact
// (quantize-formats.qfa, as QuantizeGpuTest; QFUSE_QUANTIZE_QFA overrides
// the path) against the host functions, byte for byte, for every encoding x
// layout x shape of unittests/Format/GatherCases.h on fresh random codes
// (the seed is printed on failure; QFUSE_TEST_SEED replays it), into
// destinations poisoned with 0xFF before every launch:
//   - GPTQ's code bytes -> the codes component (format::packCodeBytes);
//   - row-major codes -> each kernel layout (format::repack);
//   - 2:4 codes and meta -> the 2:4 fragment layout (two gathers,
//     format::sparseRepackGathers), on quantizeRTN's and random bits;
//   - 2:4 kept codes -> the matvec's tiled layout (one gather,
//     format::repackGather; the meta stays row-major), likewise;
// where no plan covers a case (row-major weights) the host path is the one that
// runs, and the test counts it. An out-of-range code byte must set
// the status word.
//
//===----------------------------------------------------------------------===//

#include "GatherCases.h"
#include "QuantizeArtifactFixture.h"
#include "TestUtil.h"

#include "qfuse/format/FieldGather.h"
#include "qfuse/runtime/device/DeviceGather.h"
#include "qfuse/runtime/device/DeviceRepacker.h"

#include <cstdlib>
#include <iostream>

namespace qfuse::testing {
namespace {

using runtime::DeviceGather;
namespace cuda = runtime::cuda;
using namespace format::test;

class DeviceGatherGpuTest : public QuantizeArtifactFixture {
protected:
  void SetUp() override {
    QuantizeArtifactFixture::SetUp();
    if (IsSkipped())
      return;
    gather.emplace(*artifact, *context);
    seed = format::test::freshSeed();
    rng.seed(seed);
  }
  void TearDown() override {
    if (HasFailure())
      std::cerr << "[ seed     ] QFUSE_TEST_SEED=" << seed << "\n";
  }

  /// Runs `g` on the device from `src` into a destination poisoned with
  /// 0xFF; returns the status and the whole destination (words() * 4).
  int32_t launch(const format::FieldGather &g, const std::vector<uint8_t> &src,
                 std::vector<uint8_t> &out) {
    cuda::DeviceBuffer in(std::max<size_t>(src.size(), 1), "src");
    in.upload(src.data(), src.size());
    const size_t bytes = std::max<int64_t>(g.words() * 4, 4);
    cuda::DeviceBuffer dst(bytes, "dst"), status(4, "status");
    dst.fill(0xFF, stream->get());
    status.zero(stream->get());
    gather->enqueue(g, in.ptr(), dst.ptr(), status.ptr(), stream->get());
    stream->synchronize();
    out.resize(bytes);
    dst.download(out.data(), bytes);
    int32_t value = 0;
    status.download(&value, 4);
    return value;
  }

  /// The destination's bytes past the component are the kernel's zeros.
  static void expectBytes(const std::vector<uint8_t> &got,
                          const std::vector<uint8_t> &want,
                          const std::string &label) {
    ASSERT_GE(got.size(), want.size()) << label;
    auto mismatch = std::mismatch(want.begin(), want.end(), got.begin());
    EXPECT_TRUE(mismatch.first == want.end())
        << label << ": byte " << (mismatch.first - want.begin()) << " is "
        << int(*mismatch.second) << ", the host wrote " << int(*mismatch.first);
    for (size_t i = want.size(); i < got.size(); ++i)
      ASSERT_EQ(got[i], 0) << label << ": padding byte " << i;
  }

  /// `components` of a weight of `text` at [n, k] through `repacker` into
  /// `layoutText` equal the host's `host` repack, component by component.
  static void expectRepackerMatches(runtime::DeviceRepacker &repacker,
                                    const std::string &text,
                                    const std::string &layoutText,
                                    const format::Layout &layout, int64_t n,
                                    int64_t k,
                                    const format::TensorMap &components,
                                    const format::TensorMap &host,
                                    const std::string &label) {
    runtime::WeightSpec weight;
    weight.name = "w";
    weight.encoding = text;
    weight.layout = layoutText;
    weight.n = n;
    weight.k = k;
    weight.encodingAttr = format::test::enc(text);
    weight.layoutAttr = layout;
    format::TensorMap packed;
    ASSERT_TRUE(repacker.repack(weight, components, packed))
        << label << ": " << repacker.summary();
    ASSERT_EQ(packed.size(), host.size()) << label;
    for (const auto &[name, tensor] : host) {
      EXPECT_EQ(packed.at(name).data, tensor.data) << label << " " << name;
      EXPECT_EQ(packed.at(name).shape, tensor.shape) << label << " " << name;
    }
  }

  std::optional<DeviceGather> gather;
  uint32_t seed = 0;
  std::mt19937 rng;
};

TEST_F(DeviceGatherGpuTest, PackCodeBytesMatchesTheHost) {
  ASSERT_TRUE(gather->any()) << artifactPath() << " has no gather kernel";
  // The artifact's 3-, 5-, 6- and 7-bit codebooks bring the kernels whose
  // fields straddle words.
  for (unsigned bits : {3u, 5u, 6u, 7u})
    EXPECT_TRUE(gather->has(bits)) << "no qf_gather_fields_b" << bits;
  int onDevice = 0, onHost = 0, oddWidths = 0;
  for (const std::string &text : gatherEncodings())
    for (auto [n, k] : gatherShapes()) {
      const std::string label = text + " [" + std::to_string(n) + ", " +
                                std::to_string(k) + "]";
      format::Encoding enc = format::test::enc(text);
      format::TensorMap components;
      format::Unpacked u;
      if (!randomComponents(enc, n, k, rng, components, u))
        continue;
      format::FieldGather g;
      std::string why;
      if (!format::codeBytesGather(enc, n, k, g, why) ||
          !gather->has(g.dstBits)) {
        ++onHost;
        continue;
      }
      std::vector<uint8_t> bytes = codeBytesOf(u);
      format::Unpacked params = u;
      params.codes.clear();
      format::TensorMap host;
      std::string error;
      ASSERT_TRUE(format::packCodeBytes(enc, bytes.data(), params, n, k, host,
                                        error))
          << label << ": " << error;
      std::vector<uint8_t> out;
      ASSERT_EQ(launch(g, bytes, out), 0) << label;
      expectBytes(out, host.at(format::kCodes).data, label);
      // run() downloads the component itself.
      std::vector<uint8_t> direct;
      ASSERT_TRUE(gather->runHost(g, bytes.data(), bytes.size(), direct, why))
          << label << ": " << why;
      EXPECT_EQ(direct, host.at(format::kCodes).data) << label;
      ++onDevice;
      oddWidths += 32 % g.dstBits != 0;
    }
  std::cout << "packCodeBytes: " << onDevice << " cases on the device ("
            << oddWidths << " of odd widths), " << onHost << " on the host\n";
  EXPECT_GE(onDevice, 20);
  EXPECT_GE(oddWidths, 10);
}

TEST_F(DeviceGatherGpuTest, RepackMatchesTheHostForEveryLayout) {
  int onDevice = 0, onHost = 0, oddWidths = 0;
  for (const std::string &text : gatherEncodings())
    for (const std::string &layoutText : gatherLayouts())
      for (auto [n, k] : gatherShapes()) {
        const std::string label = text + " <" + layoutText + "> [" +
                                  std::to_string(n) + ", " +
                                  std::to_string(k) + "]";
        format::Encoding enc = format::test::enc(text);
        format::Layout layout;
        std::string error;
        ASSERT_TRUE(format::parseLayout(layoutText, layout, error)) << error;
        format::TensorMap components, host;
        format::Unpacked u;
        if (!randomComponents(enc, n, k, rng, components, u) ||
            !format::repack(enc, layout, components, n, k, host, error))
          continue;
        format::FieldGather g;
        std::string why;
        if (!format::repackGather(enc, layout, n, k,
                                  enc.actOrder ? u.gIdx.data() : nullptr, g,
                                  why) ||
            !gather->has(g.dstBits)) {
          ++onHost;
          continue;
        }
        std::vector<uint8_t> out;
        ASSERT_EQ(launch(g, components.at(format::kCodes).data, out), 0)
            << label;
        expectBytes(out, host.at(format::kCodes).data, label);
        ++onDevice;
        oddWidths += 32 % g.dstBits != 0;
      }
  std::cout << "repack: " << onDevice << " cases on the device ("
            << oddWidths << " of odd widths), " << onHost << " on the host\n";
  EXPECT_GE(onDevice, 30);
  EXPECT_GE(oddWidths, 4);
}

// DeviceRepacker, what quantize-at-load binds through: the whole layout
// (codes, the kept components, act_order's perm) equals format::repack's,
// with --rtn check's comparison on; what it declines, packForLayout
// repacks on the host.
TEST_F(DeviceGatherGpuTest, RepackerGivesRepacksComponents) {
  runtime::DeviceRepacker repacker(&*gather, /*check=*/true, "");
  for (const std::string &text : gatherEncodings())
    for (const std::string &layoutText : gatherLayouts()) {
      runtime::WeightSpec weight;
      weight.name = "w";
      weight.encoding = text;
      weight.layout = layoutText;
      weight.n = 45;
      weight.k = 96;
      weight.encodingAttr = format::test::enc(text);
      std::string error;
      ASSERT_TRUE(format::parseLayout(layoutText, weight.layoutAttr, error));
      format::TensorMap components, host;
      format::Unpacked u;
      if (!randomComponents(weight.encodingAttr, weight.n, weight.k, rng,
                            components, u) ||
          !format::repack(weight.encodingAttr, weight.layoutAttr, components,
                          weight.n, weight.k, host, error))
        continue;
      format::TensorMap packed;
      if (!repacker.repack(weight, components, packed))
        continue;
      ASSERT_EQ(packed.size(), host.size()) << text << " <" << layoutText;
      for (const auto &[name, tensor] : host) {
        EXPECT_EQ(packed.at(name).data, tensor.data) << text << " " << name;
        EXPECT_EQ(packed.at(name).shape, tensor.shape) << text << " " << name;
      }
    }
  std::cout << repacker.summary() << "\n";
  EXPECT_GE(repacker.deviceRepacks(), 15u);
  // Row-major weights without act_order: nothing to gather.
  EXPECT_GE(repacker.hostRepacks(), 1u);
}

// 2:4 into the 2:4 fragment layout: the codes gather and the meta gather
// (padded quads at positions (0, 1)) against format::repack, launched
// into poisoned destinations, then the whole layout through DeviceRepacker
// with --rtn check's comparison on.
TEST_F(DeviceGatherGpuTest, SparseLayoutsMatchTheHost) {
  ASSERT_TRUE(gather->has(2) && gather->hasPadParity(2))
      << artifactPath() << " has no qf_gather_fields_b2 with padParity "
      << "(recompile it: bench/quantize-at-load/make-artifacts.sh)";
  runtime::DeviceRepacker repacker(&*gather, /*check=*/true, "");
  format::Layout layout;
  std::string error;
  ASSERT_TRUE(format::parseLayout(sparseGatherLayout(), layout, error));
  int onDevice = 0;
  for (const std::string &text : sparseGatherEncodings())
    for (auto [n, k] : sparseGatherShapes())
      for (bool randomBits : {false, true}) {
        const std::string label = text + " [" + std::to_string(n) + ", " +
                                  std::to_string(k) + "]" +
                                  (randomBits ? " random bits" : "");
        format::Encoding enc = format::test::enc(text);
        format::TensorMap components, host;
        format::Unpacked u;
        ASSERT_TRUE(randomComponents(enc, n, k, rng, components, u)) << label;
        if (randomBits)
          randomizeSparseBits(components, rng);
        ASSERT_TRUE(format::repack(enc, layout, components, n, k, host, error))
            << label << ": " << error;
        format::FieldGather codes, meta;
        std::string why;
        ASSERT_TRUE(
            format::sparseRepackGathers(enc, layout, n, k, codes, meta, why))
            << label << ": " << why;
        ASSERT_TRUE(gather->has(codes.dstBits))
            << label << ": no qf_gather_fields_b" << codes.dstBits << " in "
            << artifactPath() << " (16 needs unquantized 2:4, #35-#40: "
            << "recompile it)";
        for (auto [g, name] : {std::pair{&codes, format::kCodes},
                               std::pair{&meta, format::kMetadata}}) {
          std::vector<uint8_t> out;
          ASSERT_EQ(launch(*g, components.at(name).data, out), 0) << label;
          expectBytes(out, host.at(name).data, label + " " + name);
        }
        ASSERT_NO_FATAL_FAILURE(expectRepackerMatches(
            repacker, text, sparseGatherLayout(), layout, n, k, components, host, label));
        ++onDevice;
      }
  std::cout << "2:4 layouts: " << onDevice << " cases on the device; "
            << repacker.summary() << "\n";
  EXPECT_EQ(onDevice, 60); // f16 kept values as 16-bit fields too
}

// 2:4 into the matvec's layout (tiled, tile_n = 1, tile_k = 32): the one
// gather of the kept codes against format::repack, launched into a
// poisoned destination, then the whole layout (meta kept row-major)
// through DeviceRepacker with --rtn check's comparison on; K that tile_k
// does not divide, and 8- and 16-bit kept values, have no plan.
TEST_F(DeviceGatherGpuTest, SparseMatvecLayoutMatchesTheHost) {
  ASSERT_TRUE(gather->has(4)) << artifactPath() << " has no 4-bit gather";
  runtime::DeviceRepacker repacker(&*gather, /*check=*/true, "");
  format::Layout layout;
  std::string error;
  ASSERT_TRUE(format::parseLayout(sparseMatvecLayout(), layout, error));
  int onDevice = 0;
  for (const std::string &text : sparseGatherEncodings())
    for (auto [n, k] : sparseMatvecShapes())
      for (bool randomBits : {false, true}) {
        const std::string label = text + " [" + std::to_string(n) + ", " +
                                  std::to_string(k) + "]" +
                                  (randomBits ? " random bits" : "");
        format::Encoding enc = format::test::enc(text);
        format::TensorMap components, host;
        format::Unpacked u;
        if (!randomComponents(enc, n, k, rng, components, u))
          continue;
        if (randomBits)
          randomizeSparseBits(components, rng);
        format::FieldGather g;
        std::string why;
        const bool planned =
            format::repackGather(enc, layout, n, k, nullptr, g, why);
        if (!format::repack(enc, layout, components, n, k, host, error)) {
          EXPECT_FALSE(planned) << label;
          continue;
        }
        ASSERT_TRUE(planned) << label << ": " << why;
        std::vector<uint8_t> out;
        ASSERT_EQ(launch(g, components.at(format::kCodes).data, out), 0)
            << label;
        expectBytes(out, host.at(format::kCodes).data, label);
        ASSERT_NO_FATAL_FAILURE(expectRepackerMatches(
            repacker, text, sparseMatvecLayout(), layout, n, k, components, host, label));
        ++onDevice;
      }
  std::cout << "2:4 matvec layout: " << onDevice << " cases on the device; "
            << repacker.summary() << "\n";
  EXPECT_EQ(onDevice, 20); // int4 and uint4 at the 5 K tile_k divides
  EXPECT_EQ(repacker.hostRepacks(), 0u);
}

TEST_F(DeviceGatherGpuTest, OutOfRangeCodeSetsTheStatus) {
  format::Encoding enc = format::test::enc("int4, group = 32, scale = f16");
  format::FieldGather g;
  std::string why;
  ASSERT_TRUE(format::codeBytesGather(enc, 3, 64, g, why)) << why;
  if (!gather->has(4))
    GTEST_SKIP() << "qfuse-gpu-skip: no 4-bit gather kernel";
  std::vector<uint8_t> bytes(3 * 64, uint8_t(-8)), out;
  EXPECT_EQ(launch(g, bytes, out), 0);
  bytes[100] = 8; // int4 codes are in [-8, 7]
  EXPECT_EQ(launch(g, bytes, out), 1);
  EXPECT_FALSE(gather->runHost(g, bytes.data(), bytes.size(), out, why));
}

} // namespace
} // namespace qfuse::testing
