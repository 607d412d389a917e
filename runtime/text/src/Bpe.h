//===- Bpe.h - The BPE model of a tokenizer.json -------------------*- C++ -*-===//
//
// Vocabulary, ranked merges and the unknown-character rules (byte fallback
// to <0xNN> tokens, or the unk token). Turns one pre-token into token ids.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_TEXT_BPE_H
#define QFUSE_TEXT_BPE_H

#include <nlohmann/json_fwd.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace qfuse::text {

/// The largest token id a tokenizer.json may use: 2^22 - 1, as a config's
/// vocab_size is at most 2^22 (testdata/model-configs/README.md). Ids index
/// tables, so a larger one would allocate gigabytes.
inline constexpr int64_t kMaxTokenId = (int64_t(1) << 22) - 1;

/// `value` as a token id, an integer from 0 to kMaxTokenId; otherwise throws
/// TokenizerError "<file>: <what> has id <value>; expected ...".
int32_t readTokenId(const nlohmann::json &value, const std::string &file,
                    const std::string &what);

class BpeModel {
public:
  /// Reads `"model"` of tokenizer.json; `file` names it in errors.
  static BpeModel fromJson(const nlohmann::json &model,
                           const std::string &file);

  /// Appends the ids of `word` (UTF-8, already mapped to byte-level
  /// characters where the tokenizer is byte-level) to `out`.
  void encodeWord(std::string_view word, std::vector<int32_t> &out) const;

  std::optional<int32_t> tokenToId(const std::string &token) const;
  /// The token of `id`, or nullptr when the vocabulary has no such id.
  const std::string *idToToken(int32_t id) const;
  size_t idLimit() const { return tokens_.size(); }
  std::optional<int32_t> unkId() const { return unkId_; }
  bool fuseUnk() const { return fuseUnk_; }

private:
  std::unordered_map<std::string, int32_t> vocab_;
  std::vector<std::string> tokens_;
  std::vector<bool> hasToken_;
  /// (left id << 32 | right id) -> (rank, merged id).
  std::unordered_map<uint64_t, std::pair<int32_t, int32_t>> merges_;
  std::array<int32_t, 256> byteIds_{}; // <0xNN> tokens, -1 where absent
  std::optional<int32_t> unkId_;
  bool byteFallback_ = false, fuseUnk_ = false, ignoreMerges_ = false;

  void appendUnknown(std::string_view character, std::vector<int32_t> &out) const;
};

} // namespace qfuse::text

#endif // QFUSE_TEXT_BPE_H
