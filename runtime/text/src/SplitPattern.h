//===- SplitPattern.h - The pre-tokenizer split patterns, hand-coded -*- C++ -*-===//
//
// Byte-level BPE tokenizers split text with a regular expression before BPE.
// The runtime has no regex engine with \p{L}, \p{N} and look-ahead, so the
// patterns the supported models use are recognised by their exact text and
// matched by hand-written code with the same leftmost-alternative semantics.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_TEXT_SPLITPATTERN_H
#define QFUSE_TEXT_SPLITPATTERN_H

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace qfuse::text {

/// The Llama-3 family of patterns:
///   (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,K}|
///    ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
/// with K = 3 (Llama-3) or a single \p{N} (Qwen2, Qwen3): K = 1.
struct SplitPattern {
  size_t maxDigits = 3;

  /// The pattern for `regex`, or nullopt when it is not one of the known ones.
  static std::optional<SplitPattern> recognise(std::string_view regex);

  /// The matches of the pattern in `text`, in order, as [begin, end) offsets.
  /// Every character belongs to exactly one match.
  std::vector<std::pair<size_t, size_t>> split(std::u32string_view text) const;
};

} // namespace qfuse::text

#endif // QFUSE_TEXT_SPLITPATTERN_H
