//===- QuantizeAtLoad.h - where a dense checkpoint is rounded ---*- C++ -*-===//
//
// Binding a dense (f16/bf16/f32) checkpoint into a quantized artifact
// rounds every weight to nearest. QuantizeAtLoad decides where: on the GPU
// with the qf.quantize kernels of the quantize artifact beside the model
// artifact (quantizeArtifactPath), else on the host (format::quantizeRTN),
// and says which path ran for how many weights (docs/quantize-at-load.md).
// The kernel layouts the artifact lists for each weight are made on the
// GPU as well, by the qf_gather_fields kernels of the same quantize
// artifact (DeviceRepacker.h), else by format::repack.
//
//   QuantizeAtLoad rtn(artifactPath, RtnMode::Device, context, stderr);
//   rtn.load(executor, checkpoint, threads);
//   // = loadCheckpoint(executor, checkpoint, threads, rtn.hook(),
//   //                  rtn.layouts())
//   std::fprintf(stderr, "%s\n", rtn.summary().c_str());
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_RUNTIME_DEVICE_QUANTIZEATLOAD_H
#define QFUSE_RUNTIME_DEVICE_QUANTIZEATLOAD_H

#include "qfuse/runtime/checkpoint/WeightSources.h"
#include "qfuse/runtime/device/DeviceGather.h"
#include "qfuse/runtime/device/DeviceQuantizer.h"
#include "qfuse/runtime/device/DeviceRepacker.h"
#include "qfuse/runtime/device/ModelLoader.h"

#include <atomic>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

namespace qfuse::runtime {

/// Where round-to-nearest and the layouts run: the GPU where a kernel takes
/// the weight (the default), the host only, or both with the bytes
/// compared (a weight whose GPU bytes differ from the host's is an error).
enum class RtnMode { Device, Host, Check };

/// "device", "host", "check" -> the mode; std::nullopt otherwise.
std::optional<RtnMode> parseRtnMode(const std::string &text);

/// The quantize artifact that belongs to model artifact `artifactPath`:
/// "m.qfa" -> "m.quantize.qfa" (what `python3 -m qfuse compile` writes).
std::string quantizeArtifactPath(const std::string &artifactPath);

/// How many weights were rounded, and how many layouts made, where.
struct QuantizeAtLoadCounts {
  size_t rtnDevice = 0, rtnHost = 0, layoutsDevice = 0, layoutsHost = 0;
};

class QuantizeAtLoad {
public:
  /// Loads the quantize artifact of `artifactPath` unless `mode` is Host;
  /// where it is missing or does not load on `context`'s device, every
  /// weight goes to the host and `log` says why (null: summary() only).
  QuantizeAtLoad(const std::string &artifactPath, RtnMode mode,
                 const cuda::Context &context, std::FILE *log);

  /// The hook for loadCheckpoint (it counts the host's weights too).
  const DenseQuantizer *hook() const { return &hook_; }
  /// The hook for loadCheckpoint's layouts (it counts the host's too).
  const LayoutRepacker *layouts() const { return layouts_->hook(); }
  /// loadCheckpoint with both hooks.
  LoadStats load(Executor &executor, const ModelCheckpoint &checkpoint,
                 unsigned threads) const {
    return loadCheckpoint(executor, checkpoint, threads, hook(), layouts());
  }
  /// "quantize-at-load: 224 weights rounded on the GPU (qf.quantize kernels
  /// of FILE), 1 on the host (format::quantizeRTN: no kernel for ...)".
  std::string summary() const;
  size_t deviceWeights() const { return device_; }
  size_t hostWeights() const { return host_; }
  size_t deviceLayouts() const { return layouts_->deviceRepacks(); }
  size_t hostLayouts() const { return layouts_->hostRepacks(); }
  QuantizeAtLoadCounts counts() const {
    return {device_, host_, deviceLayouts(), hostLayouts()};
  }

private:
  bool quantize(const format::Encoding &enc, DType dtype, const uint8_t *data,
                int64_t n, int64_t k, format::TensorMap &components);

  RtnMode mode_;
  std::string path_, why_;
  std::unique_ptr<DeviceQuantizer> quantizer_;
  std::unique_ptr<DeviceGather> gather_;
  std::unique_ptr<DeviceRepacker> layouts_;
  DenseQuantizer hook_;
  std::atomic<size_t> device_{0}, host_{0};
  std::mutex mutex_; // guards why_
};

} // namespace qfuse::runtime

#endif // QFUSE_RUNTIME_DEVICE_QUANTIZEATLOAD_H
