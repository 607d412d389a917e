//===- ArtifactSet.cpp - An artifact set read and checked, a variant chosen
//===//
//
// A file read through the schema (a plain artifact, or a set's variants,
// each validated with its index in the path), the one-variant-per-chip
// rule, and selectVariant, the one place that decides which chip's code a
// device runs.
//
//===----------------------------------------------------------------------===//

#include "qfuse/runtime/artifact/ArtifactSet.h"

#include "qfuse/runtime/Error.h"

#include "ArtifactValidator.h"
#include "StrictJson.h"

namespace qfuse::runtime {
namespace {

using nlohmann::json;

/// 90 for sm_90 and sm_90a, 100 for sm_100.
int capabilityNumber(int major, int minor) { return major * 10 + minor; }

std::string capabilityText(int major, int minor) {
  return std::to_string(major) + "." + std::to_string(minor);
}

std::string chipFor(int major, int minor) {
  return "sm_" + std::to_string(capabilityNumber(major, minor));
}

} // namespace

std::optional<size_t> selectVariant(const std::vector<ChipTarget> &chips,
                                    int major, int minor) {
  for (size_t i = 0; i < chips.size(); ++i)
    if (chips[i].archSpecific && chips[i].major == major &&
        chips[i].minor == minor)
      return i;
  const int device = capabilityNumber(major, minor);
  std::optional<size_t> best;
  for (size_t i = 0; i < chips.size(); ++i) {
    if (chips[i].archSpecific)
      continue;
    const int number = capabilityNumber(chips[i].major, chips[i].minor);
    if (number <= device &&
        (!best ||
         number > capabilityNumber(chips[*best].major, chips[*best].minor)))
      best = i;
  }
  return best;
}

std::string targetMismatch(const ChipTarget &target, int major, int minor,
                           const std::string &device) {
  if (selectVariant({target}, major, minor))
    return "";
  if (target.archSpecific)
    return "the artifact targets " + target.str() +
           ", which runs only on compute capability " +
           capabilityText(target.major, target.minor) + ", but " + device +
           " is " + capabilityText(major, minor) + "; recompile for " +
           chipFor(major, minor);
  return "the artifact targets " + target.str() + " but " + device +
         " has compute capability " + capabilityText(major, minor) +
         " (older); recompile for " + chipFor(major, minor);
}

ArtifactSet ArtifactSet::parse(std::string_view text, std::string source) {
  json root = detail::parseStrictJson(text, "artifact '" + source + "'");
  format::artifact::ArtifactFile file;
  if (auto error = format::artifact::fromJson(root, file))
    throw detail::readError(source, *error);
  ArtifactSet set;
  set.source_ = source;
  set.isSet_ = file.isSet;
  std::vector<std::string> chips;
  for (size_t i = 0; i < file.variants.size(); ++i) {
    const std::string where =
        file.isSet ? "variants[" + std::to_string(i) + "]" : "";
    set.variants_.push_back(detail::ArtifactValidator(source, where)
                                .run(std::move(file.variants[i])));
    const std::string &chip = set.variants_.back().chip;
    for (size_t j = 0; j < i; ++j)
      if (chips[j] == chip)
        throw Error("artifact '" + source + "': " + where + ".target.chip: \"" +
                    chip + "\" is also the chip of variants[" +
                    std::to_string(j) + "]; a set holds one artifact per chip");
    chips.push_back(chip);
  }
  if (file.isSet)
    for (size_t i = 0; i < set.variants_.size(); ++i) {
      set.variants_[i].variantIndex = i;
      set.variants_[i].setChips = chips;
    }
  return set;
}

ArtifactSet ArtifactSet::load(const std::string &path) {
  return parse(detail::readArtifactText(path), path);
}

std::string ArtifactSet::chips() const {
  std::string out;
  for (const Artifact &variant : variants_)
    out += (out.empty() ? "" : ", ") + variant.chip;
  return out;
}

size_t ArtifactSet::variantIndexFor(int major, int minor,
                                    const std::string &device) const {
  std::vector<ChipTarget> targets;
  for (const Artifact &variant : variants_)
    targets.push_back(variant.target);
  if (std::optional<size_t> index = selectVariant(targets, major, minor))
    return *index;
  if (!isSet_)
    throw Error("artifact '" + source_ + "': " +
                targetMismatch(targets.front(), major, minor, device));
  throw Error("artifact '" + source_ + "': no variant of the set runs on " +
              device + " (compute capability " + capabilityText(major, minor) +
              "): the set has " + chips() +
              " (sm_XYa runs only on compute capability X.Y, sm_XY on X.Y "
              "and newer); recompile with a --chip list that includes " +
              chipFor(major, minor));
}

const Artifact &ArtifactSet::variantFor(int major, int minor,
                                        const std::string &device) const {
  return variants_[variantIndexFor(major, minor, device)];
}

Artifact ArtifactSet::takeVariantFor(int major, int minor,
                                     const std::string &device) && {
  return std::move(variants_[variantIndexFor(major, minor, device)]);
}

} // namespace qfuse::runtime
