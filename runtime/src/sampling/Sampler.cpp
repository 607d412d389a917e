//===- Sampler.cpp - Choosing the next token from the logits --------------===//

#include "qfuse/runtime/sampling/Sampler.h"

#include "qfuse/format/Sampling.h"
#include "qfuse/runtime/Error.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace qfuse::runtime {

std::string SamplingOptions::check() const {
  if (!(temperature >= 0) || std::isinf(temperature))
    return "temperature is " + std::to_string(temperature) +
           ", expected 0 (greedy) or a positive number";
  if (topK < 0)
    return "top-k is " + std::to_string(topK) + ", expected 0 (off) or more";
  if (!(topP > 0 && topP <= 1))
    return "top-p is " + std::to_string(topP) + ", expected a value in (0, 1]";
  if (!(minP >= 0 && minP <= 1))
    return "min-p is " + std::to_string(minP) + ", expected a value in [0, 1]";
  if (!(repetitionPenalty > 0) || std::isinf(repetitionPenalty))
    return "repetition penalty is " + std::to_string(repetitionPenalty) +
           ", expected a positive number (1: off)";
  return "";
}

Sampler::Sampler(const SamplingOptions &options) : options_(options) {
  if (std::string why = options.check(); !why.empty())
    throw Error("sampling: " + why);
}

double Sampler::uniform(uint64_t counter) const {
  return format::sampling::uniform(options_.seed, counter);
}

std::vector<double>
Sampler::distribution(const std::vector<float> &logits,
                      const std::vector<int32_t> &history) const {
  const size_t n = logits.size();
  if (n == 0)
    throw Error("sampling: the logits are empty");
  std::vector<double> x(logits.begin(), logits.end());
  // Repetition penalty (CTRL): once per distinct token seen.
  if (options_.repetitionPenalty != 1) {
    std::vector<bool> seen(n, false);
    for (int32_t id : history) {
      if (id < 0 || size_t(id) >= n)
        throw Error("sampling: history token " + std::to_string(id) +
                    " is outside the vocabulary [0, " + std::to_string(n) +
                    ")");
      if (seen[id])
        continue;
      seen[id] = true;
      x[id] = x[id] < 0 ? x[id] * options_.repetitionPenalty
                        : x[id] / options_.repetitionPenalty;
    }
  }
  std::vector<double> p(n, 0.0);
  if (options_.greedy()) {
    p[std::max_element(x.begin(), x.end()) - x.begin()] = 1;
    return p;
  }
  for (double &v : x)
    v /= options_.temperature;
  // Candidates by descending logit, lowest id first on ties.
  std::vector<int32_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int32_t a, int32_t b) { return x[a] > x[b]; });
  size_t keep = n;
  if (options_.topK > 0 && size_t(options_.topK) < keep) {
    // Ties with the k-th logit stay, as torch.topk's threshold keeps them.
    const double kth = x[order[options_.topK - 1]];
    keep = options_.topK;
    while (keep < n && x[order[keep]] == kth)
      ++keep;
  }
  const double top = x[order[0]];
  auto softmax = [&](size_t count) {
    std::vector<double> q(count);
    double sum = 0;
    for (size_t i = 0; i < count; ++i)
      sum += q[i] = std::exp(x[order[i]] - top);
    for (double &v : q)
      v /= sum;
    return q;
  };
  if (options_.topP < 1) {
    // The smallest prefix whose mass reaches top-p (at least one token);
    // HF drops the tail whose cumulative mass, from the low end, is at
    // most 1 - top_p, which keeps the same prefix.
    std::vector<double> q = softmax(keep);
    double mass = 0;
    size_t count = 0;
    while (count < keep) {
      mass += q[count++];
      if (mass >= options_.topP)
        break;
    }
    // Ties with the last kept logit stay, as top-k's do.
    while (count < keep && x[order[count]] == x[order[count - 1]])
      ++count;
    keep = count;
  }
  if (options_.minP > 0) {
    std::vector<double> q = softmax(keep);
    const double floor = options_.minP * q[0];
    size_t count = 1;
    while (count < keep && q[count] >= floor)
      ++count;
    keep = count;
  }
  std::vector<double> q = softmax(keep);
  for (size_t i = 0; i < keep; ++i)
    p[order[i]] = q[i];
  return p;
}

int32_t Sampler::pick(const std::vector<double> &p, double u) {
  double cumulative = 0;
  int32_t last = -1;
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] == 0)
      continue;
    last = static_cast<int32_t>(i);
    cumulative += p[i];
    if (u < cumulative)
      return last;
  }
  return last; // rounding left u above the total
}

int32_t Sampler::sample(const std::vector<float> &logits,
                        const std::vector<int32_t> &history,
                        uint64_t counter) const {
  const std::vector<double> p = distribution(logits, history);
  if (options_.greedy())
    return static_cast<int32_t>(std::max_element(p.begin(), p.end()) -
                                p.begin());
  return pick(p, uniform(counter));
}

} // namespace qfuse::runtime
