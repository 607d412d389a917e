//===- Normalizer.cpp - The normalizer of a tokenizer.json ----------------===//

#include "Normalizer.h"

#include "qfuse/text/TokenizerError.h"
#include "qfuse/text/Unicode.h"

#include <nlohmann/json.hpp>

namespace qfuse::text {

using nlohmann::json;

Normalizer Normalizer::fromJson(const json &config, const std::string &file) {
  Normalizer n;
  if (!config.is_null())
    n.add(config, file);
  return n;
}

void Normalizer::add(const json &config, const std::string &file) {
  std::string type = config.value("type", std::string());
  auto fail = [&](const std::string &what) {
    throw TokenizerError(file + ": normalizer '" + type + "': " + what);
  };
  if (type == "Sequence") {
    for (const json &step : config.at("normalizers"))
      add(step, file);
  } else if (type == "NFC") {
    steps_.push_back({Step::Nfc, {}, {}});
  } else if (type == "Prepend") {
    steps_.push_back(
        {Step::Prepend, {}, decodeUtf8(config.at("prepend").get<std::string>())});
  } else if (type == "Replace") {
    const json &pattern = config.at("pattern");
    if (!pattern.contains("String"))
      fail("only String patterns are supported, not " + pattern.dump());
    std::u32string from = decodeUtf8(pattern["String"].get<std::string>());
    if (from.empty())
      fail("empty pattern");
    steps_.push_back(
        {Step::Replace, from, decodeUtf8(config.at("content").get<std::string>())});
  } else {
    throw TokenizerError(file + ": normalizer type '" + type +
                         "' is not supported (supported: NFC, Prepend, "
                         "Replace, Sequence)");
  }
}

std::u32string Normalizer::apply(std::u32string text) const {
  for (const Step &step : steps_) {
    switch (step.kind) {
    case Step::Nfc:
      text = toNfc(text);
      break;
    case Step::Prepend:
      if (!text.empty())
        text = step.content + text;
      break;
    case Step::Replace: {
      std::u32string out;
      out.reserve(text.size());
      size_t i = 0;
      for (size_t hit; (hit = text.find(step.pattern, i)) != std::u32string::npos;
           i = hit + step.pattern.size())
        out.append(text, i, hit - i).append(step.content);
      out.append(text, i, std::u32string::npos);
      text = std::move(out);
      break;
    }
    }
  }
  return text;
}

} // namespace qfuse::text
