//===- AddedTokens.h - Added and special tokens, split out of text -*- C++ -*-===//
//
// tokenizer.json's "added_tokens" are matched in the raw text before
// normalization, leftmost first and longest among those starting at the
// same place; the text between them goes through the model.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_TEXT_ADDEDTOKENS_H
#define QFUSE_TEXT_ADDEDTOKENS_H

#include <nlohmann/json_fwd.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace qfuse::text {

struct AddedToken {
  std::string content;
  int32_t id;
  bool special, lstrip, rstrip;
};

class AddedTokens {
public:
  static AddedTokens fromJson(const nlohmann::json &addedTokens,
                              const std::string &file);

  struct Section {
    std::string_view text;
    const AddedToken *token; // null for text between added tokens
  };
  /// `text` cut into added tokens and the text around them.
  std::vector<Section> split(std::string_view text) const;

  const AddedToken *byId(int32_t id) const;
  const AddedToken *byContent(const std::string &content) const;
  const std::vector<AddedToken> &all() const { return tokens_; }

private:
  std::vector<AddedToken> tokens_;
  std::unordered_map<int32_t, size_t> byId_;
  std::unordered_map<std::string, size_t> byContent_;
  /// Indices into tokens_ by first byte, longest content first.
  std::array<std::vector<size_t>, 256> byFirstByte_;
};

} // namespace qfuse::text

#endif // QFUSE_TEXT_ADDEDTOKENS_H
