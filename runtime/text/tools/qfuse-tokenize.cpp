//===- qfuse-tokenize.cpp - Text to token ids and back --------------------===//
//
//   qfuse-tokenize --tokenizer DIR --text "Hello"      prints 9906
//   qfuse-tokenize --tokenizer DIR --ids 9906,1917     prints Hello world
//
// DIR holds tokenizer.json (and tokenizer_config.json). --tokens also prints
// each id's token; --stream decodes ids one at a time as a generator would.
//
//===----------------------------------------------------------------------===//

#include "qfuse/text/Tokenizer.h"

#include <CLI/CLI.hpp>

#include <iostream>
#include <sstream>

using namespace qfuse::text;

int main(int argc, char **argv) {
  CLI::App app{"Encode text to token ids, or decode ids to text, with a "
               "Hugging Face tokenizer.json"};
  std::string dir, text, ids;
  bool noSpecial = false, skipSpecial = false, tokens = false, stream = false;
  app.add_option("--tokenizer", dir,
                 "directory with tokenizer.json (and tokenizer_config.json)")
      ->required();
  auto *textOption = app.add_option("--text", text, "text to encode");
  auto *idsOption =
      app.add_option("--ids", ids, "comma-separated token ids to decode");
  textOption->excludes(idsOption);
  app.add_flag("--no-special", noSpecial,
               "encode without the template's special tokens (BOS)");
  app.add_flag("--skip-special", skipSpecial,
               "decode without special tokens");
  app.add_flag("--tokens", tokens, "also print each id's token");
  app.add_flag("--stream", stream,
               "decode id by id, one output line per id");
  CLI11_PARSE(app, argc, argv);
  if (!*textOption && !*idsOption) {
    std::cerr << "qfuse-tokenize: give --text or --ids\n";
    return 2;
  }

  try {
    Tokenizer tokenizer = Tokenizer::fromDirectory(dir);
    std::vector<int32_t> list;
    if (*textOption) {
      list = tokenizer.encode(text, !noSpecial);
      for (size_t i = 0; i < list.size(); ++i)
        std::cout << (i ? "," : "") << list[i];
      std::cout << "\n";
    } else {
      std::stringstream in(ids);
      for (std::string item; std::getline(in, item, ',');) {
        try {
          list.push_back(std::stoi(item));
        } catch (const std::exception &) {
          std::cerr << "qfuse-tokenize: --ids: '" << item
                    << "' is not a token id\n";
          return 2;
        }
      }
      if (stream) {
        StreamDecoder decoder(tokenizer, skipSpecial);
        for (int32_t id : list)
          std::cout << id << "\t\"" << decoder.push(id) << "\"\n";
        std::cout << "end\t\"" << decoder.finish() << "\"\n";
      } else {
        DecodeOptions options;
        options.skipSpecialTokens = skipSpecial;
        std::cout << tokenizer.decode(list, options) << "\n";
      }
    }
    if (tokens)
      for (int32_t id : list)
        std::cout << id << "\t" << tokenizer.idToToken(id).value_or("?") << "\n";
  } catch (const TokenizerError &e) {
    std::cerr << "qfuse-tokenize: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
