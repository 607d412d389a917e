//===- ArtifactSet.cpp - An artifact set read and checked, a variant chosen ===//
//
// The set's own fields (format, version, variants), each variant through the
// artifact parser with its index in the path, the one-variant-per-chip rule,
// and selectVariant, the one place that decides which chip's code a device
// runs.
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

/// Reads a set's fields and its variants; every error names the file and
/// the JSON path.
class SetParser {
public:
  explicit SetParser(std::string source) : source_(std::move(source)) {}

  std::vector<Artifact> run(const json &root) const {
    for (const auto &item : root.items())
      if (item.key() != "format" && item.key() != "version" &&
          item.key() != "variants")
        fail(item.key(), "unknown field in an artifact set (expected format, "
                         "version, variants)");
    const auto version = root.find("version");
    if (version == root.end())
      fail("top level", "missing field 'version'");
    if (!version->is_number_integer() ||
        version->get<int64_t>() != format::kArtifactSetVersion)
      fail("version", "found " + version->dump() +
                          ", this runtime reads artifact sets of version " +
                          std::to_string(format::kArtifactSetVersion));
    const auto variants = root.find("variants");
    if (variants == root.end())
      fail("top level", "missing field 'variants'");
    if (!variants->is_array())
      fail("variants", "expected an array of artifacts, found " +
                           std::string(variants->type_name()));
    if (variants->empty())
      fail("variants", "empty: a set holds at least one artifact");

    std::vector<Artifact> out;
    std::vector<std::string> chips;
    for (size_t i = 0; i < variants->size(); ++i) {
      const std::string where = "variants[" + std::to_string(i) + "]";
      out.push_back(readVariant((*variants)[i], where));
      const std::string &chip = out.back().chip;
      for (size_t j = 0; j < i; ++j)
        if (chips[j] == chip)
          fail(where + ".target.chip",
               "\"" + chip + "\" is also the chip of variants[" +
                   std::to_string(j) + "]; a set holds one artifact per chip");
      chips.push_back(chip);
    }
    for (size_t i = 0; i < out.size(); ++i) {
      out[i].variantIndex = i;
      out[i].setChips = chips;
    }
    return out;
  }

private:
  Artifact readVariant(const json &root, const std::string &where) const {
    format::artifact::Artifact read;
    if (auto error = format::artifact::fromJson(root, read, where))
      throw detail::readError(source_, *error);
    return detail::ArtifactValidator(source_, where).run(std::move(read));
  }

  [[noreturn]] void fail(const std::string &where,
                         const std::string &what) const {
    throw Error("artifact '" + source_ + "': " + where + ": " + what);
  }

  std::string source_;
};

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
  ArtifactSet set;
  set.source_ = source;
  const auto format = root.is_object() ? root.find("format") : root.end();
  if (!root.is_object() || format == root.end() || !format->is_string() ||
      format->get<std::string>() != kArtifactSetFormat) {
    // A plain artifact, or no artifact at all: its parser says why.
    format::artifact::Artifact read;
    if (auto error = format::artifact::fromJson(root, read))
      throw detail::readError(source, *error);
    set.variants_.push_back(
        detail::ArtifactValidator(source).run(std::move(read)));
    return set;
  }
  set.isSet_ = true;
  set.variants_ = SetParser(std::move(source)).run(root);
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
