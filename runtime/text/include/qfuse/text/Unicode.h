//===- Unicode.h - UTF-8, character classes and NFC for tokenizers -*- C++ -*-===//
//
// The Unicode pieces the tokenizers need and nothing more:
//   - UTF-8 decoding that replaces invalid input the WHATWG way (one U+FFFD
//     per maximal invalid subpart, as JavaScript's TextDecoder, Python's
//     errors="replace" and Rust's from_utf8_lossy do), and encoding;
//   - the letter (\p{L}), number (\p{N}) and white-space (\s, as JavaScript
//     regular expressions define it) classes of the pre-tokenizer patterns;
//   - canonical composition (NFC).
// Letters, numbers and NFC come from the Unicode Character Database tables
// in UnicodeTables.inc (runtime/text/scripts/gen-unicode-tables.py).
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_TEXT_UNICODE_H
#define QFUSE_TEXT_UNICODE_H

#include <cstddef>
#include <string>
#include <string_view>

namespace qfuse::text {

/// Decodes UTF-8, replacing each maximal invalid subpart by U+FFFD.
std::u32string decodeUtf8(std::string_view bytes);
/// `bytes` with each maximal invalid subpart replaced by U+FFFD (UTF-8).
std::string toValidUtf8(std::string_view bytes);
/// Appends the UTF-8 encoding of `c` to `out`.
void appendUtf8(std::string &out, char32_t c);
std::string encodeUtf8(std::u32string_view text);
/// The number of bytes at the end of `bytes` that begin a well-formed UTF-8
/// sequence that is not complete yet (0 to 3): what a stream holds back.
size_t incompleteUtf8Tail(std::string_view bytes);

bool isLetter(char32_t c);
bool isNumber(char32_t c);
/// JavaScript's \s: WhiteSpace and LineTerminator (includes U+FEFF, not
/// U+0085).
bool isSpace(char32_t c);

/// Unicode Normalization Form C.
std::u32string toNfc(std::u32string_view text);

} // namespace qfuse::text

#endif // QFUSE_TEXT_UNICODE_H
