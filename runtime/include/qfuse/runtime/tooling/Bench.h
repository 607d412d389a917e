//===- Bench.h - Device timing: copy bandwidth, cuBLAS, plans ---*- C++ -*-===//
//
// The measurements every qfuse performance number is relative to, all taken
// the same way (docs: DESIGN.md, "Performance method"):
//
//  - work is enqueued as CUDA graphs and timed with CUDA events, never host
//    clocks; the reported time is the median of >= 10 timed iterations
//    after warm-up;
//  - weights rotate through enough distinct copies that one iteration reads
//    more than 3x the L2 cache, so no weight is served from L2; where that
//    would take more than kMaxCopies copies (tiny weights), the copies stop
//    there and the L2 is flushed before every timed iteration instead;
//  - bandwidth is bytes moved per second: a device copy counts the bytes
//    read plus the bytes written.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_RUNTIME_TOOLING_BENCH_H
#define QFUSE_RUNTIME_TOOLING_BENCH_H

#include "qfuse/runtime/device/Cuda.h"
#include "qfuse/runtime/device/Executor.h"

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace qfuse::runtime::bench {

/// The fewest timed iterations a result may rest on.
constexpr int kMinIterations = 10;
/// The L2 size assumed when the device reports less (H100/H200: 50-60 MB).
constexpr uint64_t kAssumedL2Bytes = 60ull << 20;
/// The most weight copies one measurement rotates through.
constexpr int kMaxCopies = 256;

struct Config {
  int warmup = 3;
  int iterations = 20; // at least kMinIterations
  /// Plans: one CUDA graph per weight copy, launched one after another (the
  /// timing before session 35), instead of every copy's launches in one
  /// graph as the cuBLAS baseline runs its copies.
  bool graphPerCopy = false;
};

/// Milliseconds of each timed iteration, and their order statistics.
struct Stats {
  std::vector<double> samplesMs;
  double medianMs = 0;
  double minMs = 0;
  double maxMs = 0;

  static Stats of(std::vector<double> samplesMs);
};

/// Runs `enqueue(i)` config.warmup times, then config.iterations times each
/// between two events on `stream`; the samples are the event times.
/// `beforeEach`, when given, is enqueued before every timed iteration,
/// outside its events (an L2 flush).
Stats timeOnStream(CUstream stream, const Config &config,
                   const std::function<void(int iteration)> &enqueue,
                   const std::function<void()> &beforeEach = {});

/// Evicts the L2 by overwriting a buffer of twice its size.
class L2Flusher {
public:
  explicit L2Flusher(uint64_t l2Bytes);
  void flush(CUstream stream);

private:
  cuda::DeviceBuffer buffer_;
};

/// The L2 bytes to rotate past: max(device L2, kAssumedL2Bytes).
uint64_t l2Bytes(const cuda::Context &context);

/// Distinct copies of `bytesPerCopy` needed so that all copies together
/// exceed 3x `l2` (may exceed kMaxCopies).
int rotatingCopies(uint64_t bytesPerCopy, uint64_t l2);

//===----------------------------------------------------------------------===//
// Device copy bandwidth
//===----------------------------------------------------------------------===//

struct CopyResult {
  uint64_t bytes = 0; // per copy (each is read once and written once)
  Stats stats;
  double gbPerSecond = 0; // 2 * bytes / median
};

/// Times a device-to-device copy of `bytes`.
CopyResult copyBandwidth(CUstream stream, uint64_t bytes, const Config &config);

//===----------------------------------------------------------------------===//
// cuBLAS fp16 baseline
//===----------------------------------------------------------------------===//

/// One y[M, N] = x[M, K] * W[N, K]^T.
struct Matmul {
  std::string name;
  int64_t n = 0;
  int64_t k = 0;
};

/// The linear layers of one decode step (every layer's q, k, v, o, gate,
/// up, down, then lm_head) of "qwen2.5-1.5b" or "llama3-8b"; throws naming
/// the known models otherwise.
std::vector<Matmul> decodeStepMatmuls(std::string_view model);
std::vector<std::string> knownModels();
struct GemmShape {
  int64_t m = 0;
  Matmul matmul;
};
/// "16x4096x4096" -> M = 16, N = 4096, K = 4096 (named by the text).
GemmShape parseGemmShape(std::string_view text);

struct GemmResult {
  std::string label;
  int64_t m = 0;
  size_t matmuls = 0;        // GEMMs in one pass
  int copies = 0;            // weight sets rotated through
  bool l2Flushed = false;    // copies capped: L2 flushed before iterations
  uint64_t bytesPerPass = 0; // weights + x + y of every GEMM
  uint64_t flopsPerPass = 0; // 2 M N K summed
  Stats stats;               // milliseconds per pass
  double gbPerSecond = 0;
  double tflops = 0;
};

/// Times cuBLAS (cublasGemmEx, f16 in/out, f32 compute) over one pass of
/// `matmuls` at M = `m`, each with its own weights, rotating whole copies of
/// the weights past 3x L2 (or kMaxCopies and an L2 flush). All copies'
/// passes form one CUDA graph; a sample is one replay divided by the number
/// of copies.
GemmResult cublasGemm(const cuda::Context &context, cuda::Cublas &cublas,
                      CUstream stream, const std::string &label, int64_t m,
                      const std::vector<Matmul> &matmuls, const Config &config);

//===----------------------------------------------------------------------===//
// Compiled artifact plans
//===----------------------------------------------------------------------===//

/// Binds a device-filled placeholder for every component and tensor the
/// plans read that is still unbound: valid codes, scales of 1/64, g_idx of
/// k / group. Enough to time a plan without a checkpoint.
void bindPlaceholderWeights(Executor &executor, CUstream stream);

/// Fills the inputs of the plan for `batch` (allocated): floats 1.0,
/// integers (token ids, positions) 0, so that a kernel whose work depends
/// on its input (attention reads positions[m] + 1 cache rows) times alike in
/// every artifact. artifactPlan calls it before timing.
void fillPlanInputs(Executor &executor, int64_t batch, CUstream stream);

struct PlanResult {
  std::string artifact;
  int64_t batch = 0;
  size_t steps = 0;
  int copies = 0;
  bool l2Flushed = false;
  uint64_t weightBytes = 0; // the weight components read, one copy
  uint64_t bytesPerRun = 0; // the roofline's bytes, else weights + buffers
  Stats stats;              // milliseconds per plan run
  double gbPerSecond = 0;
};

/// Times the plan for `batch` with all arguments bound: rotating copies of
/// every weight component past 3x L2 or kMaxCopies and an L2 flush (dense
/// tensors, norms and the like, stay one copy), one graph per copy; a sample
/// is the replay of all graphs divided by the number of copies.
PlanResult artifactPlan(const cuda::Context &context, Executor &executor,
                        CUstream stream, int64_t batch, const Config &config);

} // namespace qfuse::runtime::bench

#endif // QFUSE_RUNTIME_TOOLING_BENCH_H
