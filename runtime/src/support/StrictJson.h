//===- StrictJson.h - JSON parsing that rejects duplicate keys --*- C++ -*-===//
//
// nlohmann::json keeps the last of two equal keys without a word; the
// safetensors and artifact readers both want that to be an error.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_RUNTIME_SRC_STRICTJSON_H
#define QFUSE_RUNTIME_SRC_STRICTJSON_H

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace qfuse::runtime::detail {

/// Parses `text`; on a syntax error throws qfuse::Error
/// "<what> is not valid JSON: ...", on a repeated key in any object
/// "<what>: duplicate key 'k'".
nlohmann::json parseStrictJson(std::string_view text, const std::string &what);

} // namespace qfuse::runtime::detail

#endif // QFUSE_RUNTIME_SRC_STRICTJSON_H
