//===- PtxLexer.cpp - PTX text to tokens ----------------------------------===//

#include "PtxLexer.h"

#include <cctype>

namespace qfuse::sim::ptx {
namespace {

bool identStart(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == '$' ||
         c == '%' || c == '.';
}
bool identChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' ||
         c == '.';
}

} // namespace

bool lexPtx(std::string_view text, std::vector<Token> &tokens,
            std::string &error) {
  uint32_t line = 1;
  size_t i = 0, n = text.size();
  while (i < n) {
    char c = text[i];
    if (c == '\n') {
      ++line;
      ++i;
      continue;
    }
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
      continue;
    }
    if (c == '/' && i + 1 < n && text[i + 1] == '/') {
      while (i < n && text[i] != '\n')
        ++i;
      continue;
    }
    if (c == '/' && i + 1 < n && text[i + 1] == '*') {
      i += 2;
      while (i + 1 < n && !(text[i] == '*' && text[i + 1] == '/')) {
        line += text[i] == '\n';
        ++i;
      }
      i += 2;
      continue;
    }
    size_t start = i;
    Tok kind;
    if (c == '"') {
      ++i;
      while (i < n && text[i] != '"' && text[i] != '\n')
        i += text[i] == '\\' ? 2 : 1;
      ++i;
      kind = Tok::String;
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      // 0f3F800000, 0d..., 0x3C00, 1.5e-3, 12U
      while (i < n && (std::isalnum(static_cast<unsigned char>(text[i])) ||
                       text[i] == '.' ||
                       ((text[i] == '-' || text[i] == '+') &&
                        (text[i - 1] == 'e' || text[i - 1] == 'E') &&
                        text[start] != '0')))
        ++i;
      kind = Tok::Number;
    } else if (identStart(c)) {
      ++i;
      // "::" belongs to the identifier (ld.shared::cta); one ':' ends it.
      while (i < n && (identChar(text[i]) ||
                       (text[i] == ':' && i + 1 < n && text[i + 1] == ':' &&
                        (i + 2 >= n || text[i + 2] != ':')))) {
        i += text[i] == ':' ? 2 : 1;
      }
      kind = Tok::Ident;
    } else if (std::string_view(",;{}[]()+-@!<>=:|*").find(c) !=
               std::string_view::npos) {
      ++i;
      kind = Tok::Punct;
    } else {
      error = "line " + std::to_string(line) + ": unexpected character '" +
              std::string(1, c) + "'";
      return false;
    }
    tokens.push_back(Token{kind, text.substr(start, i - start), line});
  }
  tokens.push_back(Token{Tok::End, std::string_view(), line});
  return true;
}

} // namespace qfuse::sim::ptx
