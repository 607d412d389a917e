//===- PackingKernels.cpp - the kernels qfuse-quantize packs with ---------===//

#include "PackingKernels.h"

#include "qfuse/runtime/device/DeviceArtifact.h"
#include "qfuse/runtime/device/QuantizeAtLoad.h"

#include <cstdlib>
#include <filesystem>

namespace qfuse::runtime {

std::unique_ptr<DeviceGather> gptqPackingKernels(
    const QuantizeModelOptions &options, const cuda::Context &context,
    std::string &where) {
  if (const char *pack = std::getenv("QFUSE_PACK");
      pack && std::string(pack) == "host") {
    where = "the host (format::packCodeBytes): QFUSE_PACK=host";
    return nullptr;
  }
  const std::string decode =
      !options.decodeArtifact.empty()
          ? options.decodeArtifact
          : (std::filesystem::path(options.modelDir) /
             ("qfuse-" + options.encoding + ".qfa"))
                .string();
  const std::string path = quantizeArtifactPath(decode);
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

} // namespace qfuse::runtime
