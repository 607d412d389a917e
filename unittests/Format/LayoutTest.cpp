//===- LayoutTest.cpp - #qf.layout text and the tiled 4-bit repack --------===//

#include "qfuse/format/Layout.h"
#include "qfuse/format/MmaLayout.h"

#include "qfuse/runtime/checkpoint/Importers.h"

#include "TestUtil.h"

#include <algorithm>

using namespace qfuse::format;
using qfuse::format::test::enc;
using qfuse::format::test::SeededTest;

namespace {

TEST(LayoutTest, ParsePrint) {
  const char *canonical[] = {"row_major", "tiled, tile_n = 1, tile_k = 64",
                             "tiled, tile_n = 4, tile_k = 256, interleave = 2"};
  for (const char *text : canonical) {
    Layout layout;
    std::string error;
    ASSERT_TRUE(parseLayout(text, layout, error)) << error;
    EXPECT_EQ(printLayout(layout), text);
  }
  Layout layout;
  std::string error;
  ASSERT_TRUE(parseLayout("#qf.layout<tiled, tile_k = 32, tile_n = 1, "
                          "interleave = 1>",
                          layout, error))
      << error;
  EXPECT_EQ(printLayout(layout), "tiled, tile_n = 1, tile_k = 32");
  EXPECT_EQ(layout.interleave, 1);
}

TEST(LayoutTest, Errors) {
  const std::pair<const char *, const char *> cases[] = {
      {"blocked", "unknown layout 'blocked'; expected 'row_major' or 'tiled'"},
      {"row_major, tile_n = 2",
       "row_major layout takes no tile_n, tile_k or interleave"},
      {"tiled, tile_n = 1", "tiled layout needs positive tile_n and tile_k, "
                            "got 1 and 0"},
      {"tiled, tile_n = 4, tile_k = 64, interleave = 3",
       "interleave must be positive and divide tile_n = 4, got 3"},
      {"tiled, tile_n = 1, tile_k = 64, tile_m = 2",
       "unknown layout entry 'tile_m'; expected tile_n, tile_k or interleave"},
      {"tiled, tile_n = 1, tile_n = 2, tile_k = 64", "duplicate entry 'tile_n'"},
      {"tiled, tile_n = x, tile_k = 64",
       "expected an integer value for 'tile_n'"},
  };
  for (const auto &[text, message] : cases) {
    Layout layout;
    std::string error;
    EXPECT_FALSE(parseLayout(text, layout, error)) << text;
    EXPECT_EQ(error, message);
  }
}

TEST(LayoutTest, TiledWordsFollowTheNibbleOrder) {
  // One row of 16 int4 codes e0..e15 with distinct stored nibbles.
  Encoding e = enc("uint4, per_channel, scale = f16, zero = int");
  Unpacked u;
  for (int i = 0; i < 16; ++i)
    u.codes.push_back(15 - i);
  u.scales = {1.0f};
  u.zeros = {8.0f};
  TensorMap rowMajor, tiled;
  std::string error;
  ASSERT_TRUE(pack(e, u, 1, 16, rowMajor, error)) << error;
  Layout layout;
  ASSERT_TRUE(parseLayout("tiled, tile_n = 1, tile_k = 16", layout, error));
  ASSERT_TRUE(repack(e, layout, rowMajor, 1, 16, tiled, error)) << error;
  // LayoutUtils.h: tiled bits 31..0 = e7 e5 e3 e1 e6 e4 e2 e0 per word.
  for (int word = 0; word < 2; ++word) {
    uint32_t expected = 0;
    const int order[8] = {0, 2, 4, 6, 1, 3, 5, 7};
    for (int slot = 0; slot < 8; ++slot)
      expected |= uint32_t(u.codes[8 * word + order[slot]]) << (4 * slot);
    const uint8_t *b = tiled[kCodes].data.data() + 4 * word;
    EXPECT_EQ(uint32_t(b[0] | b[1] << 8 | b[2] << 16 | uint32_t(b[3]) << 24),
              expected)
        << "word " << word;
  }
  // Everything but the codes is untouched.
  EXPECT_EQ(tiled[kScales].data, rowMajor[kScales].data);
  EXPECT_EQ(tiled[kZeros].data, rowMajor[kZeros].data);
}

class LayoutRandomTest : public SeededTest {};

TEST_F(LayoutRandomTest, RepackRoundTrips) {
  for (const char *text :
       {"int4, group = 32, scale = f16", "nf4, group = 64, scale = f32",
        "fp4e2m1, group = 16, scale = f8E4M3FN, global_scale",
        "int4, group = 32, scale = f16, sparse = 2:4",
        "codebook, bits = 4, table = \"t\" : f16, per_channel, scale = f16"}) {
    Encoding e = enc(text);
    const int64_t n = uniformInt(1, 8), k = 64 * uniformInt(1, 3);
    std::vector<float> w = normal(size_t(n * k));
    std::vector<float> table(16);
    for (int i = 0; i < 16; ++i)
      table[i] = float(i - 8) / 8;
    QuantizeOptions options;
    options.table = table.data();
    TensorMap rowMajor, tiled, back;
    std::string error;
    ASSERT_TRUE(quantizeRTN(e, w.data(), n, k, rowMajor, error, options))
        << error;
    Layout layout;
    ASSERT_TRUE(parseLayout("tiled, tile_n = 1, tile_k = 32", layout, error));
    ASSERT_TRUE(repack(e, layout, rowMajor, n, k, tiled, error)) << error;
    ASSERT_TRUE(unrepack(e, layout, tiled, n, k, back, error)) << error;
    for (const auto &[name, tensor] : rowMajor)
      EXPECT_EQ(back[name].data, tensor.data) << text << ": " << name;
    if (k >= 8)
      EXPECT_NE(tiled[kCodes].data, rowMajor[kCodes].data) << text;
  }
}

TEST(LayoutTest, RepackRejectsUndefinedLayouts) {
  Layout tiled1, tiled4, rowMajor;
  std::string error;
  ASSERT_TRUE(parseLayout("tiled, tile_n = 1, tile_k = 32", tiled1, error));
  ASSERT_TRUE(parseLayout("tiled, tile_n = 4, tile_k = 32", tiled4, error));
  TensorMap c, out;
  std::vector<float> w(4 * 64, 0.5f);
  Encoding int8 = enc("int8, per_channel, scale = f16");
  ASSERT_TRUE(quantizeRTN(int8, w.data(), 4, 64, c, error)) << error;
  EXPECT_FALSE(repack(int8, tiled1, c, 4, 64, out, error));
  EXPECT_EQ(error, "the byte order of <tiled, tile_n = 1, tile_k = 32> is not "
                   "defined for <int8, per_channel, scale = f16>: tiled "
                   "layouts are defined for 4-bit codes with tile_n = 1 "
                   "(matvec) or tile_n = tile_k = 32 (mma) and interleave = "
                   "1");
  EXPECT_TRUE(repack(int8, rowMajor, c, 4, 64, out, error)) << error;
  EXPECT_EQ(out[kCodes].data, c[kCodes].data);

  Encoding int4 = enc("int4, per_channel, scale = f16");
  ASSERT_TRUE(quantizeRTN(int4, w.data(), 4, 64, c, error)) << error;
  EXPECT_FALSE(repack(int4, tiled4, c, 4, 64, out, error));
  std::vector<float> w48(4 * 48, 0.5f);
  ASSERT_TRUE(quantizeRTN(int4, w48.data(), 4, 48, c, error)) << error;
  EXPECT_FALSE(repack(int4, tiled1, c, 4, 48, out, error));
  EXPECT_EQ(error, "tiled layout needs tile_k to divide K; got tile_k = 32, "
                   "K = 48");
}

//===----------------------------------------------------------------------===//
// act_order: columns sorted by group
//===----------------------------------------------------------------------===//

/// A GPTQ desc_act g_idx: a shuffled k / group.
std::vector<int32_t> shuffledGIdx(int64_t k, int64_t group, std::mt19937 &rng) {
  std::vector<int32_t> g(static_cast<size_t>(k));
  for (int64_t col = 0; col < k; ++col)
    g[col] = int32_t(col / group);
  std::shuffle(g.begin(), g.end(), rng);
  return g;
}

std::vector<int32_t> i32Values(const Tensor &t) {
  std::vector<int32_t> v(t.data.size() / 4);
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = int32_t(uint32_t(t.data[4 * i]) | uint32_t(t.data[4 * i + 1]) << 8 |
                   uint32_t(t.data[4 * i + 2]) << 16 |
                   uint32_t(t.data[4 * i + 3]) << 24);
  return v;
}

class ActOrderTest : public SeededTest {};

TEST_F(ActOrderTest, PermutationIsTheStableSortByGroup) {
  const int32_t gIdx[8] = {1, 0, 1, 0, 2, 2, 0, 1};
  std::vector<int32_t> perm;
  std::string error;
  EXPECT_FALSE(actOrderPermutation(gIdx, 8, 3, perm, error));
  EXPECT_EQ(error, "act_order needs a group size that divides K = 8, got 3");
  const int32_t g4[8] = {1, 0, 1, 0, 0, 1, 0, 1};
  ASSERT_TRUE(actOrderPermutation(g4, 8, 4, perm, error)) << error;
  EXPECT_EQ(perm, (std::vector<int32_t>{1, 3, 4, 6, 0, 2, 5, 7}));
  // Not exactly `group` columns per group, or out of range.
  const int32_t uneven[8] = {0, 0, 0, 0, 0, 1, 1, 1};
  EXPECT_FALSE(actOrderPermutation(uneven, 8, 4, perm, error));
  EXPECT_EQ(error, "act_order group 0 has 5 columns in g_idx; the sorted "
                   "layout needs exactly group = 4 columns per group (as GPTQ "
                   "desc_act checkpoints have)");
  const int32_t outside[8] = {0, 0, 0, 0, 1, 1, 1, 2};
  EXPECT_FALSE(actOrderPermutation(outside, 8, 4, perm, error));
  EXPECT_EQ(error, "g_idx[7] = 2 is outside [0, 2)");
}

/// The sorted layout against the unsorted reference: codes of sorted column
/// j are those of checkpoint column perm[j], and a weight without act_order
/// made of the sorted codes and the same scales dequantizes to the columns
/// of the act_order weight in sorted order. Round trip through unrepack.
TEST_F(ActOrderTest, SortedLayoutMatchesTheUnsortedReference) {
  const char *encodings[] = {"int4, group = 16, scale = f16, act_order",
                             "uint4, group = 32, scale = f16, zero = int, "
                             "act_order",
                             "int8, group = 8, scale = bf16, act_order",
                             "nf4, group = 16, scale = f32, act_order"};
  for (const char *text : encodings) {
    SCOPED_TRACE(text);
    Encoding e = enc(text);
    const int64_t n = uniformInt(1, 5), k = 64 * uniformInt(1, 3);
    std::vector<float> w = normal(size_t(n * k));
    std::vector<int32_t> gIdx = shuffledGIdx(k, e.groupSize, rng);
    QuantizeOptions options;
    options.gIdx = gIdx.data();
    TensorMap rowMajor;
    std::string error;
    ASSERT_TRUE(quantizeRTN(e, w.data(), n, k, rowMajor, error, options))
        << error;
    std::vector<float> reference;
    ASSERT_TRUE(dequantize(e, rowMajor, n, k, reference, error)) << error;

    Layout rm, tiled, mma;
    ASSERT_TRUE(parseLayout("row_major", rm, error));
    ASSERT_TRUE(parseLayout("tiled, tile_n = 1, tile_k = 32", tiled, error));
    // The tensor-core kernel's fragment order, sorted the same way: it reads
    // act_order weights as plain ones on permuted activations.
    ASSERT_TRUE(parseLayout("tiled, tile_n = 32, tile_k = 32", mma, error));
    for (const Layout &layout : {rm, tiled, mma}) {
      if (!layout.isRowMajor() && !isMmaFragmentLayout(layout) &&
          codeBits(e) != 4)
        continue;
      SCOPED_TRACE(printLayout(layout));
      TensorMap sorted, back;
      ASSERT_TRUE(repack(e, layout, rowMajor, n, k, sorted, error)) << error;
      ASSERT_EQ(sorted.count(kPerm), 1u);
      EXPECT_EQ(sorted[kPerm].dtype, DType::I32);
      EXPECT_EQ(sorted[kPerm].shape, (std::vector<int64_t>{k}));
      std::vector<int32_t> perm = i32Values(sorted[kPerm]);
      for (int64_t j = 0; j < k; ++j)
        ASSERT_EQ(gIdx[perm[j]], j / e.groupSize) << "sorted column " << j;
      // A producer's output column c lands at inv_perm[c], where this
      // weight's kernel reads checkpoint column perm[j] at j.
      ASSERT_EQ(sorted.count(kInvPerm), 1u);
      EXPECT_EQ(sorted[kInvPerm].dtype, DType::I32);
      EXPECT_EQ(sorted[kInvPerm].shape, (std::vector<int64_t>{k}));
      std::vector<int32_t> inv = i32Values(sorted[kInvPerm]);
      for (int64_t j = 0; j < k; ++j)
        ASSERT_EQ(inv[perm[j]], j) << "sorted column " << j;
      EXPECT_EQ(sorted[kScales].data, rowMajor[kScales].data);

      // The kernel's view: a plain grouped weight over sorted columns.
      TensorMap plain;
      ASSERT_TRUE(unrepack(e, layout, sorted, n, k, back, error)) << error;
      for (const auto &[name, tensor] : rowMajor)
        EXPECT_EQ(back[name].data, tensor.data) << name;
      Encoding dense = e;
      dense.actOrder = false;
      TensorMap sortedRowMajor = sorted;
      sortedRowMajor.erase(kPerm);
      sortedRowMajor.erase(kInvPerm);
      sortedRowMajor.erase(kGIdx);
      Layout denseLayout = layout;
      ASSERT_TRUE(unrepack(dense, denseLayout, sortedRowMajor, n, k, plain,
                           error))
          << error;
      std::vector<float> ws;
      ASSERT_TRUE(dequantize(dense, plain, n, k, ws, error)) << error;
      for (int64_t row = 0; row < n; ++row)
        for (int64_t j = 0; j < k; ++j)
          ASSERT_EQ(ws[row * k + j], reference[row * k + perm[j]])
              << "(" << row << ", sorted " << j << ")";
    }
  }
}

/// act_order + 2:4 is not sorted (the quads would break): row_major only,
/// the checkpoint's components as they are (g_idx kept, no perm), and a
/// round trip; every other layout is refused, naming why.
TEST_F(ActOrderTest, SparseStaysInCheckpointOrder) {
  Encoding e = enc("uint4, group = 16, scale = f16, zero = int, act_order, "
                   "sparse = 2:4");
  EXPECT_FALSE(sortsColumns(e));
  const int64_t n = uniformInt(1, 5), k = 64 * uniformInt(1, 3);
  std::vector<float> w = normal(size_t(n * k));
  std::vector<int32_t> gIdx = shuffledGIdx(k, e.groupSize, rng);
  QuantizeOptions options;
  options.gIdx = gIdx.data();
  TensorMap rowMajor, packed, back;
  std::string error;
  ASSERT_TRUE(quantizeRTN(e, w.data(), n, k, rowMajor, error, options))
      << error;
  Layout rm, tiled;
  ASSERT_TRUE(parseLayout("row_major", rm, error));
  ASSERT_TRUE(parseLayout("tiled, tile_n = 1, tile_k = 32", tiled, error));
  EXPECT_TRUE(layoutComponentSpecs(e, rm, n, k).empty());
  ASSERT_TRUE(repack(e, rm, rowMajor, n, k, packed, error)) << error;
  EXPECT_EQ(packed.count(kPerm), 0u);
  EXPECT_EQ(packed.count(kInvPerm), 0u);
  ASSERT_EQ(packed.size(), rowMajor.size());
  for (const auto &[name, tensor] : rowMajor)
    EXPECT_EQ(packed[name].data, tensor.data) << name;
  EXPECT_EQ(i32Values(packed[kGIdx]), gIdx);
  ASSERT_TRUE(unrepack(e, rm, packed, n, k, back, error)) << error;
  for (const auto &[name, tensor] : rowMajor)
    EXPECT_EQ(back[name].data, tensor.data) << name;
  EXPECT_FALSE(repack(e, tiled, rowMajor, n, k, packed, error));
  EXPECT_NE(error.find("act_order with 2:4 sparsity is defined in row_major "
                       "only"),
            std::string::npos)
      << error;
}

TEST_F(ActOrderTest, RepackRejectsGroupsOfOtherSizes) {
  Encoding e = enc("int4, group = 16, scale = f16, act_order");
  const int64_t n = 2, k = 64;
  std::vector<float> w = normal(size_t(n * k));
  std::vector<int32_t> gIdx(static_cast<size_t>(k));
  for (int64_t col = 0; col < k; ++col)
    gIdx[col] = col < 20 ? 0 : int32_t(1 + (col - 20) % 3); // 20, 15, 15, 14
  QuantizeOptions options;
  options.gIdx = gIdx.data();
  TensorMap rowMajor, out;
  std::string error;
  ASSERT_TRUE(quantizeRTN(e, w.data(), n, k, rowMajor, error, options))
      << error;
  Layout layout;
  ASSERT_TRUE(parseLayout("tiled, tile_n = 1, tile_k = 32", layout, error));
  EXPECT_FALSE(repack(e, layout, rowMajor, n, k, out, error));
  EXPECT_EQ(error, "act_order group 0 has 20 columns in g_idx; the sorted "
                   "layout needs exactly group = 16 columns per group (as "
                   "GPTQ desc_act checkpoints have)");
  // unrepack needs the permutation back.
  EXPECT_FALSE(unrepack(e, layout, rowMajor, n, k, out, error));
  EXPECT_EQ(error, "act_order weight in a kernel layout has no 'perm' "
                   "component");
}

/// An AutoGPTQ desc_act checkpoint converts (fromGPTQv1) into a weight the
/// sorted layout takes, and the kernel's view reproduces its values.
TEST_F(ActOrderTest, GPTQDescActCheckpointFeedsTheSortedLayout) {
  Encoding e = enc("uint4, group = 32, scale = f16, zero = int, act_order");
  const int64_t n = 32, k = 128;
  std::vector<float> w = normal(size_t(n * k));
  std::vector<int32_t> gIdx = shuffledGIdx(k, 32, rng);
  QuantizeOptions options;
  options.gIdx = gIdx.data();
  PackedWeight packed;
  packed.encoding = e;
  packed.n = n;
  packed.k = k;
  std::string error;
  ASSERT_TRUE(
      quantizeRTN(e, w.data(), n, k, packed.components, error, options))
      << error;
  TensorMap gptq;
  ASSERT_TRUE(toGPTQv1(packed, gptq, error)) << error;
  GPTQv1Tensors views;
  views.qweight = gptq.at("qweight").view();
  views.qzeros = gptq.at("qzeros").view();
  views.scales = gptq.at("scales").view();
  views.gIdx = gptq.at("g_idx").view();
  PackedWeight converted;
  ASSERT_TRUE(fromGPTQv1(views, LinearConfig{n, k, 4, 32}, converted, error))
      << error;
  ASSERT_TRUE(converted.encoding.actOrder);

  Layout tiled;
  ASSERT_TRUE(parseLayout("tiled, tile_n = 1, tile_k = 32", tiled, error));
  TensorMap sorted;
  ASSERT_TRUE(repack(converted.encoding, tiled, converted.components, n, k,
                     sorted, error))
      << error;
  std::vector<int32_t> perm = i32Values(sorted[kPerm]);
  std::vector<float> reference;
  ASSERT_TRUE(
      dequantize(converted.encoding, converted.components, n, k, reference,
                 error))
      << error;
  Encoding dense = converted.encoding;
  dense.actOrder = false;
  sorted.erase(kPerm);
  sorted.erase(kInvPerm);
  sorted.erase(kGIdx);
  TensorMap plain;
  ASSERT_TRUE(unrepack(dense, tiled, sorted, n, k, plain, error)) << error;
  std::vector<float> ws;
  ASSERT_TRUE(dequantize(dense, plain, n, k, ws, error)) << error;
  for (int64_t row = 0; row < n; ++row)
    for (int64_t j = 0; j < k; ++j)
      ASSERT_EQ(ws[row * k + j], reference[row * k + perm[j]]);
}

TEST(ActOrderLayout, LayoutComponents) {
  Encoding ao = enc("int4, group = 128, scale = f16, act_order");
  Encoding plain = enc("int4, group = 128, scale = f16");
  Layout layout;
  std::string error;
  ASSERT_TRUE(parseLayout("tiled, tile_n = 1, tile_k = 32", layout, error));
  std::vector<ComponentSpec> specs = layoutComponentSpecs(ao, layout, 8, 256);
  ASSERT_EQ(specs.size(), 2u);
  EXPECT_EQ(specs[0].name, "perm");
  EXPECT_EQ(specs[1].name, "inv_perm");
  for (const ComponentSpec &spec : specs) {
    EXPECT_EQ(spec.dtype, DType::I32) << spec.name;
    EXPECT_EQ(spec.shape, (std::vector<int64_t>{256})) << spec.name;
  }
  EXPECT_TRUE(layoutComponentSpecs(plain, layout, 8, 256).empty());
}

TEST(ActOrderLayout, InvertPermutation) {
  EXPECT_EQ(invertPermutation({2, 0, 3, 1}),
            (std::vector<int32_t>{1, 3, 0, 2}));
  EXPECT_EQ(invertPermutation({0, 1, 2}), (std::vector<int32_t>{0, 1, 2}));
  EXPECT_TRUE(invertPermutation({}).empty());
}

/// unrepack takes "inv_perm" when present (layouts made before it lack it)
/// and refuses one that is not the inverse of "perm" or not I32 [K]: a
/// producer would scatter its output elsewhere than the kernel reads it.
TEST_F(ActOrderTest, UnrepackChecksInvPerm) {
  Encoding e = enc("int4, group = 16, scale = f16, act_order");
  const int64_t n = 2, k = 64;
  std::vector<float> w = normal(size_t(n * k));
  std::vector<int32_t> gIdx = shuffledGIdx(k, e.groupSize, rng);
  QuantizeOptions options;
  options.gIdx = gIdx.data();
  TensorMap rowMajor, sorted, back;
  std::string error;
  ASSERT_TRUE(quantizeRTN(e, w.data(), n, k, rowMajor, error, options))
      << error;
  Layout layout;
  ASSERT_TRUE(parseLayout("tiled, tile_n = 1, tile_k = 32", layout, error));
  ASSERT_TRUE(repack(e, layout, rowMajor, n, k, sorted, error)) << error;

  TensorMap withoutInv = sorted;
  withoutInv.erase(kInvPerm);
  ASSERT_TRUE(unrepack(e, layout, withoutInv, n, k, back, error)) << error;
  EXPECT_EQ(back.count(kInvPerm), 0u);
  for (const auto &[name, tensor] : rowMajor)
    EXPECT_EQ(back[name].data, tensor.data) << name;

  // The entries of sorted columns 0 and 1 swapped: still a permutation,
  // but not perm's inverse.
  const std::vector<int32_t> perm = i32Values(sorted[kPerm]);
  std::vector<int32_t> inv = i32Values(sorted[kInvPerm]);
  std::swap(inv[perm[0]], inv[perm[1]]);
  TensorMap swapped = sorted;
  swapped[kInvPerm] = int32Tensor(inv);
  EXPECT_FALSE(unrepack(e, layout, swapped, n, k, back, error));
  EXPECT_EQ(error, "'inv_perm' is not the inverse of 'perm': entry " +
                       std::to_string(perm[0]) + " = 1, expected 0");

  TensorMap shortInv = sorted;
  shortInv[kInvPerm] = int32Tensor(std::vector<int32_t>(size_t(k - 1), 0));
  EXPECT_FALSE(unrepack(e, layout, shortInv, n, k, back, error));
  EXPECT_NE(error.find("component 'inv_perm' must be "), std::string::npos)
      << error;
}

} // namespace
