//===- PtxLexer.h - PTX text to tokens --------------------------*- C++ -*-===//

#ifndef QFUSE_SIM_PTX_PTXLEXER_H
#define QFUSE_SIM_PTX_PTXLEXER_H

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace qfuse::sim::ptx {

enum class Tok : uint8_t { Ident, Number, String, Punct, End };

/// A token: identifiers include directives (.reg), registers (%r1, %tid.x),
/// labels ($L__BB0_2) and opcodes (ld.shared::cluster.b32); numbers keep
/// their spelling (0f3F800000, 0x3C00, 12U).
struct Token {
  Tok kind = Tok::End;
  std::string_view text;
  uint32_t line = 0;
  bool is(char c) const { return kind == Tok::Punct && text[0] == c; }
  bool is(std::string_view s) const { return kind == Tok::Ident && text == s; }
};

/// Splits `text` (which must outlive the tokens) into tokens, comments
/// dropped; the last token is End. Returns false with `error` set on a
/// character no PTX token starts with.
bool lexPtx(std::string_view text, std::vector<Token> &tokens,
            std::string &error);

} // namespace qfuse::sim::ptx

#endif // QFUSE_SIM_PTX_PTXLEXER_H
