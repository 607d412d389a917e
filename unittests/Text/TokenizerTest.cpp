//===- TokenizerTest.cpp - Small hand-made tokenizers, errors, streaming --===//
//
// Two tokenizer.json files written here, small enough to work out every id
// by hand: a byte-level one (Llama-3's pattern) and a metaspace one with
// byte fallback (Llama-2's normalizer and decoder). Then the errors for what
// is not supported, each naming the file and the type.
//
//===----------------------------------------------------------------------===//

#include "qfuse/text/Tokenizer.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <unistd.h>

using namespace qfuse::text;
using nlohmann::json;

namespace {

const char *kLlama3Regex =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| "
    "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

/// A file in a fresh temporary folder, removed with it.
class TempDir {
public:
  TempDir() {
    char pattern[] = "/tmp/qfuse-text-XXXXXX";
    dir_ = mkdtemp(pattern);
  }
  ~TempDir() {
    std::remove((dir_ + "/tokenizer.json").c_str());
    std::remove((dir_ + "/tokenizer_config.json").c_str());
    rmdir(dir_.c_str());
  }
  std::string write(const std::string &name, const json &j) {
    std::ofstream(dir_ + "/" + name) << j.dump();
    return dir_ + "/" + name;
  }
  const std::string &path() const { return dir_; }

private:
  std::string dir_;
};

/// Byte-level: ids 0-255 are the bytes in byte-level order, then merges.
json byteLevelTokenizer() {
  json vocab = json::object();
  int next = 256;
  auto standsForItself = [](int b) {
    return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
  };
  std::vector<std::string> chars(256);
  for (int b = 0; b < 256; ++b) {
    uint32_t c = standsForItself(b) ? b : next++;
    std::string u;
    if (c < 0x80) u += char(c);
    else { u += char(0xC0 | (c >> 6)); u += char(0x80 | (c & 0x3F)); }
    chars[b] = u;
    vocab[u] = b;
  }
  // Merges: "h"+"e" -> 256, "he"+"llo"... keep it small: "Ġ"+"w" -> 257.
  vocab["he"] = 256;
  vocab[chars[' '] + "w"] = 257;
  vocab["hel"] = 258;
  json merges = json::array({"h e", chars[' '] + " w", "he l"});
  return {{"added_tokens",
           json::array({{{"id", 300}, {"content", "<|eot|>"}, {"special", true},
                         {"lstrip", false}, {"rstrip", false},
                         {"single_word", false}, {"normalized", false}}})},
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
                           {"use_regex", false}}})}}},
          {"post_processor", {{"type", "ByteLevel"}}},
          {"decoder", {{"type", "ByteLevel"}}},
          {"model",
           {{"type", "BPE"}, {"vocab", vocab}, {"merges", merges},
            {"byte_fallback", false}}}};
}

/// Metaspace with byte fallback: 0 <unk>, 1 <s>, 2 </s>, 3-258 <0x00>-<0xFF>,
/// 259 "▁", 260 "a", 261 "b", 262 "▁a".
json metaspaceTokenizer() {
  json vocab = {{"<unk>", 0}, {"<s>", 1}, {"</s>", 2}};
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    vocab[name] = 3 + b;
  }
  vocab["\xE2\x96\x81"] = 259;
  vocab["a"] = 260;
  vocab["b"] = 261;
  vocab["\xE2\x96\x81" "a"] = 262;
  auto added = [](int id, const char *c) {
    return json{{"id", id}, {"content", c}, {"special", true},
                {"lstrip", false}, {"rstrip", false},
                {"single_word", false}, {"normalized", false}};
  };
  return {
      {"added_tokens", json::array({added(0, "<unk>"), added(1, "<s>"),
                                    added(2, "</s>")})},
      {"normalizer",
       {{"type", "Sequence"},
        {"normalizers",
         json::array({{{"type", "Prepend"}, {"prepend", "\xE2\x96\x81"}},
                      {{"type", "Replace"},
                       {"pattern", {{"String", " "}}},
                       {"content", "\xE2\x96\x81"}}})}}},
      {"pre_tokenizer", nullptr},
      {"post_processor",
       {{"type", "TemplateProcessing"},
        {"single", json::array({{{"SpecialToken", {{"id", "<s>"}, {"type_id", 0}}}},
                                {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}})},
        {"special_tokens", {{"<s>", {{"id", "<s>"}, {"ids", {1}}, {"tokens", {"<s>"}}}}}}}},
      {"decoder",
       {{"type", "Sequence"},
        {"decoders",
         json::array({{{"type", "Replace"},
                       {"pattern", {{"String", "\xE2\x96\x81"}}},
                       {"content", " "}},
                      {{"type", "ByteFallback"}},
                      {{"type", "Fuse"}},
                      {{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}}})}}},
      {"model",
       {{"type", "BPE"}, {"vocab", vocab}, {"merges", json::array({"\xE2\x96\x81 a"})},
        {"unk_token", "<unk>"}, {"byte_fallback", true}, {"fuse_unk", true}}}};
}

using Ids = std::vector<int32_t>;

TEST(Tokenizer, ByteLevelEncodesAndDecodes) {
  TempDir dir;
  dir.write("tokenizer.json", byteLevelTokenizer());
  dir.write("tokenizer_config.json", {{"eos_token", "<|eot|>"}});
  Tokenizer t = Tokenizer::fromDirectory(dir.path());
  // "hello" -> he l l o -> hel l o; " w" merges; "\xC3\xA9" is two bytes.
  EXPECT_EQ(t.encode("hello w"), (Ids{258, 'l', 'o', 257}));
  EXPECT_EQ(t.encode("\xC3\xA9"), (Ids{0xC3, 0xA9}));
  EXPECT_EQ(t.encode("a<|eot|>b"), (Ids{'a', 300, 'b'}));
  EXPECT_EQ(t.eosId(), 300);
  EXPECT_EQ(t.decode({258, 'l', 'o', 257, 300}), "hello w<|eot|>");
  DecodeOptions skip;
  skip.skipSpecialTokens = true;
  EXPECT_EQ(t.decode({258, 300, 'o'}, skip), "helo");
  EXPECT_THROW(t.decode({5000}), TokenizerError);
}

TEST(Tokenizer, MetaspaceWithByteFallback) {
  TempDir dir;
  dir.write("tokenizer.json", metaspaceTokenizer());
  Tokenizer t = Tokenizer::fromDirectory(dir.path());
  // "a a" -> "▁a▁a"; BOS from the template.
  EXPECT_EQ(t.encode("a a"), (Ids{1, 262, 262}));
  EXPECT_EQ(t.encode("a a", false), (Ids{262, 262}));
  // "é" is outside the vocab: its bytes C3 A9 as <0xC3> <0xA9>.
  EXPECT_EQ(t.encode("b\xC3\xA9", false), (Ids{259, 261, 3 + 0xC3, 3 + 0xA9}));
  // Each section after an added token gets its own "▁".
  EXPECT_EQ(t.encode("a</s>a", false), (Ids{262, 2, 262}));
  // The decoder strips one leading space of the whole text.
  EXPECT_EQ(t.decode({262, 262}), "a a");
  EXPECT_EQ(t.decode({259, 262}), " a");
  EXPECT_EQ(t.decode({259, 261, 3 + 0xC3, 3 + 0xA9}), "b\xC3\xA9");
  DecodeOptions skip;
  skip.skipSpecialTokens = true;
  EXPECT_EQ(t.decode({1, 262}), "<s> a");
  EXPECT_EQ(t.decode({1, 262}, skip), "a");
}

TEST(StreamDecoder, HoldsBackIncompleteCharacters) {
  TempDir dir;
  dir.write("tokenizer.json", metaspaceTokenizer());
  Tokenizer t = Tokenizer::fromDirectory(dir.path());
  // "▁😀" as <0xF0> <0x9F> <0x98> <0x80> after "▁a".
  StreamDecoder s(t, /*skipSpecialTokens=*/true);
  EXPECT_EQ(s.push(1), "");
  EXPECT_EQ(s.push(262), "a");
  EXPECT_EQ(s.push(259), " ");
  EXPECT_EQ(s.push(3 + 0xF0), "");
  EXPECT_EQ(s.push(3 + 0x9F), "");
  EXPECT_EQ(s.push(3 + 0x98), "");
  EXPECT_EQ(s.push(3 + 0x80), "\xF0\x9F\x98\x80");
  // An incomplete character at the end becomes U+FFFD.
  EXPECT_EQ(s.push(3 + 0xE4), "");
  EXPECT_EQ(s.finish(), "\xEF\xBF\xBD");
  // A byte that cannot continue the sequence ends it at once.
  StreamDecoder s2(t);
  EXPECT_EQ(s2.push(3 + 0xE4), "");
  EXPECT_EQ(s2.push(260), "\xEF\xBF\xBD" "a");
}

/// Loading `j` fails with a message holding each of `needles`.
void expectLoadError(const json &j, std::vector<std::string> needles) {
  TempDir dir;
  std::string file = dir.write("tokenizer.json", j);
  needles.push_back(file);
  try {
    Tokenizer::fromDirectory(dir.path());
    ADD_FAILURE() << "loaded " << j.dump().substr(0, 200);
  } catch (const TokenizerError &e) {
    for (const std::string &n : needles)
      EXPECT_NE(std::string(e.what()).find(n), std::string::npos)
          << "'" << e.what() << "' does not name '" << n << "'";
  }
}

TEST(Tokenizer, UnsupportedPartsAreNamed) {
  json j = byteLevelTokenizer();
  j["model"]["type"] = "Unigram";
  expectLoadError(j, {"model type 'Unigram'"});

  j = byteLevelTokenizer();
  j["normalizer"] = {{"type", "NFKC"}};
  expectLoadError(j, {"normalizer type 'NFKC'"});

  j = byteLevelTokenizer();
  j["pre_tokenizer"] = {{"type", "Whitespace"}};
  expectLoadError(j, {"pre_tokenizer type 'Whitespace'"});

  j = byteLevelTokenizer();
  j["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = "\\w+|\\s+";
  expectLoadError(j, {"the regex '\\w+|\\s+' is not supported"});

  j = byteLevelTokenizer();
  j["decoder"] = {{"type", "WordPiece"}};
  expectLoadError(j, {"decoder type 'WordPiece'"});

  j = byteLevelTokenizer();
  j["post_processor"] = {{"type", "BertProcessing"}};
  expectLoadError(j, {"post_processor type 'BertProcessing'"});

  j = byteLevelTokenizer();
  j["added_tokens"][0]["single_word"] = true;
  expectLoadError(j, {"single_word"});

  j = byteLevelTokenizer();
  j["model"]["merges"].push_back("x yz");
  expectLoadError(j, {"merge 3 ('x', 'yz')"});
}

// Found by fuzz/tokenizer (fuzz/tokenizer/crashes): a float id was converted
// to an integer out of range (undefined), and an id near 2^31 sized the id
// table to 64 GiB.
TEST(Tokenizer, TokenIdsOutOfRangeAreNamed) {
  const std::string expected = "; expected an integer from 0 to 4194303";
  json j = byteLevelTokenizer();
  j["model"]["vocab"]["he"] = 2.5e118;
  expectLoadError(j, {"model: vocab token 'he' has id 2.5e+118" + expected});

  j = byteLevelTokenizer();
  j["model"]["vocab"]["he"] = 2147483647;
  expectLoadError(j, {"vocab token 'he' has id 2147483647" + expected});

  j = byteLevelTokenizer();
  j["model"]["vocab"]["he"] = -1;
  expectLoadError(j, {"vocab token 'he' has id -1" + expected});

  j = byteLevelTokenizer();
  j["added_tokens"][0]["id"] = 1e30;
  expectLoadError(j, {"added token '<|eot|>' has id 1e+30" + expected});

  j = byteLevelTokenizer();
  j["added_tokens"][0]["id"] = "300";
  expectLoadError(j, {"added token '<|eot|>' has id \"300\"" + expected});
}

// Found by fuzz/tokenizer: a template's special token listed an id that no
// token has, and encode returned it past idLimit().
TEST(Tokenizer, TemplateIdsMustNameTokens) {
  json j = metaspaceTokenizer();
  j["post_processor"]["special_tokens"]["<s>"]["ids"] = {999};
  expectLoadError(j, {"post_processor 'TemplateProcessing': special token "
                      "'<s>' has id 999, which is neither in the vocab nor "
                      "an added token"});

  j = metaspaceTokenizer();
  j["post_processor"]["special_tokens"]["<s>"]["ids"] = {-3};
  expectLoadError(j, {"post_processor: special token '<s>' has id -3"});

  j = metaspaceTokenizer();
  j["post_processor"]["special_tokens"]["<s>"]["ids"] = 1;
  expectLoadError(j, {"special token '<s>': ids is not a list"});
}

// Found by fuzz/tokenizer: a Strip decoder's start of 5.6e131 was
// converted to an integer (undefined), and a negative one to a huge count.
TEST(Tokenizer, StripCountsOutOfRangeAreNamed) {
  const std::string expected = "' must be an integer from 0 to 1048576, got ";
  json j = metaspaceTokenizer();
  json &strip = j["decoder"]["decoders"][3];
  strip["start"] = 5.6e131;
  expectLoadError(j, {"decoder 'Strip': 'start" + expected + "5.6e+131"});

  strip["start"] = -1;
  expectLoadError(j, {"decoder 'Strip': 'start" + expected + "-1"});

  strip["start"] = 1;
  strip["stop"] = 0.5;
  expectLoadError(j, {"decoder 'Strip': 'stop" + expected + "0.5"});
}

TEST(Tokenizer, MissingFileIsNamed) {
  try {
    Tokenizer::fromDirectory("/nonexistent-qfuse-dir");
    ADD_FAILURE() << "loaded a missing directory";
  } catch (const TokenizerError &e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent-qfuse-dir/tokenizer.json"),
              std::string::npos);
  }
}

} // namespace
