//===- FuzzTokenizerText.cpp - libFuzzer: encode and decode arbitrary bytes -===//
//
// Fixed tokenizers, arbitrary text: the synthetic byte-level tokenizer
// (SyntheticTokenizer.h, Llama-3's form) and every tokenizer.json seed of
// fuzz/tokenizer/corpus that loads. The first input byte picks one, the
// rest is the text. Encoding must never fail, decoding the ids must give
// the text back through whole and streamed decode (TokenizerChecks.h); for
// the byte-level tokenizer exactly the text, with invalid UTF-8 replaced by
// U+FFFD as encode() documents. The same bytes read as ids must decode or
// throw TokenizerError.
//
//===----------------------------------------------------------------------===//

#include "TokenizerChecks.h"

#include "qfuse/text/SyntheticTokenizer.h"
#include "qfuse/text/Unicode.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace qfuse;

namespace {

std::vector<text::Tokenizer> loadTokenizers() {
  std::vector<text::Tokenizer> tokenizers;
  fuzz::ScratchDir &dir = fuzz::ScratchDir::get();
  std::string synthetic = dir.path() + "/synthetic";
  mkdir(synthetic.c_str(), 0700);
  text::writeSyntheticTokenizer(synthetic, 400);
  tokenizers.push_back(text::Tokenizer::fromDirectory(synthetic));
  for (const char *file : {"tokenizer.json", "tokenizer_config.json",
                           "generation_config.json"})
    std::remove((synthetic + "/" + file).c_str());
  rmdir(synthetic.c_str());

  // Seeds whose first part is a tokenizer.json that loads on its own.
  const std::string seeds = QFUSE_FUZZ_TOKENIZER_SEEDS;
  if (DIR *d = opendir(seeds.c_str())) {
    std::vector<std::string> names;
    while (dirent *entry = readdir(d))
      if (entry->d_name[0] != '.')
        names.push_back(entry->d_name);
    closedir(d);
    std::sort(names.begin(), names.end());
    for (const std::string &name : names) {
      std::ifstream in(seeds + "/" + name, std::ios::binary);
      std::string bytes((std::istreambuf_iterator<char>(in)),
                        std::istreambuf_iterator<char>());
      std::vector<std::string_view> parts = fuzz::splitParts(
          reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size());
      dir.clear();
      std::string path = dir.write("tokenizer.json", parts[0]);
      try {
        tokenizers.push_back(text::Tokenizer::fromFiles(path, ""));
      } catch (const text::TokenizerError &) {
      }
    }
    dir.clear();
  }
  return tokenizers;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const std::vector<text::Tokenizer> tokenizers = loadTokenizers();
  if (size == 0)
    return 0;
  const size_t which = data[0] % tokenizers.size();
  std::string_view input(reinterpret_cast<const char *>(data + 1), size - 1);
  std::string back = fuzz::checkTokenizer(tokenizers[which], input);
  if (which == 0 && back != text::toValidUtf8(input))
    fuzz::propertyFailed("the byte-level tokenizer decodes its ids to \"" +
                         back + "\", not the text");
  fuzz::checkArbitraryIds(tokenizers[which], input);
  return 0;
}
