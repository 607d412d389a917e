//===- SyntheticModel.cpp - Small random models in the real format --------===//

#include "qfuse/reference/SyntheticModel.h"

#include "qfuse/format/Numerics.h"
#include "qfuse/runtime/AtomicFile.h"
#include "qfuse/runtime/Error.h"
#include "qfuse/runtime/checkpoint/Safetensors.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <random>

namespace qfuse::reference {
namespace {

namespace fs = std::filesystem;

/// N(0, sigma^2) draws, Box-Muller over mt19937_64 (std::normal_distribution
/// is implementation-defined, so its numbers differ between libraries).
class Normal {
public:
  explicit Normal(uint64_t seed) : rng_(seed) {}

  double next() {
    if (hasSpare_) {
      hasSpare_ = false;
      return spare_;
    }
    // u1 in (0, 1]: 53 random bits, never 0, so log(u1) is finite.
    double u1 = (double(rng_() >> 11) + 1.0) * 0x1.0p-53;
    double u2 = double(rng_() >> 11) * 0x1.0p-53;
    double r = std::sqrt(-2.0 * std::log(u1));
    double angle = 2.0 * std::acos(-1.0) * u2;
    spare_ = r * std::sin(angle);
    hasSpare_ = true;
    return r * std::cos(angle);
  }

private:
  std::mt19937_64 rng_;
  double spare_ = 0;
  bool hasSpare_ = false;
};

/// `count` values mean + sigma * N(0, 1), rounded to the storage type.
std::vector<float> draw(Normal &normal, int64_t count, double mean,
                        double sigma, StorageType dtype) {
  std::vector<float> values(static_cast<size_t>(count));
  for (float &v : values) {
    float x = float(mean + sigma * normal.next());
    v = dtype == StorageType::F16
            ? format::halfToFloat(format::floatToHalf(x))
            : format::bfloat16ToFloat(format::floatToBFloat16(x));
  }
  return values;
}

LinearWeights drawLinear(Normal &normal, const ModelConfig &config,
                         Projection p, StorageType dtype) {
  LinearWeights w;
  w.n = config.outFeatures(p);
  w.k = config.inFeatures(p);
  w.weight = draw(normal, w.n * w.k, 0.0, 1.0 / std::sqrt(double(w.k)), dtype);
  if (config.hasBias(p))
    w.bias = draw(normal, w.n, 0.0, 0.1, dtype);
  return w;
}

void addTensor(runtime::SafetensorsWriter &writer, const std::string &name,
               std::vector<int64_t> shape, const std::vector<float> &values,
               StorageType dtype) {
  std::vector<uint8_t> bytes(values.size() * 2);
  for (size_t i = 0; i < values.size(); ++i) {
    uint16_t bits = dtype == StorageType::F16
                        ? format::floatToHalf(values[i])
                        : format::floatToBFloat16(values[i]);
    bytes[2 * i] = uint8_t(bits);
    bytes[2 * i + 1] = uint8_t(bits >> 8);
  }
  writer.add(name,
             dtype == StorageType::F16 ? runtime::DType::F16
                                       : runtime::DType::BF16,
             std::move(shape), bytes.data(), bytes.size());
}

constexpr Projection kLayerProjections[] = {
    Projection::Q,    Projection::K,  Projection::V,   Projection::O,
    Projection::Gate, Projection::Up, Projection::Down};

} // namespace

ModelConfig syntheticPreset(std::string_view name) {
  ModelConfig c;
  c.source = "preset " + std::string(name);
  c.hiddenSize = 256;
  c.intermediateSize = 512;
  c.numAttentionHeads = 4;
  c.numKeyValueHeads = 2;
  c.headDim = 64;
  c.numHiddenLayers = 2;
  c.vocabSize = 1024;
  c.maxPositionEmbeddings = 2048;
  if (name == "tiny-llama") {
    c.architecture = Architecture::Llama;
    c.rmsNormEps = 1e-5;
    c.ropeTheta = 500000.0;
    // Llama 3.1's scaling, with a short original context so that the
    // tiny head_dim has frequencies in all three bands.
    c.ropeScaling = Llama3RopeScaling{8.0, 1.0, 4.0, 256.0};
    return c;
  }
  if (name == "tiny-qwen2") {
    c.architecture = Architecture::Qwen2;
    c.rmsNormEps = 1e-6;
    c.ropeTheta = 1000000.0;
    c.tieWordEmbeddings = true;
    return c;
  }
  std::string names;
  for (const std::string &preset : syntheticPresetNames())
    names += (names.empty() ? "" : ", ") + preset;
  throw Error("unknown synthetic model preset '" + std::string(name) +
              "'; expected one of " + names);
}

std::vector<std::string> syntheticPresetNames() {
  return {"tiny-llama", "tiny-qwen2"};
}

ModelWeights syntheticWeights(const ModelConfig &config,
                              const SyntheticOptions &options) {
  Normal normal(options.seed);
  StorageType dt = options.dtype;
  int64_t h = config.hiddenSize;
  ModelWeights m;
  // Drawn in file order, so the stream of numbers is easy to follow.
  m.embedTokens = draw(normal, config.vocabSize * h, 0.0, 1.0, dt);
  for (int64_t i = 0; i < config.numHiddenLayers; ++i) {
    LayerWeights layer;
    layer.inputLayernorm = draw(normal, h, 1.0, 0.1, dt);
    for (Projection p : kLayerProjections)
      layer.projection(p) = drawLinear(normal, config, p, dt);
    layer.postAttentionLayernorm = draw(normal, h, 1.0, 0.1, dt);
    m.layers.push_back(std::move(layer));
  }
  m.norm = draw(normal, h, 1.0, 0.1, dt);
  if (config.tieWordEmbeddings) {
    m.lmHead.n = config.vocabSize;
    m.lmHead.k = h;
    m.lmHead.weight = m.embedTokens;
  } else {
    m.lmHead = drawLinear(normal, config, Projection::LmHead, dt);
  }
  return m;
}

ModelWeights writeSyntheticModel(const ModelConfig &config,
                                 const std::string &dir,
                                 const SyntheticOptions &options) {
  ModelWeights m = syntheticWeights(config, options);
  StorageType dt = options.dtype;
  int64_t h = config.hiddenSize;

  runtime::SafetensorsWriter writer;
  writer.setMetadata("format", "pt");
  addTensor(writer, "model.embed_tokens.weight", {config.vocabSize, h},
            m.embedTokens, dt);
  auto addLinear = [&](const std::string &name, const LinearWeights &w) {
    addTensor(writer, name + ".weight", {w.n, w.k}, w.weight, dt);
    if (!w.bias.empty())
      addTensor(writer, name + ".bias", {w.n}, w.bias, dt);
  };
  for (int64_t i = 0; i < config.numHiddenLayers; ++i) {
    const LayerWeights &layer = m.layers[size_t(i)];
    std::string prefix = "model.layers." + std::to_string(i);
    addTensor(writer, prefix + ".input_layernorm.weight", {h},
              layer.inputLayernorm, dt);
    for (Projection p : kLayerProjections)
      addLinear(projectionTensorName(i, p), layer.projection(p));
    addTensor(writer, prefix + ".post_attention_layernorm.weight", {h},
              layer.postAttentionLayernorm, dt);
  }
  addTensor(writer, "model.norm.weight", {h}, m.norm, dt);
  if (!config.tieWordEmbeddings)
    addLinear("lm_head", m.lmHead);

  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    throw Error(dir + ": cannot create the model directory: " + ec.message());
  writer.write((fs::path(dir) / "model.safetensors").string());

  // config.json as Hugging Face writes it, with the checkpoint's dtype.
  nlohmann::json j = nlohmann::json::parse(config.toJson());
  j["torch_dtype"] = dt == StorageType::F16 ? "float16" : "bfloat16";
  writeFileAtomically((fs::path(dir) / "config.json").string(),
                      j.dump(2) + "\n");
  return m;
}

} // namespace qfuse::reference
