//===- GptqLayerProblem.cpp - qfuse-gptq-layer's synthetic layers ---------===//
//
// Inputs X [T, K] with correlated channels (X = Z D + Y B: per-channel scales
// D with a few outlier channels, plus a rank-16 shared component Y B), the
// Hessian H = 2/T X^T X by cublasSgemm, random weights, and the measures
// qfuse-gptq-layer compares solutions with.
//
//===----------------------------------------------------------------------===//

#include "GptqLayerProblem.h"

#include "qfuse/runtime/Error.h"

#include <algorithm>
#include <random>
#include <thread>

namespace qfuse::tools {

using namespace qfuse::runtime;

namespace {

/// H = 2/t X^T X on the device (f32, cublasSgemm).
cuda::DeviceBuffer hessianOf(const std::vector<float> &x, int64_t t, int64_t k,
                             cuda::Cublas &blas, CUstream stream) {
  cuda::DeviceBuffer dx(x.size() * 4, "calibration inputs");
  dx.upload(x.data(), x.size() * 4);
  cuda::DeviceBuffer h(size_t(k * k) * 4, "Hessian");
  const float alpha = 2.0f / float(t), beta = 0.0f;
  blas.setStream(stream);
  // Column-major: X is [K, t]; H = alpha X X^T.
  QFUSE_CUBLAS(cublasSgemm(blas.get(), CUBLAS_OP_N, CUBLAS_OP_T, int(k), int(k),
                           int(t), &alpha,
                           reinterpret_cast<const float *>(dx.ptr()), int(k),
                           reinterpret_cast<const float *>(dx.ptr()), int(k),
                           &beta, reinterpret_cast<float *>(h.ptr()), int(k)));
  QFUSE_CU(cuStreamSynchronize(stream));
  return h;
}

std::vector<float> randomWeight(int64_t n, int64_t k, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 0.02f);
  std::vector<float> w(size_t(n * k));
  for (float &v : w)
    v = normal(rng);
  return w;
}

} // namespace

InputModel::InputModel(int64_t k, uint64_t seed) : k(k) {
  std::mt19937_64 rng(seed);
  std::lognormal_distribution<float> spread(0.0f, 0.5f);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
  scale.resize(size_t(k));
  for (float &s : scale)
    s = spread(rng) * (uniform(rng) < 0.01f ? 8.0f : 1.0f); // outliers
  mix.resize(size_t(kRank * k));
  for (float &m : mix)
    m = normal(rng);
}

std::vector<float> InputModel::sample(int64_t t, uint64_t seed) const {
  std::vector<float> x(size_t(t * k));
  const unsigned threads =
      std::max(1u, std::min(16u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (unsigned p = 0; p < threads; ++p)
    pool.emplace_back([&, p] {
      std::mt19937_64 rng(seed * 7919 + p);
      std::normal_distribution<float> normal(0.0f, 1.0f);
      float y[kRank];
      for (int64_t r = p; r < t; r += threads) {
        for (float &v : y)
          v = normal(rng);
        float *row = x.data() + r * k;
        for (int64_t c = 0; c < k; ++c) {
          float acc = normal(rng) * scale[size_t(c)];
          for (int64_t i = 0; i < kRank; ++i)
            acc += y[i] * mix[size_t(i * k + c)];
          row[c] = acc;
        }
      }
    });
  for (std::thread &th : pool)
    th.join();
  return x;
}

GroupProblem::GroupProblem(const GroupSpec &g, size_t gi, uint64_t seed,
                           int64_t tokens, int64_t dead, cuda::Cublas &blas,
                           CUstream stream)
    : model(g.k, seed + gi) {
  std::vector<float> x = model.sample(tokens, seed + 100 + gi);
  // Dead channels: inputs that are always 0 (H[i][i] = 0).
  for (int64_t d = 0; d < dead; ++d)
    for (int64_t r = 0; r < tokens; ++r)
      x[size_t(r * g.k + (d * 97 + 5) % g.k)] = 0.0f;
  h = hessianOf(x, tokens, g.k, blas, stream);
  work = cuda::DeviceBuffer(h.size(), "Hessian (working copy)");
  for (size_t m = 0; m < g.rows.size(); ++m)
    weights.push_back(randomWeight(g.rows[m], g.k, seed + 1000 * gi + m));
  for (size_t m = 0; m < g.rows.size(); ++m)
    inputs.push_back(
        {g.name + "." + std::to_string(m), weights[m].data(), g.rows[m]});
}

CUdeviceptr GroupProblem::freshHessian() {
  QFUSE_CU(cuMemcpyDtoD(work.ptr(), h.ptr(), h.size()));
  return work.ptr();
}

double identicalFraction(const format::Unpacked &a, const format::Unpacked &b) {
  if (a.codes.size() != b.codes.size() || a.codes.empty())
    return 0;
  size_t same = 0;
  for (size_t i = 0; i < a.codes.size(); ++i)
    same += a.codes[i] == b.codes[i];
  return double(same) / double(a.codes.size());
}

double outputError(const format::Encoding &enc, const format::Unpacked &q,
                   const std::vector<float> &w, int64_t n, int64_t k,
                   const std::vector<float> &x, int64_t t) {
  std::vector<float> deq;
  std::string error;
  if (!format::dequantize(enc, q, n, k, deq, error))
    throw Error("dequantizing: " + error);
  double num = 0, den = 0;
  std::vector<double> diff(static_cast<size_t>(k));
  for (int64_t r = 0; r < n; ++r) {
    for (int64_t c = 0; c < k; ++c)
      diff[size_t(c)] = double(w[size_t(r * k + c)]) - deq[size_t(r * k + c)];
    for (int64_t i = 0; i < t; ++i) {
      const float *xi = x.data() + i * k;
      double e = 0, y = 0;
      for (int64_t c = 0; c < k; ++c) {
        e += diff[size_t(c)] * xi[c];
        y += double(w[size_t(r * k + c)]) * xi[c];
      }
      num += e * e;
      den += y * y;
    }
  }
  return num / den;
}

} // namespace qfuse::tools
