//===- OddWidthGatherGpuTest.cpp - straddling fields on the GPU -----------===//
//
// The quantize test artifact's qf_gather_fields_b3/b5/b6/b7 (and b2/b4/b8
// beside them; quantize-formats.qfa, as DeviceGatherGpuTest) against the
// host, on the odd-width cases of unittests/Format/OddWidthCases.h:
// uniformly random codes from a fixed seed (QFUSE_TEST_SEED replaces it)
// at shapes whose rows end inside a 32-bit word. Each launch writes into a
// buffer poisoned with 0xA5, words() * 4 bytes and 64 more; the words
// must be runFieldGather's (the stream, then zero padding), format::pack's
// codes component their head, and the 64 bytes past them untouched.
//   - GPTQ's code bytes -> the codes component (codeBytesGather);
//   - act_order's sorted row-major codes (repackGather), by enqueue and
//     through DeviceRepacker (what quantize-at-load binds) with its check
//     against format::repack;
//   - 3-bit codes into the mma fragment layout's bit planes (1-bit
//     fields, qf_gather_fields_b1), likewise;
//   - a code byte one past the width's largest index sets the status.
//
//===----------------------------------------------------------------------===//

#include "OddWidthCases.h"
#include "QuantizeArtifactFixture.h"
#include "TestUtil.h"

#include "qfuse/format/FieldGather.h"
#include "qfuse/runtime/device/DeviceGather.h"
#include "qfuse/runtime/device/DeviceRepacker.h"

#include <iostream>

namespace qfuse::testing {
namespace {

using runtime::DeviceGather;
namespace cuda = runtime::cuda;
using namespace format::test;

constexpr size_t kSlack = 64;
constexpr uint8_t kPoison = 0xA5;

class OddWidthGatherGpuTest : public QuantizeArtifactFixture {
protected:
  void SetUp() override {
    QuantizeArtifactFixture::SetUp();
    if (IsSkipped())
      return;
    gather.emplace(*artifact, *context);
    for (unsigned bits : {3u, 5u, 6u, 7u})
      ASSERT_TRUE(gather->has(bits))
          << artifactPath() << " has no qf_gather_fields_b" << bits
          << " (compiled before odd widths: rerun "
             "bench/quantize-at-load/make-artifacts.sh)";
  }
  void TearDown() override {
    if (HasFailure())
      std::cerr << "[ seed     ] QFUSE_TEST_SEED=" << seed << "\n";
  }

  /// Runs `g` from `src` into a poisoned buffer: the status, and in `out`
  /// the words() * 4 bytes the kernel owns; the kSlack bytes past them
  /// must keep the poison.
  int32_t launch(const format::FieldGather &g, const std::vector<uint8_t> &src,
                 std::vector<uint8_t> &out, const std::string &label) {
    cuda::DeviceBuffer in(std::max<size_t>(src.size(), 1), "src");
    in.upload(src.data(), src.size());
    const size_t bytes = size_t(g.words()) * 4;
    cuda::DeviceBuffer dst(bytes + kSlack, "dst"), status(4, "status");
    dst.fill(kPoison, stream->get());
    status.zero(stream->get());
    gather->enqueue(g, in.ptr(), dst.ptr(), status.ptr(), stream->get());
    stream->synchronize();
    std::vector<uint8_t> all(bytes + kSlack);
    dst.download(all.data(), all.size());
    for (size_t i = bytes; i < all.size(); ++i)
      EXPECT_EQ(all[i], kPoison) << label << ": byte " << i
                                 << " past the destination's words";
    out.assign(all.begin(), all.begin() + int64_t(bytes));
    int32_t value = 0;
    status.download(&value, 4);
    return value;
  }

  /// The device's words against runFieldGather's and their head against
  /// `packed` (format's codes component).
  void expectHost(const format::FieldGather &g, const uint8_t *src,
                  const std::vector<uint8_t> &got,
                  const std::vector<uint8_t> &packed,
                  const std::string &label) {
    std::vector<uint8_t> want;
    ASSERT_TRUE(format::runFieldGather(g, src, want)) << label;
    ASSERT_EQ(got.size(), want.size()) << label;
    auto diff = std::mismatch(want.begin(), want.end(), got.begin());
    EXPECT_TRUE(diff.first == want.end())
        << label << ": byte " << (diff.first - want.begin()) << " is "
        << int(*diff.second) << ", runFieldGather wrote " << int(*diff.first);
    ASSERT_EQ(int64_t(packed.size()), g.dstBytes) << label;
    EXPECT_TRUE(std::equal(packed.begin(), packed.end(), got.begin()))
        << label << ": not format's packed codes";
  }

  std::optional<DeviceGather> gather;
  uint32_t seed = seedOr(19);
  std::mt19937 rng{seed};
};

std::string labelOf(const std::string &text, int64_t n, int64_t k) {
  return text + " [" + std::to_string(n) + ", " + std::to_string(k) + "]";
}

TEST_F(OddWidthGatherGpuTest, CodeBytesMatchTheHost) {
  int odd = 0;
  for (const std::string &text : oddWidthEncodings())
    for (auto [n, k] : oddWidthShapes()) {
      const std::string label = labelOf(text, n, k);
      format::Encoding e = enc(text);
      format::Unpacked u = randomCodebook(e, n, k, rng);
      format::TensorMap host;
      std::string error;
      ASSERT_TRUE(format::pack(e, u, n, k, host, error)) << label << error;
      format::FieldGather g;
      ASSERT_TRUE(format::codeBytesGather(e, n, k, g, error)) << label;
      ASSERT_TRUE(gather->has(g.dstBits)) << label;
      const std::vector<uint8_t> bytes = lowBytes(u.codes);
      std::vector<uint8_t> out;
      ASSERT_EQ(launch(g, bytes, out, label), 0) << label;
      ASSERT_NO_FATAL_FAILURE(
          expectHost(g, bytes.data(), out, host.at(format::kCodes).data,
                     label));
      odd += 32 % g.dstBits != 0;
    }
  std::cout << "code bytes: " << odd << " odd-width cases on the device\n";
  EXPECT_EQ(odd, 8 * int(oddWidthShapes().size()));
}

TEST_F(OddWidthGatherGpuTest, ActOrderRepackMatchesTheHost) {
  runtime::DeviceRepacker repacker(&*gather, /*check=*/true, "");
  format::Layout rowMajor;
  std::string error;
  ASSERT_TRUE(format::parseLayout("row_major", rowMajor, error)) << error;
  int gathered = 0;
  for (const std::string &text : oddWidthEncodings())
    for (auto [n, k] : oddWidthShapes()) {
      format::Encoding e = enc(text);
      if (!e.actOrder)
        continue;
      const std::string label = labelOf(text, n, k);
      format::Unpacked u = randomCodebook(e, n, k, rng);
      format::TensorMap components, host;
      ASSERT_TRUE(format::pack(e, u, n, k, components, error)) << label;
      ASSERT_TRUE(format::repack(e, rowMajor, components, n, k, host, error))
          << label << error;
      format::FieldGather g;
      ASSERT_TRUE(
          format::repackGather(e, rowMajor, n, k, u.gIdx.data(), g, error))
          << label << error;
      const std::vector<uint8_t> &src = components.at(format::kCodes).data;
      std::vector<uint8_t> out;
      ASSERT_EQ(launch(g, src, out, label), 0) << label;
      ASSERT_NO_FATAL_FAILURE(
          expectHost(g, src.data(), out, host.at(format::kCodes).data, label));
      // The same through the repack hook; check=true compares every
      // component with format::repack's and throws on a difference.
      runtime::WeightSpec weight;
      weight.name = "w";
      weight.encoding = text;
      weight.layout = "row_major";
      weight.n = n;
      weight.k = k;
      weight.encodingAttr = e;
      weight.layoutAttr = rowMajor;
      format::TensorMap packed;
      ASSERT_TRUE(repacker.repack(weight, components, packed))
          << label << ": " << repacker.summary();
      EXPECT_EQ(packed.at(format::kCodes).data, host.at(format::kCodes).data)
          << label;
      ++gathered;
    }
  std::cout << "act_order: " << gathered << " cases; " << repacker.summary()
            << "\n";
  EXPECT_EQ(gathered, 4 * int(oddWidthShapes().size()));
  EXPECT_EQ(repacker.hostRepacks(), 0u);
}

// 3-bit codes into the mma fragment layout's two bit planes: one gather
// of 1-bit fields (qf_gather_fields_b1, which 3-bit quantizes record),
// by enqueue and through DeviceRepacker, per channel and act_order.
TEST_F(OddWidthGatherGpuTest, ThreeBitMmaPlanesMatchTheHost) {
  ASSERT_TRUE(gather->has(1))
      << artifactPath() << " has no qf_gather_fields_b1 beside b3 (compiled "
      << "before the mma planes' gather: rerun make-artifacts.sh)";
  runtime::DeviceRepacker repacker(&*gather, /*check=*/true, "");
  const char *mmaText = "tiled, tile_n = 32, tile_k = 32";
  format::Layout mma;
  std::string error;
  ASSERT_TRUE(format::parseLayout(mmaText, mma, error)) << error;
  int gathered = 0;
  for (const std::string &text : oddWidthEncodings())
    for (auto [n, k] : oddWidthShapes()) {
      format::Encoding e = enc(text);
      if (e.indexBits != 3)
        continue;
      const std::string label = labelOf(text, n, k);
      format::Unpacked u = randomCodebook(e, n, k, rng);
      format::TensorMap components, host;
      ASSERT_TRUE(format::pack(e, u, n, k, components, error)) << label;
      ASSERT_TRUE(format::repack(e, mma, components, n, k, host, error))
          << label << error;
      format::FieldGather g;
      ASSERT_TRUE(format::repackGather(e, mma, n, k,
                                       e.actOrder ? u.gIdx.data() : nullptr,
                                       g, error))
          << label << error;
      ASSERT_EQ(g.dstBits, 1u) << label;
      const std::vector<uint8_t> &src = components.at(format::kCodes).data;
      std::vector<uint8_t> out;
      ASSERT_EQ(launch(g, src, out, label), 0) << label;
      ASSERT_NO_FATAL_FAILURE(
          expectHost(g, src.data(), out, host.at(format::kCodes).data, label));
      runtime::WeightSpec weight;
      weight.name = "w";
      weight.encoding = text;
      weight.layout = mmaText;
      weight.n = n;
      weight.k = k;
      weight.encodingAttr = e;
      weight.layoutAttr = mma;
      format::TensorMap packed;
      ASSERT_TRUE(repacker.repack(weight, components, packed))
          << label << ": " << repacker.summary();
      ++gathered;
    }
  std::cout << "3-bit mma planes: " << gathered << " cases; "
            << repacker.summary() << "\n";
  EXPECT_EQ(gathered, 2 * int(oddWidthShapes().size()));
  EXPECT_EQ(repacker.hostRepacks(), 0u);
}

TEST_F(OddWidthGatherGpuTest, CodePastTheWidthSetsTheStatus) {
  for (unsigned bits : {3u, 5u, 6u, 7u}) {
    const std::string text = "codebook, bits = " + std::to_string(bits) +
                             ", table = \"t\" : f16, per_channel, scale = f16";
    format::FieldGather g;
    std::string why;
    ASSERT_TRUE(format::codeBytesGather(enc(text), 3, 40, g, why)) << why;
    std::vector<uint8_t> bytes(3 * 40, uint8_t((1u << bits) - 1)), out;
    EXPECT_EQ(launch(g, bytes, out, text), 0) << text;
    bytes[77] = uint8_t(1u << bits);
    EXPECT_EQ(launch(g, bytes, out, text), 1) << text;
  }
}

} // namespace
} // namespace qfuse::testing
