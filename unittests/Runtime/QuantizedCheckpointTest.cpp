//===- QuantizedCheckpointTest.cpp - Writing quantized checkpoints --------===//
//
// A tiny synthetic Llama / Qwen2 (runtime/reference's SyntheticModel, real
// safetensors and config.json), some of its linear modules quantized with
// round-to-nearest from random values, written by writeQuantizedCheckpoint in
// each format and read back the way qfuse-run --model reads a directory
// (ModelCheckpoint + checkpointWeight / checkpointTensor): the components
// must be format::pack of the quantizer's output, byte for byte, and every
// other tensor the source's, bit for bit. Plus each format's refusals.
//
//===----------------------------------------------------------------------===//

#include "TempFiles.h"
#include "qfuse/runtime/checkpoint/FormatTensors.h"
#include "qfuse/runtime/checkpoint/Importers.h"
#include "qfuse/format/Packing.h"
#include "qfuse/reference/SyntheticModel.h"
#include "qfuse/runtime/artifact/Artifact.h"
#include "qfuse/runtime/Error.h"
#include "qfuse/runtime/checkpoint/ModelCheckpoint.h"
#include "qfuse/runtime/checkpoint/WeightSources.h"
#include "qfuse/runtime/checkpoint/QuantizedCheckpoint.h"
#include "qfuse/runtime/checkpoint/Safetensors.h"
#include "qfuse/runtime/gptq/BackgroundPacker.h"
#include "qfuse/runtime/gptq/PackedCheckpointStream.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <sstream>

using namespace qfuse::runtime;
using nlohmann::json;
namespace fmt = qfuse::format;
namespace ref = qfuse::reference;
namespace fs = std::filesystem;

using qfuse::testing::filesOf;
using qfuse::testing::makeTempDir;
using qfuse::testing::expectError;

namespace {

constexpr const char *kInt4 = "int4, group = 128, scale = f16";
constexpr const char *kUint4 = "uint4, group = 128, scale = f16, zero = int";
constexpr const char *kInt8 = "int8, per_channel, scale = f16";
constexpr const char *kInt4ActOrder =
    "int4, group = 128, scale = f16, act_order";

/// A synthetic bf16 checkpoint of `preset` in a fresh directory.
ModelCheckpoint synthetic(const char *preset = "tiny-llama") {
  const std::string dir = makeTempDir("qfuse-export") + "/source";
  ref::writeSyntheticModel(ref::syntheticPreset(preset), dir,
                           {/*seed=*/3, ref::StorageType::BF16});
  return ModelCheckpoint::open(dir);
}

/// The decoder's linear modules, "model.layers.{i}.self_attn.q_proj", ...
std::vector<std::string> decoderLinears(int64_t layers = 2) {
  std::vector<std::string> names;
  for (int64_t i = 0; i < layers; ++i)
    for (ref::Projection p :
         {ref::Projection::Q, ref::Projection::K, ref::Projection::V,
          ref::Projection::O, ref::Projection::Gate, ref::Projection::Up,
          ref::Projection::Down})
      names.push_back(ref::projectionTensorName(i, p));
  return names;
}

fmt::Encoding encoding(const std::string &text) {
  fmt::Encoding enc;
  std::string error;
  if (!fmt::parseEncoding(text, enc, error) &&
      !fmt::encodingFromName(text, enc, error))
    throw qfuse::Error("encoding '" + text + "': " + error);
  return enc;
}

/// `module` of `source` quantized with round-to-nearest from N(0, 0.02)
/// values (not the source's: the writer must use these, not requantize);
/// act_order gets a shuffled k / group g_idx.
QuantizedWeight quantize(const ModelCheckpoint &source,
                         const std::string &module, const std::string &enc,
                         uint32_t seed) {
  QuantizedWeight w;
  w.name = module;
  w.encoding = encoding(enc);
  const TensorInfo *info = source.find(module + ".weight");
  if (!info)
    throw qfuse::Error("no " + module + ".weight");
  w.n = info->shape[0];
  w.k = info->shape[1];
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 0.02f);
  std::vector<float> values(size_t(w.n * w.k));
  for (float &v : values)
    v = normal(rng);
  fmt::QuantizeOptions options;
  std::vector<int32_t> gIdx;
  if (w.encoding.actOrder) {
    std::vector<int32_t> order(size_t(w.k));
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), std::mt19937_64(seed));
    gIdx.resize(order.size());
    for (int64_t j = 0; j < w.k; ++j)
      gIdx[size_t(order[size_t(j)])] = int32_t(j / w.encoding.groupSize);
    options.gIdx = gIdx.data();
  }
  std::string error;
  if (!fmt::quantizeRTN(w.encoding, values.data(), w.n, w.k, w.weight, error,
                        options))
    throw qfuse::Error("quantizing " + module + ": " + error);
  return w;
}

std::vector<QuantizedWeight> quantizeAll(const ModelCheckpoint &source,
                                         const std::vector<std::string> &names,
                                         const std::string &enc) {
  std::vector<QuantizedWeight> out;
  uint32_t seed = 100;
  for (const std::string &name : names)
    out.push_back(quantize(source, name, enc, seed++));
  return out;
}

WeightSpec specOf(const QuantizedWeight &w) {
  WeightSpec spec;
  spec.name = w.name;
  spec.n = w.n;
  spec.k = w.k;
  spec.encoding = fmt::printEncoding(w.encoding);
  spec.encodingAttr = w.encoding;
  return spec;
}

void expectSameComponents(const fmt::TensorMap &got,
                          const fmt::TensorMap &want,
                          const std::string &what) {
  std::set<std::string> gotNames, wantNames;
  for (const auto &entry : got)
    gotNames.insert(entry.first);
  for (const auto &entry : want)
    wantNames.insert(entry.first);
  EXPECT_EQ(gotNames, wantNames) << what;
  for (const auto &[name, tensor] : want) {
    auto it = got.find(name);
    if (it == got.end())
      continue;
    EXPECT_EQ(it->second.dtype, tensor.dtype) << what << "." << name;
    EXPECT_EQ(it->second.shape, tensor.shape) << what << "." << name;
    EXPECT_TRUE(it->second.data == tensor.data) << what << "." << name;
  }
}

/// `out`'s `w`, read as qfuse-run reads it, is format::pack of `w`.
void expectWeightReadsBack(const ModelCheckpoint &out,
                           const QuantizedWeight &w) {
  fmt::TensorMap want;
  std::string error;
  ASSERT_TRUE(fmt::pack(w.encoding, w.weight, w.n, w.k, want, error)) << error;
  expectSameComponents(checkpointWeight(out, specOf(w)), want, w.name);
}

/// Every tensor of `source` but the quantized modules' `.weight` is in
/// `out` with the same dtype, shape and bytes; those are gone.
void expectOthersCopied(const ModelCheckpoint &source,
                        const ModelCheckpoint &out,
                        const std::vector<QuantizedWeight> &weights) {
  std::set<std::string> quantized;
  for (const QuantizedWeight &w : weights)
    quantized.insert(w.name + ".weight");
  size_t copied = 0;
  for (const SafetensorsFile &file : source.files())
    for (const TensorInfo &info : file.tensors()) {
      const TensorInfo *got = out.find(info.name);
      if (quantized.count(info.name)) {
        EXPECT_EQ(got, nullptr) << info.name << " still written";
        continue;
      }
      ++copied;
      ASSERT_NE(got, nullptr) << info.name << " not copied";
      EXPECT_EQ(got->dtype, info.dtype) << info.name;
      EXPECT_EQ(got->shape, info.shape) << info.name;
      TensorView a = file.view(info), b = out.view(info.name);
      ASSERT_EQ(a.size, b.size) << info.name;
      EXPECT_EQ(std::memcmp(a.data, b.data, a.size), 0) << info.name;
    }
  EXPECT_GT(copied, 0u);
}

json readJson(const std::string &path) {
  std::ifstream stream(path);
  EXPECT_TRUE(stream) << path;
  std::stringstream text;
  text << stream.rdbuf();
  return json::parse(text.str());
}

/// The source's config.json keys are all in `written`, unchanged.
void expectConfigKept(const ModelCheckpoint &source, const json &written) {
  json original = json::parse(source.config().text);
  for (const auto &[key, value] : original.items())
    EXPECT_EQ(written.at(key), value) << key;
}

//===----------------------------------------------------------------------===//
// One round trip per (format, encoding)
//===----------------------------------------------------------------------===//

/// Writes the decoder linears of tiny-llama in `enc` as `format`, reads the
/// directory back and checks weights, copied tensors and the config the
/// runtime parses. Returns config.json's quantization_config.
json roundTrip(CheckpointFormat format, const std::string &enc,
               const std::vector<std::string> &modules = decoderLinears()) {
  ModelCheckpoint source = synthetic();
  std::vector<QuantizedWeight> weights = quantizeAll(source, modules, enc);
  const std::string outDir = makeTempDir("qfuse-export") + "/out";
  writeQuantizedCheckpoint(source, weights, format, outDir);
  ModelCheckpoint out = ModelCheckpoint::open(outDir);
  for (const QuantizedWeight &w : weights)
    expectWeightReadsBack(out, w);
  expectOthersCopied(source, out, weights);
  json config = readJson(outDir + "/config.json");
  expectConfigKept(source, config);

  const fmt::Encoding e = encoding(enc);
  const CheckpointConfig &parsed = out.config();
  EXPECT_EQ(parsed.bits, int(fmt::codeBits(e)));
  EXPECT_EQ(parsed.groupSize <= 0, e.isPerChannel());
  if (!e.isPerChannel())
    EXPECT_EQ(parsed.groupSize, e.groupSize);
  EXPECT_EQ(parsed.descAct, e.actOrder);
  EXPECT_EQ(parsed.symmetric, !e.isUnsigned());
  EXPECT_EQ(parsed.quantization, format == CheckpointFormat::AutoGptq
                                     ? CheckpointQuantization::GPTQ
                                     : CheckpointQuantization::CompressedTensors);
  EXPECT_EQ(out.files()[0].metadata().at("format"), "pt");
  EXPECT_EQ(fs::exists(outDir + "/quantize_config.json"),
            format == CheckpointFormat::AutoGptq);
  if (format == CheckpointFormat::AutoGptq)
    EXPECT_EQ(readJson(outDir + "/quantize_config.json"),
              config.at("quantization_config"));
  return config.at("quantization_config");
}

/// The group_0 weights scheme of a compressed-tensors quantization_config.
json ctWeights(const json &q) {
  EXPECT_EQ(q.at("quant_method"), "compressed-tensors");
  EXPECT_EQ(q.at("config_groups").size(), 1u);
  const json &group = q.at("config_groups").at("group_0");
  EXPECT_EQ(group.at("targets"), json::array({"Linear"}));
  return group.at("weights");
}

} // namespace

TEST(QuantizedCheckpoint, FormatNames) {
  EXPECT_EQ(parseCheckpointFormat("qfuse"), CheckpointFormat::QfusePacked);
  EXPECT_EQ(parseCheckpointFormat("compressed-tensors"),
            CheckpointFormat::CompressedTensors);
  EXPECT_EQ(parseCheckpointFormat("auto-gptq"), CheckpointFormat::AutoGptq);
  for (const std::string &name : checkpointFormatNames())
    EXPECT_EQ(checkpointFormatName(parseCheckpointFormat(name)), name);
  expectError([] { parseCheckpointFormat("gptq"); },
              {"unknown checkpoint format 'gptq'", "qfuse",
               "compressed-tensors", "auto-gptq"});
}

//===----------------------------------------------------------------------===//
// compressed-tensors
//===----------------------------------------------------------------------===//

TEST(QuantizedCheckpoint, CompressedTensorsInt4Group128) {
  json q = roundTrip(CheckpointFormat::CompressedTensors, kInt4);
  EXPECT_EQ(q.at("format"), "pack-quantized");
  EXPECT_EQ(q.at("ignore"), json::array({"lm_head"}));
  json w = ctWeights(q);
  EXPECT_EQ(w.at("num_bits"), 4);
  EXPECT_EQ(w.at("type"), "int");
  EXPECT_EQ(w.at("symmetric"), true);
  EXPECT_EQ(w.at("strategy"), "group");
  EXPECT_EQ(w.at("group_size"), 128);
  EXPECT_TRUE(w.at("actorder").is_null());
}

TEST(QuantizedCheckpoint, CompressedTensorsUint4AsymmetricSomeModules) {
  // Layer 0's attention only: everything else is dense and ignored.
  const std::vector<std::string> layer0 = decoderLinears(1);
  const std::vector<std::string> modules(layer0.begin(), layer0.begin() + 4);
  json q = roundTrip(CheckpointFormat::CompressedTensors, kUint4, modules);
  json w = ctWeights(q);
  EXPECT_EQ(w.at("symmetric"), false);
  std::set<std::string> ignored = q.at("ignore").get<std::set<std::string>>();
  std::set<std::string> expected = {"lm_head"};
  for (const std::string &name : decoderLinears())
    if (std::find(modules.begin(), modules.end(), name) == modules.end())
      expected.insert(name);
  EXPECT_EQ(ignored, expected);
}

TEST(QuantizedCheckpoint, CompressedTensorsZeroPointTensor) {
  ModelCheckpoint source = synthetic();
  std::vector<QuantizedWeight> weights =
      quantizeAll(source, {"model.layers.0.self_attn.q_proj"}, kUint4);
  const std::string outDir = makeTempDir("qfuse-export") + "/out";
  writeQuantizedCheckpoint(source, weights, CheckpointFormat::CompressedTensors,
                           outDir);
  ModelCheckpoint out = ModelCheckpoint::open(outDir);
  const std::string q = "model.layers.0.self_attn.q_proj.";
  // pack-quantized: int32 words along K, zero points packed along N.
  EXPECT_EQ(out.find(q + "weight_packed")->shape,
            (std::vector<int64_t>{256, 256 * 4 / 32}));
  EXPECT_EQ(out.find(q + "weight_zero_point")->shape,
            (std::vector<int64_t>{256 * 4 / 32, 2}));
  EXPECT_EQ(out.find(q + "weight_scale")->shape,
            (std::vector<int64_t>{256, 2}));
  EXPECT_EQ(out.find(q + "weight_shape")->dtype, DType::I64);
  EXPECT_EQ(out.find(q + "weight_g_idx"), nullptr);
}

TEST(QuantizedCheckpoint, CompressedTensorsInt8PerChannel) {
  json w = ctWeights(roundTrip(CheckpointFormat::CompressedTensors, kInt8));
  EXPECT_EQ(w.at("num_bits"), 8);
  EXPECT_EQ(w.at("strategy"), "channel");
  EXPECT_TRUE(w.at("group_size").is_null());
}

TEST(QuantizedCheckpoint, CompressedTensorsActOrder) {
  json w =
      ctWeights(roundTrip(CheckpointFormat::CompressedTensors, kInt4ActOrder));
  EXPECT_EQ(w.at("actorder"), "group");
}

// Qwen2: q/k/v biases copied next to the packed weights; lm_head tied to
// the embedding (absent from the file) is still ignored by name.
TEST(QuantizedCheckpoint, CompressedTensorsTiedQwen2) {
  ModelCheckpoint source = synthetic("tiny-qwen2");
  ASSERT_FALSE(source.contains("lm_head.weight"));
  ASSERT_TRUE(source.contains("model.layers.0.self_attn.q_proj.bias"));
  std::vector<QuantizedWeight> weights =
      quantizeAll(source, decoderLinears(), kInt4);
  const std::string outDir = makeTempDir("qfuse-export") + "/out";
  writeQuantizedCheckpoint(source, weights, CheckpointFormat::CompressedTensors,
                           outDir);
  ModelCheckpoint out = ModelCheckpoint::open(outDir);
  for (const QuantizedWeight &w : weights)
    expectWeightReadsBack(out, w);
  expectOthersCopied(source, out, weights);
  EXPECT_EQ(readJson(outDir + "/config.json")
                .at("quantization_config")
                .at("ignore"),
            json::array({"lm_head"}));
}

// NVFP4 goes to "nvfp4-pack-quantized" (format::toNVFP4). The runtime's
// config parser reads only pack-quantized, so the tensors are read back
// through format::fromNVFP4 directly.
TEST(QuantizedCheckpoint, CompressedTensorsNvfp4) {
  ModelCheckpoint source = synthetic();
  std::vector<QuantizedWeight> weights =
      quantizeAll(source, decoderLinears(1), "nvfp4");
  const std::string outDir = makeTempDir("qfuse-export") + "/out";
  writeQuantizedCheckpoint(source, weights, CheckpointFormat::CompressedTensors,
                           outDir);
  json q = readJson(outDir + "/config.json").at("quantization_config");
  EXPECT_EQ(q.at("format"), "nvfp4-pack-quantized");
  json w = ctWeights(q);
  EXPECT_EQ(w.at("type"), "float");
  EXPECT_EQ(w.at("num_bits"), 4);
  EXPECT_EQ(w.at("group_size"), 16);
  EXPECT_EQ(w.at("strategy"), "tensor_group");

  SafetensorsFile file = SafetensorsFile::open(outDir + "/model.safetensors");
  auto view = [&](const std::string &name) {
    TensorView v = file.view(name);
    fmt::TensorView out;
    for (fmt::DType type : {fmt::DType::U8, fmt::DType::F8E4M3,
                            fmt::DType::F32})
      if (safetensorsName(v.info->dtype) == fmt::dtypeName(type))
        out.dtype = type;
    EXPECT_EQ(fmt::dtypeName(out.dtype), safetensorsName(v.info->dtype))
        << name;
    out.shape = v.info->shape;
    out.data = v.data;
    out.numBytes = v.size;
    return out;
  };
  for (const QuantizedWeight &qw : weights) {
    fmt::NVFP4Tensors tensors{view(qw.name + ".weight_packed"),
                              view(qw.name + ".weight_scale"),
                              view(qw.name + ".weight_global_scale")};
    fmt::PackedWeight got;
    std::string error;
    ASSERT_TRUE(fmt::fromNVFP4(tensors, qw.n, qw.k, got, error)) << error;
    EXPECT_EQ(got.encoding, qw.encoding);
    fmt::TensorMap want;
    ASSERT_TRUE(fmt::pack(qw.encoding, qw.weight, qw.n, qw.k, want, error))
        << error;
    expectSameComponents(got.components, want, qw.name);
  }
}

TEST(QuantizedCheckpoint, CompressedTensorsRefusesOtherEncodings) {
  ModelCheckpoint source = synthetic();
  for (const char *enc :
       {"nf4", "fp8", "mxfp4", "uint4, group = 128, scale = f16, zero = float",
        "2:4+int4"}) {
    std::vector<QuantizedWeight> weights =
        quantizeAll(source, {"model.layers.0.mlp.up_proj"}, enc);
    const std::string outDir = makeTempDir("qfuse-export") + "/out";
    expectError(
        [&] {
          writeQuantizedCheckpoint(source, weights,
                                   CheckpointFormat::CompressedTensors, outDir);
        },
        {"compressed-tensors cannot store encoding",
         "\"" + fmt::printEncoding(encoding(enc)) + "\""});
    EXPECT_FALSE(fs::exists(outDir)) << enc << ": wrote before failing";
  }
}

//===----------------------------------------------------------------------===//
// AutoGPTQ
//===----------------------------------------------------------------------===//

TEST(QuantizedCheckpoint, AutoGptqInt4Group128) {
  json q = roundTrip(CheckpointFormat::AutoGptq, kInt4);
  EXPECT_EQ(q.at("quant_method"), "gptq");
  EXPECT_EQ(q.at("checkpoint_format"), "gptq");
  EXPECT_EQ(q.at("bits"), 4);
  EXPECT_EQ(q.at("group_size"), 128);
  EXPECT_EQ(q.at("sym"), true);
  EXPECT_EQ(q.at("desc_act"), false);
  EXPECT_EQ(q.at("lm_head"), false);
}

TEST(QuantizedCheckpoint, AutoGptqUint4Asymmetric) {
  json q = roundTrip(CheckpointFormat::AutoGptq, kUint4);
  EXPECT_EQ(q.at("sym"), false);
}

TEST(QuantizedCheckpoint, AutoGptqInt8PerChannel) {
  json q = roundTrip(CheckpointFormat::AutoGptq, kInt8);
  EXPECT_EQ(q.at("bits"), 8);
  EXPECT_EQ(q.at("group_size"), -1);
}

TEST(QuantizedCheckpoint, AutoGptqActOrder) {
  json q = roundTrip(CheckpointFormat::AutoGptq, kInt4ActOrder);
  EXPECT_EQ(q.at("desc_act"), true);
}

TEST(QuantizedCheckpoint, AutoGptqQuantizedLmHead) {
  std::vector<std::string> modules = decoderLinears();
  modules.push_back("lm_head");
  json q = roundTrip(CheckpointFormat::AutoGptq, kInt4, modules);
  EXPECT_EQ(q.at("lm_head"), true);
}

TEST(QuantizedCheckpoint, AutoGptqRefusesOtherEncodings) {
  ModelCheckpoint source = synthetic();
  for (const char *enc :
       {"nvfp4", "nf4", "fp8", "mxfp4",
        "uint4, group = 128, scale = f16, zero = float"}) {
    std::vector<QuantizedWeight> weights =
        quantizeAll(source, {"model.layers.0.mlp.up_proj"}, enc);
    const std::string outDir = makeTempDir("qfuse-export") + "/out";
    expectError(
        [&] {
          writeQuantizedCheckpoint(source, weights, CheckpointFormat::AutoGptq,
                                   outDir);
        },
        {"auto-gptq (GPTQ v1) cannot store encoding",
         "\"" + fmt::printEncoding(encoding(enc)) + "\""});
    EXPECT_FALSE(fs::exists(outDir)) << enc << ": wrote before failing";
  }
  // Data GPTQ v1 cannot hold: a zero point of 0 (stored as z - 1).
  QuantizedWeight w =
      quantize(source, "model.layers.0.mlp.up_proj", kUint4, 1);
  w.weight.zeros[0] = 0.0f;
  const std::string outDir = makeTempDir("qfuse-export") + "/out";
  expectError(
      [&] {
        writeQuantizedCheckpoint(source, {w}, CheckpointFormat::AutoGptq,
                                 outDir);
      },
      {"writing auto-gptq", "'model.layers.0.mlp.up_proj'",
       "cannot hold the zero point 0"});
  EXPECT_FALSE(fs::exists(outDir));
}

//===----------------------------------------------------------------------===//
// Checks shared by compressed-tensors and AutoGPTQ
//===----------------------------------------------------------------------===//

TEST(QuantizedCheckpoint, ConvertedFormatsCheckTheInputs) {
  ModelCheckpoint source = synthetic();
  const std::string outDir = makeTempDir("qfuse-export") + "/out";
  const std::string q = "model.layers.0.self_attn.q_proj";
  const std::string k = "model.layers.0.self_attn.k_proj";
  for (CheckpointFormat format :
       {CheckpointFormat::CompressedTensors, CheckpointFormat::AutoGptq}) {
    // One scheme per config.
    std::vector<QuantizedWeight> mixed = {quantize(source, q, kInt4, 1),
                                          quantize(source, k, kUint4, 2)};
    expectError(
        [&] { writeQuantizedCheckpoint(source, mixed, format, outDir); },
        {"'" + k + "' is \"" + std::string(kUint4) + "\"",
         "'" + q + "' is \"" + std::string(kInt4) + "\"", "one scheme"});
    // A module the source does not have, or has in another shape.
    QuantizedWeight stranger = quantize(source, q, kInt4, 1);
    stranger.name = "model.layers.9.self_attn.q_proj";
    expectError(
        [&] { writeQuantizedCheckpoint(source, {stranger}, format, outDir); },
        {"'model.layers.9.self_attn.q_proj.weight'", "to replace"});
    QuantizedWeight wrongShape = quantize(source, k, kInt4, 1);
    wrongShape.name = q;
    expectError(
        [&] {
          writeQuantizedCheckpoint(source, {wrongShape}, format, outDir);
        },
        {"'" + q + "' is [128, 256]", "is [256, 256]"});
    // Given twice.
    expectError(
        [&] {
          writeQuantizedCheckpoint(source,
                                   {quantize(source, q, kInt4, 1),
                                    quantize(source, q, kInt4, 2)},
                                   format, outDir);
        },
        {"'" + q + "' is given twice"});
  }
  EXPECT_FALSE(fs::exists(outDir));

  // A quantized source: exported from, never re-exported.
  writeQuantizedCheckpoint(source, {quantize(source, q, kInt4, 1)},
                           CheckpointFormat::AutoGptq, outDir);
  ModelCheckpoint gptq = ModelCheckpoint::open(outDir);
  expectError(
      [&] {
        writeQuantizedCheckpoint(gptq, {quantize(source, k, kInt4, 1)},
                                 CheckpointFormat::CompressedTensors,
                                 makeTempDir("qfuse-export") + "/again");
      },
      {"is already quantized (AutoGPTQ)"});
}

//===----------------------------------------------------------------------===//
// qfuse-packed
//===----------------------------------------------------------------------===//

namespace {

/// An artifact over every tensor of `source`: 2-D `.weight`s but the
/// embedding as weights in `encodingOf(module)`, the rest as f16 tensors.
Artifact artifactFor(const ModelCheckpoint &source,
                     const std::function<std::string(const std::string &)>
                         &encodingOf) {
  json weights = json::array(), tensors = json::array();
  for (const SafetensorsFile &file : source.files())
    for (const TensorInfo &info : file.tensors()) {
      const std::string module =
          info.name.substr(0, info.name.size() - std::strlen(".weight"));
      if (info.shape.size() == 2 && info.name != "model.embed_tokens.weight")
        weights.push_back({{"name", module},
                           {"shape", info.shape},
                           {"encoding", encodingOf(module)},
                           {"layout", "row_major"}});
      else
        tensors.push_back(
            {{"name", info.name}, {"shape", info.shape}, {"dtype", "f16"}});
    }
  const CheckpointConfig &config = source.config();
  json a = {
      {"format", "qfuse-artifact"},
      {"version", kArtifactVersion},
      {"target", {{"chip", "sm_90"}}},
      {"kernels", json::array()},
      {"weights", weights},
      {"tensors", tensors},
      {"buffers",
       {{{"name", "h"}, {"shape", {"M", config.hiddenSize}}, {"dtype", "f16"}}}},
      {"inputs", json::array()},
      {"outputs", {"h"}},
      {"plans", {{{"batch", 1}, {"steps", {{{"memset", "h"}}}}}}},
      {"model",
       {{"vocab_size", config.vocabSize},
        {"hidden_size", config.hiddenSize},
        {"max_seq", 64}}}};
  return Artifact::parse(a.dump(), "tiny.qfa");
}

} // namespace

// Weights GPTQ produced are written as given; the others (lm_head, and
// modules left alone) are what checkpointWeight makes from the source, as
// writePackedCheckpoint writes them.
TEST(QuantizedCheckpoint, QfusePackedMixesGivenAndRoundToNearest) {
  ModelCheckpoint source = synthetic();
  const std::string q = "model.layers.0.self_attn.q_proj";
  Artifact artifact = artifactFor(source, [&](const std::string &module) {
    if (module == "lm_head")
      return std::string("f16");
    return std::string(module == q ? kInt4ActOrder : kInt4);
  });
  std::vector<QuantizedWeight> weights = {quantize(source, q, kInt4ActOrder, 1)};
  for (const std::string &name : decoderLinears(1))
    if (name != q)
      weights.push_back(quantize(source, name, kInt4, 7));
  const std::string outDir = makeTempDir("qfuse-export") + "/out";
  writeQuantizedCheckpoint(source, weights, CheckpointFormat::QfusePacked,
                           outDir, &artifact);
  ModelCheckpoint out = ModelCheckpoint::open(outDir);
  EXPECT_EQ(out.config().text, source.config().text);

  std::set<std::string> given;
  for (const QuantizedWeight &w : weights) {
    given.insert(w.name);
    expectWeightReadsBack(out, w);
  }
  EXPECT_TRUE(out.contains(q + ".g_idx"));
  for (const WeightSpec &spec : artifact.weights) {
    EXPECT_FALSE(out.contains(spec.name + ".weight")) << spec.name;
    EXPECT_EQ(out.files()[0].metadata().at("qfuse.encoding." + spec.name),
              spec.encoding);
    if (!given.count(spec.name))
      expectSameComponents(checkpointWeight(out, spec),
                           checkpointWeight(source, spec), spec.name);
  }
  for (const TensorSpec &tensor : artifact.tensors)
    EXPECT_EQ(checkpointTensor(out, tensor), checkpointTensor(source, tensor))
        << tensor.name;

  // With no weights given: the same file as writePackedCheckpoint's.
  const std::string rtnDir = makeTempDir("qfuse-export") + "/rtn", oldDir = makeTempDir("qfuse-export") + "/old";
  writeQuantizedCheckpoint(source, {}, CheckpointFormat::QfusePacked, rtnDir,
                           &artifact);
  writePackedCheckpoint(artifact, source, oldDir);
  SafetensorsFile a = SafetensorsFile::open(rtnDir + "/model.safetensors");
  SafetensorsFile b = SafetensorsFile::open(oldDir + "/model.safetensors");
  ASSERT_EQ(a.tensors().size(), b.tensors().size());
  for (const TensorInfo &info : a.tensors()) {
    TensorView x = a.view(info), y = b.view(info.name);
    ASSERT_EQ(x.size, y.size) << info.name;
    EXPECT_EQ(std::memcmp(x.data, y.data, x.size), 0) << info.name;
  }
  EXPECT_EQ(a.metadata(), b.metadata());
}

TEST(QuantizedCheckpoint, QfusePackedRefusesWhatTheArtifactDoesNotBind) {
  ModelCheckpoint source = synthetic();
  const std::string q = "model.layers.0.self_attn.q_proj";
  Artifact artifact = artifactFor(
      source, [](const std::string &) { return std::string(kInt4); });
  const std::string outDir = makeTempDir("qfuse-export") + "/out";
  expectError(
      [&] {
        writeQuantizedCheckpoint(source, {quantize(source, q, kUint4, 1)},
                                 CheckpointFormat::QfusePacked, outDir,
                                 &artifact);
      },
      {"'" + q + "' is \"" + std::string(kUint4) + "\"",
       "artifact 'tiny.qfa' wants \"" + std::string(kInt4) + "\""});
  QuantizedWeight stranger = quantize(source, q, kInt4, 1);
  stranger.name = "model.layers.9.self_attn.q_proj";
  expectError(
      [&] {
        writeQuantizedCheckpoint(source, {stranger},
                                 CheckpointFormat::QfusePacked, outDir,
                                 &artifact);
      },
      {"'model.layers.9.self_attn.q_proj' is not a weight of artifact "
       "'tiny.qfa'"});
  expectError(
      [&] {
        writeQuantizedCheckpoint(source, {}, CheckpointFormat::QfusePacked,
                                 outDir, /*artifact=*/nullptr);
      },
      {"qfuse-packed", "needs the artifact"});
  EXPECT_FALSE(fs::exists(outDir));
}

namespace {

/// On layer 0, encodings whose components a TensorMap orders otherwise than
/// Packing.h lists them (act_order's g_idx, zero points, a global scale,
/// 2:4's meta); int4 elsewhere; lm_head in f16.
std::string mixedEncoding(const std::string &module) {
  if (module == "lm_head")
    return "f16";
  if (module.rfind("model.layers.0.", 0) != 0)
    return kInt4;
  if (module.find("q_proj") != std::string::npos)
    return "uint4, group = 128, scale = f16, zero = int, act_order";
  if (module.find("k_proj") != std::string::npos)
    return "fp4e2m1, group = 16, scale = f8E4M3FN, global_scale";
  if (module.find("v_proj") != std::string::npos)
    return "int4, group = 128, scale = f16, sparse = 2:4";
  if (module.find("up_proj") != std::string::npos)
    return "nf4, group = 64, scale = f32";
  return kInt4;
}

/// The decoder linears of `source` quantized in mixedEncoding, every other
/// one packed already (as BackgroundPacker or a resumed run hands them).
std::vector<QuantizedWeight> mixedModules(const ModelCheckpoint &source) {
  std::vector<QuantizedWeight> out;
  uint32_t seed = 40;
  for (const std::string &name : decoderLinears()) {
    QuantizedWeight w = quantize(source, name, mixedEncoding(name), seed++);
    if (seed % 2) {
      auto packed = std::make_shared<fmt::TensorMap>();
      std::string error;
      if (!fmt::pack(w.encoding, w.weight, w.n, w.k, *packed, error))
        throw qfuse::Error(name + ": " + error);
      w.packed = std::move(packed);
    }
    out.push_back(std::move(w));
  }
  return out;
}

} // namespace

// The file is the one the writer built in memory before it streamed: each
// artifact weight's components, in TensorMap order, in artifact order, then
// the tensors, the encodings in the metadata. Built here that way with
// SafetensorsWriter from the same components.
TEST(QuantizedCheckpoint, QfusePackedHoldsTheInMemoryLayout) {
  ModelCheckpoint source = synthetic();
  Artifact artifact = artifactFor(source, mixedEncoding);
  std::vector<QuantizedWeight> given = mixedModules(source);
  given.resize(given.size() - 3); // the last modules from the source
  const std::string outDir = makeTempDir("qfuse-export") + "/out";
  writeQuantizedCheckpoint(source, given, CheckpointFormat::QfusePacked,
                           outDir, &artifact);

  std::map<std::string, fmt::TensorMap> components;
  for (const QuantizedWeight &w : given) {
    std::string error;
    ASSERT_TRUE(fmt::pack(w.encoding, w.weight, w.n, w.k, components[w.name],
                          error))
        << error;
  }
  SafetensorsWriter expected;
  expected.setMetadata("format", "pt");
  expected.setMetadata("qfuse.packed", "row_major components of tiny.qfa");
  for (const WeightSpec &spec : artifact.weights) {
    if (!components.count(spec.name))
      components[spec.name] = checkpointWeight(source, spec);
    addFormatTensors(expected, spec.name + ".", components[spec.name]);
    expected.setMetadata("qfuse.encoding." + spec.name, spec.encoding);
  }
  for (const TensorSpec &tensor : artifact.tensors) {
    std::vector<uint8_t> bytes = checkpointTensor(source, tensor);
    expected.add(tensor.name, tensor.dtype, tensor.shape, std::move(bytes));
  }
  const std::vector<uint8_t> want = expected.serialize();
  const std::map<std::string, std::string> files = filesOf(outDir);
  ASSERT_EQ(files.size(), 2u);
  EXPECT_TRUE(files.at("model.safetensors") ==
              std::string(want.begin(), want.end()));
  EXPECT_EQ(files.at("config.json"), source.config().text);
}

// qfuse-quantize's stream: modules handed over in any order as the packer
// finishes them, the rest written from the source meanwhile; the directory
// is the one-shot writer's, byte for byte.
TEST(QuantizedCheckpoint, QfusePackedStreamedIsTheOneShotDirectory) {
  ModelCheckpoint source = synthetic();
  Artifact artifact = artifactFor(source, mixedEncoding);
  std::vector<QuantizedWeight> modules = mixedModules(source);
  const std::string oneShot = makeTempDir("qfuse-export") + "/out";
  writeQuantizedCheckpoint(source, modules, CheckpointFormat::QfusePacked,
                           oneShot, &artifact);

  std::set<std::string> solved;
  for (const QuantizedWeight &w : modules)
    solved.insert(w.name);
  std::shuffle(modules.begin(), modules.end(), std::mt19937(5));
  const std::string streamed = makeTempDir("qfuse-export") + "/out";
  BackgroundPacker packer(3);
  PackedCheckpointStream out(source, artifact, streamed, /*overwrite=*/false,
                             solved, packer);
  for (QuantizedWeight &w : modules) {
    const std::string name = w.name;
    out.add(name, packer.add(std::move(w)));
  }
  out.wait();
  out.commit();
  EXPECT_EQ(filesOf(streamed), filesOf(oneShot));
}

TEST(QuantizedCheckpoint, QfusePackedStreamNamesWhatIsWrongOrMissing) {
  ModelCheckpoint source = synthetic();
  Artifact artifact = artifactFor(source, mixedEncoding);
  std::vector<QuantizedWeight> modules = mixedModules(source);
  std::set<std::string> solved;
  for (const QuantizedWeight &w : modules)
    solved.insert(w.name);
  const std::string outDir = makeTempDir("qfuse-export") + "/out";
  {
    // A module never handed over: commit names each of its tensors.
    BackgroundPacker packer(2);
    PackedCheckpointStream out(source, artifact, outDir, false, solved, packer);
    const std::string missing = modules.back().name;
    modules.pop_back();
    for (const QuantizedWeight &w : modules)
      out.add(w.name, packer.add(w));
    out.wait();
    expectError([&] { out.commit(); },
                {"2 of ", "tensors were never written: '" + missing +
                              ".codes', '" + missing + ".scales'"});
    EXPECT_FALSE(fs::exists(outDir + "/model.safetensors"));
  }
  EXPECT_TRUE(filesOf(outDir).empty()) << "the temporary was left behind";
  {
    // Modules the artifact does not have, or in another encoding.
    BackgroundPacker packer(2);
    PackedCheckpointStream out(source, artifact, outDir, false, solved, packer);
    QuantizedWeight stranger = modules.front();
    stranger.name = "model.layers.9.self_attn.q_proj";
    out.add(stranger.name, packer.add(stranger));
    expectError([&] { out.wait(); },
                {"'model.layers.9.self_attn.q_proj' is not a weight of "
                 "artifact 'tiny.qfa'"});
  }
  {
    BackgroundPacker packer(2);
    PackedCheckpointStream out(source, artifact, outDir, false, solved, packer);
    const std::string o = "model.layers.0.self_attn.o_proj";
    out.add(o, packer.add(quantize(source, o, kUint4, 3)));
    expectError([&] { out.wait(); },
                {"quantized weight '" + o + "'", "unexpected component 'zeros'"});
  }
  EXPECT_TRUE(filesOf(outDir).empty());
}

//===----------------------------------------------------------------------===//
// The output directory
//===----------------------------------------------------------------------===//

TEST(QuantizedCheckpoint, RefusesToOverwrite) {
  ModelCheckpoint source = synthetic();
  const std::string q = "model.layers.0.self_attn.q_proj";
  const std::string outDir = makeTempDir("qfuse-export") + "/out";
  writeQuantizedCheckpoint(source, {quantize(source, q, kInt4, 1)},
                           CheckpointFormat::CompressedTensors, outDir);
  expectError(
      [&] {
        writeQuantizedCheckpoint(source, {quantize(source, q, kUint4, 2)},
                                 CheckpointFormat::AutoGptq, outDir);
      },
      {"'" + outDir + "/model.safetensors' exists", "refusing to overwrite"});
  // The same check, before any quantizing.
  expectError([&] { checkOutputDir(source, outDir, /*overwrite=*/false); },
              {"refusing to overwrite"});
  checkOutputDir(source, outDir, /*overwrite=*/true);
  // The first checkpoint is untouched.
  EXPECT_EQ(ModelCheckpoint::open(outDir).config().quantization,
            CheckpointQuantization::CompressedTensors);

  QuantizedWeight second = quantize(source, q, kUint4, 2);
  writeQuantizedCheckpoint(source, {second}, CheckpointFormat::AutoGptq,
                           outDir, nullptr, /*overwrite=*/true);
  ModelCheckpoint out = ModelCheckpoint::open(outDir);
  EXPECT_EQ(out.config().quantization, CheckpointQuantization::GPTQ);
  expectWeightReadsBack(out, second);
  EXPECT_FALSE(fs::exists(outDir + "/model.safetensors.partial"));

  // An index would shadow the file written.
  std::ofstream(outDir + "/model.safetensors.index.json") << "{}";
  expectError(
      [&] {
        writeQuantizedCheckpoint(source, {second}, CheckpointFormat::AutoGptq,
                                 outDir, nullptr, /*overwrite=*/true);
      },
      {"model.safetensors.index.json' exists"});
  // Never into the source.
  expectError(
      [&] {
        writeQuantizedCheckpoint(source, {second}, CheckpointFormat::AutoGptq,
                                 source.dir(), nullptr, /*overwrite=*/true);
      },
      {"is the source checkpoint's directory"});
}
