//===- FieldGatherTest.cpp - the gather plans against pack and repack -----===//
//
// runFieldGather (the kernel's arithmetic on the host) of every plan that
// codeBytesGather / repackGather make must give exactly the bytes of
// format::packCodeBytes / format::repack, for every encoding x layout x
// shape of GatherCases.h; where no plan is made, the host function is the
// path, so the test only counts those.
//
//===----------------------------------------------------------------------===//

#include "GatherCases.h"
#include "TestUtil.h"

#include "qfuse/format/FieldGather.h"
#include "qfuse/format/MmaLayout.h"

using namespace qfuse::format;
using namespace qfuse::format::test;

namespace {

class FieldGatherTest : public ::testing::Test, protected Seeded {
protected:
  void TearDown() override { reportSeedOnFailure(); }
};

Encoding encodingOf(const std::string &text) {
  Encoding enc;
  std::string error;
  EXPECT_TRUE(parseEncoding(text, enc, error)) << text << ": " << error;
  return enc;
}

std::vector<uint8_t> head(const std::vector<uint8_t> &bytes, int64_t size) {
  return std::vector<uint8_t>(bytes.begin(), bytes.begin() + size);
}

TEST_F(FieldGatherTest, PackCodeBytesEveryEncoding) {
  int gathered = 0, oddWidths = 0; // 3-, 5-, 6-, 7-bit: fields straddle words
  for (const std::string &text : gatherEncodings())
    for (auto [n, k] : gatherShapes()) {
      SCOPED_TRACE(text + " [" + std::to_string(n) + ", " +
                   std::to_string(k) + "]");
      Encoding enc = encodingOf(text);
      TensorMap components;
      Unpacked u;
      if (!randomComponents(enc, n, k, rng, components, u))
        continue;
      FieldGather g;
      std::string why;
      if (!codeBytesGather(enc, n, k, g, why))
        continue;
      std::vector<uint8_t> bytes = codeBytesOf(u);
      Unpacked params = u;
      params.codes.clear();
      TensorMap host;
      std::string error;
      ASSERT_TRUE(packCodeBytes(enc, bytes.data(), params, n, k, host, error))
          << error;
      std::vector<uint8_t> out;
      ASSERT_TRUE(runFieldGather(g, bytes.data(), out));
      ASSERT_EQ(g.dstBytes, int64_t(host.at(kCodes).data.size()));
      EXPECT_EQ(head(out, g.dstBytes), host.at(kCodes).data);
      // The gathered codes with the other parts: packCodeBytes' components.
      TensorMap joined;
      ASSERT_TRUE(packWithCodes(enc, head(out, g.dstBytes), params, n, k,
                                joined, error))
          << error;
      for (const auto &[name, tensor] : host)
        EXPECT_EQ(joined.at(name).data, tensor.data) << name;
      EXPECT_EQ(joined.size(), host.size());
      ++gathered;
      oddWidths += 32 % g.dstBits != 0;
    }
  EXPECT_GE(gathered, 20);
  EXPECT_GE(oddWidths, 10);
}

TEST_F(FieldGatherTest, PackWithCodesChecksTheCodesSize) {
  Encoding enc = encodingOf("int4, group = 32, scale = f16");
  Unpacked params;
  params.scales.assign(2 * 2, 1.0f);
  TensorMap out;
  std::string error;
  EXPECT_FALSE(packWithCodes(enc, std::vector<uint8_t>(63), params, 2, 64,
                             out, error));
  EXPECT_NE(error.find("expected 64 bytes"), std::string::npos) << error;
  EXPECT_TRUE(packWithCodes(enc, std::vector<uint8_t>(64), params, 2, 64, out,
                            error))
      << error;
}

TEST_F(FieldGatherTest, OutOfRangeCodeBytesAreRefused) {
  Encoding enc = encodingOf("int4, group = 32, scale = f16");
  FieldGather g;
  std::string why;
  ASSERT_TRUE(codeBytesGather(enc, 2, 64, g, why)) << why;
  std::vector<uint8_t> bytes(128, 0);
  std::vector<uint8_t> out;
  EXPECT_TRUE(runFieldGather(g, bytes.data(), out));
  bytes[77] = 8; // int4 codes are in [-8, 7]
  EXPECT_FALSE(runFieldGather(g, bytes.data(), out));
  bytes[77] = uint8_t(-8);
  EXPECT_TRUE(runFieldGather(g, bytes.data(), out));
}

TEST_F(FieldGatherTest, RepackEveryEncodingAndLayout) {
  int gathered = 0, oddWidths = 0; // act_order's row-major repack
  int threeBitPlanes = 0;          // 3-bit codes into the mma layout
  for (const std::string &text : gatherEncodings())
    for (const std::string &layoutText : gatherLayouts())
      for (auto [n, k] : gatherShapes()) {
        SCOPED_TRACE(text + " <" + layoutText + "> [" + std::to_string(n) +
                     ", " + std::to_string(k) + "]");
        Encoding enc = encodingOf(text);
        Layout layout;
        std::string error;
        ASSERT_TRUE(parseLayout(layoutText, layout, error)) << error;
        TensorMap components;
        Unpacked u;
        if (!randomComponents(enc, n, k, rng, components, u))
          continue;
        TensorMap host;
        const bool hostOk = repack(enc, layout, components, n, k, host, error);
        FieldGather g;
        std::string why;
        const bool planned =
            repackGather(enc, layout, n, k,
                         enc.actOrder ? u.gIdx.data() : nullptr, g, why);
        if (!hostOk) {
          EXPECT_FALSE(planned) << "a plan for what repack refuses: " << error;
          continue;
        }
        if (!planned)
          continue;
        std::vector<uint8_t> out;
        ASSERT_TRUE(runFieldGather(g, components.at(kCodes).data.data(), out));
        ASSERT_EQ(g.dstBytes, int64_t(host.at(kCodes).data.size()));
        EXPECT_EQ(head(out, g.dstBytes), host.at(kCodes).data);
        ++gathered;
        oddWidths += 32 % g.dstBits != 0;
        threeBitPlanes += codeBits(enc) == 3 && isMmaFragmentLayout(layout);
      }
  EXPECT_GE(gathered, 30);
  EXPECT_GE(oddWidths, 4);
  EXPECT_GE(threeBitPlanes, 4);
}

} // namespace

// Quantize-at-load's act_order weights (quantizeRTN without a g_idx): the
// g_idx it writes is k / group, so repack's perm is the identity, and the
// gather of every layout still gives repack's bytes.
TEST_F(FieldGatherTest, ActOrderAtLoadRepacksWithTheIdentityPerm) {
  int gathered = 0;
  for (const std::string &text : gatherEncodings()) {
    Encoding enc = encodingOf(text);
    // Quantize-at-load has no named table's values (the IR names it only).
    if (!enc.actOrder || enc.hasNamedTable())
      continue;
    const int64_t n = 45, k = 128; // every layout's tile_k divides it
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> w(size_t(n * k));
    for (float &x : w)
      x = normal(rng);
    TensorMap components;
    std::string error;
    ASSERT_TRUE(quantizeRTN(enc, w.data(), n, k, components, error)) << error;
    const std::vector<int32_t> gIdx = int32Values(components.at(kGIdx));
    std::vector<int32_t> identity(static_cast<size_t>(k));
    for (int64_t c = 0; c < k; ++c) {
      ASSERT_EQ(gIdx[size_t(c)], int32_t(c / enc.groupSize)) << text;
      identity[size_t(c)] = int32_t(c);
    }
    for (const std::string &layoutText : gatherLayouts()) {
      SCOPED_TRACE(text + " <" + layoutText + ">");
      Layout layout;
      ASSERT_TRUE(parseLayout(layoutText, layout, error)) << error;
      TensorMap host;
      if (!repack(enc, layout, components, n, k, host, error))
        continue; // a layout of other weights (the 2:4 fragments)
      FieldGather g;
      std::string why;
      if (!repackGather(enc, layout, n, k, gIdx.data(), g, why))
        continue;
      if (host.count(kPerm)) {
        EXPECT_EQ(int32Values(host.at(kPerm)), identity);
        EXPECT_EQ(int32Values(host.at(kInvPerm)), identity);
        EXPECT_EQ(g.perm, identity);
      }
      std::vector<uint8_t> out;
      ASSERT_TRUE(runFieldGather(g, components.at(kCodes).data.data(), out));
      EXPECT_EQ(head(out, g.dstBytes), host.at(kCodes).data);
      ++gathered;
    }
  }
  EXPECT_GE(gathered, 10);
}
