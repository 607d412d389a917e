//===- TokenizerChecks.h - What every tokenizer must do with any text -*- C++ -*-===//
//
// Shared by the two tokenizer harnesses: encode arbitrary bytes, decode the
// ids back (whole and streamed, Tokenizer.h's StreamDecoder contract), and
// decode arbitrary ids, which must fail only with TokenizerError.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_FUZZ_TOKENIZERCHECKS_H
#define QFUSE_FUZZ_TOKENIZERCHECKS_H

#include "FuzzSupport.h"

#include "qfuse/text/Tokenizer.h"

#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace qfuse::fuzz {

/// Returns decode(encode(text, addSpecialTokens = false)) without clean-up.
inline std::string checkTokenizer(const text::Tokenizer &tokenizer,
                                  std::string_view input) {
  using text::DecodeOptions;
  for (bool addSpecial : {true, false}) {
    std::vector<int32_t> ids = tokenizer.encode(input, addSpecial);
    for (int32_t id : ids)
      if (id < 0 || static_cast<size_t>(id) >= tokenizer.idLimit())
        propertyFailed("encode gave id " + std::to_string(id) +
                       " outside [0, " + std::to_string(tokenizer.idLimit()) +
                       ")");
    DecodeOptions raw;
    raw.cleanUpTokenizationSpaces = false;
    std::string whole = tokenizer.decode(ids, raw);
    tokenizer.decode(ids);
    DecodeOptions skip;
    skip.skipSpecialTokens = true;
    tokenizer.decode(ids, skip);
    text::StreamDecoder stream(tokenizer);
    std::string streamed;
    for (int32_t id : ids)
      streamed += stream.push(id);
    streamed += stream.finish();
    if (streamed != whole)
      propertyFailed("streamed decode \"" + streamed +
                     "\" differs from decode \"" + whole + "\"");
    if (!addSpecial)
      return whole;
  }
  return {};
}

/// Decodes the input's bytes read as little-endian int32 ids.
inline void checkArbitraryIds(const text::Tokenizer &tokenizer,
                              std::string_view input) {
  std::vector<int32_t> ids(input.size() / 4);
  if (!ids.empty())
    std::memcpy(ids.data(), input.data(), ids.size() * 4);
  try {
    tokenizer.decode(ids);
  } catch (const text::TokenizerError &) {
  }
  try {
    text::StreamDecoder stream(tokenizer, /*skipSpecialTokens=*/true);
    for (int32_t id : ids)
      stream.push(id);
    stream.finish();
  } catch (const text::TokenizerError &) {
  }
  for (int32_t id : ids)
    if (std::optional<std::string> token = tokenizer.idToToken(id))
      tokenizer.tokenToId(*token);
}

} // namespace qfuse::fuzz

#endif // QFUSE_FUZZ_TOKENIZERCHECKS_H
