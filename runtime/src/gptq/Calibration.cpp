//===- Calibration.cpp - GPTQ Hessians, layer by layer, on the GPU --------===//

#include "qfuse/runtime/gptq/Calibration.h"

#include "qfuse/runtime/Error.h"

#include <algorithm>
#include <set>

namespace qfuse::runtime {
namespace {

constexpr const char *kInputIds = "input_ids";
constexpr const char *kPositions = "positions";

} // namespace

//===----------------------------------------------------------------------===//
// GpuHessian
//===----------------------------------------------------------------------===//

int64_t GpuHessian::defaultBlocks(int64_t k) {
  if (k < kTriangleMinColumns)
    return 1;
  return (k + kTriangleBlockColumns - 1) / kTriangleBlockColumns;
}

GpuHessian::GpuHessian(int64_t k, CUstream stream, int64_t stagingRows,
                       std::string label, int64_t blocks)
    : k_(k), stagingRows_(stagingRows), label_(std::move(label)) {
  if (blocks == 0)
    blocks = defaultBlocks(k);
  if (k <= 0 || stagingRows < 0 || blocks < 1 || blocks > k)
    throw Error(label_ +
                ": a Hessian needs K > 0 columns, stagingRows >= 0 and 1 to "
                "K blocks, got K = " +
                std::to_string(k) +
                ", stagingRows = " + std::to_string(stagingRows) +
                ", blocks = " + std::to_string(blocks));
  // Block edges on multiples of 8 columns where K allows: 16-byte aligned
  // f16 rows for the tensor cores.
  const int64_t align = k % 8 == 0 ? 8 : 1;
  for (int64_t b = 0; b < blocks; ++b)
    blockStarts_.push_back(k * b / blocks / align * align);
  blockStarts_.push_back(k);
  h_ = cuda::DeviceBuffer(size_t(k) * size_t(k) * 4, label_ + " (f32 [K, K])");
  h_.zero(stream);
  if (stagingRows > 0)
    staging_ = cuda::DeviceBuffer(size_t(stagingRows) * size_t(k) * 2,
                                  label_ + " (staged f16 rows)");
}

void GpuHessian::add(cuda::Cublas &cublas, CUdeviceptr x, int64_t rows,
                     CUstream stream) {
  if (rows < 0)
    throw Error(label_ + ": cannot add " + std::to_string(rows) + " rows");
  accumulate(cublas, x, rows, stream);
  mirror(cublas, stream);
}

void GpuHessian::accumulate(cuda::Cublas &cublas, CUdeviceptr x, int64_t rows,
                            CUstream stream) {
  if (rows == 0)
    return;
  const double total = double(n_) + double(rows);
  const float alpha = float(2.0 / total);
  const float beta = float(double(n_) / total);
  const int k = int(k_);
  const int m = int(rows);
  cublas.setStream(stream);
  // X row-major [m, K] is the column-major [K, m] matrix A = X^T (leading
  // dimension K), so X^T X = A A^T: op(A) = N, op(B) = T with B = A. H is
  // symmetric, so its column-major result is the row-major one. Block
  // (i, j), i >= j: rows i of A times rows j of A, at column j, row i of H.
  for (size_t j = 0; j + 1 < blockStarts_.size(); ++j)
    for (size_t i = j; i + 1 < blockStarts_.size(); ++i) {
      const int64_t r0 = blockStarts_[i], c0 = blockStarts_[j];
      const int rowsOfBlock = int(blockStarts_[i + 1] - r0);
      const int colsOfBlock = int(blockStarts_[j + 1] - c0);
      QFUSE_CUBLAS_CTX(
          cublasGemmEx(
              cublas.get(), CUBLAS_OP_N, CUBLAS_OP_T, rowsOfBlock,
              colsOfBlock, m, &alpha,
              reinterpret_cast<const void *>(x + size_t(r0) * 2), CUDA_R_16F,
              k, reinterpret_cast<const void *>(x + size_t(c0) * 2),
              CUDA_R_16F, k, &beta,
              reinterpret_cast<void *>(h_.ptr() +
                                       (size_t(c0) * size_t(k) + r0) * 4),
              CUDA_R_32F, k, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
          label_ + ": H += X^T X over " + std::to_string(rows) +
              " rows of K = " + std::to_string(k_) + " (block " +
              std::to_string(i) + ", " + std::to_string(j) + ")");
    }
  n_ += rows;
}

void GpuHessian::mirror(cuda::Cublas &cublas, CUstream stream) {
  cublas.setStream(stream);
  const float one = 1.0f, zero = 0.0f;
  const int k = int(k_);
  // Block (j, i) above the diagonal = block (i, j)^T; geam with beta = 0
  // and B = C (in place, op(B) = N) writes C from op(A) alone.
  for (size_t j = 0; j + 1 < blockStarts_.size(); ++j)
    for (size_t i = j + 1; i + 1 < blockStarts_.size(); ++i) {
      const int64_t r0 = blockStarts_[i], c0 = blockStarts_[j];
      const int rowsOfBlock = int(blockStarts_[i + 1] - r0);
      const int colsOfBlock = int(blockStarts_[j + 1] - c0);
      auto *below = reinterpret_cast<const float *>(
          h_.ptr() + (size_t(c0) * size_t(k) + r0) * 4);
      auto *above =
          reinterpret_cast<float *>(h_.ptr() + (size_t(r0) * size_t(k) + c0) * 4);
      QFUSE_CUBLAS_CTX(cublasSgeam(cublas.get(), CUBLAS_OP_T, CUBLAS_OP_N,
                                   colsOfBlock, rowsOfBlock, &one, below, k,
                                   &zero, above, k, above, k),
                       label_ + ": mirroring block (" + std::to_string(i) +
                           ", " + std::to_string(j) + ") of H");
    }
}

void GpuHessian::stage(cuda::Cublas &cublas, CUdeviceptr x, int64_t rows,
                       CUstream stream) {
  if (rows < 0 || rows > stagingRows_)
    throw Error(label_ + ": cannot stage " + std::to_string(rows) +
                " rows in a staging buffer of " + std::to_string(stagingRows_) +
                " rows");
  if (pending_ + rows > stagingRows_) {
    accumulate(cublas, staging_.ptr(), pending_, stream);
    pending_ = 0;
  }
  if (rows == 0)
    return;
  const size_t rowBytes = size_t(k_) * 2;
  QFUSE_CU_CTX(cuMemcpyDtoDAsync(staging_.ptr() + size_t(pending_) * rowBytes,
                                 x, size_t(rows) * rowBytes, stream),
               label_ + ": staging " + std::to_string(rows) + " rows");
  pending_ += rows;
}

void GpuHessian::flush(cuda::Cublas &cublas, CUstream stream) {
  accumulate(cublas, staging_.ptr(), pending_, stream);
  pending_ = 0;
  mirror(cublas, stream);
}

std::vector<float> GpuHessian::download(CUstream stream) const {
  QFUSE_CU_CTX(cuStreamSynchronize(stream), label_ + ": waiting for H");
  std::vector<float> out(size_t(k_) * size_t(k_));
  h_.download(out.data(), out.size() * 4);
  return out;
}

//===----------------------------------------------------------------------===//
// LayerwiseCalibrator
//===----------------------------------------------------------------------===//

const char *calibrationPhaseName(CalibrationPhase phase) {
  switch (phase) {
  case CalibrationPhase::Capture:
    return "capture";
  case CalibrationPhase::Collect:
    return "collect";
  case CalibrationPhase::Propagate:
    return "propagate";
  }
  return "?";
}

size_t LayerwiseCalibrator::Store::bytes() const {
  size_t total = 0;
  for (const auto &entry : buffers)
    total += entry.second.size();
  return total;
}

void LayerwiseCalibrator::fail(const std::string &what) const {
  throw Error("calibration of artifact '" + executor_.artifact().source +
              "': " + what);
}

LayerwiseCalibrator::LayerwiseCalibrator(Executor &executor, CUstream stream,
                                         CalibrationOptions options)
    : executor_(executor), stream_(stream), options_(std::move(options)) {
  const Artifact &artifact = executor.artifact();
  if (!artifact.model.present || artifact.model.maxSeq <= 0 ||
      artifact.model.vocabSize <= 0)
    fail("needs a \"model\" object with max_seq and vocab_size "
         "(docs/decode-model.md)");
  for (const char *name : {kInputIds, kPositions}) {
    const BufferSpec *spec = artifact.findBuffer(name);
    if (!spec || spec->state || spec->dtype != DType::I32 ||
        spec->shape.size() != 1 || !spec->shape[0].isBatch)
      fail(std::string("needs buffer '") + name + "' as [M] i32 " +
           "(docs/decode-model.md)");
  }
  for (const Plan &plan : artifact.plans)
    chunkRows_ = std::max(chunkRows_, plan.batch);
  layers_ = analyzePlanLayers(artifact, chunkRows_);

  const Plan &plan = artifact.plan(chunkRows_);
  for (const PlanLayer &layer : layers_.layers) {
    const std::string where = "layer " + std::to_string(layer.index);
    for (size_t s = layer.steps.first; s < layer.steps.last; ++s) {
      const Step &step = plan.steps[s];
      if (step.kind != Step::Kind::Launch)
        continue;
      for (const Arg &arg : step.args)
        if (arg.kind == Arg::Kind::Weight)
          fail(where + ": step " + std::to_string(s) + " launches '" +
               step.target + "' over weight '" + arg.name +
               "'; calibration reads each linear's input from a gemm step, "
               "so it needs the fp16 artifact (qfuse emit --encoding fp16)");
    }
    if (layer.groups.empty())
      fail(where + " has no gemm step: nothing to calibrate");
    for (const std::string &input : layer.planInputs)
      if (input != kInputIds && input != kPositions)
        fail(where + " reads plan input '" + input +
             "'; calibration fills only input_ids and positions");
    for (const SharedInput &group : layer.groups) {
      const BufferSpec *x = artifact.findBuffer(group.x);
      const WeightSpec *w = artifact.findWeight(group.modules.front().weight);
      if (!x || !w || x->dtype != DType::F16 || x->shape.size() != 2 ||
          !x->shape[0].isBatch || x->shape[1].isBatch ||
          x->shape[1].value != w->k)
        fail(where + ": the input '" + group.x + "' of '" +
             group.modules.front().weight +
             "' is not an f16 [M, K] buffer with K the weight's "
             "in_features");
    }
  }
  executor_.allocate(chunkRows_);
  cublas_ = std::make_unique<cuda::Cublas>();
}

LayerwiseCalibrator::~LayerwiseCalibrator() {
  // The stores are freed below; nothing may still be copying into them.
  cuStreamSynchronize(stream_);
}

void LayerwiseCalibrator::requireStored(int64_t layer, const char *call) const {
  if (layer < 0 || layer >= numLayers())
    fail(std::string(call) + "(" + std::to_string(layer) +
         "): the model has layers 0.." + std::to_string(numLayers() - 1));
  if (storedLayer_ == layer)
    return;
  std::string held;
  if (storedLayer_ < 0)
    held = "begin() has not run";
  else if (storedLayer_ >= numLayers())
    held = "every layer has been propagated";
  else
    held = "the store holds layer " + std::to_string(storedLayer_) + "'s";
  fail(std::string(call) + "(" + std::to_string(layer) + ") needs layer " +
       std::to_string(layer) + "'s inputs, but " + held +
       " (begin(), then collect(l) and propagate(l) for l = 0, 1, ...)");
}

size_t LayerwiseCalibrator::storeBytes(int64_t layer) const {
  if (layer < 0 || layer >= numLayers())
    return 0;
  size_t total = 0;
  for (const std::string &name : layers_.layers[size_t(layer)].inputs)
    total += executor_.artifact().findBuffer(name)->numBytes(chunkRows_) *
             chunks_.size();
  return total;
}

size_t LayerwiseCalibrator::heldStoreBytes() const {
  return store_.bytes() + next_.bytes();
}

void LayerwiseCalibrator::noteHeld() {
  peakStoreBytes_ = std::max(peakStoreBytes_, heldStoreBytes());
}

LayerwiseCalibrator::Store LayerwiseCalibrator::allocateStore(int64_t layer) {
  Store store;
  store.layer = layer;
  for (const std::string &name : layers_.layers[size_t(layer)].inputs) {
    const size_t slab = executor_.buffer(chunkRows_, name).size();
    store.buffers.emplace(name,
                          cuda::DeviceBuffer(slab * chunks_.size(),
                                             "calibration store of layer " +
                                                 std::to_string(layer) +
                                                 " input '" + name + "'"));
  }
  return store;
}

void LayerwiseCalibrator::saveInputs(Store &store, size_t chunk) {
  for (auto &[name, slabs] : store.buffers) {
    const cuda::DeviceBuffer &live = executor_.buffer(chunkRows_, name);
    QFUSE_CU_CTX(cuMemcpyDtoDAsync(slabs.ptr() + chunk * live.size(),
                                   live.ptr(), live.size(), stream_),
                 "saving buffer '" + name + "' of chunk " +
                     std::to_string(chunk));
  }
}

void LayerwiseCalibrator::restoreInputs(const Store &store, size_t chunk) {
  for (const auto &[name, slabs] : store.buffers) {
    const cuda::DeviceBuffer &live = executor_.buffer(chunkRows_, name);
    QFUSE_CU_CTX(
        cuMemcpyDtoDAsync(live.ptr(), slabs.ptr() + chunk * live.size(),
                          live.size(), stream_),
        "restoring buffer '" + name + "' of chunk " + std::to_string(chunk));
  }
}

void LayerwiseCalibrator::uploadPlanInputs(
    const std::vector<std::string> &names, size_t chunk) {
  const size_t bytes = size_t(chunkRows_) * 4;
  for (const std::string &name : names) {
    const cuda::DeviceBuffer &from = name == kInputIds ? ids_ : positions_;
    QFUSE_CU_CTX(cuMemcpyDtoDAsync(executor_.buffer(chunkRows_, name).ptr(),
                                   from.ptr() + chunk * bytes, bytes, stream_),
                 "copying " + name + " of chunk " + std::to_string(chunk));
  }
}

void LayerwiseCalibrator::forEachChunk(
    CalibrationPhase phase, int64_t layer,
    const std::vector<std::string> &state,
    const std::function<void(size_t chunk)> &body) {
  const int64_t samples = numSamples();
  for (int64_t s = 0; s < samples; ++s) {
    for (const std::string &name : state)
      executor_.stateBuffer(name).zero(stream_);
    const auto [first, last] = sampleChunks_[size_t(s)];
    for (size_t c = first; c < last; ++c)
      body(c);
    if (options_.progress)
      options_.progress({phase, layer, s + 1, samples});
  }
  QFUSE_CU_CTX(cuStreamSynchronize(stream_),
               std::string("finishing the ") + calibrationPhaseName(phase) +
                   " pass" +
                   (layer >= 0 ? " of layer " + std::to_string(layer) : ""));
}

void LayerwiseCalibrator::prepareChunks(
    const std::vector<std::vector<int32_t>> &samples, const char *call) {
  const Artifact &artifact = executor_.artifact();
  const int64_t maxSeq = artifact.model.maxSeq;
  const int64_t vocab = artifact.model.vocabSize;
  if (samples.empty())
    fail(std::string(call) + ": no calibration samples");
  for (size_t s = 0; s < samples.size(); ++s) {
    const int64_t length = int64_t(samples[s].size());
    const int64_t padded = (length + chunkRows_ - 1) / chunkRows_ * chunkRows_;
    if (length == 0)
      fail(std::string(call) + ": sample " + std::to_string(s) + " is empty");
    if (padded > maxSeq)
      fail(std::string(call) + ": sample " + std::to_string(s) + " has " +
           std::to_string(length) + " tokens; in chunks of " +
           std::to_string(chunkRows_) +
           " rows its last chunk reaches position " +
           std::to_string(padded - 1) + ", past the artifact's max_seq " +
           std::to_string(maxSeq) + " (at most " +
           std::to_string(maxSeq / chunkRows_ * chunkRows_) + " tokens)");
    for (size_t i = 0; i < samples[s].size(); ++i)
      if (samples[s][i] < 0 || samples[s][i] >= vocab)
        fail(std::string(call) + ": token " + std::to_string(i) +
             " of sample " +
             std::to_string(s) + " is " + std::to_string(samples[s][i]) +
             ", outside the vocabulary [0, " + std::to_string(vocab) + ")");
  }

  // Starting over: nothing in flight may still read the old stores.
  QFUSE_CU_CTX(cuStreamSynchronize(stream_), "starting calibration");
  store_ = Store();
  next_ = Store();
  storedLayer_ = -1;
  peakStoreBytes_ = 0;
  chunks_.clear();
  sampleChunks_.clear();
  tokens_ = 0;

  // Every chunk's ids and positions: C consecutive positions from the
  // chunk's start. Padding rows (token 0) continue the positions past the
  // sample; causal attention keeps them out of every real row, and their
  // rows never reach a Hessian.
  std::vector<int32_t> ids, positions;
  for (size_t s = 0; s < samples.size(); ++s) {
    const int64_t length = int64_t(samples[s].size());
    const size_t first = chunks_.size();
    for (int64_t start = 0; start < length; start += chunkRows_) {
      const int64_t valid = std::min(chunkRows_, length - start);
      chunks_.push_back({int64_t(s), start, valid});
      for (int64_t r = 0; r < chunkRows_; ++r) {
        ids.push_back(r < valid ? samples[s][size_t(start + r)] : 0);
        positions.push_back(int32_t(start + r));
      }
    }
    sampleChunks_.emplace_back(first, chunks_.size());
    tokens_ += length;
  }
  ids_ = cuda::DeviceBuffer(ids.size() * 4, "calibration input_ids");
  ids_.upload(ids.data(), ids.size() * 4);
  positions_ =
      cuda::DeviceBuffer(positions.size() * 4, "calibration positions");
  positions_.upload(positions.data(), positions.size() * 4);
}

void LayerwiseCalibrator::begin(
    const std::vector<std::vector<int32_t>> &samples) {
  prepareChunks(samples, "begin");

  // The prologue's state (if any) starts from zero, as in a new sequence.
  executor_.resetState(stream_);
  store_ = allocateStore(0);
  noteHeld();
  const StepRange prologue = layers_.prologue;
  forEachChunk(CalibrationPhase::Capture, -1, {}, [&](size_t c) {
    uploadPlanInputs({kInputIds, kPositions}, c);
    executor_.runSteps(chunkRows_, prologue.first, prologue.last, stream_);
    saveInputs(store_, c);
  });
  storedLayer_ = 0;
}

std::vector<HessianGroup> LayerwiseCalibrator::collect(int64_t layer) {
  requireStored(layer, "collect");
  const PlanLayer &info = layers_.layers[size_t(layer)];
  const Artifact &artifact = executor_.artifact();
  const int64_t staging = std::max(options_.hessianRows, chunkRows_);

  std::vector<HessianGroup> groups;
  // Steps after which a group's Hessian takes its x rows: the group's first
  // gemm (x is an SSA value, complete once that gemm can read it).
  std::map<size_t, size_t> groupAtStep;
  for (const SharedInput &shared : info.groups) {
    HessianGroup group{
        shared.x,
        {},
        GpuHessian(artifact.findWeight(shared.modules.front().weight)->k,
                   stream_, staging,
                   "Hessian of '" + shared.x + "' (layer " +
                       std::to_string(layer) + ")")};
    for (const LinearModule &module : shared.modules)
      group.modules.push_back(module.weight);
    groupAtStep.emplace(shared.modules.front().step, groups.size());
    groups.push_back(std::move(group));
  }

  forEachChunk(
      CalibrationPhase::Collect, layer, info.stateBuffers, [&](size_t c) {
        restoreInputs(store_, c);
        uploadPlanInputs(info.planInputs, c);
        size_t from = info.steps.first;
        for (const auto &[step, index] : groupAtStep) {
          executor_.runSteps(chunkRows_, from, step + 1, stream_);
          HessianGroup &group = groups[index];
          group.hessian.stage(*cublas_,
                              executor_.buffer(chunkRows_, group.input).ptr(),
                              chunks_[c].valid, stream_);
          from = step + 1;
        }
        // The rest of the layer: its later chunks' attention reads the
        // cache rows this chunk writes.
        executor_.runSteps(chunkRows_, from, info.steps.last, stream_);
      });
  for (HessianGroup &group : groups)
    group.hessian.flush(*cublas_, stream_);
  QFUSE_CU_CTX(cuStreamSynchronize(stream_),
               "finishing the Hessians of layer " + std::to_string(layer));
  return groups;
}

void LayerwiseCalibrator::propagate(int64_t layer) {
  requireStored(layer, "propagate");
  const PlanLayer &info = layers_.layers[size_t(layer)];
  if (layer + 1 < numLayers()) {
    next_ = allocateStore(layer + 1);
    noteHeld();
    forEachChunk(CalibrationPhase::Propagate, layer, info.stateBuffers,
                 [&](size_t c) {
                   restoreInputs(store_, c);
                   uploadPlanInputs(info.planInputs, c);
                   executor_.runSteps(chunkRows_, info.steps.first,
                                      info.steps.last, stream_);
                   saveInputs(next_, c);
                 });
  }
  // forEachChunk synchronized: nothing reads the old store any more.
  store_ = std::move(next_);
  next_ = Store();
  storedLayer_ = layer + 1;
}

} // namespace qfuse::runtime
