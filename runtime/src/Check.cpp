//===- Check.cpp - compiled plans against the C++ reference ----------------===//

#include "qfuse/runtime/Check.h"

#include "qfuse/format/Numerics.h"
#include "qfuse/format/Packing.h"
#include "qfuse/format/Reference.h"
#include "qfuse/runtime/Error.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <set>
#include <thread>

namespace qfuse::runtime::check {

namespace {

/// Fills `out` with N(0, 1) * scale, in parallel chunks (lm_head-sized
/// weights have half a billion elements).
void fillNormal(std::vector<float> &out, float scale, uint64_t seed) {
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  size_t chunk = (out.size() + threads - 1) / threads;
  std::vector<std::thread> workers;
  for (unsigned t = 0; t < threads; ++t)
    workers.emplace_back([&, t] {
      std::mt19937_64 rng(seed * 7919 + t);
      std::normal_distribution<float> dist(0.0f, 1.0f);
      size_t end = std::min(out.size(), (t + 1) * chunk);
      for (size_t i = t * chunk; i < end; ++i)
        out[i] = dist(rng) * scale;
    });
  for (std::thread &w : workers)
    w.join();
}

/// The launch's operands when it is a matmul: x, the weight, y.
struct MatmulLaunch {
  std::string x, weight, y;
};

bool asMatmul(const Step &step, const Kernel &kernel, MatmulLaunch &out) {
  for (size_t i = 0; i < step.args.size(); ++i) {
    const std::string &param = kernel.params[i].name;
    const Arg &arg = step.args[i];
    if (param == "x")
      out.x = arg.name;
    else if (param == "y")
      out.y = arg.name;
    else if (arg.kind == Arg::Kind::Weight)
      out.weight = arg.name;
    else if (param == "bias" || param == "residual")
      return false; // epilogues are checked by their own tests
  }
  return !out.x.empty() && !out.y.empty() && !out.weight.empty();
}

std::vector<float> halvesToFloats(const std::vector<uint16_t> &h) {
  std::vector<float> f(h.size());
  for (size_t i = 0; i < h.size(); ++i)
    f[i] = format::halfToFloat(h[i]);
  return f;
}

} // namespace

std::map<std::string, format::TensorMap>
bindRandomWeights(Executor &executor, uint64_t seed) {
  std::map<std::string, format::TensorMap> result;
  std::set<std::string> used;
  for (const auto &[weight, component] : executor.usedWeightComponents())
    used.insert(weight);
  uint64_t index = 0;
  for (const std::string &name : used) {
    const WeightSpec &spec = *executor.artifact().findWeight(name);
    std::vector<float> w(static_cast<size_t>(spec.n * spec.k));
    fillNormal(w, 0.02f, seed + 1000 * ++index);
    std::vector<float> table;
    format::QuantizeOptions options;
    if (spec.encodingAttr.format == format::ElementFormat::Codebook &&
        spec.encodingAttr.table.empty()) {
      // A named table: any sorted set of distinct values will do, rounded
      // to the table's type (f16 tables hold f16 values).
      const int entries = 1 << spec.encodingAttr.indexBits;
      for (int i = 0; i < entries; ++i)
        table.push_back(format::roundToScalarType(
            -1.0f + 2.0f * i / (entries - 1), spec.encodingAttr.tableType));
      options.table = table.data();
    }
    std::vector<int32_t> gIdx;
    if (spec.encodingAttr.actOrder) {
      // GPTQ desc_act: columns visited in a random order, each run of
      // `group` of them one group, so g_idx is a shuffled k / group.
      std::vector<int32_t> order(static_cast<size_t>(spec.k));
      std::iota(order.begin(), order.end(), 0);
      std::shuffle(order.begin(), order.end(),
                   std::mt19937_64(seed + 1000 * index + 1));
      gIdx.resize(order.size());
      for (int64_t j = 0; j < spec.k; ++j)
        gIdx[order[j]] = static_cast<int32_t>(j / spec.encodingAttr.groupSize);
      options.gIdx = gIdx.data();
    }
    format::TensorMap components;
    std::string error;
    if (!format::quantizeRTN(spec.encodingAttr, w.data(), spec.n, spec.k,
                             components, error, options))
      throw Error("quantizing random weights for '" + name + "': " + error);
    executor.bindWeight(name, components);
    result.emplace(name, std::move(components));
  }
  return result;
}

std::vector<LaunchCheck>
checkPlan(Executor &executor, int64_t batch, CUstream stream,
          const std::map<std::string, format::TensorMap> &weights,
          uint64_t seed) {
  const Artifact &artifact = executor.artifact();
  const Plan &plan = artifact.plan(batch);
  executor.allocate(batch);

  // Fresh activations for every buffer a step reads; NaN in every output.
  std::map<std::string, std::vector<float>> host;
  std::set<std::string> written;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (const Step &step : plan.steps) {
    const Kernel &kernel = artifact.kernels[step.kernelIndex];
    MatmulLaunch mm;
    if (step.kind == Step::Kind::Launch && asMatmul(step, kernel, mm))
      written.insert(mm.y);
  }
  for (const BufferSpec &spec : artifact.buffers) {
    cuda::DeviceBuffer &buffer = executor.buffer(batch, spec.name);
    if (written.count(spec.name)) {
      buffer.fill(0xFF, stream); // f16 0xFFFF is a NaN
      continue;
    }
    if (spec.dtype != DType::F16)
      continue;
    std::vector<uint16_t> h(buffer.size() / 2);
    std::vector<float> f(h.size());
    for (size_t i = 0; i < h.size(); ++i) {
      h[i] = format::floatToHalf(dist(rng));
      f[i] = format::halfToFloat(h[i]);
    }
    buffer.upload(h.data(), h.size() * 2);
    host[spec.name] = std::move(f);
  }
  executor.run(batch, stream);
  QFUSE_CU_CTX(cuStreamSynchronize(stream), "running the plan to check it");

  std::vector<LaunchCheck> checks;
  for (const Step &step : plan.steps) {
    if (step.kind != Step::Kind::Launch)
      continue;
    const Kernel &kernel = artifact.kernels[step.kernelIndex];
    MatmulLaunch mm;
    if (!asMatmul(step, kernel, mm))
      continue;
    const WeightSpec &spec = *artifact.findWeight(mm.weight);
    auto xIt = host.find(mm.x);
    if (xIt == host.end())
      throw Error("check: launch of '" + kernel.name + "' reads '" + mm.x +
                  "', which another launch writes; chained plans are checked "
                  "by the decode tests");
    std::vector<float> dense;
    std::string error;
    if (!format::dequantize(spec.encodingAttr, weights.at(mm.weight), spec.n,
                            spec.k, dense, error))
      throw Error("check: dequantizing '" + mm.weight + "': " + error);
    std::vector<float> ref =
        format::referenceMatmul(xIt->second.data(), dense.data(), batch,
                                spec.n, spec.k);
    std::vector<uint16_t> yh(static_cast<size_t>(batch * spec.n));
    executor.buffer(batch, mm.y).download(yh.data(), yh.size() * 2);
    std::vector<float> y = halvesToFloats(yh);
    LaunchCheck c;
    c.kernel = kernel.name;
    c.weight = mm.weight;
    c.m = batch;
    c.n = spec.n;
    c.k = spec.k;
    for (float v : y)
      c.unwritten |= std::isnan(v);
    c.relativeError = format::relativeError(y, ref);
    c.passed = !c.unwritten && c.relativeError <= kRelativeTolerance;
    checks.push_back(c);
  }
  return checks;
}

} // namespace qfuse::runtime::check
