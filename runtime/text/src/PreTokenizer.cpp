//===- PreTokenizer.cpp - The pre-tokenizer of a tokenizer.json -----------===//

#include "PreTokenizer.h"

#include "ByteLevel.h"

#include "qfuse/text/TokenizerError.h"
#include "qfuse/text/Unicode.h"

#include <nlohmann/json.hpp>

namespace qfuse::text {

using nlohmann::json;

PreTokenizer PreTokenizer::fromJson(const json &config, const std::string &file) {
  PreTokenizer p;
  if (!config.is_null())
    p.add(config, file);
  return p;
}

void PreTokenizer::add(const json &config, const std::string &file) {
  std::string type = config.value("type", std::string());
  auto fail = [&](const std::string &what) {
    throw TokenizerError(file + ": pre_tokenizer '" + type + "': " + what);
  };
  if (type == "Sequence") {
    for (const json &step : config.at("pretokenizers"))
      add(step, file);
  } else if (type == "Split") {
    if (pattern_ || byteLevel_)
      fail("only one Split, before ByteLevel, is supported");
    const json &pattern = config.at("pattern");
    if (!pattern.contains("Regex"))
      fail("only Regex patterns are supported, not " + pattern.dump());
    std::string regex = pattern["Regex"].get<std::string>();
    pattern_ = SplitPattern::recognise(regex);
    if (!pattern_)
      fail("the regex '" + regex +
           "' is not supported (supported: the Llama-3 and Qwen2 patterns)");
    std::string behavior = config.value("behavior", std::string());
    if (behavior != "Isolated")
      fail("behavior '" + behavior + "' is not supported (supported: Isolated)");
    if (config.value("invert", false))
      fail("invert: true is not supported");
  } else if (type == "ByteLevel") {
    if (byteLevel_)
      fail("ByteLevel appears twice");
    if (config.value("add_prefix_space", false))
      fail("add_prefix_space: true is not supported");
    if (config.value("use_regex", true))
      fail("use_regex: true (the GPT-2 pattern) is not supported");
    byteLevel_ = true;
  } else {
    throw TokenizerError(file + ": pre_tokenizer type '" + type +
                         "' is not supported (supported: Split, ByteLevel, "
                         "Sequence)");
  }
}

std::vector<std::string> PreTokenizer::split(const std::u32string &text) const {
  std::vector<std::pair<size_t, size_t>> spans;
  if (pattern_)
    spans = pattern_->split(text);
  else
    spans.emplace_back(0, text.size());
  std::vector<std::string> words;
  words.reserve(spans.size());
  for (auto [begin, end] : spans) {
    std::string utf8 =
        encodeUtf8(std::u32string_view(text).substr(begin, end - begin));
    if (!byteLevel_) {
      words.push_back(std::move(utf8));
      continue;
    }
    std::string mapped;
    appendByteLevel(mapped, utf8);
    words.push_back(std::move(mapped));
  }
  return words;
}

} // namespace qfuse::text
