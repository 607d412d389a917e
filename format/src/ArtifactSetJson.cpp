//===- ArtifactSetJson.cpp - one artifact per chip, in one file -----------===//
//
// An artifact set (docs/artifact.md, Artifact sets):
//
//   {"format": "qfuse-artifact-set", "version": 1, "variants": [{...}, ...]}
//
// printed around the variants' own texts (each variant byte for byte what a
// single-chip compile writes), and read: the set's fields, then each
// variant under "variants[i]".
//
//===----------------------------------------------------------------------===//

#include "qfuse/format/ArtifactJson.h"
#include "qfuse/format/ArtifactVersion.h"

namespace qfuse::format::artifact {

using nlohmann::json;

std::string printArtifactSet(const std::vector<std::string> &variants) {
  std::string out =
      "{\n  \"format\": \"" + std::string(kArtifactSetFormat) +
      "\",\n  \"version\": " + std::to_string(kArtifactSetVersion) +
      ",\n  \"variants\": [\n";
  for (size_t i = 0; i < variants.size(); ++i) {
    std::string_view text = variants[i];
    while (!text.empty() && text.back() == '\n')
      text.remove_suffix(1);
    out += text;
    out += i + 1 < variants.size() ? ",\n" : "\n";
  }
  return out + "  ]\n}\n";
}

/// The set's own fields, then each variant; errors name the set's fields
/// without a prefix and a variant's under "variants[i]".
std::optional<ReadError> fromJson(const json &root, ArtifactFile &out) {
  out = ArtifactFile();
  const auto format = root.is_object() ? root.find("format") : root.end();
  if (!root.is_object() || format == root.end() || !format->is_string() ||
      format->get<std::string>() != kArtifactSetFormat) {
    // A plain artifact, or no artifact at all: its reader says why.
    out.variants.emplace_back();
    return fromJson(root, out.variants.back());
  }
  out.isSet = true;
  for (const auto &item : root.items())
    if (item.key() != "format" && item.key() != "version" &&
        item.key() != "variants")
      return ReadError{item.key(), "unknown field in an artifact set "
                                   "(expected format, version, variants)"};
  const auto version = root.find("version");
  if (version == root.end())
    return ReadError{"top level", "missing field 'version'"};
  if (!version->is_number_integer() ||
      version->get<int64_t>() != kArtifactSetVersion)
    return ReadError{"version",
                     "found " + version->dump() +
                         ", this runtime reads artifact sets of version " +
                         std::to_string(kArtifactSetVersion)};
  const auto variants = root.find("variants");
  if (variants == root.end())
    return ReadError{"top level", "missing field 'variants'"};
  if (!variants->is_array())
    return ReadError{"variants", "expected an array of artifacts, found " +
                                     std::string(variants->type_name())};
  if (variants->empty())
    return ReadError{"variants", "empty: a set holds at least one artifact"};
  out.variants.resize(variants->size());
  for (size_t i = 0; i < variants->size(); ++i)
    if (auto error = fromJson((*variants)[i], out.variants[i],
                              "variants[" + std::to_string(i) + "]"))
      return error;
  return std::nullopt;
}

} // namespace qfuse::format::artifact
