//===- UnicodeTest.cpp - UTF-8 replacement, character classes, NFC --------===//
//
// Expected values are from the Unicode standard (the U+FFFD substitution
// examples of chapter 3.9, UAX #15's NFC) and the definitions of \p{L},
// \p{N} and JavaScript's \s.
//
//===----------------------------------------------------------------------===//

#include "qfuse/text/Unicode.h"

#include <gtest/gtest.h>

using namespace qfuse::text;

namespace {

const std::string kFffd = "\xEF\xBF\xBD";

TEST(Utf8, ValidTextIsUnchanged) {
  std::string s = "a\xC3\xA9\xE4\xB8\xAD\xF0\x9F\x98\x80";
  EXPECT_EQ(toValidUtf8(s), s);
  EXPECT_EQ(decodeUtf8(s), (std::u32string{U'a', 0xE9, 0x4E2D, 0x1F600}));
  EXPECT_EQ(encodeUtf8(decodeUtf8(s)), s);
}

TEST(Utf8, MaximalSubpartsBecomeOneReplacementEach) {
  // Unicode 15.0, table 3-8: 61 F1 80 80 E1 80 C2 62 80 63 80 BF 64 ->
  // a FFFD FFFD FFFD b FFFD c FFFD FFFD d.
  std::string in = "\x61\xF1\x80\x80\xE1\x80\xC2\x62\x80\x63\x80\xBF\x64";
  EXPECT_EQ(toValidUtf8(in),
            "a" + kFffd + kFffd + kFffd + "b" + kFffd + "c" + kFffd + kFffd + "d");
  // Overlong, surrogate and beyond-U+10FFFF forms: one U+FFFD per byte.
  EXPECT_EQ(toValidUtf8("\xC0\xAF"), kFffd + kFffd);
  EXPECT_EQ(toValidUtf8("\xED\xA0\x80"), kFffd + kFffd + kFffd);
  EXPECT_EQ(toValidUtf8("\xF4\x90\x80\x80"), kFffd + kFffd + kFffd + kFffd);
  // A truncated sequence at the end is one U+FFFD.
  EXPECT_EQ(toValidUtf8("x\xF0\x9F\x98"), "x" + kFffd);
}

TEST(Utf8, IncompleteTailIsWhatAStreamHoldsBack) {
  EXPECT_EQ(incompleteUtf8Tail(""), 0u);
  EXPECT_EQ(incompleteUtf8Tail("abc"), 0u);
  EXPECT_EQ(incompleteUtf8Tail("a\xF0"), 1u);
  EXPECT_EQ(incompleteUtf8Tail("a\xF0\x9F"), 2u);
  EXPECT_EQ(incompleteUtf8Tail("a\xF0\x9F\x98"), 3u);
  EXPECT_EQ(incompleteUtf8Tail("a\xF0\x9F\x98\x80"), 0u);
  // Not the start of a valid sequence: nothing to wait for.
  EXPECT_EQ(incompleteUtf8Tail("a\xED\xA0"), 0u);
  EXPECT_EQ(incompleteUtf8Tail("a\x80"), 0u);
  EXPECT_EQ(incompleteUtf8Tail("\xE4\xB8\xAD\xE4"), 1u);
}

TEST(Unicode, LettersNumbersSpaces) {
  for (char32_t c : {U'a', U'Z', U'é', U'ß', U'Ж', U'λ', U'中', U'ア', U'한',
                     U'ب', U'א', U'क', U'ก', char32_t(0x2F800)})
    EXPECT_TRUE(isLetter(c)) << std::hex << uint32_t(c);
  for (char32_t c : {U'0', U'٣', U'३', U'½', U'²', U'Ⅻ', U'①', U'〇',
                     char32_t(0x1D7CE)})
    EXPECT_TRUE(isNumber(c)) << std::hex << uint32_t(c);
  for (char32_t c : {U' ', U'.', U'\'', U'😀', char32_t(0x0301), char32_t(0x0903),
                     char32_t(0x200D), char32_t(0xE000)}) {
    EXPECT_FALSE(isLetter(c)) << std::hex << uint32_t(c);
    EXPECT_FALSE(isNumber(c)) << std::hex << uint32_t(c);
  }
  for (char32_t c : {0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20, 0xA0, 0x1680, 0x2000,
                     0x200A, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF})
    EXPECT_TRUE(isSpace(c)) << std::hex << uint32_t(c);
  for (char32_t c : {0x85, 0x200B, 0x180E, 0x78})
    EXPECT_FALSE(isSpace(c)) << std::hex << uint32_t(c);
}

TEST(Unicode, Nfc) {
  EXPECT_EQ(toNfc(U"e\u0301"), U"\u00E9");
  EXPECT_EQ(toNfc(U"\u00E9"), U"\u00E9");
  // Canonical ordering puts the dot below (220) before the dot above (230);
  // a + dot below composes to U+1EA1, which has no composite with the dot
  // above.
  EXPECT_EQ(toNfc(U"a\u0307\u0323"), U"\u1EA1\u0307");
  // Singleton decompositions never recompose: Angstrom sign -> A with ring.
  EXPECT_EQ(toNfc(U"\u212B"), U"\u00C5");
  // Composition exclusions: U+0958 stays decomposed.
  EXPECT_EQ(toNfc(U"\u0958"), U"\u0915\u093C");
  // Hangul: L V T jamo compose to one syllable.
  EXPECT_EQ(toNfc(U"\u1100\u1161\u11A8"), U"\uAC01");
  // A starter between blocks composition.
  EXPECT_EQ(toNfc(U"e\u0041\u0301"), U"e\u00C1");
  // Two marks of the same class: the second is blocked by the first.
  EXPECT_EQ(toNfc(U"a\u0301\u0301"), U"\u00E1\u0301");
}

} // namespace
