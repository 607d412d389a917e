//===- PackingKernels.cpp - the kernels qfuse-quantize packs with ---------===//

#include "PackingKernels.h"

#include "qfuse/runtime/device/DeviceArtifact.h"
#include "qfuse/runtime/device/QuantizeAtLoad.h"

#include <cstdlib>
#include <filesystem>

namespace qfuse::runtime {
namespace {

/// The decode artifact whose quantize artifact holds the kernels.
std::string decodeArtifactPath(const QuantizeModelOptions &options) {
  return !options.decodeArtifact.empty()
             ? options.decodeArtifact
             : (std::filesystem::path(options.modelDir) /
                ("qfuse-" + options.encoding + ".qfa"))
                   .string();
}

} // namespace

std::unique_ptr<QuantizeAtLoad> gptqRoundingKernels(
    const QuantizeModelOptions &options, const cuda::Context &context) {
  RtnMode mode = RtnMode::Device;
  if (const char *rtn = std::getenv("QFUSE_RTN"))
    if (std::optional<RtnMode> parsed = parseRtnMode(rtn))
      mode = *parsed;
  return std::make_unique<QuantizeAtLoad>(decodeArtifactPath(options), mode,
                                          context, nullptr);
}

std::unique_ptr<DeviceGather> gptqPackingKernels(
    const QuantizeModelOptions &options, const cuda::Context &context,
    std::string &where) {
  if (const char *pack = std::getenv("QFUSE_PACK");
      pack && std::string(pack) == "host") {
    where = "the host (format::packCodeBytes): QFUSE_PACK=host";
    return nullptr;
  }
  const std::string path = quantizeArtifactPath(decodeArtifactPath(options));
  if (!std::filesystem::exists(path)) {
    where = "the host (format::packCodeBytes): no " + path +
            " (python3 -m qfuse compile writes it beside the model artifact)";
    return nullptr;
  }
  try {
    auto gather = std::make_unique<DeviceGather>(
        loadArtifactForDevice(path, context), context);
    if (gather->any()) {
      where = "the GPU (qf_gather_fields kernels of " + path + ")";
      if (const char *pack = std::getenv("QFUSE_PACK");
          pack && std::string(pack) == "check")
        where += ", each module compared with format::packCodeBytes";
      return gather;
    }
    where = "the host (format::packCodeBytes): " + path +
            " has no qf_gather_fields kernel";
  } catch (const std::exception &e) {
    where = std::string("the host (format::packCodeBytes): ") + path +
            " does not load: " + e.what();
  }
  return nullptr;
}

std::unique_ptr<DeviceHalfRound> gptqHalfRoundKernel(
    const QuantizeModelOptions &options, const cuda::Context &context,
    const Artifact &calibration, const ModelCheckpoint &checkpoint,
    std::string &where) {
  where.clear();
  bool bf16 = false;
  for (const WeightSpec &weight : calibration.weights) {
    const std::string source = weight.checkpointName() + ".weight";
    if (weight.checkpointName().rfind("model.layers.", 0) == 0 &&
        checkpoint.contains(source)) {
      bf16 = checkpoint.view(source).info->dtype == DType::BF16;
      break;
    }
  }
  if (!bf16)
    return nullptr;
  if (options.hostWeights) {
    where = "the host (--host-weights)";
    return nullptr;
  }
  const std::string path = quantizeArtifactPath(decodeArtifactPath(options));
  if (!std::filesystem::exists(path)) {
    where = "the host: no " + path;
    return nullptr;
  }
  try {
    auto round = std::make_unique<DeviceHalfRound>(
        loadArtifactForDevice(path, context), context);
    if (round->any()) {
      where = "the GPU (qf_round_bf16_to_f16 of " + path + ")";
      return round;
    }
    where = "the host: " + path +
            " has no qf_round_bf16_to_f16 kernel (compiled before it)";
  } catch (const std::exception &e) {
    where = "the host: " + path + " does not load: " + e.what();
  }
  return nullptr;
}

} // namespace qfuse::runtime
