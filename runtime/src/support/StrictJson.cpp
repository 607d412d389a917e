//===- StrictJson.cpp - JSON parsing that rejects duplicate keys ----------===//

#include "StrictJson.h"

#include "qfuse/runtime/Error.h"

#include <set>
#include <vector>

namespace qfuse::runtime::detail {

nlohmann::json parseStrictJson(std::string_view text, const std::string &what) {
  using nlohmann::json;
  // One key set per open object; the parser reports keys before values.
  std::vector<std::set<std::string>> keysPerObject;
  std::string duplicate;
  auto callback = [&](int /*depth*/, json::parse_event_t event,
                      json &parsed) -> bool {
    switch (event) {
    case json::parse_event_t::object_start:
      keysPerObject.emplace_back();
      break;
    case json::parse_event_t::object_end:
      if (!keysPerObject.empty())
        keysPerObject.pop_back();
      break;
    case json::parse_event_t::key:
      if (!keysPerObject.empty() && parsed.is_string() &&
          !keysPerObject.back().insert(parsed.get<std::string>()).second &&
          duplicate.empty())
        duplicate = parsed.get<std::string>();
      break;
    default:
      break;
    }
    return true;
  };
  json result;
  try {
    result = json::parse(text.begin(), text.end(), callback);
  } catch (const json::exception &e) {
    throw Error(what + " is not valid JSON: " + e.what());
  }
  if (!duplicate.empty())
    throw Error(what + ": duplicate key '" + duplicate + "'");
  return result;
}

} // namespace qfuse::runtime::detail
