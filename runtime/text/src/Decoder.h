//===- Decoder.h - The decoder of a tokenizer.json -----------------*- C++ -*-===//
//
// Turns one token into the bytes it stands for, so that decoding can stream:
// the caller concatenates tokens' bytes, strips the leading characters a
// Strip step asks for, and turns the bytes into text (invalid UTF-8 becomes
// U+FFFD) once they are complete.
//
// Supported: ByteLevel; a Sequence of Replace (String pattern) and
// ByteFallback steps, then Fuse, then optionally Strip with stop = 0 (the
// Llama-2 / Mistral decoder). Anything else is a TokenizerError naming it.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_TEXT_DECODER_H
#define QFUSE_TEXT_DECODER_H

#include <nlohmann/json_fwd.hpp>

#include <string>
#include <vector>

namespace qfuse::text {

class Decoder {
public:
  static Decoder fromJson(const nlohmann::json &config,
                          const std::string &file);

  /// Appends the bytes of `token`. Added tokens stand for their own text.
  void appendToken(const std::string &token, bool added,
                   std::string &out) const;

  /// Strip: up to `stripCount()` copies of `stripContent()` are removed from
  /// the start of the whole decoded text.
  const std::string &stripContent() const { return stripContent_; }
  size_t stripCount() const { return stripCount_; }

private:
  struct Step {
    enum Kind { ByteLevel, Replace, ByteFallback } kind;
    std::string pattern, content;
  };
  std::vector<Step> steps_;
  bool fused_ = false;
  std::string stripContent_;
  size_t stripCount_ = 0;

  void add(const nlohmann::json &config, const std::string &file);
};

} // namespace qfuse::text

#endif // QFUSE_TEXT_DECODER_H
