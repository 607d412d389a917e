//===- DeviceArtifact.cpp - The artifact a device runs --------------------===//

#include "qfuse/runtime/device/DeviceArtifact.h"

namespace qfuse::runtime {

Artifact takeVariantForDevice(ArtifactSet &&set,
                              const cuda::Context &context) {
  return std::move(set).takeVariantFor(context.major(), context.minor(),
                                       context.describe());
}

Artifact loadArtifactForDevice(const std::string &path,
                               const cuda::Context &context) {
  return takeVariantForDevice(ArtifactSet::load(path), context);
}

} // namespace qfuse::runtime
