//===- Normalizer.h - The normalizer of a tokenizer.json -----------*- C++ -*-===//
//
// Supported: null, NFC, Prepend, Replace with a String pattern, and a
// Sequence of these. Anything else is a TokenizerError naming the type.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_TEXT_NORMALIZER_H
#define QFUSE_TEXT_NORMALIZER_H

#include <nlohmann/json_fwd.hpp>

#include <string>
#include <vector>

namespace qfuse::text {

class Normalizer {
public:
  static Normalizer fromJson(const nlohmann::json &config,
                             const std::string &file);
  /// Normalizes one section of text (the part between two added tokens).
  std::u32string apply(std::u32string text) const;

private:
  struct Step {
    enum Kind { Nfc, Prepend, Replace } kind;
    std::u32string pattern, content;
  };
  std::vector<Step> steps_;

  void add(const nlohmann::json &config, const std::string &file);
};

} // namespace qfuse::text

#endif // QFUSE_TEXT_NORMALIZER_H
