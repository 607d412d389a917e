//===- StopTokens.h - Where generation stops, and the text it streams -*- C++ -*-===//
//
// The token ids that end a generation, as Hugging Face's generate() takes
// them from a model directory: eos_token_id of generation_config.json (or,
// without one there, of config.json), an int or a list; and the tokenizer's
// eos_token (tokenizer_config.json). A chat format adds its end-of-turn
// token (<|eot_id|>, <|im_end|>).
//
//   auto stops = stopTokenIds(dir, tokenizer, chat.endOfTurn());
//   TextStreamer out(tokenizer, stops);
//   for each generated id: if (!out.push(id, text)) break; print(text);
//   print(out.finish());
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_TEXT_STOPTOKENS_H
#define QFUSE_TEXT_STOPTOKENS_H

#include "qfuse/text/Tokenizer.h"

#include <cstdint>
#include <string>
#include <vector>

namespace qfuse::text {

/// eos_token_id from DIR/generation_config.json, else DIR/config.json (an
/// int, a list of ints or null; files that are absent are skipped), then
/// the tokenizer's eosId(), then `extraToken` (a token's text, e.g. a chat
/// format's end of turn) if non-empty: sorted, without duplicates. Throws
/// TokenizerError naming the file and key for a malformed value, and for an
/// `extraToken` that is not a token.
std::vector<int32_t> stopTokenIds(const std::string &modelDir,
                                  const Tokenizer &tokenizer,
                                  const std::string &extraToken = "");

/// Streams generated ids as text: push() gives the text that became
/// complete (partial UTF-8 held back, special tokens left out) and returns
/// false, writing nothing, at a stop token.
class TextStreamer {
public:
  TextStreamer(const Tokenizer &tokenizer, std::vector<int32_t> stopIds);
  bool push(int32_t id, std::string &text);
  std::string finish();
  bool stopped() const { return stopped_; }

private:
  StreamDecoder decoder_;
  std::vector<int32_t> stopIds_;
  bool stopped_ = false;
};

} // namespace qfuse::text

#endif // QFUSE_TEXT_STOPTOKENS_H
