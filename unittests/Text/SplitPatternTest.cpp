//===- SplitPatternTest.cpp - The hand-coded pre-tokenizer patterns -------===//
//
// Expected splits worked out from the regular expression by hand (the oracle
// test checks the same code over the whole corpus against JavaScript).
//
//===----------------------------------------------------------------------===//

#include "SplitPattern.h"

#include "qfuse/text/Unicode.h"

#include <gtest/gtest.h>

using namespace qfuse::text;

namespace {

std::vector<std::string> split(const SplitPattern &p, const std::string &s) {
  std::u32string t = decodeUtf8(s);
  std::vector<std::string> out;
  for (auto [b, e] : p.split(t))
    out.push_back(encodeUtf8(std::u32string_view(t).substr(b, e - b)));
  return out;
}

using V = std::vector<std::string>;
const SplitPattern llama3{3}, qwen2{1};

TEST(SplitPattern, RecognisesOnlyKnownPatterns) {
  EXPECT_FALSE(SplitPattern::recognise("\\s+"));
  EXPECT_FALSE(SplitPattern::recognise(
      "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+"));
}

TEST(SplitPattern, WordsAndContractions) {
  EXPECT_EQ(split(llama3, "Hello world"), (V{"Hello", " world"}));
  EXPECT_EQ(split(llama3, "it's I'LL we'Re"),
            (V{"it", "'s", " I", "'LL", " we", "'Re"}));
  // A non-letter, non-digit, non-newline joins the following letters.
  EXPECT_EQ(split(llama3, "(abc) \"x"), (V{"(abc", ")", " \"", "x"}));
  EXPECT_EQ(split(llama3, "\tword"), (V{"\tword"}));
  EXPECT_EQ(split(llama3, "\nword"), (V{"\n", "word"}));
}

TEST(SplitPattern, Digits) {
  EXPECT_EQ(split(llama3, "1234567"), (V{"123", "456", "7"}));
  EXPECT_EQ(split(qwen2, "123"), (V{"1", "2", "3"}));
  EXPECT_EQ(split(llama3, "a 12"), (V{"a", " ", "12"}));
}

TEST(SplitPattern, PunctuationAndNewlines) {
  EXPECT_EQ(split(llama3, "x ...\n\ny"), (V{"x", " ...\n\n", "y"}));
  EXPECT_EQ(split(llama3, "a;b"), (V{"a", ";b"}));
}

TEST(SplitPattern, WhiteSpaceRuns) {
  // \s+(?!\S) leaves the last space to the next word.
  EXPECT_EQ(split(llama3, "a   b"), (V{"a", "  ", " b"}));
  EXPECT_EQ(split(llama3, "a   "), (V{"a", "   "}));
  // \s*[\r\n]+ ends at the last line break of the run.
  EXPECT_EQ(split(llama3, "a \n \n  b"), (V{"a", " \n \n", " ", " b"}));
  EXPECT_EQ(split(llama3, "a\r\n\r\nb"), (V{"a", "\r\n\r\n", "b"}));
  EXPECT_EQ(split(llama3, "a \t1"), (V{"a", " ", "\t", "1"}));
}

} // namespace
