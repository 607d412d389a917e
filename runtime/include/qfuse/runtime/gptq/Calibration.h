//===- Calibration.h - GPTQ Hessians, layer by layer, on the GPU -*- C++
//-*-===//
//
// GPTQ (docs/gptq.md) quantizes decoder layer l from the Hessian of each
// linear module's input, H = 2/n sum x x^T, where the inputs come from the
// calibration tokens run through layers 0..l-1 already quantized and layer l
// as it is. LayerwiseCalibrator drives an Executor loaded with the model's
// fp16 artifact (every projection a cuBLAS gemm step, so each module's input
// is a buffer of the plan) one layer at a time:
//
//   LayerwiseCalibrator calib(executor, stream);  // fp16 weights bound
//   calib.begin(samples);             // prologue: layer 0's inputs, stored
//   for (int64_t l = 0; l < calib.numLayers(); ++l) {
//     std::vector<HessianGroup> groups = calib.collect(l);  // q/k/v: one H
//     ...quantize layer l from groups, bind it dequantized to f16...
//     calib.propagate(l);             // layer l again: layer l+1's inputs
//   }
//
// The plan of the largest batch C runs every sample in chunks of C tokens
// (positions 0, 1, ... within the sample; a short last chunk is padded with
// the positions after the sample, as Generator pads a prompt, and its padding
// rows never reach a Hessian). PlanLayers.h finds the layers' steps, their
// input buffers and their gemm steps grouped by input.
//
// Memory: the activation store holds, per (sample, chunk), a copy of each
// input buffer of the current layer (for Llama: the residual stream,
// tokens x hidden x 2 bytes, padding rows included); propagate holds two
// layers' stores at once, then frees the older one. The Hessians are f32
// [K, K] per group (plus a staging buffer of `hessianRows` rows each).
//
// KV caches: a layer's attention writes its cache rows for the chunk's
// positions and reads rows 0..position of the same sample, so the chunks of
// a sample run in order. Each pass zeroes the layer's state buffers before
// every sample, so a sample sees the caches a fresh sequence would (attention
// is causal, so the rows an earlier sample left at later positions would
// never be read anyway; zeroing makes that independent of the kernel).
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_RUNTIME_GPTQ_CALIBRATION_H
#define QFUSE_RUNTIME_GPTQ_CALIBRATION_H

#include "qfuse/runtime/device/Cuda.h"
#include "qfuse/runtime/device/Executor.h"
#include "qfuse/runtime/artifact/PlanLayers.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace qfuse::runtime {

//===----------------------------------------------------------------------===//
// GpuHessian
//===----------------------------------------------------------------------===//

/// H = 2/n sum x x^T for K input columns, f32 [K, K] on the device (symmetric,
/// both triangles), with gptq::HessianAccumulator's running update: after m
/// rows X (f16 row-major [m, K]),
///
///   H <- H * n/(n+m) + 2/(n+m) * X^T X,   n <- n + m
///
/// with cublasGemmEx (f16 in, f32 out, CUBLAS_COMPUTE_32F, alpha =
/// 2/(n+m), beta = n/(n+m)). stage() gathers rows from many small chunks
/// into a staging buffer first, so each GEMM reads H once per `stagingRows`
/// rows instead of once per chunk.
///
/// H is symmetric: from kTriangleMinColumns columns it is updated as column
/// blocks of about kTriangleBlockColumns, one GEMM per block on or below
/// the diagonal (10 of 16 for 4 blocks), and the blocks above are copied
/// from their transposes when H is complete (add(), flush()). Below that,
/// one GEMM makes both triangles (smaller blocks would run the tensor cores
/// at a lower rate than they save).
class GpuHessian {
public:
  static constexpr int64_t kTriangleMinColumns = 8192;
  static constexpr int64_t kTriangleBlockColumns = 3584;
  /// The column blocks H of `k` columns is updated in by default.
  static int64_t defaultBlocks(int64_t k);

  /// An empty Hessian (n = 0, H zeroed on `stream`) for `k` columns, with
  /// room to stage `stagingRows` rows (0: add() only), updated in `blocks`
  /// column blocks (1: one GEMM). `label` names its buffers in errors.
  GpuHessian(int64_t k, CUstream stream, int64_t stagingRows = 0,
             std::string label = "hessian", int64_t blocks = 0);
  GpuHessian(GpuHessian &&) = default;
  GpuHessian &operator=(GpuHessian &&) = default;

  int64_t columns() const { return k_; }
  /// n: the rows H holds (staged rows count once flushed).
  int64_t samples() const { return n_; }
  /// Rows staged and not yet in H.
  int64_t pendingRows() const { return pending_; }
  /// H, f32 row-major [K, K]; complete once flush() has run.
  const cuda::DeviceBuffer &matrix() const { return h_; }
  /// The column blocks of the update (1: one GEMM for all of H).
  int64_t blocks() const { return int64_t(blockStarts_.size()) - 1; }

  /// Adds rows [0, rows) of `x`, f16 row-major with row stride K (the rows
  /// after them, e.g. a padded chunk's, are not read): one GEMM on `stream`
  /// through `cublas` (pointed at `stream` here). rows = 0 does nothing.
  void add(cuda::Cublas &cublas, CUdeviceptr x, int64_t rows, CUstream stream);
  /// Copies rows [0, rows) of `x` into the staging buffer, adding it to H
  /// first when they would not fit. Needs rows <= stagingRows.
  void stage(cuda::Cublas &cublas, CUdeviceptr x, int64_t rows,
             CUstream stream);
  /// Adds the staged rows (if any) to H.
  void flush(cuda::Cublas &cublas, CUstream stream);

  /// H on the host, row-major [K, K] (synchronizes `stream` first).
  std::vector<float> download(CUstream stream) const;

private:
  /// H <- H * n/(n+m) + 2/(n+m) X^T X on the blocks on and below the
  /// diagonal (all of H for one block).
  void accumulate(cuda::Cublas &cublas, CUdeviceptr x, int64_t rows,
                  CUstream stream);
  /// The blocks above the diagonal from those below (no-op for one block).
  void mirror(cuda::Cublas &cublas, CUstream stream);

  int64_t k_ = 0;
  int64_t n_ = 0;
  /// Block b holds columns [blockStarts_[b], blockStarts_[b + 1]).
  std::vector<int64_t> blockStarts_;
  int64_t stagingRows_ = 0;
  int64_t pending_ = 0;
  std::string label_;
  cuda::DeviceBuffer h_;
  cuda::DeviceBuffer staging_;
};

//===----------------------------------------------------------------------===//
// LayerwiseCalibrator
//===----------------------------------------------------------------------===//

/// The linear modules of a layer that read one buffer, and their Hessian.
struct HessianGroup {
  /// The x buffer they share (the plan's name).
  std::string input;
  /// Their weights (Hugging Face module names), in plan order.
  std::vector<std::string> modules;
  GpuHessian hessian;
};

enum class CalibrationPhase {
  /// begin(): the prologue, storing layer 0's inputs.
  Capture,
  /// collect(l): layer l with its original weights, accumulating Hessians.
  Collect,
  /// propagate(l): layer l with its new weights, storing layer l+1's inputs.
  Propagate,
};
/// "capture", "collect", "propagate".
const char *calibrationPhaseName(CalibrationPhase phase);

/// Reported after each sample of each pass.
struct CalibrationProgress {
  CalibrationPhase phase = CalibrationPhase::Capture;
  int64_t layer = -1;  // -1 in the Capture phase
  int64_t sample = 0;  // samples done in this pass, 1..samples
  int64_t samples = 0; // samples in the pass
};

struct CalibrationOptions {
  /// Rows per Hessian update: each group stages this many rows (at least
  /// one chunk) before its GEMM. Each update reads and writes the f32
  /// [K, K] sum and reduces over only these rows, so a few large updates
  /// beat many small ones (docs/gptq.md).
  int64_t hessianRows = 4096;
  /// Called after each sample of each pass (a progress bar).
  std::function<void(const CalibrationProgress &)> progress;
};

class LayerwiseCalibrator {
public:
  /// Checks that the executor's artifact can be calibrated: a "model"
  /// object, input_ids and positions [M] i32, a plan that splits into
  /// layers (analyzePlanLayers) whose every linear is a gemm step with an
  /// f16 [M, K] input (the fp16 artifact: `qfuse emit --encoding fp16`) and
  /// whose plan inputs are input_ids or positions. Allocates the buffers of
  /// the largest plan. Work is enqueued on `stream`.
  LayerwiseCalibrator(Executor &executor, CUstream stream,
                      CalibrationOptions options = {});
  ~LayerwiseCalibrator();
  LayerwiseCalibrator(const LayerwiseCalibrator &) = delete;
  LayerwiseCalibrator &operator=(const LayerwiseCalibrator &) = delete;

  const PlanLayers &layers() const { return layers_; }
  int64_t numLayers() const { return int64_t(layers_.layers.size()); }
  /// C, the rows of one chunk (the largest plan's batch).
  int64_t chunkRows() const { return chunkRows_; }

  /// Runs the prologue over every sample (token ids, each at most max_seq
  /// long with its last chunk padded to C rows; lengths may differ) and
  /// stores layer 0's inputs. Starts over when called again.
  void begin(const std::vector<std::vector<int32_t>> &samples);
  /// The Hessians of layer `layer`'s linear modules, one per shared input
  /// (samples() == tokens() each): layer `layer` runs over every chunk from
  /// the stored inputs with the weights bound now. Needs the inputs of
  /// `layer` stored: after begin() for layer 0, after propagate(layer - 1)
  /// otherwise.
  std::vector<HessianGroup> collect(int64_t layer);
  /// Runs layer `layer` (the weights bound now: its quantized weights,
  /// dequantized to f16) over every chunk and stores layer + 1's inputs,
  /// then frees layer `layer`'s. For the last layer it only frees them.
  void propagate(int64_t layer);

  /// The layer whose inputs are stored: -1 before begin(), numLayers()
  /// after the last propagate().
  int64_t storedLayer() const { return storedLayer_; }
  int64_t numSamples() const { return int64_t(sampleChunks_.size()); }
  /// Calibration rows: the samples' tokens, padding excluded.
  int64_t tokens() const { return tokens_; }
  /// Chunks over all samples.
  int64_t numChunks() const { return int64_t(chunks_.size()); }

  /// Device bytes a store of `layer`'s inputs takes for the current samples
  /// (every input buffer of the layer, one C-row slab per chunk).
  size_t storeBytes(int64_t layer) const;
  /// Device bytes of activation store held now, and the most held at once
  /// since begin() (about twice one layer's store, during propagate).
  size_t heldStoreBytes() const;
  size_t peakStoreBytes() const { return peakStoreBytes_; }

private:
  struct Chunk {
    int64_t sample = 0;
    int64_t start = 0; // first position
    int64_t valid = 0; // real tokens; the other C - valid rows are padding
  };
  /// One layer's stored inputs: per input buffer, chunks x slab bytes.
  struct Store {
    int64_t layer = -1;
    std::map<std::string, cuda::DeviceBuffer> buffers;
    size_t bytes() const;
  };

  [[noreturn]] void fail(const std::string &what) const;
  /// begin()'s set-up: checks `samples`, splits them into chunks, uploads
  /// their ids and positions, and drops the stores.
  void prepareChunks(const std::vector<std::vector<int32_t>> &samples,
                     const char *call);
  void requireStored(int64_t layer, const char *call) const;
  /// Allocates a store for `layer`'s inputs.
  Store allocateStore(int64_t layer);
  void saveInputs(Store &store, size_t chunk);
  void restoreInputs(const Store &store, size_t chunk);
  /// Copies chunk `chunk`'s slice of each plan input in `names`.
  void uploadPlanInputs(const std::vector<std::string> &names, size_t chunk);
  /// For every sample: zero `state`, then `body` on each of its chunks in
  /// order; progress after each sample; synchronizes at the end.
  void forEachChunk(CalibrationPhase phase, int64_t layer,
                    const std::vector<std::string> &state,
                    const std::function<void(size_t chunk)> &body);
  void noteHeld();

  Executor &executor_;
  CUstream stream_;
  CalibrationOptions options_;
  PlanLayers layers_;
  int64_t chunkRows_ = 0;
  std::unique_ptr<cuda::Cublas> cublas_;

  std::vector<Chunk> chunks_;
  /// Per sample: its chunks, [first, last) into chunks_.
  std::vector<std::pair<size_t, size_t>> sampleChunks_;
  int64_t tokens_ = 0;
  /// input_ids and positions of every chunk, C rows each, on the device.
  cuda::DeviceBuffer ids_, positions_;

  Store store_;
  /// During propagate: the next layer's store being filled.
  Store next_;
  int64_t storedLayer_ = -1;
  size_t peakStoreBytes_ = 0;
};

} // namespace qfuse::runtime

#endif // QFUSE_RUNTIME_GPTQ_CALIBRATION_H
