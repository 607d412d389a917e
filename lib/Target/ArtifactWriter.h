//===- ArtifactWriter.h - write the versioned qfuse artifact ----*- C++ -*-===//
//
// Turns a module that went through qf-to-gpu and gpu-module-to-binary into the
// artifact described in docs/artifact.md.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_LIB_TARGET_ARTIFACTWRITER_H
#define QFUSE_LIB_TARGET_ARTIFACTWRITER_H

#include "mlir/IR/BuiltinOps.h"
#include "qfuse/format/ArtifactSchema.h"
#include "qfuse/format/ArtifactVersion.h"

#include <map>
#include <string>

namespace mlir {
namespace qf {

using qfuse::format::kArtifactLayoutsVersion;
using qfuse::format::kArtifactMinVersion;
using qfuse::format::kArtifactLaunchOpVersion;
using qfuse::format::kArtifactVersion;
using qfuse::format::kArtifactWorkspaceVersion;

struct ArtifactOptions {
  std::string chip = "sm_90";
  std::string features = "+ptx80";
  std::string producer = "qfuse-compile";
  /// The cubin ptxas assembled from the module's PTX; empty when none.
  std::string cubin;
};

/// The PTX text of the serialized `gpu.binary @qf_kernels`, or failure.
FailureOr<std::string> extractKernelPTX(ModuleOp module);

/// Fills the artifact's schema from the module; fails with a diagnostic on
/// an op the plan cannot express. qfuse::format::artifact::printArtifact
/// writes it.
FailureOr<qfuse::format::artifact::Artifact>
buildArtifact(ModuleOp module, StringRef ptx, const ArtifactOptions &options);

} // namespace qf
} // namespace mlir

#endif // QFUSE_LIB_TARGET_ARTIFACTWRITER_H
