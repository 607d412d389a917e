//===- TokenizerImpl.h - The parts of a loaded tokenizer -----------*- C++ -*-===//
//
// What Tokenizer and StreamDecoder share: the pipeline stages read from
// tokenizer.json, the template ids and the tokenizer_config.json settings.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_TEXT_TOKENIZERIMPL_H
#define QFUSE_TEXT_TOKENIZERIMPL_H

#include "AddedTokens.h"
#include "Bpe.h"
#include "Decoder.h"
#include "Normalizer.h"
#include "PreTokenizer.h"

#include "qfuse/text/Tokenizer.h"

#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

namespace qfuse::text {

struct Tokenizer::Impl {
  std::string file; // tokenizer.json, for messages
  AddedTokens added;
  Normalizer normalizer;
  PreTokenizer preTokenizer;
  BpeModel model;
  Decoder decoder;
  /// The post-processor's single-sequence template: ids before and after.
  std::vector<int32_t> prefixIds, suffixIds;
  std::unordered_set<int32_t> specialIds;
  std::optional<int32_t> bos, eos;
  bool cleanUpTokenizationSpaces = true;

  /// Appends the bytes of `id` to `out`, stripping what the decoder's Strip
  /// step still has to strip (`stripLeft` copies, updated).
  void appendDecoded(int32_t id, bool skipSpecial, size_t &stripLeft,
                     std::string &out) const;
};

/// Reads tokenizer.json's "post_processor" into the template ids.
void readPostProcessor(const nlohmann::json &config, const std::string &file,
                       const Tokenizer::Impl &impl,
                       std::vector<int32_t> &prefix,
                       std::vector<int32_t> &suffix);

} // namespace qfuse::text

#endif // QFUSE_TEXT_TOKENIZERIMPL_H
