//===- Tokenizer.h - Hugging Face tokenizer.json in C++ -------------*- C++ -*-===//
//
// Loads a model directory's tokenizer.json (and tokenizer_config.json, when
// present, for the BOS/EOS tokens and the decode clean-up rule) and encodes
// text to token ids and decodes ids to text, as Hugging Face's tokenizers do:
//
//   text -> split out added tokens -> normalize each section -> pre-tokenize
//        -> BPE each word -> post-process (BOS/EOS template) -> ids
//   ids  -> tokens -> decoder (bytes) -> UTF-8 text (-> clean-up)
//
// Supported: byte-level BPE (Llama-3, Qwen2, Qwen3) and BPE with byte
// fallback and SentencePiece-style metaspace (Llama-2, Mistral, TinyLlama).
// Anything else fails to load with a TokenizerError naming the file and the
// type, pattern or option it does not support. docs/tokenizer.md has the
// details and how it is tested.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_TEXT_TOKENIZER_H
#define QFUSE_TEXT_TOKENIZER_H

#include "qfuse/text/TokenizerError.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace qfuse::text {

struct DecodeOptions {
  /// Leave out special tokens (added tokens marked "special", and the
  /// config's additional_special_tokens).
  bool skipSpecialTokens = false;
  /// Remove spaces before punctuation and English contractions (" ." ->
  /// "."). Unset: tokenizer_config.json's clean_up_tokenization_spaces,
  /// true when it is absent.
  std::optional<bool> cleanUpTokenizationSpaces;
};

class Tokenizer {
public:
  /// Reads DIR/tokenizer.json and, if it exists, DIR/tokenizer_config.json.
  static Tokenizer fromDirectory(const std::string &dir);
  /// `configPath` may be empty.
  static Tokenizer fromFiles(const std::string &tokenizerJsonPath,
                             const std::string &configPath);

  /// Token ids of `text`. Invalid UTF-8 in `text` is replaced by U+FFFD
  /// first. `addSpecialTokens` applies the post-processor's template (BOS).
  std::vector<int32_t> encode(std::string_view text,
                              bool addSpecialTokens = true) const;
  /// The text of `ids`. Throws TokenizerError for an id outside the vocab.
  std::string decode(const std::vector<int32_t> &ids,
                     const DecodeOptions &options = {}) const;

  std::optional<int32_t> tokenToId(const std::string &token) const;
  /// The token text of `id` (byte-level characters for byte-level models).
  std::optional<std::string> idToToken(int32_t id) const;
  bool isSpecial(int32_t id) const;
  /// One past the largest id of the vocabulary and the added tokens.
  size_t idLimit() const;

  /// tokenizer_config.json's bos_token / eos_token, where set and known.
  std::optional<int32_t> bosId() const;
  std::optional<int32_t> eosId() const;

  struct Impl;
  const Impl &impl() const { return *impl_; }

private:
  std::shared_ptr<const Impl> impl_;
};

/// Decodes ids as they arrive: push() returns the text that became
/// complete, holding back the bytes of a UTF-8 character that is not
/// complete yet; finish() returns what is left (an incomplete character
/// becomes U+FFFD). The concatenated output equals Tokenizer::decode of all
/// ids without clean-up.
class StreamDecoder {
public:
  explicit StreamDecoder(const Tokenizer &tokenizer,
                         bool skipSpecialTokens = false);
  std::string push(int32_t id);
  std::string finish();

private:
  Tokenizer tokenizer_;
  bool skipSpecialTokens_;
  size_t stripLeft_;
  std::string pending_;
};

} // namespace qfuse::text

#endif // QFUSE_TEXT_TOKENIZER_H
