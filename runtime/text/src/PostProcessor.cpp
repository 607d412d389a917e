//===- PostProcessor.cpp - The post-processor of a tokenizer.json ---------===//
//
// Supported: null and ByteLevel (no ids added), TemplateProcessing (its
// "single" template: special tokens around the sequence $A), and a Sequence
// of these. Anything else is a TokenizerError naming the type.
//
//===----------------------------------------------------------------------===//

#include "TokenizerImpl.h"

#include <nlohmann/json.hpp>

namespace qfuse::text {

using nlohmann::json;

void readPostProcessor(const json &config, const std::string &file,
                       const Tokenizer::Impl &impl,
                       std::vector<int32_t> &prefix,
                       std::vector<int32_t> &suffix) {
  if (config.is_null())
    return;
  std::string type = config.value("type", std::string());
  auto fail = [&](const std::string &what) {
    throw TokenizerError(file + ": post_processor '" + type + "': " + what);
  };
  if (type == "ByteLevel")
    return;
  if (type == "Sequence") {
    for (const json &step : config.at("processors"))
      readPostProcessor(step, file, impl, prefix, suffix);
    return;
  }
  if (type != "TemplateProcessing")
    throw TokenizerError(file + ": post_processor type '" + type +
                         "' is not supported (supported: TemplateProcessing, "
                         "ByteLevel, Sequence)");
  if (!prefix.empty() || !suffix.empty())
    fail("only one TemplateProcessing is supported");
  const json &specials = config.value("special_tokens", json::object());
  bool seenSequence = false;
  for (const json &item : config.at("single")) {
    if (item.contains("Sequence")) {
      if (item["Sequence"].at("id") != "A" || seenSequence)
        fail("the single template must hold the sequence $A once");
      seenSequence = true;
      continue;
    }
    if (!item.contains("SpecialToken"))
      fail("unknown template item " + item.dump());
    std::string name = item["SpecialToken"].at("id").get<std::string>();
    std::vector<int32_t> ids;
    if (specials.contains(name)) {
      const json &listed = specials[name].at("ids");
      if (!listed.is_array())
        fail("special token '" + name + "': ids is not a list");
      for (const json &value : listed) {
        int32_t id = readTokenId(value, file,
                                 "post_processor: special token '" + name + "'");
        // An id the tokenizer cannot decode would reach the model as an
        // embedding row nobody named.
        if (!impl.added.byId(id) && !impl.model.idToToken(id))
          fail("special token '" + name + "' has id " + std::to_string(id) +
               ", which is neither in the vocab nor an added token");
        ids.push_back(id);
      }
    } else if (const AddedToken *t = impl.added.byContent(name)) {
      ids = {t->id};
    } else if (std::optional<int32_t> id = impl.model.tokenToId(name)) {
      ids = {*id};
    } else {
      fail("special token '" + name + "' is unknown");
    }
    std::vector<int32_t> &side = seenSequence ? suffix : prefix;
    side.insert(side.end(), ids.begin(), ids.end());
  }
  if (!seenSequence)
    fail("the single template has no sequence $A");
}

} // namespace qfuse::text
