//===- Tokenizer.cpp - Loading, encoding and decoding ---------------------===//

#include "TokenizerImpl.h"

#include "qfuse/text/Unicode.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>

namespace qfuse::text {

using nlohmann::json;

namespace {

json readJson(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw TokenizerError(path + ": cannot open");
  try {
    return json::parse(in);
  } catch (const json::exception &e) {
    throw TokenizerError(path + ": not valid JSON: " + e.what());
  }
}

/// bos_token / eos_token: a string, an {"content": ...} object, or null.
std::optional<std::string> tokenText(const json &config, const char *key) {
  if (!config.contains(key))
    return std::nullopt;
  const json &v = config[key];
  if (v.is_string())
    return v.get<std::string>();
  if (v.is_object() && v.contains("content"))
    return v["content"].get<std::string>();
  return std::nullopt;
}

void replaceAll(std::string &s, std::string_view from, std::string_view to) {
  std::string out;
  size_t i = 0;
  for (size_t hit; (hit = s.find(from, i)) != std::string::npos;
       i = hit + from.size())
    out.append(s, i, hit - i).append(to);
  out.append(s, i, std::string::npos);
  s = std::move(out);
}

/// transformers' clean_up_tokenization.
void cleanUpTokenization(std::string &s) {
  static const std::pair<std::string_view, std::string_view> kRules[] = {
      {" .", "."},     {" ?", "?"},     {" !", "!"},     {" ,", ","},
      {" ' ", "'"},    {" n't", "n't"}, {" 'm", "'m"},   {" 's", "'s"},
      {" 've", "'ve"}, {" 're", "'re"}};
  for (auto [from, to] : kRules)
    replaceAll(s, from, to);
}

std::u32string trimStart(std::u32string s) {
  size_t i = 0;
  while (i < s.size() && isSpace(s[i]))
    ++i;
  return s.substr(i);
}

std::u32string trimEnd(std::u32string s) {
  size_t n = s.size();
  while (n > 0 && isSpace(s[n - 1]))
    --n;
  return s.substr(0, n);
}

} // namespace

Tokenizer Tokenizer::fromDirectory(const std::string &dir) {
  std::string config = dir + "/tokenizer_config.json";
  if (!std::ifstream(config))
    config.clear();
  return fromFiles(dir + "/tokenizer.json", config);
}

Tokenizer Tokenizer::fromFiles(const std::string &tokenizerJsonPath,
                               const std::string &configPath) {
  json t = readJson(tokenizerJsonPath);
  const std::string &file = tokenizerJsonPath;
  auto impl = std::make_shared<Impl>();
  impl->file = file;
  try {
    impl->added = AddedTokens::fromJson(t.value("added_tokens", json()), file);
    impl->normalizer = Normalizer::fromJson(t.value("normalizer", json()), file);
    impl->preTokenizer =
        PreTokenizer::fromJson(t.value("pre_tokenizer", json()), file);
    impl->model = BpeModel::fromJson(t.at("model"), file);
    impl->decoder = Decoder::fromJson(t.value("decoder", json()), file);
    readPostProcessor(t.value("post_processor", json()), file, *impl,
                      impl->prefixIds, impl->suffixIds);
  } catch (const json::exception &e) {
    throw TokenizerError(file + ": unexpected structure: " + e.what());
  }
  for (const AddedToken &token : impl->added.all())
    if (token.special)
      impl->specialIds.insert(token.id);

  if (!configPath.empty()) {
    json c = readJson(configPath);
    auto idOf = [&](const std::string &text) -> std::optional<int32_t> {
      if (const AddedToken *a = impl->added.byContent(text))
        return a->id;
      return impl->model.tokenToId(text);
    };
    try {
      if (auto bos = tokenText(c, "bos_token"))
        impl->bos = idOf(*bos);
      if (auto eos = tokenText(c, "eos_token"))
        impl->eos = idOf(*eos);
      if (c.contains("clean_up_tokenization_spaces") &&
          c["clean_up_tokenization_spaces"].is_boolean())
        impl->cleanUpTokenizationSpaces =
            c["clean_up_tokenization_spaces"].get<bool>();
      for (const json &s : c.value("additional_special_tokens", json::array())) {
        std::string text = s.is_object() ? s.at("content").get<std::string>()
                                         : s.get<std::string>();
        if (auto id = idOf(text))
          impl->specialIds.insert(*id);
      }
    } catch (const json::exception &e) {
      throw TokenizerError(configPath + ": unexpected structure: " + e.what());
    }
  }

  Tokenizer tokenizer;
  tokenizer.impl_ = std::move(impl);
  return tokenizer;
}

std::vector<int32_t> Tokenizer::encode(std::string_view text,
                                       bool addSpecialTokens) const {
  const Impl &m = *impl_;
  std::string valid = toValidUtf8(text);
  std::vector<AddedTokens::Section> sections = m.added.split(valid);

  std::vector<int32_t> ids;
  if (addSpecialTokens)
    ids = m.prefixIds;
  for (size_t i = 0; i < sections.size(); ++i) {
    const AddedTokens::Section &s = sections[i];
    if (s.token) {
      ids.push_back(s.token->id);
      continue;
    }
    std::u32string section = decodeUtf8(s.text);
    if (i > 0 && sections[i - 1].token && sections[i - 1].token->rstrip)
      section = trimStart(std::move(section));
    if (i + 1 < sections.size() && sections[i + 1].token &&
        sections[i + 1].token->lstrip)
      section = trimEnd(std::move(section));
    if (section.empty())
      continue;
    section = m.normalizer.apply(std::move(section));
    if (section.empty())
      continue;
    size_t first = ids.size();
    for (const std::string &word : m.preTokenizer.split(section))
      m.model.encodeWord(word, ids);
    if (m.model.fuseUnk() && m.model.unkId()) {
      // Runs of unknown tokens become one.
      int32_t unk = *m.model.unkId();
      size_t out = first;
      for (size_t k = first; k < ids.size(); ++k)
        if (!(ids[k] == unk && out > first && ids[out - 1] == unk))
          ids[out++] = ids[k];
      ids.resize(out);
    }
  }
  if (addSpecialTokens)
    ids.insert(ids.end(), m.suffixIds.begin(), m.suffixIds.end());
  return ids;
}

void Tokenizer::Impl::appendDecoded(int32_t id, bool skipSpecial,
                                    size_t &stripLeft, std::string &out) const {
  if (skipSpecial && specialIds.count(id))
    return;
  std::string bytes;
  if (const AddedToken *a = added.byId(id)) {
    decoder.appendToken(a->content, /*added=*/true, bytes);
  } else if (const std::string *token = model.idToToken(id)) {
    decoder.appendToken(*token, /*added=*/false, bytes);
  } else {
    throw TokenizerError(file + ": token id " + std::to_string(id) +
                         " is not in the vocabulary");
  }
  size_t begin = 0;
  const std::string &strip = decoder.stripContent();
  while (stripLeft > 0 && begin < bytes.size()) {
    if (bytes.compare(begin, strip.size(), strip) != 0) {
      stripLeft = 0;
      break;
    }
    begin += strip.size();
    --stripLeft;
  }
  out.append(bytes, begin, std::string::npos);
}

std::string Tokenizer::decode(const std::vector<int32_t> &ids,
                              const DecodeOptions &options) const {
  std::string bytes;
  size_t stripLeft = impl_->decoder.stripCount();
  for (int32_t id : ids)
    impl_->appendDecoded(id, options.skipSpecialTokens, stripLeft, bytes);
  std::string text = toValidUtf8(bytes);
  if (options.cleanUpTokenizationSpaces.value_or(
          impl_->cleanUpTokenizationSpaces))
    cleanUpTokenization(text);
  return text;
}

std::optional<int32_t> Tokenizer::tokenToId(const std::string &token) const {
  if (const AddedToken *a = impl_->added.byContent(token))
    return a->id;
  return impl_->model.tokenToId(token);
}

std::optional<std::string> Tokenizer::idToToken(int32_t id) const {
  if (const AddedToken *a = impl_->added.byId(id))
    return a->content;
  if (const std::string *t = impl_->model.idToToken(id))
    return *t;
  return std::nullopt;
}

bool Tokenizer::isSpecial(int32_t id) const {
  return impl_->specialIds.count(id) != 0;
}

size_t Tokenizer::idLimit() const {
  size_t limit = impl_->model.idLimit();
  for (const AddedToken &a : impl_->added.all())
    limit = std::max(limit, static_cast<size_t>(a.id) + 1);
  return limit;
}

std::optional<int32_t> Tokenizer::bosId() const { return impl_->bos; }
std::optional<int32_t> Tokenizer::eosId() const { return impl_->eos; }

} // namespace qfuse::text
