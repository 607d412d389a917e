//===- ArtifactVersion.h - the artifact format's version --------*- C++ -*-===//
//
// One number shared by the writer (qfuse-compile, lib/Target) and the reader
// (runtime/src/Artifact.cpp): bump it whenever a field of docs/artifact.md
// changes meaning.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_FORMAT_ARTIFACTVERSION_H
#define QFUSE_FORMAT_ARTIFACTVERSION_H

#include <cstdint>

namespace qfuse::format {
inline constexpr int64_t kArtifactVersion = 2;
} // namespace qfuse::format

#endif // QFUSE_FORMAT_ARTIFACTVERSION_H
