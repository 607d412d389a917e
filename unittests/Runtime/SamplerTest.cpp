//===- SamplerTest.cpp - Host sampling against a reference ----------------===//
//
// The sampler's distribution against a plain reference written from Hugging
// Face's logits processors (masking with -inf, top-p over the ascending
// sort), its draws against that distribution by a chi-square test, and the
// seed's determinism.
//
//===----------------------------------------------------------------------===//

#include "qfuse/format/Sampling.h"
#include "qfuse/runtime/Error.h"
#include "qfuse/runtime/sampling/Sampler.h"

#include "ChiSquare.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <random>

using qfuse::runtime::Sampler;
using qfuse::runtime::SamplingOptions;
using qfuse::testing::chiSquare;
using qfuse::testing::chiSquareCritical;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::vector<double> softmax(const std::vector<double> &x) {
  const double top = *std::max_element(x.begin(), x.end());
  std::vector<double> p(x.size());
  double sum = 0;
  for (size_t i = 0; i < x.size(); ++i)
    sum += p[i] = x[i] == -kInf ? 0 : std::exp(x[i] - top);
  for (double &v : p)
    v /= sum;
  return p;
}

/// RepetitionPenalty, Temperature, TopK, TopP, MinP as transformers
/// applies them to a score vector.
std::vector<double> reference(const std::vector<float> &logits,
                              const std::vector<int32_t> &history,
                              const SamplingOptions &o) {
  std::vector<double> s(logits.begin(), logits.end());
  std::vector<int32_t> seen(history);
  std::sort(seen.begin(), seen.end());
  seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
  for (int32_t id : seen)
    s[id] = s[id] < 0 ? s[id] * o.repetitionPenalty : s[id] / o.repetitionPenalty;
  if (o.temperature == 0) {
    std::vector<double> p(s.size(), 0);
    p[std::max_element(s.begin(), s.end()) - s.begin()] = 1;
    return p;
  }
  for (double &v : s)
    v /= o.temperature;
  if (o.topK > 0 && size_t(o.topK) < s.size()) {
    std::vector<double> sorted(s);
    std::sort(sorted.begin(), sorted.end(), std::greater<double>());
    const double kth = sorted[o.topK - 1];
    for (double &v : s)
      if (v < kth)
        v = -kInf;
  }
  if (o.topP < 1) {
    std::vector<size_t> asc(s.size());
    std::iota(asc.begin(), asc.end(), 0);
    std::stable_sort(asc.begin(), asc.end(),
                     [&](size_t a, size_t b) { return s[a] < s[b]; });
    std::vector<double> p = softmax(s);
    double cumulative = 0;
    for (size_t i = 0; i + 1 < asc.size(); ++i) { // keeps at least one
      cumulative += p[asc[i]];
      if (cumulative <= 1 - o.topP)
        s[asc[i]] = -kInf;
    }
  }
  if (o.minP > 0) {
    std::vector<double> p = softmax(s);
    const double floor = o.minP * *std::max_element(p.begin(), p.end());
    for (size_t i = 0; i < s.size(); ++i)
      if (p[i] < floor)
        s[i] = -kInf;
  }
  return softmax(s);
}

std::vector<float> randomLogits(size_t n, uint64_t seed, float scale = 3) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0, scale);
  std::vector<float> x(n);
  for (float &v : x)
    v = normal(rng);
  return x;
}

std::vector<int64_t> draw(Sampler &sampler, const std::vector<float> &logits,
                          const std::vector<int32_t> &history, int64_t n) {
  std::vector<int64_t> counts(logits.size(), 0);
  for (int64_t i = 0; i < n; ++i)
    ++counts[sampler.sample(logits, history)];
  return counts;
}

struct Case {
  const char *name;
  SamplingOptions options;
};

const Case kCases[] = {
    {"temperature", {1.0f, 0, 1, 0, 1, 1}},
    {"hot", {1.7f, 0, 1, 0, 1, 2}},
    {"cold", {0.4f, 0, 1, 0, 1, 3}},
    {"top_k", {0.8f, 5, 1, 0, 1, 4}},
    {"top_p", {1.0f, 0, 0.9f, 0, 1, 5}},
    {"min_p", {1.0f, 0, 1, 0.05f, 1, 6}},
    {"penalty", {1.0f, 0, 1, 0, 1.3f, 7}},
    {"all", {0.9f, 12, 0.95f, 0.02f, 1.15f, 8}},
};

} // namespace

TEST(Sampler, DistributionMatchesTheReference) {
  const std::vector<int32_t> history = {3, 7, 7, 20, 41, 63};
  for (const Case &c : kCases)
    for (uint64_t seed = 0; seed < 20; ++seed) {
      const auto logits = randomLogits(64, 100 + seed);
      Sampler sampler(c.options);
      const auto got = sampler.distribution(logits, history);
      const auto want = reference(logits, history, c.options);
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i)
        ASSERT_NEAR(got[i], want[i], 1e-12)
            << c.name << ", logits seed " << seed << ", token " << i;
    }
}

TEST(Sampler, FiltersKeepWhatTheyShould) {
  // Logits 4, 3, 2, 1, 0: temperature 1 gives p ~ .636 .234 .086 .032 .012.
  const std::vector<float> logits = {2, 4, 0, 3, 1};
  auto kept = [&](SamplingOptions o) {
    std::vector<int> ids;
    const auto p = Sampler(o).distribution(logits, {});
    for (size_t i = 0; i < p.size(); ++i)
      if (p[i] > 0)
        ids.push_back(int(i));
    return ids;
  };
  EXPECT_EQ(kept({1, 2, 1, 0, 1, 0}), (std::vector<int>{1, 3}));
  EXPECT_EQ(kept({1, 0, 0.6f, 0, 1, 0}), (std::vector<int>{1}));
  EXPECT_EQ(kept({1, 0, 0.8f, 0, 1, 0}), (std::vector<int>{1, 3}));
  EXPECT_EQ(kept({1, 0, 0.95f, 0, 1, 0}), (std::vector<int>{0, 1, 3}));
  // min-p 0.1: floor .0636 keeps .234 and .086, drops .032.
  EXPECT_EQ(kept({1, 0, 1, 0.1f, 1, 0}), (std::vector<int>{0, 1, 3}));
  // Greedy is the argmax, and the penalty can move it.
  EXPECT_EQ(kept({0, 0, 1, 0, 1, 0}), (std::vector<int>{1}));
  EXPECT_EQ(Sampler({0, 0, 1, 0, 2, 0}).sample(logits, {1}), 3);
  EXPECT_EQ(Sampler({0, 0, 1, 0, 1, 0}).sample(logits, {1}), 1);
}

// Draws per chi-square test: at 50,000 the wrong distribution below scores
// about 980 against a critical value of 84 (3,900 at 200,000), so the test
// keeps its power at a quarter of the draws (a quarter of the time under
// ASan, where these two tests took 20 s).
constexpr int64_t kChiSquareDraws = 50000;

TEST(Sampler, FrequenciesPassChiSquare) {
  const std::vector<int32_t> history = {3, 7, 20};
  constexpr int64_t kDraws = kChiSquareDraws;
  for (const Case &c : kCases) {
    const auto logits = randomLogits(48, 7);
    Sampler sampler(c.options);
    const auto counts = draw(sampler, logits, history, kDraws);
    const auto [stat, dof] =
        chiSquare(counts, reference(logits, history, c.options), kDraws);
    ASSERT_GT(dof, 0) << c.name;
    EXPECT_LT(stat, chiSquareCritical(dof))
        << c.name << ": chi-square " << stat << " with " << dof << " dof";
  }
}

TEST(Sampler, ChiSquareRejectsAWrongDistribution) {
  // The test above can fail: draws at temperature 1 against the
  // distribution at temperature 1.1.
  const auto logits = randomLogits(48, 7);
  constexpr int64_t kDraws = kChiSquareDraws;
  Sampler sampler({1.0f, 0, 1, 0, 1, 9});
  const auto counts = draw(sampler, logits, {}, kDraws);
  const auto [stat, dof] =
      chiSquare(counts, reference(logits, {}, {1.1f, 0, 1, 0, 1, 9}), kDraws);
  EXPECT_GT(stat, chiSquareCritical(dof));
}

TEST(Sampler, SameSeedSameTokens) {
  const SamplingOptions options{0.9f, 20, 0.95f, 0, 1.1f, 1234};
  auto run = [&](uint64_t seed) {
    SamplingOptions o = options;
    o.seed = seed;
    Sampler sampler(o);
    std::vector<int32_t> history = {1, 2, 3}, out;
    for (int step = 0; step < 200; ++step) {
      const int32_t t = sampler.sample(randomLogits(256, step), history);
      history.push_back(t);
      out.push_back(t);
    }
    return out;
  };
  EXPECT_EQ(run(1234), run(1234));
  EXPECT_NE(run(1234), run(1235));
}

TEST(Sampler, UniformIsPhiloxTop24Bits) {
  namespace sampling = qfuse::format::sampling;
  // Random123's known answers for Philox4x32-10.
  EXPECT_EQ(sampling::philox4x32({0, 0, 0, 0}, {0, 0}),
            (sampling::Philox4x32{0x6627e8d5, 0xe169c58d, 0xbc57ac4c,
                                  0x9b00dbd8}));
  EXPECT_EQ(sampling::philox4x32({~0u, ~0u, ~0u, ~0u}, {~0u, ~0u}),
            (sampling::Philox4x32{0x408f276d, 0x41c83b0e, 0xa20bc7c6,
                                  0x6d5451fd}));
  EXPECT_EQ(sampling::philox4x32({0x243f6a88, 0x85a308d3, 0x13198a2e,
                                  0x03707344},
                                 {0xa4093822, 0x299f31d0}),
            (sampling::Philox4x32{0xd16cfe09, 0x94fdcceb, 0x5001e420,
                                  0x24126ea1}));
  const uint64_t seed = 0x0123456789abcdefull;
  Sampler sampler({1, 0, 1, 0, 1, seed});
  for (uint64_t c : {0ull, 1ull, 77ull, 1ull << 40}) {
    const auto words = sampling::philox4x32(
        {uint32_t(c), uint32_t(c >> 32), 0, 0},
        {uint32_t(seed), uint32_t(seed >> 32)});
    EXPECT_EQ(sampler.uniform(c), double(words[0] >> 8) / 16777216.0);
  }
}

TEST(Sampler, CountersAreIndependentOfOrder) {
  const auto logits = randomLogits(64, 3);
  const Sampler sampler({0.8f, 0, 1, 0, 1, 99});
  std::vector<int32_t> forward, backward;
  for (uint64_t c = 0; c < 50; ++c)
    forward.push_back(sampler.sample(logits, {}, c));
  for (uint64_t c = 50; c-- > 0;)
    backward.insert(backward.begin(), sampler.sample(logits, {}, c));
  EXPECT_EQ(forward, backward);
}

TEST(Sampler, TopPKeepsTiesWithTheLastKept) {
  // p ~ .468 .172 .172 .172 .016: top-p .6 reaches .64 at the first tied
  // token and keeps the other two.
  const std::vector<float> logits = {2, 1, 1, 1, -1.3f};
  const auto p = Sampler({1, 0, 0.6f, 0, 1, 0}).distribution(logits, {});
  EXPECT_GT(p[3], 0);
  EXPECT_EQ(p[4], 0);
}

TEST(Sampler, RejectsBadOptions) {
  auto message = [](SamplingOptions o) {
    try {
      Sampler s(o);
    } catch (const qfuse::Error &e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message({-1, 0, 1, 0, 1, 0}).find("temperature is -1"),
            std::string::npos);
  EXPECT_NE(message({1, -2, 1, 0, 1, 0}).find("top-k is -2"), std::string::npos);
  EXPECT_NE(message({1, 0, 0, 0, 1, 0}).find("top-p is 0"), std::string::npos);
  EXPECT_NE(message({1, 0, 1, 1.5f, 1, 0}).find("min-p is 1.5"),
            std::string::npos);
  EXPECT_NE(message({1, 0, 1, 0, 0, 0}).find("repetition penalty is 0"),
            std::string::npos);
  Sampler ok({1, 0, 1, 0, 1.2f, 0});
  EXPECT_THROW(ok.distribution({1, 2}, {5}), qfuse::Error);
}
