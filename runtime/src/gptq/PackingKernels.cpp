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

/// `Kernels` (DeviceGather, DeviceHalfRound or DeviceWiden) loaded from
/// the quantize artifact at `path`, or null where it is missing, does not
/// load or holds none of `names`; `where` says which ran: "the GPU (<names>
/// of <path>)" or `host` followed by why.
template <class Kernels>
std::unique_ptr<Kernels> quantizeArtifactKernels(const std::string &path,
                                                 const cuda::Context &context,
                                                 const std::string &names,
                                                 const std::string &host,
                                                 std::string &where) {
  if (!std::filesystem::exists(path)) {
    where = host + ": no " + path +
            " (python3 -m qfuse compile writes it beside the model artifact)";
    return nullptr;
  }
  try {
    auto kernels =
        std::make_unique<Kernels>(loadArtifactForDevice(path, context), context);
    if (kernels->any()) {
      where = "the GPU (" + names + " of " + path + ")";
      return kernels;
    }
    where = host + ": " + path + " has no " + names +
            " kernel (compiled before it)";
  } catch (const std::exception &e) {
    where = host + ": " + path + " does not load: " + e.what();
  }
  return nullptr;
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
  auto gather = quantizeArtifactKernels<DeviceGather>(
      quantizeArtifactPath(decodeArtifactPath(options)), context,
      "qf_gather_fields", "the host (format::packCodeBytes)", where);
  if (const char *pack = std::getenv("QFUSE_PACK");
      gather && pack && std::string(pack) == "check")
    where += ", each module compared with format::packCodeBytes";
  return gather;
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
  return quantizeArtifactKernels<DeviceHalfRound>(
      quantizeArtifactPath(decodeArtifactPath(options)), context,
      "qf_round_bf16_to_f16", "the host", where);
}

std::unique_ptr<DeviceWiden> gptqWidenKernels(
    const QuantizeModelOptions &options, const cuda::Context &context,
    std::string &where) {
  if (options.hostWeights) {
    where = "the host (--host-weights)";
    return nullptr;
  }
  return quantizeArtifactKernels<DeviceWiden>(
      quantizeArtifactPath(decodeArtifactPath(options)), context,
      "qf_widen_*_to_f32", "cuBLAS (x * 1, -0 made +0)", where);
}

} // namespace qfuse::runtime
