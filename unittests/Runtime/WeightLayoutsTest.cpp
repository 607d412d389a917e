//===- WeightLayoutsTest.cpp - one checkpoint tensor in two layouts -------===//
//
// An artifact compiled for batches on both sides of 8 lists its weight twice
// (docs/artifact.md, version 3): in the matvec's tiled layout and, packed
// from the same checkpoint tensor ("source"), in the tensor-core fragment
// layout. These tests check the validation of such entries and that both
// copies are filled from one set of row-major components: unpacked again,
// each gives exactly the source's codes and scales.
//
//===----------------------------------------------------------------------===//

#include "qfuse/runtime/artifact/WeightLayouts.h"
#include "qfuse/runtime/artifact/Artifact.h"
#include "qfuse/runtime/Error.h"
#include "qfuse/runtime/checkpoint/WeightSources.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <functional>
#include <string>

using namespace qfuse;
using namespace qfuse::runtime;
using nlohmann::json;

namespace {

/// A weight at batch 1 (matvec, tiled 1x32) and at batch 16 (mma, the
/// fragment layout), as qfuse-compile --batch-sizes=1,16 writes it.
json twoLayoutArtifact() {
  return json::parse(R"json({
  "format": "qfuse-artifact",
  "version": 3,
  "target": {"chip": "sm_90", "ptx_features": "+ptx80"},
  "module": {"ptx": ".version 8.0\n.target sm_90\n.visible .entry qf_matvec_0_m1()\n{\nret;\n}\n.visible .entry qf_mma_1_m16()\n{\nret;\n}\n"},
  "kernels": [
    {"name": "qf_matvec_0_m1",
     "params": [{"name": "x", "type": "ptr"}, {"name": "codes", "type": "ptr"},
                {"name": "scales", "type": "ptr"}, {"name": "y", "type": "ptr"}],
     "shared_bytes": 0, "max_threads": 128},
    {"name": "qf_mma_1_m16",
     "params": [{"name": "x", "type": "ptr"}, {"name": "codes", "type": "ptr"},
                {"name": "scales", "type": "ptr"}, {"name": "y", "type": "ptr"}],
     "shared_bytes": 0, "max_threads": 128}
  ],
  "weights": [
    {"name": "w", "shape": [64, 256],
     "encoding": "int4, group = 128, scale = f16",
     "layout": "tiled, tile_n = 1, tile_k = 32"},
    {"name": "w@tiled_n32_k32", "source": "w", "shape": [64, 256],
     "encoding": "int4, group = 128, scale = f16",
     "layout": "tiled, tile_n = 32, tile_k = 32"}
  ],
  "buffers": [
    {"name": "x", "shape": ["M", 256], "dtype": "f16"},
    {"name": "y", "shape": ["M", 64], "dtype": "f16"}
  ],
  "inputs": ["x"],
  "outputs": ["y"],
  "plans": [
    {"batch": 1, "steps": [
      {"launch": "qf_matvec_0_m1", "grid": [16, 1, 1], "block": [128, 1, 1],
       "args": [{"buffer": "x"},
                {"weight": "w", "component": "codes"},
                {"weight": "w", "component": "scales"},
                {"buffer": "y"}]}]},
    {"batch": 16, "steps": [
      {"launch": "qf_mma_1_m16", "grid": [1, 1, 1], "block": [128, 1, 1],
       "args": [{"buffer": "x"},
                {"weight": "w@tiled_n32_k32", "component": "codes"},
                {"weight": "w@tiled_n32_k32", "component": "scales"},
                {"buffer": "y"}]}]}
  ]
})json");
}

Artifact parse(const json &artifact) {
  return Artifact::parse(artifact.dump(), "two-layouts.qfa");
}

/// Expects `edit` of the artifact to be rejected with every fragment.
void expectInvalid(const std::function<void(json &)> &edit,
                   std::initializer_list<std::string> fragments) {
  json artifact = twoLayoutArtifact();
  edit(artifact);
  try {
    parse(artifact);
    FAIL() << "accepted: " << artifact.dump();
  } catch (const Error &e) {
    for (const std::string &fragment : fragments)
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos)
          << "'" << fragment << "' not in: " << e.what();
  }
}

TEST(WeightLayouts, ParsesOneTensorInTwoLayouts) {
  Artifact artifact = parse(twoLayoutArtifact());
  EXPECT_EQ(artifact.version, 3);
  ASSERT_EQ(artifact.weights.size(), 2u);
  EXPECT_EQ(artifact.weights[0].checkpointName(), "w");
  EXPECT_EQ(artifact.weights[1].checkpointName(), "w");
  EXPECT_EQ(artifact.weights[1].name, "w@tiled_n32_k32");
  std::vector<const WeightSpec *> entries = artifact.weightsPackedFrom("w");
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0], &artifact.weights[0]);
  EXPECT_EQ(entries[1], &artifact.weights[1]);
  // Binding the checkpoint tensor fills both; an entry name only itself.
  EXPECT_EQ(weightEntriesFor(artifact, "w", "test").size(), 2u);
  EXPECT_EQ(weightEntriesFor(artifact, "w@tiled_n32_k32", "test").size(), 1u);
  EXPECT_THROW(weightEntriesFor(artifact, "v", "test"), Error);
}

TEST(WeightLayouts, Version2ArtifactsStillLoad) {
  json artifact = twoLayoutArtifact();
  artifact["version"] = 2;
  artifact["weights"].erase(1);
  artifact["plans"].erase(1);
  Artifact parsed = parse(artifact);
  EXPECT_EQ(parsed.version, 2);
  EXPECT_EQ(parsed.weights[0].checkpointName(), "w");
}

TEST(WeightLayouts, BothLayoutsHoldTheCheckpointTensorsCodes) {
  Artifact artifact = parse(twoLayoutArtifact());
  const WeightSpec &matvec = artifact.weights[0];
  // The checkpoint tensor, quantized once (as every loader makes it).
  format::TensorMap source = randomWeight(matvec, 42);
  format::Unpacked expected;
  std::string error;
  ASSERT_TRUE(
      format::unpack(matvec.encodingAttr, source, 64, 256, expected, error))
      << error;

  std::vector<format::TensorMap> packed;
  for (const WeightSpec *weight : weightEntriesFor(artifact, "w", "test")) {
    packed.push_back(packForLayout(*weight, viewsOf(source), "test"));
    // Back to row_major, then to codes: exactly the source's.
    format::TensorMap rowMajor;
    ASSERT_TRUE(format::unrepack(weight->encodingAttr, weight->layoutAttr,
                                 packed.back(), weight->n, weight->k, rowMajor,
                                 error))
        << weight->name << ": " << error;
    for (const auto &[name, tensor] : source)
      EXPECT_EQ(rowMajor.at(name).data, tensor.data)
          << weight->name << " component " << name;
    format::Unpacked got;
    ASSERT_TRUE(format::unpack(weight->encodingAttr, rowMajor, weight->n,
                               weight->k, got, error))
        << weight->name << ": " << error;
    EXPECT_EQ(got.codes, expected.codes) << weight->name;
    EXPECT_EQ(got.scales, expected.scales) << weight->name;
  }
  // The two copies are really in different byte orders (and neither is the
  // checkpoint's): a loader that filled both alike would fail here.
  ASSERT_EQ(packed.size(), 2u);
  EXPECT_NE(packed[0].at("codes").data, packed[1].at("codes").data);
  EXPECT_NE(packed[0].at("codes").data, source.at("codes").data);
  EXPECT_NE(packed[1].at("codes").data, source.at("codes").data);
}

// packForLayout hands each layout to the repacker it is given (the GPU's,
// DeviceRepacker.h) and repacks on the host only where the repacker
// declines; row_major entries never reach it.
TEST(WeightLayouts, ARepackerMakesTheLayoutsItTakes) {
  Artifact artifact = parse(twoLayoutArtifact());
  format::TensorMap source = randomWeight(artifact.weights[0], 7);
  std::vector<std::string> asked;
  LayoutRepacker declines = [&](const WeightSpec &weight,
                                const format::TensorMap &rowMajor,
                                format::TensorMap &) {
    asked.push_back(weight.name);
    EXPECT_EQ(rowMajor.at("codes").data, source.at("codes").data);
    return false;
  };
  LayoutRepacker takes = [&](const WeightSpec &, const format::TensorMap &,
                             format::TensorMap &packed) {
    packed["codes"] = format::Tensor(format::DType::U8, {1});
    return true;
  };
  for (const WeightSpec *weight : weightEntriesFor(artifact, "w", "test")) {
    format::TensorMap host = packForLayout(*weight, viewsOf(source), "test");
    format::TensorMap declined =
        packForLayout(*weight, viewsOf(source), "test", &declines);
    EXPECT_EQ(declined.at("codes").data, host.at("codes").data);
    format::TensorMap taken =
        packForLayout(*weight, viewsOf(source), "test", &takes);
    EXPECT_EQ(taken.at("codes").data.size(), 1u) << weight->name;
  }
  EXPECT_EQ(asked, (std::vector<std::string>{"w", "w@tiled_n32_k32"}));
  // The checkpoint's own order needs no repack: the repacker is not asked.
  json rowMajorArtifact = twoLayoutArtifact();
  rowMajorArtifact["weights"][0]["layout"] = "row_major";
  Artifact plain = parse(rowMajorArtifact);
  asked.clear();
  packForLayout(plain.weights[0], viewsOf(source), "test", &declines);
  EXPECT_TRUE(asked.empty());
}

// A 2:4 weight in the matvec's layout and in the mma.sp kernel's 2:4
// fragment layout (SparseMmaLayout.h), where the metadata moves too: both
// copies unpack to the checkpoint's codes, positions and scales.
TEST(WeightLayouts, A24WeightInTheMatvecAndTheMmaSpLayouts) {
  json two = twoLayoutArtifact();
  for (json &w : two["weights"])
    w["encoding"] = "int4, group = 128, scale = f16, sparse = 2:4";
  two["weights"][1]["name"] = "w@tiled_n32_k64";
  two["weights"][1]["layout"] = "tiled, tile_n = 32, tile_k = 64";
  for (int arg : {1, 2})
    two["plans"][1]["steps"][0]["args"][arg]["weight"] = "w@tiled_n32_k64";
  Artifact artifact = parse(two);
  format::TensorMap source = randomWeight(artifact.weights[0], 24);
  std::string error;
  std::vector<format::TensorMap> packed;
  for (const WeightSpec *weight : weightEntriesFor(artifact, "w", "test")) {
    packed.push_back(packForLayout(*weight, viewsOf(source), "test"));
    format::TensorMap rowMajor;
    ASSERT_TRUE(format::unrepack(weight->encodingAttr, weight->layoutAttr,
                                 packed.back(), weight->n, weight->k, rowMajor,
                                 error))
        << weight->name << ": " << error;
    for (const auto &[name, tensor] : source)
      EXPECT_EQ(rowMajor.at(name).data, tensor.data)
          << weight->name << " component " << name;
  }
  ASSERT_EQ(packed.size(), 2u);
  EXPECT_EQ(packed[0].at("meta").data, source.at("meta").data);
  EXPECT_NE(packed[1].at("meta").data, source.at("meta").data);
  EXPECT_NE(packed[1].at("codes").data, packed[0].at("codes").data);
}

TEST(WeightLayouts, AMismatchedComponentNamesTheWeightAndItsSource) {
  Artifact artifact = parse(twoLayoutArtifact());
  format::TensorMap source = randomWeight(artifact.weights[0], 7);
  source.at("scales").shape = {64, 3};
  try {
    packForLayout(artifact.weights[1], viewsOf(source), "checkpoint 'c'");
    FAIL() << "a wrong scales shape was accepted";
  } catch (const Error &e) {
    std::string what = e.what();
    EXPECT_NE(what.find("checkpoint 'c'"), std::string::npos) << what;
    EXPECT_NE(what.find("weight 'w@tiled_n32_k32'"), std::string::npos) << what;
    EXPECT_NE(what.find("packed from 'w'"), std::string::npos) << what;
    EXPECT_NE(what.find("component 'scales'"), std::string::npos) << what;
  }
  source.erase("scales");
  EXPECT_THROW(packForLayout(artifact.weights[0], viewsOf(source), "c"), Error);
}

TEST(WeightLayoutsInvalid, SourceNeedsVersion3) {
  expectInvalid([](json &a) { a["version"] = 2; },
                {"weights[1].source", "needs version 3", "says 2"});
}

TEST(WeightLayoutsInvalid, NewerVersionsAreRejected) {
  expectInvalid([](json &a) { a["version"] = 8; },
                {"version", "found 8", "supports 2 to 7"});
}

TEST(WeightLayoutsInvalid, OneSourceOneEncoding) {
  expectInvalid(
      [](json &a) {
        a["weights"][1]["encoding"] = "int4, group = 64, scale = f16";
      },
      {"weights[1]", "weight 'w@tiled_n32_k32' is packed from 'w'",
       "differs in shape or encoding"});
}

TEST(WeightLayoutsInvalid, OneSourceOneShape) {
  expectInvalid(
      [](json &a) {
        a["weights"][1]["shape"] = {32, 256};
      },
      {"weights[1]", "differs in shape or encoding", "[32, 256]"});
}

TEST(WeightLayoutsInvalid, OneEntryPerLayout) {
  expectInvalid(
      [](json &a) {
        a["weights"][1]["layout"] = "tiled, tile_n = 1, tile_k = 32";
      },
      {"weights[1]", "repeats weight 'w'", "both are 'w' in layout"});
}

TEST(WeightLayoutsInvalid, EmptySource) {
  expectInvalid([](json &a) { a["weights"][1]["source"] = ""; },
                {"weights[1].source", "expected a checkpoint tensor name"});
}

} // namespace
