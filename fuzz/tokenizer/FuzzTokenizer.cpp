//===- FuzzTokenizer.cpp - libFuzzer: tokenizer.json loading --------------===//
//
// The input is a tokenizer.json, optionally followed by a
// tokenizer_config.json and a text, joined by kPartSeparator
// (FuzzSupport.h). Loading must succeed or throw TokenizerError; a loaded
// tokenizer must encode the text (TokenizerChecks.h) and decode any ids or
// throw TokenizerError.
//
//===----------------------------------------------------------------------===//

#include "TokenizerChecks.h"

using namespace qfuse;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::vector<std::string_view> parts = fuzz::splitParts(data, size);
  if (parts.size() > 3)
    return 0;
  fuzz::ScratchDir &dir = fuzz::ScratchDir::get();
  dir.clear();
  std::string tokenizerJson = dir.write("tokenizer.json", parts[0]);
  std::string config;
  if (parts.size() > 1)
    config = dir.write("tokenizer_config.json", parts[1]);
  std::string_view input =
      parts.size() > 2 ? parts[2] : std::string_view("Hello, world! 123 été");
  try {
    text::Tokenizer tokenizer = text::Tokenizer::fromFiles(tokenizerJson, config);
    fuzz::checkTokenizer(tokenizer, input);
    fuzz::checkArbitraryIds(tokenizer, input);
  } catch (const text::TokenizerError &) {
  }
  return 0;
}
