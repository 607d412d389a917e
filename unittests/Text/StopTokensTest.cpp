//===- StopTokensTest.cpp - Stop ids, streamed text, the synthetic tokenizer ===//

#include "qfuse/text/StopTokens.h"
#include "qfuse/text/SyntheticTokenizer.h"

#include "TextTestUtil.h"

#include <gtest/gtest.h>

using namespace qfuse::text;

namespace {

std::string errorOf(const std::function<void()> &f) {
  try {
    f();
  } catch (const TokenizerError &e) {
    return e.what();
  }
  return "no error";
}

} // namespace

TEST(SyntheticTokenizer, FillsTheVocabularyAndRoundTrips) {
  test::ScratchDir dir;
  writeSyntheticTokenizer(dir.path(), 1024);
  Tokenizer t = Tokenizer::fromDirectory(dir.path());
  EXPECT_EQ(t.idLimit(), 1024u);
  EXPECT_EQ(t.bosId(), 1019);
  EXPECT_EQ(t.eosId(), 1020);
  EXPECT_EQ(t.tokenToId("<|eot_id|>"), 1023);
  const std::string text = "Hello world! The capital of France is Paris. ünï 🙂";
  const auto ids = t.encode(text);
  ASSERT_FALSE(ids.empty());
  EXPECT_EQ(ids[0], 1019); // BOS from the post-processor
  EXPECT_LT(ids.size(), text.size() / 2); // the merges compress English
  EXPECT_EQ(t.decode(ids, {true, false}), text);
  // Every id decodes (a random model can emit any of them).
  for (int32_t id = 0; id < 1024; ++id)
    EXPECT_NO_THROW(t.decode({id})) << id;
  // Deterministic: written twice, the same files.
  test::ScratchDir again;
  writeSyntheticTokenizer(again.path(), 1024);
  EXPECT_EQ(Tokenizer::fromDirectory(again.path()).encode(text), ids);
  EXPECT_NE(errorOf([&] { writeSyntheticTokenizer(dir.path(), 100); })
                .find("vocab size 100 is below 262"),
            std::string::npos);
  EXPECT_NE(errorOf([&] { writeSyntheticTokenizer(dir.path(), 1000000); })
                .find("needs"),
            std::string::npos);
}

TEST(StopTokens, FromGenerationConfigConfigAndTokenizer) {
  test::ScratchDir dir;
  writeSyntheticTokenizer(dir.path(), 1024);
  Tokenizer t = Tokenizer::fromDirectory(dir.path());
  // generation_config.json: [1020, 1023]; the tokenizer's EOS 1020.
  EXPECT_EQ(stopTokenIds(dir.path(), t), (std::vector<int32_t>{1020, 1023}));
  EXPECT_EQ(stopTokenIds(dir.path(), t, "<|start_header_id|>"),
            (std::vector<int32_t>{1020, 1021, 1023}));
  // config.json counts only without a generation_config.json eos_token_id.
  dir.write("config.json", "{\"eos_token_id\": 7}");
  EXPECT_EQ(stopTokenIds(dir.path(), t), (std::vector<int32_t>{1020, 1023}));
  dir.write("generation_config.json", "{\"bos_token_id\": 1}");
  EXPECT_EQ(stopTokenIds(dir.path(), t), (std::vector<int32_t>{7, 1020}));
  dir.write("config.json", "{\"eos_token_id\": [9, 8, 9]}");
  EXPECT_EQ(stopTokenIds(dir.path(), t), (std::vector<int32_t>{8, 9, 1020}));
  dir.write("config.json", "{\"eos_token_id\": null}");
  EXPECT_EQ(stopTokenIds(dir.path(), t), (std::vector<int32_t>{1020}));
  dir.write("config.json", "{\"eos_token_id\": \"2\"}");
  EXPECT_NE(errorOf([&] { stopTokenIds(dir.path(), t); })
                .find(dir.path() + "/config.json: eos_token_id holds \"2\""),
            std::string::npos);
  dir.write("config.json", "{}");
  EXPECT_NE(errorOf([&] { stopTokenIds(dir.path(), t, "<|nope|>"); })
                .find("'<|nope|>' is not in the vocabulary"),
            std::string::npos);
}

TEST(TextStreamer, HoldsPartialCharactersAndStops) {
  test::ScratchDir dir;
  writeSyntheticTokenizer(dir.path(), 1024);
  Tokenizer t = Tokenizer::fromDirectory(dir.path());
  // "é" is two byte tokens (0xC3 0xA9); BOS in the stream is skipped.
  std::vector<int32_t> ids = {1019, 0xC3, 0xA9};
  for (int32_t id : t.encode(" ok", false))
    ids.push_back(id);
  ids.push_back(1023); // <|eot_id|>
  ids.push_back('x');
  TextStreamer s(t, {1020, 1023});
  std::vector<std::string> chunks;
  std::string text;
  size_t pushed = 0;
  for (int32_t id : ids) {
    if (!s.push(id, text))
      break;
    ++pushed;
    chunks.push_back(text);
  }
  EXPECT_TRUE(s.stopped());
  EXPECT_EQ(pushed, ids.size() - 2);
  ASSERT_GE(chunks.size(), 3u);
  EXPECT_EQ(chunks[0], "");        // BOS, skipped
  EXPECT_EQ(chunks[1], "");        // half of "é", held back
  EXPECT_EQ(chunks[2], "\xC3\xA9"); // complete
  std::string all;
  for (const std::string &c : chunks)
    all += c;
  EXPECT_EQ(all + s.finish(), "\xC3\xA9 ok");
  EXPECT_FALSE(s.push('y', text)); // stays stopped
}
