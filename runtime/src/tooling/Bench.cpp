//===- Bench.cpp - Device timing: copy bandwidth, cuBLAS, plans -----------===//

#include "qfuse/runtime/tooling/Bench.h"

#include "qfuse/runtime/Error.h"

#include "qfuse/format/Layout.h"
#include "qfuse/format/Numerics.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <optional>

namespace qfuse::runtime::bench {
namespace {

constexpr uint64_t kAlignment = 256;

uint64_t alignUp(uint64_t value) {
  return (value + kAlignment - 1) / kAlignment * kAlignment;
}

void checkConfig(const Config &config) {
  if (config.iterations < kMinIterations)
    throw Error("benchmark: " + std::to_string(config.iterations) +
                " timed iterations; the median needs at least " +
                std::to_string(kMinIterations));
  if (config.warmup < 0)
    throw Error("benchmark: negative warm-up count");
}

struct ModelShape {
  std::string_view name;
  int64_t hidden, kv, mlp, vocab, layers;
};

constexpr ModelShape kModels[] = {
    {"qwen2.5-1.5b", 1536, 256, 8960, 151936, 28},
    {"llama3-8b", 4096, 1024, 14336, 128256, 32},
};

/// The 32-bit pattern of a placeholder scale 1/64 in `dtype`, and its width.
std::pair<uint32_t, int> placeholderScale(format::DType dtype) {
  const float value = 1.0f / 64.0f;
  switch (dtype) {
  case format::DType::F16:
    return {format::floatToHalf(value), 2};
  case format::DType::BF16:
    return {format::floatToBFloat16(value), 2};
  case format::DType::F32: {
    uint32_t bits;
    std::memcpy(&bits, &value, sizeof(bits));
    return {bits, 4};
  }
  case format::DType::F8E4M3:
    return {format::encodeE4M3(value), 1};
  case format::DType::F8E8M0:
    return {127 - 6, 1};
  default:
    return {0, 1};
  }
}

void fillPattern(CUdeviceptr ptr, size_t bytes, uint32_t pattern, int width,
                 CUstream stream, const std::string &what) {
  if (width == 4 && bytes % 4 == 0)
    QFUSE_CU_CTX(cuMemsetD32Async(ptr, pattern, bytes / 4, stream), what);
  else if (width == 2 && bytes % 2 == 0)
    QFUSE_CU_CTX(cuMemsetD16Async(ptr, static_cast<unsigned short>(pattern),
                                  bytes / 2, stream),
                 what);
  else
    QFUSE_CU_CTX(cuMemsetD8Async(ptr, static_cast<unsigned char>(pattern),
                                 bytes, stream),
                 what);
}

} // namespace

Stats Stats::of(std::vector<double> samplesMs) {
  Stats stats;
  stats.samplesMs = std::move(samplesMs);
  if (stats.samplesMs.empty())
    return stats;
  std::vector<double> sorted = stats.samplesMs;
  std::sort(sorted.begin(), sorted.end());
  const size_t n = sorted.size();
  stats.medianMs =
      n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
  stats.minMs = sorted.front();
  stats.maxMs = sorted.back();
  return stats;
}

namespace {
/// One timed iteration ran every rotating copy once: per-copy samples.
Stats samplesPerCopy(const Stats &perIteration, int copies) {
  std::vector<double> samples;
  for (double ms : perIteration.samplesMs)
    samples.push_back(ms / copies);
  return Stats::of(std::move(samples));
}
} // namespace

Stats timeOnStream(CUstream stream, const Config &config,
                   const std::function<void(int iteration)> &enqueue,
                   const std::function<void()> &beforeEach) {
  checkConfig(config);
  for (int i = 0; i < config.warmup; ++i)
    enqueue(i);
  QFUSE_CU_CTX(cuStreamSynchronize(stream), "warming up");
  std::vector<cuda::Event> starts, ends;
  starts.reserve(config.iterations);
  ends.reserve(config.iterations);
  for (int i = 0; i < config.iterations; ++i) {
    starts.emplace_back();
    ends.emplace_back();
  }
  for (int i = 0; i < config.iterations; ++i) {
    if (beforeEach)
      beforeEach();
    starts[i].record(stream);
    enqueue(i);
    ends[i].record(stream);
  }
  QFUSE_CU_CTX(cuStreamSynchronize(stream), "running the timed iterations");
  std::vector<double> samples;
  for (int i = 0; i < config.iterations; ++i)
    samples.push_back(cuda::Event::elapsedMs(starts[i], ends[i]));
  return Stats::of(std::move(samples));
}

L2Flusher::L2Flusher(uint64_t l2Bytes)
    : buffer_(2 * l2Bytes, "L2 flush buffer") {}

void L2Flusher::flush(CUstream stream) {
  QFUSE_CU_CTX(
      cuMemsetD32Async(buffer_.ptr(), 0x5a5a5a5a, buffer_.size() / 4, stream),
      "flushing the L2");
}

uint64_t l2Bytes(const cuda::Context &context) {
  const uint64_t device = static_cast<uint64_t>(
      context.attribute(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE));
  return std::max(device, kAssumedL2Bytes);
}

int rotatingCopies(uint64_t bytesPerCopy, uint64_t l2) {
  if (bytesPerCopy == 0)
    return 1;
  return static_cast<int>(3 * l2 / bytesPerCopy + 1);
}

//===----------------------------------------------------------------------===//
// Copy bandwidth
//===----------------------------------------------------------------------===//

CopyResult copyBandwidth(CUstream stream, uint64_t bytes,
                         const Config &config) {
  cuda::DeviceBuffer source(bytes, "copy source");
  cuda::DeviceBuffer target(bytes, "copy target");
  source.fill(0x5a, stream);
  target.zero(stream);
  CopyResult result;
  result.bytes = bytes;
  result.stats = timeOnStream(stream, config, [&](int) {
    QFUSE_CU_CTX(cuMemcpyDtoDAsync(target.ptr(), source.ptr(), bytes, stream),
                 "copying " + std::to_string(bytes) + " bytes on the device");
  });
  result.gbPerSecond = 2.0 * double(bytes) / (result.stats.medianMs * 1e6);
  return result;
}

//===----------------------------------------------------------------------===//
// cuBLAS
//===----------------------------------------------------------------------===//

std::vector<std::string> knownModels() {
  std::vector<std::string> names;
  for (const ModelShape &model : kModels)
    names.emplace_back(model.name);
  return names;
}

std::vector<Matmul> decodeStepMatmuls(std::string_view name) {
  for (const ModelShape &model : kModels) {
    if (model.name != name)
      continue;
    std::vector<Matmul> matmuls;
    for (int64_t layer = 0; layer < model.layers; ++layer) {
      const std::string prefix = "layers." + std::to_string(layer) + ".";
      matmuls.push_back({prefix + "q_proj", model.hidden, model.hidden});
      matmuls.push_back({prefix + "k_proj", model.kv, model.hidden});
      matmuls.push_back({prefix + "v_proj", model.kv, model.hidden});
      matmuls.push_back({prefix + "o_proj", model.hidden, model.hidden});
      matmuls.push_back({prefix + "gate_proj", model.mlp, model.hidden});
      matmuls.push_back({prefix + "up_proj", model.mlp, model.hidden});
      matmuls.push_back({prefix + "down_proj", model.hidden, model.mlp});
    }
    matmuls.push_back({"lm_head", model.vocab, model.hidden});
    return matmuls;
  }
  std::string known;
  for (const std::string &model : knownModels())
    known += (known.empty() ? "" : ", ") + model;
  throw Error("unknown model '" + std::string(name) + "' (known: " + known +
              ")");
}

GemmShape parseGemmShape(std::string_view text) {
  auto bad = [&]() -> Error {
    return Error("GEMM shape '" + std::string(text) +
                 "': expected MxNxK with positive integers");
  };
  std::vector<int64_t> numbers;
  size_t start = 0;
  while (true) {
    const size_t x = text.find('x', start);
    const std::string_view part = text.substr(start, x - start);
    if (part.empty() || part.size() > 9 ||
        part.find_first_not_of("0123456789") != std::string_view::npos)
      throw bad();
    numbers.push_back(std::stoll(std::string(part)));
    if (numbers.back() <= 0)
      throw bad();
    if (x == std::string_view::npos)
      break;
    start = x + 1;
  }
  if (numbers.size() != 3)
    throw bad();
  return {numbers[0], Matmul{std::string(text), numbers[1], numbers[2]}};
}

GemmResult cublasGemm(const cuda::Context &context, cuda::Cublas &cublas,
                      CUstream stream, const std::string &label, int64_t m,
                      const std::vector<Matmul> &matmuls,
                      const Config &config) {
  if (matmuls.empty())
    throw Error("cuBLAS benchmark '" + label + "': no matmuls");
  GemmResult result;
  result.label = label;
  result.m = m;
  result.matmuls = matmuls.size();

  // One copy of every weight, 256-byte aligned, and x / y big enough for all.
  std::vector<uint64_t> offsets;
  uint64_t perCopy = 0;
  int64_t maxK = 0, maxN = 0;
  for (const Matmul &mm : matmuls) {
    if (mm.n <= 0 || mm.k <= 0 || mm.n > INT32_MAX || mm.k > INT32_MAX)
      throw Error("cuBLAS benchmark '" + label + "': bad shape for " + mm.name);
    offsets.push_back(perCopy);
    perCopy += alignUp(uint64_t(mm.n) * mm.k * 2);
    maxK = std::max(maxK, mm.k);
    maxN = std::max(maxN, mm.n);
    result.bytesPerPass +=
        2 * (uint64_t(mm.n) * mm.k + uint64_t(m) * mm.k + uint64_t(m) * mm.n);
    result.flopsPerPass += 2 * uint64_t(m) * mm.n * mm.k;
  }
  const uint64_t l2 = l2Bytes(context);
  result.copies = rotatingCopies(perCopy, l2);
  std::optional<L2Flusher> flusher;
  if (result.copies > kMaxCopies) {
    result.copies = kMaxCopies;
    result.l2Flushed = true;
    flusher.emplace(l2);
  }

  std::vector<cuda::DeviceBuffer> weights;
  for (int c = 0; c < result.copies; ++c) {
    weights.emplace_back(perCopy,
                         label + " weights, copy " + std::to_string(c));
    // 1/128 in f16: finite products and sums for any K.
    fillPattern(weights.back().ptr(), perCopy, 0x2000, 2, stream,
                "filling cuBLAS weights");
  }
  cuda::DeviceBuffer x(uint64_t(m) * maxK * 2, label + " x");
  cuda::DeviceBuffer y(uint64_t(m) * maxN * 2, label + " y");
  fillPattern(x.ptr(), x.size(), 0x3c00, 2, stream, "filling x"); // 1.0
  y.zero(stream);

  cublas.setStream(stream);
  cuda::Graph graph = cuda::Graph::capture(stream, [&] {
    for (int c = 0; c < result.copies; ++c)
      for (size_t i = 0; i < matmuls.size(); ++i)
        cublas.gemmRowMajor(CUDA_R_16F, y.ptr(), x.ptr(),
                            weights[c].ptr() + offsets[i], static_cast<int>(m),
                            static_cast<int>(matmuls[i].n),
                            static_cast<int>(matmuls[i].k));
  });
  Stats perReplay = timeOnStream(
      stream, config, [&](int) { graph.launch(stream); },
      [&] {
        if (flusher)
          flusher->flush(stream);
      });
  result.stats = samplesPerCopy(perReplay, result.copies);
  result.gbPerSecond =
      double(result.bytesPerPass) / (result.stats.medianMs * 1e6);
  result.tflops = double(result.flopsPerPass) / (result.stats.medianMs * 1e9);
  return result;
}

//===----------------------------------------------------------------------===//
// Artifact plans
//===----------------------------------------------------------------------===//

namespace {

/// act_order's sorted column order as a placeholder: a valid permutation
/// (the kernel gathers activations through it); a stride coprime to K
/// scatters like a real desc_act order.
std::vector<int32_t> placeholderPerm(int64_t k) {
  const int64_t stride = std::gcd<int64_t>(k, 7919) == 1 ? 7919 : 1;
  std::vector<int32_t> perm(static_cast<size_t>(k));
  for (int64_t j = 0; j < k; ++j)
    perm[j] = static_cast<int32_t>((j * stride) % k);
  return perm;
}

/// The placeholder of an index component (g_idx, perm, inv_perm), or none
/// for the others. inv_perm is perm's exact inverse: a producer scatters
/// its output columns through it, and anything else writes out of bounds
/// or leaves columns unwritten.
std::optional<std::vector<int32_t>>
placeholderIndices(const WeightSpec &weight, const std::string &component) {
  if (component == format::kPerm)
    return placeholderPerm(weight.k);
  if (component == format::kInvPerm)
    return format::invertPermutation(placeholderPerm(weight.k));
  if (component != format::kGIdx)
    return std::nullopt;
  const int64_t group = weight.encodingAttr.groupSize > 0
                            ? weight.encodingAttr.groupSize
                            : weight.k;
  std::vector<int32_t> gIdx(static_cast<size_t>(weight.k));
  for (int64_t k = 0; k < weight.k; ++k)
    gIdx[k] = static_cast<int32_t>(k / group);
  return gIdx;
}

} // namespace

void bindPlaceholderWeights(Executor &executor, CUstream stream) {
  const Artifact &artifact = executor.artifact();
  for (const auto &[weightName, component] : executor.usedWeightComponents()) {
    if (executor.componentPointer(weightName, component))
      continue;
    const WeightSpec &weight = *artifact.findWeight(weightName);
    const format::ComponentSpec &spec = *weight.findComponent(component);
    // The repacked shape (padded codes in the mma fragment layout), in whole
    // 16-byte units as Executor::bindWeightComponent allocates.
    const size_t bytes =
        (static_cast<size_t>(format::numElements(format::layoutComponentShape(
             weight.encodingAttr, weight.layoutAttr, spec, weight.n,
             weight.k))) *
             format::dtypeBytes(spec.dtype) +
         15) /
        16 * 16;
    cuda::DeviceBuffer buffer(bytes,
                              weightName + "." + component + " (placeholder)");
    const std::string what =
        "filling placeholder " + weightName + "." + component;
    if (std::optional<std::vector<int32_t>> indices =
            placeholderIndices(weight, component)) {
      buffer.upload(indices->data(), indices->size() * sizeof(int32_t));
    } else if (component == format::kMetadata) {
      // Every quad keeps columns 0 and 1.
      fillPattern(buffer.ptr(), bytes, 0x44, 1, stream, what);
    } else if (component == format::kGlobalScale) {
      fillPattern(buffer.ptr(), bytes, 0x3f800000, 4, stream, what); // 1.0f
    } else if (component == format::kScales) {
      auto [pattern, width] = placeholderScale(spec.dtype);
      fillPattern(buffer.ptr(), bytes, pattern, width, stream, what);
    } else {
      // Codes and zero points: random bytes, never zeros (zeros can run
      // faster than real data and hide indexing errors).
      std::vector<uint8_t> bytesHost(bytes);
      uint64_t state = 0x9E3779B97F4A7C15ull ^ bytes;
      for (size_t i = 0; i + 8 <= bytesHost.size(); i += 8) {
        state += 0x9E3779B97F4A7C15ull; // splitmix64
        uint64_t z = state;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        z ^= z >> 31;
        std::memcpy(&bytesHost[i], &z, 8);
      }
      buffer.upload(bytesHost.data(), bytesHost.size());
    }
    executor.bindWeightComponent(weightName, component, std::move(buffer));
  }
  QFUSE_CU_CTX(cuStreamSynchronize(stream), "filling placeholder weights");
  std::vector<std::string> unbound = executor.unboundArguments();
  for (const std::string &name : executor.usedTensors()) {
    if (std::find(unbound.begin(), unbound.end(), "tensor '" + name + "'") ==
        unbound.end())
      continue;
    const TensorSpec &spec = *artifact.findTensor(name);
    std::vector<uint8_t> zeros(spec.numBytes());
    executor.bindTensor(name, zeros.data(), zeros.size());
  }
}

void fillPlanInputs(Executor &executor, int64_t batch, CUstream stream) {
  const Artifact &artifact = executor.artifact();
  for (const BufferSpec &spec : artifact.buffers) {
    if (spec.sharedByPlans() ||
        std::find(artifact.inputs.begin(), artifact.inputs.end(), spec.name) ==
            artifact.inputs.end())
      continue;
    const cuda::DeviceBuffer &buffer = executor.buffer(batch, spec.name);
    const std::string what = "filling input '" + spec.name + "'";
    switch (spec.dtype) {
    case DType::F16:
      fillPattern(buffer.ptr(), buffer.size(), format::floatToHalf(1.0f), 2,
                  stream, what);
      break;
    case DType::BF16:
      fillPattern(buffer.ptr(), buffer.size(), format::floatToBFloat16(1.0f),
                  2, stream, what);
      break;
    case DType::F32:
      fillPattern(buffer.ptr(), buffer.size(), 0x3f800000, 4, stream, what);
      break;
    default:
      fillPattern(buffer.ptr(), buffer.size(), 0, 1, stream, what);
      break;
    }
  }
  QFUSE_CU_CTX(cuStreamSynchronize(stream), "filling the plan inputs");
}


PlanResult artifactPlan(const cuda::Context &context, Executor &executor,
                        CUstream stream, int64_t batch, const Config &config) {
  const Artifact &artifact = executor.artifact();
  PlanResult result;
  result.artifact = artifact.source;
  result.batch = batch;
  // The steps that run with the perms bound (PermGuards.h).
  result.steps = executor.runningPlan(batch).steps.size();

  // What this batch's plan reads: an artifact with a layout per kernel
  // family runs one of them at a batch.
  const auto used = executor.runningWeightComponents(batch);
  std::vector<std::pair<std::string, std::string>> components(used.begin(),
                                                              used.end());
  std::vector<CUdeviceptr> originals;
  std::vector<uint64_t> sizes;
  for (const auto &[weight, component] : components) {
    const size_t bytes = executor.componentBytes(weight, component);
    if (bytes == 0)
      throw Error("benchmark: weight '" + weight + "' component '" + component +
                  "' is unbound or not owned by the executor");
    originals.push_back(executor.componentPointer(weight, component));
    sizes.push_back(bytes);
    result.weightBytes += bytes;
  }
  executor.allocate(batch);
  fillPlanInputs(executor, batch, stream);
  if (!artifact.roofline.empty()) {
    for (const RooflineEntry &entry : artifact.roofline)
      result.bytesPerRun += entry.bytes;
  } else {
    result.bytesPerRun = result.weightBytes + executor.bufferBytes(batch);
  }
  const uint64_t l2 = l2Bytes(context);
  result.copies = rotatingCopies(result.weightBytes, l2);
  std::optional<L2Flusher> flusher;
  if (result.copies > kMaxCopies) {
    result.copies = kMaxCopies;
    result.l2Flushed = true;
    flusher.emplace(l2);
  }

  // Copy c > 0 of every component; pointers[c][i] is copy c of component i.
  // A perm stays put: binding one reads it back for its guards (a context
  // synchronize, refused while the copies' graph is captured), and at 4
  // bytes a column it is no L2 matter.
  auto rotates = [&](size_t i) { return components[i].second != format::kPerm; };
  std::vector<cuda::DeviceBuffer> copies;
  std::vector<std::vector<CUdeviceptr>> pointers{originals};
  for (int c = 1; c < result.copies; ++c) {
    pointers.emplace_back(originals);
    for (size_t i = 0; i < components.size(); ++i) {
      if (!rotates(i))
        continue;
      copies.emplace_back(sizes[i], components[i].first + "." +
                                        components[i].second + " copy " +
                                        std::to_string(c));
      QFUSE_CU_CTX(cuMemcpyDtoDAsync(copies.back().ptr(), originals[i],
                                     sizes[i], stream),
                   "copying weights for rotation");
      pointers.back()[i] = copies.back().ptr();
    }
  }
  auto bindCopy = [&](int c) {
    for (size_t i = 0; i < components.size(); ++i)
      if (rotates(i))
        executor.bindWeightComponent(components[i].first,
                                     components[i].second, pointers[c][i]);
  };
  // Every copy's launches back to back in one graph, as the cuBLAS baseline
  // runs its copies and a decode step its kernels (graphPerCopy: a graph
  // each, which adds a graph launch between kernels that cuBLAS does not pay).
  std::vector<cuda::Graph> graphs;
  graphs.push_back(executor.makeGraph(batch, stream)); // allocates
  if (config.graphPerCopy) {
    for (int c = 1; c < result.copies; ++c) {
      bindCopy(c);
      graphs.push_back(executor.makeGraph(batch, stream));
    }
  } else {
    graphs.front() = cuda::Graph::capture(stream, [&] {
      for (int c = 0; c < result.copies; ++c) {
        bindCopy(c);
        executor.run(batch, stream);
      }
    });
  }
  bindCopy(0);

  Stats perIteration = timeOnStream(
      stream, config,
      [&](int) {
        for (const cuda::Graph &graph : graphs)
          graph.launch(stream);
      },
      [&] {
        if (flusher)
          flusher->flush(stream);
      });
  result.stats = samplesPerCopy(perIteration, result.copies);
  result.gbPerSecond =
      double(result.bytesPerRun) / (result.stats.medianMs * 1e6);
  return result;
}

} // namespace qfuse::runtime::bench
