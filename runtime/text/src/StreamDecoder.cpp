//===- StreamDecoder.cpp - Decoding ids as they arrive --------------------===//
//
// Bytes accumulate in `pending_`; each push hands out the longest prefix
// that ends on a character boundary, so a character split across tokens
// (byte-level BPE, <0xNN> byte fallback) comes out whole, once.
//
//===----------------------------------------------------------------------===//

#include "TokenizerImpl.h"

#include "qfuse/text/Unicode.h"

namespace qfuse::text {

StreamDecoder::StreamDecoder(const Tokenizer &tokenizer, bool skipSpecialTokens)
    : tokenizer_(tokenizer), skipSpecialTokens_(skipSpecialTokens),
      stripLeft_(tokenizer.impl().decoder.stripCount()) {}

std::string StreamDecoder::push(int32_t id) {
  tokenizer_.impl().appendDecoded(id, skipSpecialTokens_, stripLeft_, pending_);
  size_t complete = pending_.size() - incompleteUtf8Tail(pending_);
  std::string text = toValidUtf8(std::string_view(pending_).substr(0, complete));
  pending_.erase(0, complete);
  return text;
}

std::string StreamDecoder::finish() {
  std::string text = toValidUtf8(pending_);
  pending_.clear();
  return text;
}

} // namespace qfuse::text
