//===- SplitPattern.cpp - The Llama-3 / Qwen2 split pattern by hand -------===//
//
// Each alternative of the pattern is matched in order at the current
// position, exactly as a backtracking engine would: the first alternative
// that matches wins, and within it quantifiers are greedy. The contraction
// alternative is case-insensitive over ASCII letters only, as the JavaScript
// rewrite of (?i:...) in Hugging Face's tokenizers.js is.
//
//===----------------------------------------------------------------------===//

#include "SplitPattern.h"

#include "qfuse/text/Unicode.h"

namespace qfuse::text {
namespace {

constexpr std::string_view kLlama3Pattern =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|"
    "\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
constexpr std::string_view kQwen2Pattern =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|"
    "\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

bool isNewline(char32_t c) { return c == '\r' || c == '\n'; }
/// [^\s\p{L}\p{N}]
bool isOther(char32_t c) { return !isSpace(c) && !isLetter(c) && !isNumber(c); }
char32_t asciiLower(char32_t c) {
  return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c;
}

/// Length of the contraction ('s 't 're 've 'm 'll 'd) at `i`, or 0.
size_t matchContraction(std::u32string_view t, size_t i) {
  if (t[i] != '\'' || i + 1 >= t.size())
    return 0;
  char32_t a = asciiLower(t[i + 1]);
  if (a == 's' || a == 't' || a == 'm' || a == 'd')
    return 2;
  if (i + 2 >= t.size())
    return 0;
  char32_t b = asciiLower(t[i + 2]);
  if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') ||
      (a == 'l' && b == 'l'))
    return 3;
  return 0;
}

template <typename Pred>
size_t runEnd(std::u32string_view t, size_t i, Pred pred) {
  while (i < t.size() && pred(t[i]))
    ++i;
  return i;
}

} // namespace

std::optional<SplitPattern> SplitPattern::recognise(std::string_view regex) {
  if (regex == kLlama3Pattern)
    return SplitPattern{3};
  if (regex == kQwen2Pattern)
    return SplitPattern{1};
  return std::nullopt;
}

std::vector<std::pair<size_t, size_t>>
SplitPattern::split(std::u32string_view t) const {
  std::vector<std::pair<size_t, size_t>> out;
  const size_t n = t.size();
  size_t i = 0;
  while (i < n) {
    const char32_t c = t[i];
    size_t end = 0;
    if (size_t len = matchContraction(t, i)) {
      // (?i:'s|'t|'re|'ve|'m|'ll|'d)
      end = i + len;
    } else if (isLetter(c)) {
      // [^\r\n\p{L}\p{N}]?\p{L}+ with the optional part empty.
      end = runEnd(t, i, isLetter);
    } else if (!isNewline(c) && !isNumber(c) && i + 1 < n &&
               isLetter(t[i + 1])) {
      // [^\r\n\p{L}\p{N}]?\p{L}+ with one leading non-letter.
      end = runEnd(t, i + 1, isLetter);
    } else if (isNumber(c)) {
      // \p{N}{1,K}
      end = i;
      while (end < n && end - i < maxDigits && isNumber(t[end]))
        ++end;
    } else if (c == ' ' && i + 1 < n && isOther(t[i + 1])) {
      //  ?[^\s\p{L}\p{N}]+[\r\n]* with the space.
      end = runEnd(t, runEnd(t, i + 1, isOther), isNewline);
    } else if (isOther(c)) {
      //  ?[^\s\p{L}\p{N}]+[\r\n]* without it.
      end = runEnd(t, runEnd(t, i, isOther), isNewline);
    } else {
      // c is white space. \s*[\r\n]+: the \s* backs off to the last line
      // break of the white-space run, which [\r\n]+ then takes alone.
      size_t runStop = runEnd(t, i, isSpace);
      size_t lastBreak = n;
      for (size_t k = i; k < runStop; ++k)
        if (isNewline(t[k]))
          lastBreak = k;
      if (lastBreak != n)
        end = lastBreak + 1;
      else if (runStop == n)
        end = n; // \s+(?!\S) at the end of the text
      else if (runStop - i >= 2)
        end = runStop - 1; // \s+(?!\S) leaves the last space to the next word
      else
        end = runStop; // \s+
    }
    out.emplace_back(i, end);
    i = end;
  }
  return out;
}

} // namespace qfuse::text
