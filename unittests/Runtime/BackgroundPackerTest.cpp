//===- BackgroundPackerTest.cpp - packing on worker threads ----------------===//
//
// BackgroundPacker against format::pack on fresh random RTN weights (a
// third given with their codes as bytes, a third with the codes component
// packed already, as the device's gather makes it): the same components,
// in the order given, the unpacked codes released; and a module that cannot
// be packed is an error naming it.
//
//===----------------------------------------------------------------------===//

#include "qfuse/runtime/gptq/BackgroundPacker.h"

#include <gtest/gtest.h>

#include <random>

using namespace qfuse;
using namespace qfuse::runtime;

namespace {

format::Encoding named(const char *name) {
  format::Encoding enc;
  std::string error;
  EXPECT_TRUE(format::encodingFromName(name, enc, error)) << error;
  return enc;
}

TEST(BackgroundPacker, PacksLikeFormatPackInOrder) {
  const uint64_t seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal;
  std::vector<QuantizedWeight> given;
  std::vector<format::TensorMap> expected;
  const char *encodings[] = {"int4-g128", "uint4-g128-asym", "nvfp4", "int8"};
  for (int i = 0; i < 12; ++i) {
    const format::Encoding enc = named(encodings[i % 4]);
    const int64_t n = 8 + i, k = 256;
    std::vector<float> w(size_t(n * k));
    for (float &x : w)
      x = normal(rng);
    QuantizedWeight q{"m" + std::to_string(i), enc, n, k, {}, nullptr};
    std::string error;
    ASSERT_TRUE(format::quantizeRTN(enc, w.data(), n, k, q.weight, error))
        << error;
    expected.emplace_back();
    ASSERT_TRUE(format::pack(enc, q.weight, n, k, expected.back(), error))
        << error;
    // Modules give their codes as bytes, as GPTQ's solver does, or packed
    // (GptqSolveOptions::gather).
    if (i % 3 == 2) {
      const std::vector<uint8_t> &codes =
          expected.back().at(format::kCodes).data;
      q.packedCodes = qfuse::HostBytes::copyOf(codes.data(), codes.size());
      q.weight.codes.clear();
    } else if (i % 3 == 1) {
      q.codeBytes = qfuse::HostBytes::allocate(q.weight.codes.size());
      for (size_t c = 0; c < q.weight.codes.size(); ++c)
        q.codeBytes.data()[c] = uint8_t(q.weight.codes[c] & 0xFF);
      q.weight.codes.clear();
    }
    given.push_back(std::move(q));
  }
  BackgroundPacker packer(3);
  for (QuantizedWeight &q : given)
    packer.add(std::move(q));
  std::vector<QuantizedWeight> out = packer.finish();
  ASSERT_EQ(out.size(), expected.size());
  for (size_t i = 0; i < out.size(); ++i) {
    EXPECT_EQ(out[i].name, "m" + std::to_string(i));
    ASSERT_TRUE(out[i].packed);
    EXPECT_TRUE(out[i].weight.codes.empty());
    EXPECT_TRUE(out[i].codeBytes.empty());
    EXPECT_TRUE(out[i].packedCodes.empty());
    ASSERT_EQ(out[i].packed->size(), expected[i].size());
    for (const auto &[name, tensor] : expected[i]) {
      ASSERT_TRUE(out[i].packed->count(name)) << name;
      EXPECT_EQ(out[i].packed->at(name).data, tensor.data) << name;
      EXPECT_EQ(out[i].packed->at(name).shape, tensor.shape) << name;
    }
  }
}

// QFUSE_PACK=check: a module with its code bytes and the device's packed
// codes is packed from the bytes, and codes that differ are an error
// naming it.
TEST(BackgroundPacker, ChecksDevicePackedCodesAgainstTheBytes) {
  const format::Encoding enc = named("int4-g128");
  const int64_t n = 4, k = 256;
  std::vector<float> w(size_t(n * k));
  for (size_t i = 0; i < w.size(); ++i)
    w[i] = float(int(i % 23) - 11) / 7.0f;
  for (bool same : {true, false}) {
    QuantizedWeight q{"model.layers.1.mlp.up_proj", enc, n, k, {}, nullptr};
    std::string error;
    ASSERT_TRUE(format::quantizeRTN(enc, w.data(), n, k, q.weight, error));
    format::TensorMap expected;
    ASSERT_TRUE(format::pack(enc, q.weight, n, k, expected, error));
    const std::vector<uint8_t> &codes = expected.at(format::kCodes).data;
    q.packedCodes = qfuse::HostBytes::copyOf(codes.data(), codes.size());
    if (!same)
      q.packedCodes.data()[17] ^= 0x10;
    q.codeBytes = qfuse::HostBytes::allocate(q.weight.codes.size());
    for (size_t c = 0; c < q.weight.codes.size(); ++c)
      q.codeBytes.data()[c] = uint8_t(q.weight.codes[c] & 0xFF);
    q.weight.codes.clear();
    BackgroundPacker packer(1);
    packer.add(std::move(q));
    if (same) {
      std::vector<QuantizedWeight> out = packer.finish();
      EXPECT_EQ(out[0].packed->at(format::kCodes).data,
                expected.at(format::kCodes).data);
      continue;
    }
    try {
      packer.wait();
      FAIL() << "expected an error";
    } catch (const std::exception &e) {
      EXPECT_NE(std::string(e.what()).find("up_proj': the codes packed on "
                                           "the device differ"),
                std::string::npos)
          << e.what();
    }
  }
}

TEST(BackgroundPacker, NamesTheModuleThatCannotBePacked) {
  BackgroundPacker packer(2);
  QuantizedWeight bad{"model.layers.3.mlp.down_proj", named("int4-g128"), 4,
                      256, {}, nullptr};
  bad.weight.codes.assign(10, 0); // not 4 x 256
  packer.add(std::move(bad));
  // wait() (all packed, the weights kept) and finish() both say it.
  for (bool finish : {false, true}) {
    try {
      finish ? void(packer.finish()) : packer.wait();
      FAIL() << "expected an error";
    } catch (const std::exception &e) {
      EXPECT_NE(std::string(e.what()).find("model.layers.3.mlp.down_proj"),
                std::string::npos)
          << e.what();
    }
  }
}

// What a resumed quantize run does: modules read back already packed are
// kept as they are, and packed(i) waits for one module (the progress
// recorder's view) without finishing the rest.
TEST(BackgroundPacker, KeepsPackedModulesAndWaitsForOne) {
  const format::Encoding enc = named("int4-g128");
  std::mt19937_64 rng(7);
  std::normal_distribution<float> normal;
  auto quantized = [&](const std::string &name) {
    QuantizedWeight q{name, enc, 16, 256, {}, nullptr};
    std::vector<float> w(16 * 256);
    for (float &x : w)
      x = normal(rng);
    std::string error;
    EXPECT_TRUE(format::quantizeRTN(enc, w.data(), 16, 256, q.weight, error));
    return q;
  };
  QuantizedWeight resumed = quantized("resumed");
  auto components = std::make_shared<format::TensorMap>();
  std::string error;
  ASSERT_TRUE(format::pack(enc, resumed.weight, 16, 256, *components, error));
  resumed.weight = format::Unpacked();
  resumed.packed = components;

  BackgroundPacker packer(2);
  EXPECT_EQ(packer.add(std::move(resumed)), 0u);
  EXPECT_EQ(packer.add(quantized("fresh")), 1u);
  EXPECT_EQ(packer.packed(0), components) << "kept, not packed again";
  std::shared_ptr<const format::TensorMap> fresh = packer.packed(1);
  ASSERT_TRUE(fresh);
  EXPECT_EQ(fresh->count(format::kCodes), 1u);
  packer.wait();
  EXPECT_EQ(packer.packed(1), fresh) << "wait() keeps the weights";
  std::vector<QuantizedWeight> out = packer.finish();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].packed, components);
  EXPECT_EQ(out[1].packed, fresh);
}

} // namespace
