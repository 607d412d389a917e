//===- ArtifactSet.h - one artifact per chip, in one file -------*- C++ -*-===//
//
// `qfuse-compile --chip=sm_80,sm_90,sm_90a` compiles the module once per chip
// and writes an artifact set (docs/artifact.md, Artifact sets):
//
//   {
//     "format": "qfuse-artifact-set",
//     "version": 1,
//     "variants": [
//   {...the artifact --chip=sm_80 writes...},
//   {...--chip=sm_90...},
//   {...--chip=sm_90a...}
//     ]
//   }
//
// Each variant is, byte for byte, the file a single-chip compile writes (less
// its final newline): the set is assembled from those texts, not re-printed.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_LIB_TARGET_ARTIFACTSET_H
#define QFUSE_LIB_TARGET_ARTIFACTSET_H

#include "mlir/Support/LLVM.h"

#include <string>

namespace mlir {
namespace qf {

/// The artifact set of `variants`, each the complete text of one artifact
/// (a trailing newline is dropped); the set ends with a newline.
std::string renderArtifactSet(ArrayRef<std::string> variants);

} // namespace qf
} // namespace mlir

#endif // QFUSE_LIB_TARGET_ARTIFACTSET_H
