//===- SampleGpuTest.cpp - qf.sample on the GPU against the host sampler ---===//
//
// The compiled sampler kernel (artifacts/sampling/sample-*.qfa, written by
// the CMake target qfuse-sample-artifacts from Inputs/sample-*.mlir) against
// runtime/src/sampling, the reference:
//   - token by token: for the same seed and counter the device draws the
//     host's token; a different token is accepted only where u lies within
//     f32 rounding of a cumulative boundary of the host distribution
//     (docs/sampling.md), and such cases must be rare;
//   - by frequency: many draws of one row (distinct counters) pass a
//     chi-square test against the host distribution, per setting.
// The ids are poisoned before every run. Tests skip ("qfuse-gpu-skip:")
// without a device, and say so when the artifacts are missing.
//
//===----------------------------------------------------------------------===//

#include "qfuse/format/Numerics.h"
#include "qfuse/format/Sampling.h"
#include "qfuse/runtime/device/Executor.h"
#include "qfuse/runtime/sampling/Sampler.h"

#include "ChiSquare.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <optional>
#include <random>

using namespace qfuse::runtime;
namespace sampling = qfuse::format::sampling;
using qfuse::testing::chiSquare;
using qfuse::testing::chiSquareCritical;

namespace {

std::string artifactDir() {
  const char *dir = std::getenv("QFUSE_SAMPLE_ARTIFACTS");
  return dir ? dir : QFUSE_SAMPLE_ARTIFACTS;
}

constexpr uint32_t kPoison = 0x7F7F7F7F; // an id no vocabulary has

struct Setting {
  const char *name;
  SamplingOptions options;
};

// {temperature, top_k, top_p, min_p, repetition_penalty, seed}
const Setting kSettings[] = {
    {"greedy", {0, 0, 1, 0, 1, 1}},
    {"greedy_penalty", {0, 0, 1, 0, 1.5f, 2}},
    {"temperature", {1.0f, 0, 1, 0, 1, 3}},
    {"cold", {0.5f, 0, 1, 0, 1, 4}},
    {"top_k", {0.8f, 20, 1, 0, 1, 5}},
    {"top_p", {1.0f, 0, 0.8f, 0, 1, 6}},
    {"min_p", {1.0f, 0, 1, 0.05f, 1, 7}},
    {"penalty", {1.0f, 0, 1, 0, 1.3f, 8}},
    {"all", {0.9f, 40, 0.9f, 0.02f, 1.2f, 0x123456789ull}},
};

/// Random logits rounded to f16 (the kernel reads halves), as floats.
std::vector<float> randomLogits(int64_t vocab, uint64_t seed, float scale) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0, scale);
  std::vector<float> x(static_cast<size_t>(vocab));
  for (float &v : x)
    v = qfuse::format::halfToFloat(qfuse::format::floatToHalf(normal(rng)));
  return x;
}

std::vector<int32_t> seenTokens(int64_t vocab, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<int32_t> ids(16);
  for (int32_t &id : ids)
    id = static_cast<int32_t>(rng() % uint64_t(vocab));
  return ids;
}

/// One compiled sampler: its executor and the buffers of a run.
class SamplerKernel {
public:
  SamplerKernel(const std::string &path, const cuda::Context &context)
      : artifact_(Artifact::load(path)), executor_(artifact_, context) {
    vocab_ = artifact_.findBuffer("logits")->shape[1].value;
    rowParams_ = artifact_.findBuffer("params")->shape[0].isBatch;
    rowMask_ = artifact_.findBuffer("mask")->shape[0].isBatch;
  }
  int64_t vocab() const { return vocab_; }
  bool perRow() const { return rowParams_ && rowMask_; }

  /// Draws one id per row: row r samples logits[r] with settings[r]
  /// (settings[0] for all when the params are shared), history[r] and
  /// counters[r]; ids poisoned first.
  std::vector<int32_t> run(int64_t batch, CUstream stream,
                           const std::vector<std::vector<float>> &logits,
                           const std::vector<SamplingOptions> &settings,
                           const std::vector<std::vector<int32_t>> &history,
                           const std::vector<int32_t> &counters) {
    executor_.allocate(batch);
    std::vector<uint16_t> halves;
    for (const auto &row : logits)
      for (float v : row)
        halves.push_back(qfuse::format::floatToHalf(v));
    std::vector<int32_t> params;
    for (size_t r = 0; r < (rowParams_ ? size_t(batch) : 1); ++r) {
      const SamplingOptions &o = settings[rowParams_ ? r : 0];
      auto row = sampling::paramRow(o.temperature, o.topK, o.topP, o.minP,
                                    o.repetitionPenalty, o.seed);
      params.insert(params.end(), row.begin(), row.end());
    }
    std::vector<uint8_t> mask;
    for (size_t r = 0; r < (rowMask_ ? size_t(batch) : 1); ++r) {
      std::vector<uint8_t> row(static_cast<size_t>(vocab_), 0);
      for (int32_t id : history[r])
        row[static_cast<size_t>(id)] = 1;
      mask.insert(mask.end(), row.begin(), row.end());
    }
    executor_.buffer(batch, "logits").upload(halves.data(), halves.size() * 2);
    executor_.buffer(batch, "params").upload(params.data(), params.size() * 4);
    executor_.buffer(batch, "mask").upload(mask.data(), mask.size());
    executor_.buffer(batch, "counters")
        .upload(counters.data(), counters.size() * 4);
    executor_.buffer(batch, "ids").fill(0x7F, stream);
    executor_.run(batch, stream);
    QFUSE_CU_CTX(cuStreamSynchronize(stream), "running the sampler");
    std::vector<int32_t> ids(static_cast<size_t>(batch));
    executor_.buffer(batch, "ids").download(ids.data(), ids.size() * 4);
    return ids;
  }

private:
  Artifact artifact_;
  Executor executor_;
  int64_t vocab_ = 0;
  bool rowParams_ = false, rowMask_ = false;
};

/// Whether the device's `got` is a token the host could draw for u within
/// f32 rounding: u lies within `slack` of got's cumulative interval.
bool nearBoundary(const std::vector<double> &p, int32_t got, double u,
                  double slack) {
  if (got < 0 || size_t(got) >= p.size() || p[got] == 0)
    return false;
  double before = 0;
  for (int32_t i = 0; i < got; ++i)
    before += p[i];
  return u >= before - slack && u < before + p[got] + slack;
}

class SampleGpu : public ::testing::TestWithParam<const char *> {
protected:
  void SetUp() override {
    std::string why;
    if (cuda::deviceCount(&why) == 0)
      GTEST_SKIP() << "qfuse-gpu-skip: no usable CUDA device: " << why;
    path = artifactDir() + "/sample-" + GetParam() + ".qfa";
    if (!std::ifstream(path))
      GTEST_SKIP() << "no compiled sampler at " << path
                   << " (ninja -C build qfuse-sample-artifacts, on the "
                      "compiler machine, then carry artifacts/sampling)";
    context.emplace(0);
    stream.emplace();
    kernel.emplace(path, *context);
  }

  std::string path;
  std::optional<cuda::Context> context;
  std::optional<cuda::Stream> stream;
  std::optional<SamplerKernel> kernel;
};

TEST_P(SampleGpu, SameTokensAsTheHost) {
  const int64_t vocab = kernel->vocab();
  const int64_t batch = 8;
  int64_t draws = 0, boundary = 0;
  for (const Setting &s : kSettings)
    for (int trial = 0; trial < 4; ++trial) {
      std::vector<std::vector<float>> logits;
      std::vector<SamplingOptions> options;
      std::vector<std::vector<int32_t>> history;
      std::vector<int32_t> counters;
      for (int64_t r = 0; r < batch; ++r) {
        const uint64_t id = uint64_t(trial) * 64 + uint64_t(r);
        logits.push_back(randomLogits(vocab, 1000 + id, r % 2 ? 3.0f : 1.5f));
        SamplingOptions o = s.options;
        o.seed += kernel->perRow() ? id : uint64_t(trial);
        options.push_back(o);
        history.push_back(seenTokens(vocab, 5000 + (kernel->perRow() ? id
                                                         : uint64_t(trial))));
        counters.push_back(static_cast<int32_t>(17 * id + 3));
      }
      const std::vector<int32_t> got =
          kernel->run(batch, stream->get(), logits, options, history, counters);
      for (int64_t r = 0; r < batch; ++r) {
        const size_t row = kernel->perRow() ? size_t(r) : 0;
        const Sampler host(options[row]);
        const int32_t want =
            host.sample(logits[r], history[row], uint64_t(counters[r]));
        ++draws;
        ASSERT_NE(uint32_t(got[r]), kPoison)
            << s.name << ": row " << r << " was not written";
        if (got[r] == want)
          continue;
        ASSERT_FALSE(options[row].greedy())
            << s.name << ", row " << r << ": greedy gave " << got[r]
            << ", the host " << want;
        const auto p = host.distribution(logits[r], history[row]);
        ASSERT_TRUE(nearBoundary(p, got[r], host.uniform(counters[r]), 1e-5))
            << s.name << ", trial " << trial << ", row " << r << ": device "
            << got[r] << " (p " << p[got[r]] << "), host " << want << " (p "
            << p[want] << ")";
        ++boundary;
      }
    }
  // Boundary cases are the rounding of single draws: a handful at most.
  EXPECT_LE(boundary * 100, draws)
      << boundary << " of " << draws << " draws differ from the host";
  std::printf("%s: %lld draws, %lld at a rounding boundary\n", GetParam(),
              (long long)draws, (long long)boundary);
}

TEST_P(SampleGpu, FrequenciesPassChiSquare) {
  const int64_t vocab = kernel->vocab();
  const int64_t batch = kernel->perRow() ? 256 : 4;
  const int64_t launches = kernel->perRow() ? 200 : 2000;
  const auto row = randomLogits(vocab, 77, 2.0f);
  const std::vector<std::vector<float>> logits(size_t(batch), row);
  const auto seen = seenTokens(vocab, 78);
  const std::vector<std::vector<int32_t>> history(size_t(batch), seen);
  for (const Setting &s : kSettings) {
    if (s.options.greedy())
      continue;
    const std::vector<SamplingOptions> options(size_t(batch), s.options);
    std::vector<int64_t> counts(size_t(vocab), 0);
    for (int64_t l = 0; l < launches; ++l) {
      std::vector<int32_t> counters(static_cast<size_t>(batch));
      for (int64_t r = 0; r < batch; ++r)
        counters[r] = static_cast<int32_t>(l * batch + r);
      for (int32_t id : kernel->run(batch, stream->get(), logits, options,
                                    history, counters)) {
        ASSERT_TRUE(id >= 0 && id < vocab) << s.name << ": id " << id;
        ++counts[id];
      }
    }
    const auto p = Sampler(s.options).distribution(row, seen);
    const auto [stat, dof] = chiSquare(counts, p, batch * launches);
    ASSERT_GT(dof, 0) << s.name;
    EXPECT_LT(stat, chiSquareCritical(dof))
        << GetParam() << ", " << s.name << ": chi-square " << stat << " with "
        << dof << " dof over " << batch * launches << " draws";
  }
}

INSTANTIATE_TEST_SUITE_P(Vocabularies, SampleGpu,
                         ::testing::Values("rows", "odd", "shared"));

} // namespace
