//===- ArtifactSet.h - One artifact per chip, and the one a GPU runs -*- C++ -*-===//
//
// `qfuse-compile --chip=sm_80,sm_90,sm_90a` writes an artifact set: one
// complete artifact per chip (docs/artifact.md, Artifact sets). The runtime
// opens every artifact file through ArtifactSet: a plain artifact is a set
// of one. Parsing validates every variant on the CPU; which variant runs is
// decided by selectVariant from the device's compute capability, so that the
// choice is one function, testable without a GPU:
//
//   ArtifactSet set = ArtifactSet::load("model.qfa");   // no GPU needed
//   Artifact artifact = std::move(set).takeVariantFor(9, 0, "an H200");
//   // artifact.chip == "sm_90a" when the set has it
//
// Device code opens it with loadArtifactForDevice (device/DeviceArtifact.h).
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_RUNTIME_ARTIFACT_ARTIFACTSET_H
#define QFUSE_RUNTIME_ARTIFACT_ARTIFACTSET_H

#include "qfuse/runtime/artifact/Artifact.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace qfuse::runtime {

/// The value of an artifact set's "format" field.
constexpr std::string_view kArtifactSetFormat = format::kArtifactSetFormat;

/// The index in `chips` of the code a device of compute capability
/// major.minor runs, or nullopt when none runs there:
///   1. the arch-specific chip of exactly that capability (sm_90a on 9.0:
///      its wgmma kernels run only there);
///   2. else the newest chip without the suffix at or below the device
///      (its PTX JIT-compiles on any newer device, its cubin loads on the
///      same major: sm_80 on 8.6 and 8.9, sm_90 on 10.0 and 12.0).
/// A plain artifact is checked with its one chip (cuda::checkTarget).
std::optional<size_t> selectVariant(const std::vector<ChipTarget> &chips,
                                    int major, int minor);

/// Why code for `target` cannot run on `device` (a description such as
/// "device 0 (NVIDIA A100, sm_80)") of compute capability major.minor, or ""
/// when selectVariant takes it.
std::string targetMismatch(const ChipTarget &target, int major, int minor,
                           const std::string &device);

/// An artifact file as the runtime opens it: an artifact set or a plain
/// artifact (one variant). Every variant is fully validated by parse.
class ArtifactSet {
public:
  /// Parses and validates `json`, an artifact set or a plain artifact;
  /// `source` names it in errors. A set's errors name the variant:
  /// "artifact 'm.qfa': variants[1].kernels[0].name: empty name".
  static ArtifactSet parse(std::string_view json, std::string source);
  /// Reads `path` and parses it.
  static ArtifactSet load(const std::string &path);

  const std::string &source() const { return source_; }
  /// Whether the file is an artifact set (false: a plain artifact).
  bool isSet() const { return isSet_; }
  const std::vector<Artifact> &variants() const { return variants_; }
  /// The variants' chips in file order: "sm_80, sm_90, sm_90a".
  std::string chips() const;

  /// The index of the variant selectVariant picks for compute capability
  /// major.minor; throws naming the file, the variants and `device` when
  /// none runs there.
  size_t variantIndexFor(int major, int minor, const std::string &device) const;
  const Artifact &variantFor(int major, int minor,
                             const std::string &device) const;
  /// The variant for the device, moved out of the set.
  Artifact takeVariantFor(int major, int minor, const std::string &device) &&;

private:
  std::string source_;
  bool isSet_ = false;
  std::vector<Artifact> variants_;
};

} // namespace qfuse::runtime

#endif // QFUSE_RUNTIME_ARTIFACT_ARTIFACTSET_H
