//===- DecoderTest.cpp - The reference decoder, checked independently -----===//
//
// (c) a one-layer model against a second implementation written here, over
//     whole-sequence matrices with a causal mask;
// (d) the KV cache: step-by-step logits equal a recomputation of the whole
//     sequence without it;
// (e) RTN-encoded weights: bounded distance from the fp16 decode, and
//     determinism.
//
//===----------------------------------------------------------------------===//

#include "qfuse/reference/ReferenceDecoder.h"

#include "qfuse/format/Numerics.h"
#include "qfuse/reference/Ops.h"
#include "qfuse/reference/SyntheticModel.h"
#include "qfuse/reference/WeightEncoding.h"
#include "qfuse/runtime/Error.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <random>

namespace qfuse::reference {
namespace {

using Matrix = std::vector<std::vector<double>>; // [rows][cols]

//===----------------------------------------------------------------------===//
// (c) An independent one-layer implementation
//===----------------------------------------------------------------------===//

double toF16(double v) { return format::halfToFloat(format::doubleToHalf(v)); }

/// Every row of X times W^T (+ b): X [T][k], W [n][k] as stored.
Matrix project(const Matrix &x, const LinearWeights &w, bool f16) {
  Matrix y(x.size(), std::vector<double>(size_t(w.n)));
  for (size_t t = 0; t < x.size(); ++t)
    for (int64_t n = 0; n < w.n; ++n) {
      double s = 0;
      for (int64_t k = 0; k < w.k; ++k)
        s += x[t][size_t(k)] * w.weight[size_t(n * w.k + k)];
      if (!w.bias.empty())
        s += w.bias[size_t(n)];
      y[t][size_t(n)] = f16 ? toF16(s) : s;
    }
  return y;
}

Matrix norm(const Matrix &x, const std::vector<float> &g, double eps,
            bool f16) {
  Matrix y = x;
  for (auto &row : y) {
    double ms = 0;
    for (double v : row)
      ms += v * v / double(row.size());
    for (size_t i = 0; i < row.size(); ++i) {
      row[i] = row[i] / std::sqrt(ms + eps) * g[i];
      if (f16)
        row[i] = toF16(row[i]);
    }
  }
  return y;
}

/// The rotary frequency of pair i, with Llama 3's three bands spelled out.
double frequency(const ModelConfig &c, int64_t i) {
  double f =
      std::exp(-double(2 * i) / double(c.headDim) * std::log(c.ropeTheta));
  if (!c.ropeScaling)
    return f;
  const Llama3RopeScaling &s = *c.ropeScaling;
  double wavelength = 2 * M_PI / f;
  if (wavelength < s.originalMaxPositionEmbeddings / s.highFreqFactor)
    return f; // high frequencies: unchanged
  if (wavelength > s.originalMaxPositionEmbeddings / s.lowFreqFactor)
    return f / s.factor; // low frequencies: interpolated by the factor
  double t = (s.originalMaxPositionEmbeddings / wavelength - s.lowFreqFactor) /
             (s.highFreqFactor - s.lowFreqFactor);
  return t * f + (1 - t) * f / s.factor;
}

/// Rotates every head of every row: pair (i, i + d/2) by angle t * f_i.
void rotate(Matrix &x, const ModelConfig &c, bool f16) {
  int64_t d = c.headDim;
  for (size_t t = 0; t < x.size(); ++t)
    for (int64_t head = 0; head < int64_t(x[t].size()) / d; ++head)
      for (int64_t i = 0; i < d / 2; ++i) {
        double angle = double(t) * frequency(c, i);
        double &lo = x[t][size_t(head * d + i)];
        double &hi = x[t][size_t(head * d + i + d / 2)];
        double newLo = lo * std::cos(angle) - hi * std::sin(angle);
        double newHi = lo * std::sin(angle) + hi * std::cos(angle);
        lo = f16 ? toF16(newLo) : newLo;
        hi = f16 ? toF16(newHi) : newHi;
      }
}

/// Masked attention over the whole sequence.
Matrix attend(const Matrix &q, const Matrix &k, const Matrix &v,
              const ModelConfig &c, bool f16) {
  int64_t d = c.headDim, T = int64_t(q.size());
  int64_t perKv = c.numAttentionHeads / c.numKeyValueHeads;
  Matrix out(q.size(), std::vector<double>(size_t(c.qWidth()), 0.0));
  for (int64_t head = 0; head < c.numAttentionHeads; ++head) {
    int64_t kvHead = head / perKv;
    for (int64_t t = 0; t < T; ++t) {
      std::vector<double> score(static_cast<size_t>(T));
      double best = -std::numeric_limits<double>::infinity();
      for (int64_t u = 0; u < T; ++u) {
        double dot = 0;
        for (int64_t i = 0; i < d; ++i)
          dot += q[t][size_t(head * d + i)] * k[u][size_t(kvHead * d + i)];
        score[size_t(u)] = u <= t ? dot / std::sqrt(double(d))
                                  : -std::numeric_limits<double>::infinity();
        best = std::max(best, score[size_t(u)]);
      }
      double total = 0;
      for (double &s : score)
        total += (s = std::exp(s - best));
      for (int64_t i = 0; i < d; ++i) {
        double acc = 0;
        for (int64_t u = 0; u < T; ++u)
          acc += score[size_t(u)] / total * v[u][size_t(kvHead * d + i)];
        out[t][size_t(head * d + i)] = f16 ? toF16(acc) : acc;
      }
    }
  }
  return out;
}

void addTo(Matrix &h, const Matrix &x, bool f16) {
  for (size_t t = 0; t < h.size(); ++t)
    for (size_t i = 0; i < h[t].size(); ++i)
      h[t][i] = f16 ? toF16(h[t][i] + x[t][i]) : h[t][i] + x[t][i];
}

Matrix expectedLogits(const ModelConfig &c, const ModelWeights &w,
                      const std::vector<int32_t> &ids, bool f16) {
  Matrix h;
  for (int32_t id : ids) {
    std::vector<double> row(size_t(c.hiddenSize));
    for (int64_t i = 0; i < c.hiddenSize; ++i)
      row[size_t(i)] = w.embedTokens[size_t(id * c.hiddenSize + i)];
    h.push_back(row);
  }
  for (const LayerWeights &layer : w.layers) {
    Matrix x = norm(h, layer.inputLayernorm, c.rmsNormEps, f16);
    Matrix q = project(x, layer.q, f16), k = project(x, layer.k, f16),
           v = project(x, layer.v, f16);
    rotate(q, c, f16);
    rotate(k, c, f16);
    addTo(h, project(attend(q, k, v, c, f16), layer.o, f16), f16);
    Matrix x2 = norm(h, layer.postAttentionLayernorm, c.rmsNormEps, f16);
    Matrix gate = project(x2, layer.gate, f16), up = project(x2, layer.up, f16);
    for (size_t t = 0; t < gate.size(); ++t)
      for (size_t i = 0; i < gate[t].size(); ++i) {
        double sigmoid = 1 / (1 + std::exp(-gate[t][i]));
        double a = gate[t][i] * sigmoid * up[t][i];
        gate[t][i] = f16 ? toF16(a) : a;
      }
    addTo(h, project(gate, layer.down, f16), f16);
  }
  return project(norm(h, w.norm, c.rmsNormEps, f16), w.lmHead, f16);
}

/// A one-layer model with hidden 8: 4 heads of 4 (so q is wider than the
/// hidden state), pairs of them sharing 2 kv heads.
ModelConfig tinyConfig(Architecture arch) {
  ModelConfig c;
  c.source = "tiny";
  c.architecture = arch;
  c.hiddenSize = 8;
  c.intermediateSize = 12;
  c.numAttentionHeads = 4;
  c.numKeyValueHeads = 2;
  c.headDim = 4;
  c.numHiddenLayers = 1;
  c.vocabSize = 11;
  c.maxPositionEmbeddings = 64;
  c.rmsNormEps = 1e-5;
  c.ropeTheta = 10000.0;
  if (arch == Architecture::Llama) {
    // Wavelengths 6.3 and 628 against bands [4, 16]: one pair smoothed, one
    // divided by the factor.
    c.ropeScaling = Llama3RopeScaling{4.0, 1.0, 4.0, 16.0};
  } else {
    c.tieWordEmbeddings = true;
  }
  return c;
}

void expectClose(const std::vector<double> &actual,
                 const std::vector<double> &expected, double relative,
                 const std::string &what) {
  ASSERT_EQ(actual.size(), expected.size()) << what;
  for (size_t i = 0; i < actual.size(); ++i)
    EXPECT_NEAR(actual[i], expected[i],
                relative * std::max(1.0, std::fabs(expected[i])))
        << what << " [" << i << "]";
}

class ReferenceDecoderOneLayer
    : public ::testing::TestWithParam<std::tuple<Architecture, bool>> {};

TEST_P(ReferenceDecoderOneLayer, MatchesAnIndependentImplementation) {
  auto [arch, f16] = GetParam();
  ModelConfig config = tinyConfig(arch);
  for (uint64_t seed : {1u, 2u, 3u}) {
    ModelWeights weights = syntheticWeights(config, {seed, StorageType::F16});
    ASSERT_EQ(weights.layers[0].q.bias.empty(), arch != Architecture::Qwen2);
    std::vector<int32_t> ids = {3, 0, 10, 7, 7, 1};
    Matrix expected = expectedLogits(config, weights, ids, f16);

    DecoderOptions options;
    options.roundActivationsToF16 = f16;
    ReferenceDecoder decoder(config, weights, options);
    expectClose(decoder.prefill({3, 0}), expected[1], 1e-9, "prefill");
    for (size_t t = 2; t < ids.size(); ++t)
      expectClose(decoder.step(ids[t]), expected[t], 1e-9,
                  "step " + std::to_string(t));
    EXPECT_EQ(decoder.position(), int64_t(ids.size()));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Archs, ReferenceDecoderOneLayer,
    ::testing::Combine(::testing::Values(Architecture::Llama,
                                         Architecture::Qwen2),
                       ::testing::Bool()),
    [](const auto &info) {
      return std::string(modelTypeName(std::get<0>(info.param))) +
             (std::get<1>(info.param) ? "_f16" : "_exact");
    });

TEST(ReferenceDecoder, RoundingToF16ChangesTheLogitsSlightly) {
  ModelConfig config = tinyConfig(Architecture::Llama);
  ModelWeights weights = syntheticWeights(config, {4, StorageType::F16});
  ReferenceDecoder rounded(config, weights);
  ReferenceDecoder exact(config, weights, DecoderOptions{false});
  std::vector<double> a = rounded.prefill({1, 2, 3});
  std::vector<double> b = exact.prefill({1, 2, 3});
  double maxDiff = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i], toF16(a[i])) << "rounded logits are f16 values";
    maxDiff = std::max(maxDiff, std::fabs(a[i] - b[i]));
  }
  EXPECT_GT(maxDiff, 0.0);
  EXPECT_LT(maxDiff, 0.05);
}

//===----------------------------------------------------------------------===//
// (d) KV cache consistency
//===----------------------------------------------------------------------===//

ModelConfig smallConfig() {
  ModelConfig c = syntheticPreset("tiny-llama");
  c.hiddenSize = 64;
  c.intermediateSize = 128;
  c.numAttentionHeads = 4;
  c.numKeyValueHeads = 2;
  c.headDim = 16;
  c.vocabSize = 97;
  c.ropeScaling = Llama3RopeScaling{8.0, 1.0, 4.0, 32.0};
  return c;
}

TEST(ReferenceDecoder, CachedStepsEqualRecomputingTheWholeSequence) {
  ModelConfig config = smallConfig();
  ModelWeights weights = syntheticWeights(config, {21, StorageType::F16});
  std::mt19937 rng(5);
  std::vector<int32_t> ids(12);
  for (int32_t &id : ids)
    id = int32_t(rng() % uint32_t(config.vocabSize));

  for (bool f16 : {true, false}) {
    ReferenceDecoder decoder(config, weights, DecoderOptions{f16});
    Matrix full = decoder.forwardWithoutCache(ids);
    ASSERT_EQ(full.size(), ids.size());
    std::vector<int32_t> prompt(ids.begin(), ids.begin() + 5);
    EXPECT_EQ(decoder.prefill(prompt), full[4]);
    for (size_t t = 5; t < ids.size(); ++t)
      EXPECT_EQ(decoder.step(ids[t]), full[t]) << "position " << t;

    // Chunked prefill and a reset decoder give the same numbers.
    decoder.reset();
    EXPECT_EQ(decoder.position(), 0);
    decoder.prefill({ids[0], ids[1]});
    EXPECT_EQ(decoder.prefill({ids[2], ids[3], ids[4], ids[5]}), full[5]);
  }
}

TEST(ReferenceDecoder, ObserverSeesEveryLinearInput) {
  ModelConfig config = smallConfig();
  ModelWeights weights = syntheticWeights(config, {9, StorageType::F16});
  const std::vector<int32_t> ids = {4, 90, 13, 13, 60};
  using Rows = std::map<std::pair<int64_t, Projection>, Matrix>;
  auto observer = [](Rows &rows) {
    return [&rows](int64_t layer, Projection p, const std::vector<double> &x) {
      rows[{layer, p}].push_back(x);
    };
  };
  ReferenceDecoder decoder(config, weights);
  Rows cached, whole;
  decoder.setLinearObserver(observer(cached));
  decoder.prefill({ids[0], ids[1]});
  decoder.prefill({ids[2], ids[3], ids[4]});
  decoder.setLinearObserver(observer(whole));
  decoder.forwardWithoutCache(ids);
  decoder.setLinearObserver({});
  decoder.step(7); // reports nothing now

  // Every projection of every layer, and lm_head, once per position; the
  // whole-sequence pass reports the same rows in the same position order.
  EXPECT_EQ(cached.size(), size_t(7 * config.numHiddenLayers + 1));
  EXPECT_EQ(cached, whole);
  for (const auto &[key, rows] : cached) {
    ASSERT_EQ(rows.size(), ids.size());
    EXPECT_EQ(int64_t(rows[0].size()), config.inFeatures(key.second));
  }
  auto rowsOf = [&](int64_t l, Projection p) { return cached[{l, p}]; };
  for (int64_t l = 0; l < config.numHiddenLayers; ++l) {
    EXPECT_EQ(rowsOf(l, Projection::Q), rowsOf(l, Projection::K));
    EXPECT_EQ(rowsOf(l, Projection::Q), rowsOf(l, Projection::V));
    EXPECT_EQ(rowsOf(l, Projection::Gate), rowsOf(l, Projection::Up));
  }
  // Layer 0's q/k/v read the normed embedding, rounded to f16.
  const float *row = weights.embedTokens.data() + ids[2] * config.hiddenSize;
  std::vector<double> x =
      rmsNorm(std::vector<double>(row, row + config.hiddenSize),
              weights.layers[0].inputLayernorm, config.rmsNormEps);
  for (double &v : x)
    v = toF16(v);
  EXPECT_EQ(rowsOf(0, Projection::Q)[2], x);
}

TEST(ReferenceDecoder, GreedyGenerationFeedsBackTheArgmax) {
  ModelConfig config = smallConfig();
  ModelWeights weights = syntheticWeights(config, {8, StorageType::F16});
  ReferenceDecoder decoder(config, weights);
  Matrix logits;
  std::vector<int32_t> prompt = {5, 17, 42};
  std::vector<int32_t> tokens = decoder.generateGreedy(prompt, 6, &logits);
  ASSERT_EQ(tokens.size(), 6u);
  ASSERT_EQ(logits.size(), 6u);
  std::vector<int32_t> sequence = prompt;
  sequence.insert(sequence.end(), tokens.begin(), tokens.end());
  Matrix full = decoder.forwardWithoutCache(sequence);
  for (size_t i = 0; i < tokens.size(); ++i) {
    EXPECT_EQ(logits[i], full[prompt.size() - 1 + i]);
    EXPECT_EQ(tokens[i], argmax(full[prompt.size() - 1 + i]));
  }
  // The last token was chosen but not run.
  EXPECT_EQ(decoder.position(), int64_t(prompt.size() + tokens.size() - 1));
}

TEST(ReferenceDecoder, RejectsBadTokensAndWindowOverflow) {
  ModelConfig config = smallConfig();
  ModelWeights weights = syntheticWeights(config, {1, StorageType::F16});
  ReferenceDecoder decoder(config, weights);
  try {
    decoder.prefill({1, 97});
    FAIL();
  } catch (const Error &e) {
    EXPECT_STREQ(e.what(), "reference decoder: token 97 at position 1 is "
                           "outside [0, vocab_size = 97)");
  }
  EXPECT_THROW(decoder.prefill({}), Error);
  EXPECT_EQ(decoder.position(), 0);

  config.architecture = Architecture::Mistral;
  config.slidingWindow = 3;
  ReferenceDecoder windowed(config, weights);
  windowed.prefill({1, 2, 3});
  EXPECT_THROW(windowed.step(4), Error);
}

TEST(ReferenceDecoder, RejectsWeightsOfTheWrongShape) {
  ModelConfig config = smallConfig();
  ModelWeights weights = syntheticWeights(config, {1, StorageType::F16});
  weights.layers[1].up.weight.pop_back();
  try {
    ReferenceDecoder decoder(config, weights);
    FAIL();
  } catch (const Error &e) {
    EXPECT_STREQ(e.what(), "weights: tensor 'model.layers.1.mlp.up_proj."
                           "weight' has 8191 elements; expected [128, 64]");
  }
  weights = syntheticWeights(config, {1, StorageType::F16});
  weights.layers[0].o.bias.assign(64, 0.0f);
  EXPECT_THROW(ReferenceDecoder(config, weights), Error);
}

//===----------------------------------------------------------------------===//
// (e) RTN-encoded weights
//===----------------------------------------------------------------------===//

double relativeL2(const std::vector<double> &a, const std::vector<double> &b) {
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    num += (a[i] - b[i]) * (a[i] - b[i]);
    den += b[i] * b[i];
  }
  return std::sqrt(num / den);
}

/// The largest relative logit error over 8 decode steps of `encoding`
/// against the checkpoint's fp16 weights.
double encodedLogitError(const ModelConfig &config, const ModelWeights &fp16,
                         const std::string &encoding) {
  ModelWeights encoded = fp16;
  applyEncodingPlan(encoded, EncodingPlan{encoding, {}});
  ReferenceDecoder ref(config, fp16), enc(config, encoded);
  std::vector<int32_t> prompt = {1, 100, 200, 300};
  double worst = relativeL2(enc.prefill(prompt), ref.prefill(prompt));
  for (int32_t t = 0; t < 8; ++t) {
    int32_t id = 400 + 37 * t;
    worst = std::max(worst, relativeL2(enc.step(id), ref.step(id)));
  }
  return worst;
}

TEST(ReferenceEncoding, Int4DecodingStaysCloseToFp16) {
  ModelConfig config = syntheticPreset("tiny-llama");
  ModelWeights weights = syntheticWeights(config, {2, StorageType::F16});
  double int4 = encodedLogitError(config, weights, "int4-g128");
  double int8 = encodedLogitError(config, weights, "int8");
  double fp16 = encodedLogitError(config, weights, "fp16");
  RecordProperty("int4_g128_logit_error", std::to_string(int4));
  RecordProperty("int8_logit_error", std::to_string(int8));
  // int4 with groups of 128 perturbs each weight by ~12% of its spread
  // (step amax/7, amax ~ 3 sigma): a visible but bounded change. int8 is
  // ~16x finer; fp16 weights are the checkpoint's own (no change at all).
  EXPECT_GT(int4, 0.01);
  EXPECT_LT(int4, 0.5);
  EXPECT_LT(int8, int4 / 4);
  EXPECT_EQ(fp16, 0.0);
}

TEST(ReferenceEncoding, DecodingIsDeterministic) {
  ModelConfig config = syntheticPreset("tiny-qwen2");
  auto run = [&] {
    ModelWeights w = syntheticWeights(config, {6, StorageType::BF16});
    applyEncodingPlan(w, EncodingPlan{"nf4", {{"lm_head", "int4-g128"}}});
    ReferenceDecoder decoder(config, std::move(w));
    Matrix logits;
    decoder.generateGreedy({9, 8, 7}, 5, &logits);
    return logits;
  };
  EXPECT_EQ(run(), run());
}

TEST(ReferenceEncoding, QuantizeDequantizeStaysWithinHalfAStep) {
  // Symmetric int4 over groups of 128: scale = amax / 7 (rounded up to f16),
  // so no value moves by more than half a step.
  std::mt19937 rng(3);
  std::normal_distribution<float> dist(0.0f, 0.05f);
  const int64_t n = 6, k = 256;
  std::vector<float> w(static_cast<size_t>(n * k));
  for (float &x : w)
    x = dist(rng);
  std::vector<float> q = quantizeDequantize("int4-g128", w, n, k, "w");
  ASSERT_EQ(q.size(), w.size());
  for (int64_t row = 0; row < n; ++row)
    for (int64_t g = 0; g < k / 128; ++g) {
      float amax = 0;
      for (int64_t i = 0; i < 128; ++i)
        amax = std::max(amax, std::fabs(w[size_t(row * k + g * 128 + i)]));
      double halfStep = amax / 7.0 / 2.0 * (1 + 1.0 / 1024);
      for (int64_t i = 0; i < 128; ++i) {
        size_t at = size_t(row * k + g * 128 + i);
        EXPECT_LE(std::fabs(q[at] - w[at]), halfStep) << row << ", " << i;
      }
    }
  EXPECT_NE(q, w);
}

TEST(ReferenceEncoding, PlanRoundsDenseTensorsAndQuantizesATiedLmHead) {
  ModelConfig config = syntheticPreset("tiny-qwen2");
  ModelWeights bf16 = syntheticWeights(config, {4, StorageType::BF16});
  ModelWeights w = bf16;
  applyEncodingPlan(w, EncodingPlan{"int4-g128", {{"v_proj", "fp16"}}});
  // Dense tensors: the bf16 values rounded to f16.
  for (size_t i = 0; i < 64; ++i) {
    EXPECT_EQ(w.embedTokens[i], toF16(bf16.embedTokens[i]));
    EXPECT_EQ(w.layers[0].q.bias[i], toF16(bf16.layers[0].q.bias[i]));
    EXPECT_EQ(w.layers[1].inputLayernorm[i],
              toF16(bf16.layers[1].inputLayernorm[i]));
    EXPECT_EQ(w.layers[0].v.weight[i], toF16(bf16.layers[0].v.weight[i]));
  }
  // Quantized: lm_head (tied, so from the embedding) and q_proj moved.
  EXPECT_NE(w.lmHead.weight, w.embedTokens);
  EXPECT_EQ(w.lmHead.weight,
            quantizeDequantize("int4-g128", bf16.embedTokens, config.vocabSize,
                               config.hiddenSize, "lm_head"));
  EXPECT_NE(w.layers[0].q.weight, bf16.layers[0].q.weight);
}

TEST(ReferenceEncoding, NamesTheWeightAnEncodingDoesNotFit) {
  ModelConfig config = tinyConfig(Architecture::Llama); // k = 8
  ModelWeights w = syntheticWeights(config, {1, StorageType::F16});
  try {
    applyEncodingPlan(w, EncodingPlan{"int4-g128", {}});
    FAIL();
  } catch (const Error &e) {
    EXPECT_EQ(std::string(e.what()).rfind(
                  "model.layers.0.self_attn.q_proj.weight [16, 8] cannot take "
                  "encoding 'int4-g128': ",
                  0),
              0u)
        << e.what();
  }
  EXPECT_THROW(quantizeDequantize("int5", {0, 0}, 1, 2, "w"), Error);
}

} // namespace
} // namespace qfuse::reference
