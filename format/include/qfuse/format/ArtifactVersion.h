//===- ArtifactVersion.h - the artifact format's version --------*- C++ -*-===//
//
// The numbers shared by the writer (qfuse-compile, lib/Target) and the reader
// (runtime/src/artifact/ArtifactParser.cpp): bump kArtifactVersion whenever a
// field of docs/artifact.md changes meaning or a new one must be understood.
// The writer writes the oldest version that expresses the file, so that a
// file an older runtime can run keeps its version (and its bytes).
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_FORMAT_ARTIFACTVERSION_H
#define QFUSE_FORMAT_ARTIFACTVERSION_H

#include <cstdint>

namespace qfuse::format {
/// The newest version: what the runtime reads up to. Version 3 lets a
/// weight appear once per packed layout, each entry naming the checkpoint
/// tensor it is packed from ("source"). Version 4 lets a launch step name the
/// op it runs ("op") and, for qf.gptq_block_update, its grid ("encoding").
/// Version 5 adds the fallback's pieces: workspace buffers, gemm steps on a
/// buffer ("weight_buffer", f16 or bf16) and "op": "qf.dequantize".
/// Version 6 adds "op": "qf.quantize" (round-to-nearest on the device).
/// Version 7 adds "when" on steps (perm guards of act_order groups).
inline constexpr int64_t kArtifactVersion = 7;
/// The version that introduced "when" (steps guarded by equal perms).
inline constexpr int64_t kArtifactPermGuardVersion = 7;
/// The version that introduced qf.quantize launches.
inline constexpr int64_t kArtifactQuantizeVersion = 6;
/// The version that introduced workspaces and gemms on a weight buffer.
inline constexpr int64_t kArtifactWorkspaceVersion = 5;
/// The version that introduced "op" on launch steps.
inline constexpr int64_t kArtifactLaunchOpVersion = 4;
/// The version that introduced "source" (one weight in several layouts).
inline constexpr int64_t kArtifactLayoutsVersion = 3;
/// The oldest version the runtime still reads (version 2: state buffers,
/// gemm steps, "model"; one layout per weight).
inline constexpr int64_t kArtifactMinVersion = 2;

/// The "format" of an artifact set: one complete artifact per chip
/// ("variants"), of which the runtime runs the one for the device
/// (docs/artifact.md, Artifact sets).
inline constexpr const char *kArtifactSetFormat = "qfuse-artifact-set";
/// The set's own version (independent of its variants' versions).
inline constexpr int64_t kArtifactSetVersion = 1;
} // namespace qfuse::format

#endif // QFUSE_FORMAT_ARTIFACTVERSION_H
