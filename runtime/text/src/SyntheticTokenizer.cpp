//===- SyntheticTokenizer.cpp - Byte-level BPE learned from a fixed text --===//

#include "qfuse/text/SyntheticTokenizer.h"

#include "ByteLevel.h"
#include "qfuse/runtime/AtomicFile.h"
#include "qfuse/text/TokenizerError.h"

#include <nlohmann/json.hpp>

#include <map>
#include <vector>

namespace qfuse::text {

using nlohmann::json;

namespace {

const char *kSpecials[] = {"<|begin_of_text|>", "<|end_of_text|>",
                           "<|start_header_id|>", "<|end_header_id|>",
                           "<|eot_id|>"};

const char *kLlama3Regex =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| "
    "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

const char *kChatTemplate =
    "{% set loop_messages = messages %}{% for message in loop_messages %}{% "
    "set content = '<|start_header_id|>' + message['role'] + "
    "'<|end_header_id|>\\n\\n'+ message['content'] | trim + '<|eot_id|>' %}{% "
    "if loop.index0 == 0 %}{% set content = bos_token + content %}{% endif "
    "%}{{ content }}{% endfor %}{% if add_generation_prompt %}{{ "
    "'<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}{% endif %}";

// The text the merges are learned from.
const char *kCorpus =
    "The quick brown fox jumps over the lazy dog. Once upon a time there was "
    "a small compiler that turned quantized weights into fast kernels. It "
    "read a model, fused the dequantization into every matrix product, chose "
    "tiles for each shape, and wrote an artifact that the runtime loaded on "
    "the graphics card. People asked it questions, and it answered with "
    "words it had never seen before, one token after another, streaming "
    "them to the screen as soon as they were ready. Hello world! How are you "
    "today? I am fine, thank you. What is the capital of France? Paris is the "
    "capital of France, and Berlin is the capital of Germany. Numbers like "
    "one, two, three, four, five, six, seven, eight, nine and ten are "
    "written as 1, 2, 3, 4, 5, 6, 7, 8, 9 and 10. The weather is sunny and "
    "warm, with a light breeze from the sea. Children play in the park while "
    "their parents read newspapers and drink coffee. A library holds books "
    "about history, science, mathematics, music, painting and travel. "
    "Scientists measure the speed of light, the mass of electrons and the "
    "temperature of distant stars. Engineers build bridges, roads, trains, "
    "airplanes and computers. Programmers write functions, classes, loops "
    "and tests; they compile, debug and profile their programs until every "
    "benchmark is green. Memory bandwidth limits decoding at batch one, so "
    "smaller weights mean faster tokens. Every morning the baker opens the "
    "shop, bakes fresh bread and sells cakes, cookies and pies to hungry "
    "customers. Rivers flow from mountains through valleys and forests into "
    "the ocean. Birds sing, bees buzz, and the wind whispers through the "
    "trees. Good morning, good afternoon, good evening and good night. "
    "Please, sorry, excuse me, welcome, goodbye. Monday, Tuesday, Wednesday, "
    "Thursday, Friday, Saturday and Sunday make a week; January, February, "
    "March, April, May, June, July, August, September, October, November "
    "and December make a year. Red, orange, yellow, green, blue, indigo and "
    "violet are the colors of the rainbow. Doctors help patients, teachers "
    "teach students, farmers grow vegetables and fruit such as apples, "
    "bananas, cherries, grapes, lemons, mangoes, oranges, pears and "
    "strawberries. The answer is simple: think clearly, speak kindly, and "
    "always check your results against a reference. Curious explorers "
    "sailed northward across frozen oceans, mapping glaciers, volcanoes, "
    "deserts and jungles; philosophers wondered whether knowledge, justice "
    "and beauty could ever be defined precisely.";

/// Words as the Llama-3 pattern splits plain English: an optional leading
/// space or punctuation mark, then letters; digits; punctuation runs.
std::vector<std::string> words(const std::string &text) {
  std::vector<std::string> out;
  size_t i = 0;
  auto isLetter = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
  };
  while (i < text.size()) {
    size_t j = i;
    if (!isLetter(text[j]) && j + 1 < text.size() && isLetter(text[j + 1]) &&
        !(text[j] >= '0' && text[j] <= '9'))
      ++j;
    if (isLetter(text[j])) {
      while (j < text.size() && isLetter(text[j]))
        ++j;
    } else {
      ++j;
    }
    out.push_back(text.substr(i, j - i));
    i = j;
  }
  return out;
}

std::string byteLevel(const std::string &bytes) {
  std::string out;
  appendByteLevel(out, bytes);
  return out;
}

void writeJson(const std::string &path, const json &j) {
  writeFileAtomically(path, j.dump(1) + "\n");
}

} // namespace

void writeSyntheticTokenizer(const std::string &dir, int64_t vocabSize) {
  constexpr int64_t kSpecialCount = sizeof(kSpecials) / sizeof(kSpecials[0]);
  if (vocabSize < 256 + kSpecialCount + 1)
    throw TokenizerError("synthetic tokenizer: vocab size " +
                         std::to_string(vocabSize) + " is below " +
                         std::to_string(256 + kSpecialCount + 1) +
                         " (256 bytes, a merge and the special tokens)");
  const int64_t mergeCount = vocabSize - 256 - kSpecialCount;

  json vocab = json::object();
  for (int b = 0; b < 256; ++b)
    vocab[byteLevel(std::string(1, char(b)))] = b;
  // Each distinct word as its sequence of tokens, with its frequency.
  std::map<std::string, int64_t> frequency;
  for (const std::string &w : words(kCorpus))
    ++frequency[w];
  std::vector<std::pair<std::vector<std::string>, int64_t>> seqs;
  for (const auto &[w, n] : frequency) {
    std::vector<std::string> pieces;
    for (char c : w)
      pieces.push_back(byteLevel(std::string(1, c)));
    seqs.push_back({pieces, n});
  }
  json merges = json::array();
  for (int64_t m = 0; m < mergeCount; ++m) {
    std::map<std::pair<std::string, std::string>, int64_t> pairs;
    for (const auto &[pieces, n] : seqs)
      for (size_t i = 0; i + 1 < pieces.size(); ++i)
        pairs[{pieces[i], pieces[i + 1]}] += n;
    if (pairs.empty())
      throw TokenizerError(
          "synthetic tokenizer: the built-in text gives " +
          std::to_string(m) + " merges, vocab size " +
          std::to_string(vocabSize) + " needs " + std::to_string(mergeCount));
    auto best = pairs.begin();
    for (auto it = pairs.begin(); it != pairs.end(); ++it)
      if (it->second > best->second)
        best = it; // map order: ties go to the smaller pair
    const auto [a, b] = best->first;
    merges.push_back(a + " " + b);
    vocab[a + b] = 256 + m;
    for (auto &[pieces, n] : seqs) {
      std::vector<std::string> merged;
      for (size_t i = 0; i < pieces.size(); ++i) {
        if (i + 1 < pieces.size() && pieces[i] == a && pieces[i + 1] == b) {
          merged.push_back(a + b);
          ++i;
        } else {
          merged.push_back(pieces[i]);
        }
      }
      pieces = std::move(merged);
    }
  }
  json added = json::array();
  for (int64_t s = 0; s < kSpecialCount; ++s)
    added.push_back({{"id", 256 + mergeCount + s},
                     {"content", kSpecials[s]},
                     {"single_word", false},
                     {"lstrip", false},
                     {"rstrip", false},
                     {"normalized", false},
                     {"special", true}});
  const int64_t bos = 256 + mergeCount, eos = bos + 1, eot = bos + 4;
  json tokenizer = {
      {"version", "1.0"},
      {"added_tokens", added},
      {"normalizer", nullptr},
      {"pre_tokenizer",
       {{"type", "Sequence"},
        {"pretokenizers",
         json::array({{{"type", "Split"},
                       {"pattern", {{"Regex", kLlama3Regex}}},
                       {"behavior", "Isolated"},
                       {"invert", false}},
                      {{"type", "ByteLevel"},
                       {"add_prefix_space", false},
                       {"trim_offsets", true},
                       {"use_regex", false}}})}}},
      {"post_processor",
       {{"type", "TemplateProcessing"},
        {"single",
         json::array({{{"SpecialToken",
                        {{"id", "<|begin_of_text|>"}, {"type_id", 0}}}},
                      {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}})},
        {"pair", json::array()},
        {"special_tokens",
         {{"<|begin_of_text|>",
           {{"id", "<|begin_of_text|>"},
            {"ids", {bos}},
            {"tokens", {"<|begin_of_text|>"}}}}}}}},
      {"decoder",
       {{"type", "ByteLevel"},
        {"add_prefix_space", true},
        {"trim_offsets", true},
        {"use_regex", true}}},
      {"model",
       {{"type", "BPE"},
        {"dropout", nullptr},
        {"unk_token", nullptr},
        {"fuse_unk", false},
        {"byte_fallback", false},
        {"ignore_merges", false},
        {"vocab", vocab},
        {"merges", merges}}}};
  writeJson(dir + "/tokenizer.json", tokenizer);
  writeJson(dir + "/tokenizer_config.json",
            {{"bos_token", "<|begin_of_text|>"},
             {"eos_token", "<|end_of_text|>"},
             {"clean_up_tokenization_spaces", false},
             {"chat_template", kChatTemplate},
             {"tokenizer_class", "PreTrainedTokenizerFast"}});
  writeJson(dir + "/generation_config.json",
            {{"bos_token_id", bos}, {"eos_token_id", json::array({eos, eot})}});
}

} // namespace qfuse::text
