//===- PreTokenizer.h - The pre-tokenizer of a tokenizer.json ------*- C++ -*-===//
//
// Supported: null (the whole section is one word); Split with a known
// pattern (SplitPattern), behavior Isolated, not inverted; ByteLevel without
// its own regex and without a prefix space; a Sequence of a Split and a
// ByteLevel. Anything else is a TokenizerError naming the type or pattern.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_TEXT_PRETOKENIZER_H
#define QFUSE_TEXT_PRETOKENIZER_H

#include "SplitPattern.h"

#include <nlohmann/json_fwd.hpp>

#include <optional>
#include <string>
#include <vector>

namespace qfuse::text {

class PreTokenizer {
public:
  static PreTokenizer fromJson(const nlohmann::json &config,
                               const std::string &file);

  /// The words of a normalized section, as UTF-8 in the alphabet the BPE
  /// vocabulary uses (byte-level characters where the tokenizer is
  /// byte-level).
  std::vector<std::string> split(const std::u32string &text) const;
  bool byteLevel() const { return byteLevel_; }

private:
  std::optional<SplitPattern> pattern_;
  bool byteLevel_ = false;

  void add(const nlohmann::json &config, const std::string &file);
};

} // namespace qfuse::text

#endif // QFUSE_TEXT_PRETOKENIZER_H
