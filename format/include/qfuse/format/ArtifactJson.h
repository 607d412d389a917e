//===- ArtifactJson.h - the artifact schema to and from JSON ----*- C++ -*-===//
//
// The one serializer of ArtifactSchema.h: toJson for the writer, fromJson
// for the reader. fromJson checks what the JSON alone can say (each field's
// type and range, unknown fields, fields newer than the file's version);
// whether the fields agree with each other is the runtime validator's job.
// Readers include this header; the compiler, which only writes, uses
// printArtifact and never sees nlohmann::json.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_FORMAT_ARTIFACTJSON_H
#define QFUSE_FORMAT_ARTIFACTJSON_H

#include "qfuse/format/ArtifactSchema.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace qfuse::format::artifact {

/// Where a read failed and why: `where` is the JSON path
/// ("plans[0].steps[1].args[2]", "top level"), under the prefix the read
/// was given ("variants[1].plans[0]...").
struct ReadError {
  std::string where;
  std::string what;
};

/// The JSON path `where` of a variant's read under `prefix` (a set's
/// "variants[1]"): "top level.format" -> "variants[1].format", "plans[0]"
/// -> "variants[1].plans[0]"; `where` itself without a prefix.
std::string locatedUnder(const std::string &prefix, const std::string &where);

/// The artifact as JSON.
nlohmann::json toJson(const Artifact &artifact);

/// Reads `root` into `out`; the first problem found, or nullopt. `prefix`
/// (a set's "variants[i]") starts every path an error names.
std::optional<ReadError> fromJson(const nlohmann::json &root, Artifact &out,
                                  const std::string &prefix = "");

/// Reads a plain artifact or an artifact set into `out`: for a set, its
/// own fields (format, version, a non-empty "variants" and nothing else)
/// and each variant under the prefix "variants[i]".
std::optional<ReadError> fromJson(const nlohmann::json &root,
                                  ArtifactFile &out);

/// `value` as printArtifact prints it (two-space indent, sorted keys,
/// doubles with 17 significant digits), without a final newline.
std::string printJson(const nlohmann::json &value);

} // namespace qfuse::format::artifact

#endif // QFUSE_FORMAT_ARTIFACTJSON_H
