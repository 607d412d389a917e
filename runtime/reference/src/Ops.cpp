//===- Ops.cpp - The decoder's operations, one function each --------------===//

#include "qfuse/reference/Ops.h"

#include "qfuse/runtime/Error.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace qfuse::reference {

std::vector<double> rmsNorm(const std::vector<double> &x,
                            const std::vector<float> &gamma, double eps) {
  if (x.size() != gamma.size() || x.empty())
    throw Error("rmsNorm: " + std::to_string(x.size()) + " values, " +
                std::to_string(gamma.size()) + " weights");
  double sumSquares = 0;
  for (double v : x)
    sumSquares += v * v;
  double inv = 1.0 / std::sqrt(sumSquares / double(x.size()) + eps);
  std::vector<double> y(x.size());
  for (size_t i = 0; i < x.size(); ++i)
    y[i] = x[i] * inv * double(gamma[i]);
  return y;
}

std::vector<double> linear(const std::vector<double> &x,
                           const LinearWeights &w) {
  if (int64_t(x.size()) != w.k)
    throw Error("linear: input of " + std::to_string(x.size()) +
                " values for a weight with k = " + std::to_string(w.k));
  std::vector<double> y(size_t(w.n));
  for (int64_t n = 0; n < w.n; ++n) {
    const float *row = w.weight.data() + n * w.k;
    double acc = 0;
    for (int64_t k = 0; k < w.k; ++k)
      acc += x[size_t(k)] * double(row[k]);
    y[size_t(n)] = w.bias.empty() ? acc : acc + double(w.bias[size_t(n)]);
  }
  return y;
}

std::vector<double>
ropeInvFreq(int64_t headDim, double theta,
            const std::optional<Llama3RopeScaling> &llama3) {
  const double pi = std::acos(-1.0);
  std::vector<double> invFreq(size_t(headDim / 2));
  for (int64_t i = 0; i < headDim / 2; ++i) {
    double f = std::pow(theta, -2.0 * double(i) / double(headDim));
    if (llama3) {
      const Llama3RopeScaling &s = *llama3;
      double lowFreqWavelen = s.originalMaxPositionEmbeddings / s.lowFreqFactor;
      double highFreqWavelen =
          s.originalMaxPositionEmbeddings / s.highFreqFactor;
      double wavelen = 2 * pi / f;
      if (wavelen > lowFreqWavelen) {
        f = f / s.factor;
      } else if (wavelen >= highFreqWavelen) {
        double smooth =
            (s.originalMaxPositionEmbeddings / wavelen - s.lowFreqFactor) /
            (s.highFreqFactor - s.lowFreqFactor);
        f = (1 - smooth) * f / s.factor + smooth * f;
      }
    }
    invFreq[size_t(i)] = f;
  }
  return invFreq;
}

void applyRotary(std::vector<double> &x, int64_t heads, int64_t headDim,
                 int64_t position, const std::vector<double> &invFreq) {
  int64_t half = headDim / 2;
  if (int64_t(x.size()) != heads * headDim || int64_t(invFreq.size()) != half)
    throw Error("applyRotary: " + std::to_string(x.size()) + " values for " +
                std::to_string(heads) + " heads of " + std::to_string(headDim));
  for (int64_t i = 0; i < half; ++i) {
    double angle = double(position) * invFreq[size_t(i)];
    double c = std::cos(angle), s = std::sin(angle);
    for (int64_t h = 0; h < heads; ++h) {
      double &a = x[size_t(h * headDim + i)];
      double &b = x[size_t(h * headDim + i + half)];
      double a0 = a, b0 = b;
      a = a0 * c - b0 * s;
      b = b0 * c + a0 * s;
    }
  }
}

std::vector<double> attention(const std::vector<double> &q,
                              const std::vector<double> &keys,
                              const std::vector<double> &values,
                              int64_t positions, int64_t heads, int64_t kvHeads,
                              int64_t headDim) {
  int64_t kvWidth = kvHeads * headDim;
  if (positions <= 0 || int64_t(q.size()) != heads * headDim ||
      int64_t(keys.size()) < positions * kvWidth ||
      int64_t(values.size()) < positions * kvWidth || heads % kvHeads)
    throw Error("attention: shapes do not match " + std::to_string(positions) +
                " positions, " + std::to_string(heads) + " heads, " +
                std::to_string(kvHeads) + " kv heads of " +
                std::to_string(headDim));
  int64_t group = heads / kvHeads;
  double scale = 1.0 / std::sqrt(double(headDim));
  std::vector<double> out(q.size(), 0.0);
  std::vector<double> scores(static_cast<size_t>(positions));
  for (int64_t h = 0; h < heads; ++h) {
    int64_t kvOffset = (h / group) * headDim;
    const double *qh = q.data() + h * headDim;
    double maxScore = -std::numeric_limits<double>::infinity();
    for (int64_t p = 0; p < positions; ++p) {
      const double *kp = keys.data() + p * kvWidth + kvOffset;
      double dot = 0;
      for (int64_t d = 0; d < headDim; ++d)
        dot += qh[d] * kp[d];
      scores[size_t(p)] = dot * scale;
      maxScore = std::max(maxScore, scores[size_t(p)]);
    }
    double total = 0;
    for (double &s : scores) {
      s = std::exp(s - maxScore);
      total += s;
    }
    double *oh = out.data() + h * headDim;
    for (int64_t p = 0; p < positions; ++p) {
      const double *vp = values.data() + p * kvWidth + kvOffset;
      double weight = scores[size_t(p)] / total;
      for (int64_t d = 0; d < headDim; ++d)
        oh[d] += weight * vp[d];
    }
  }
  return out;
}

std::vector<double> siluMul(const std::vector<double> &gate,
                            const std::vector<double> &up) {
  if (gate.size() != up.size())
    throw Error("siluMul: " + std::to_string(gate.size()) + " gate and " +
                std::to_string(up.size()) + " up values");
  std::vector<double> y(gate.size());
  for (size_t i = 0; i < gate.size(); ++i)
    y[i] = gate[i] / (1.0 + std::exp(-gate[i])) * up[i];
  return y;
}

int64_t argmax(const std::vector<double> &values) {
  int64_t best = -1;
  for (size_t i = 0; i < values.size(); ++i)
    if (!std::isnan(values[i]) &&
        (best < 0 || values[i] > values[size_t(best)]))
      best = int64_t(i);
  return best;
}

} // namespace qfuse::reference
