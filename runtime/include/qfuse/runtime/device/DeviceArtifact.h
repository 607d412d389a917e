//===- DeviceArtifact.h - The artifact a device runs ------------*- C++ -*-===//
//
// Every entry point that opens an artifact file to run it (the C API, the
// tools, GPTQ) goes through loadArtifactForDevice: the file may be an
// artifact set (one artifact per chip), and the device decides which variant
// runs (selectVariant, artifact/ArtifactSet.h).
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_RUNTIME_DEVICE_DEVICEARTIFACT_H
#define QFUSE_RUNTIME_DEVICE_DEVICEARTIFACT_H

#include "qfuse/runtime/artifact/ArtifactSet.h"
#include "qfuse/runtime/device/Cuda.h"

#include <string>

namespace qfuse::runtime {

/// Reads `path` (an artifact or an artifact set), validates every variant
/// and returns the one `context`'s device runs; throws naming the variants
/// and the device when none runs there. The result's describeTarget() says
/// which variant it is.
Artifact loadArtifactForDevice(const std::string &path,
                               const cuda::Context &context);

/// The variant of `set` that `context`'s device runs (as above).
Artifact takeVariantForDevice(ArtifactSet &&set, const cuda::Context &context);

} // namespace qfuse::runtime

#endif // QFUSE_RUNTIME_DEVICE_DEVICEARTIFACT_H
