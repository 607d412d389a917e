//===- AddedTokens.cpp - Added and special tokens, split out of text ------===//

#include "AddedTokens.h"

#include "Bpe.h"

#include "qfuse/text/TokenizerError.h"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace qfuse::text {

using nlohmann::json;

AddedTokens AddedTokens::fromJson(const json &addedTokens,
                                  const std::string &file) {
  AddedTokens a;
  if (addedTokens.is_null())
    return a;
  for (const json &t : addedTokens) {
    std::string content = t.at("content").get<std::string>();
    const int32_t id =
        readTokenId(t.at("id"), file, "added token '" + content + "'");
    AddedToken token{std::move(content), id, t.value("special", false),
                     t.value("lstrip", false), t.value("rstrip", false)};
    auto fail = [&](const std::string &what) {
      throw TokenizerError(file + ": added token " + std::to_string(token.id) +
                           " '" + token.content + "': " + what);
    };
    if (token.content.empty())
      fail("empty content");
    if (t.value("single_word", false))
      fail("single_word: true is not supported");
    if (a.byContent_.count(token.content))
      fail("appears twice");
    a.byId_[token.id] = a.tokens_.size();
    a.byContent_[token.content] = a.tokens_.size();
    a.tokens_.push_back(std::move(token));
  }
  for (size_t i = 0; i < a.tokens_.size(); ++i)
    a.byFirstByte_[static_cast<unsigned char>(a.tokens_[i].content[0])]
        .push_back(i);
  for (auto &candidates : a.byFirstByte_)
    std::stable_sort(candidates.begin(), candidates.end(),
                     [&](size_t x, size_t y) {
                       return a.tokens_[x].content.size() >
                              a.tokens_[y].content.size();
                     });
  return a;
}

std::vector<AddedTokens::Section>
AddedTokens::split(std::string_view text) const {
  std::vector<Section> out;
  size_t start = 0;
  for (size_t i = 0; i < text.size();) {
    const AddedToken *match = nullptr;
    for (size_t index : byFirstByte_[static_cast<unsigned char>(text[i])]) {
      const std::string &c = tokens_[index].content;
      if (text.compare(i, c.size(), c) == 0) {
        match = &tokens_[index];
        break;
      }
    }
    if (!match) {
      ++i;
      continue;
    }
    if (i > start)
      out.push_back({text.substr(start, i - start), nullptr});
    out.push_back({text.substr(i, match->content.size()), match});
    i += match->content.size();
    start = i;
  }
  if (start < text.size())
    out.push_back({text.substr(start), nullptr});
  return out;
}

const AddedToken *AddedTokens::byId(int32_t id) const {
  auto it = byId_.find(id);
  return it == byId_.end() ? nullptr : &tokens_[it->second];
}

const AddedToken *AddedTokens::byContent(const std::string &content) const {
  auto it = byContent_.find(content);
  return it == byContent_.end() ? nullptr : &tokens_[it->second];
}

} // namespace qfuse::text
