//===- ChatFormat.h - A model's chat format, built in --------------*- C++ -*-===//
//
// Turns a conversation into the prompt text a chat model was trained on.
// qfuse does not run Jinja: it recognises the family of tokenizer_config.json's
// chat_template by its markers and applies a built-in format, with the few
// parameters that vary between versions read from the template's literals:
//
//   Llama-3   <|start_header_id|>   BOS, role headers, <|eot_id|>; the 3.1+
//                                   form ("Cutting Knowledge Date") always
//                                   opens with its system block
//   ChatML    <|im_start|>          Qwen2, Qwen2.5, Qwen3; a default system
//                                   message written in the template is used
//                                   when none is given
//   Mistral   [INST]                BOS, [INST] ... [/INST] around user turns;
//                                   a system message only where the template
//                                   takes one (system_message)
//
// Anything else is a TokenizerError that names the file and says which
// families are supported. docs/text-generation.md has the details.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_TEXT_CHATFORMAT_H
#define QFUSE_TEXT_CHATFORMAT_H

#include "qfuse/text/TokenizerError.h"

#include <optional>
#include <string>
#include <vector>

namespace qfuse::text {

struct ChatMessage {
  std::string role; // "system", "user" or "assistant"
  std::string content;
};

enum class ChatFamily { Llama3, ChatML, Mistral };

class ChatFormat {
public:
  /// Reads DIR/tokenizer_config.json's chat_template, bos_token and
  /// eos_token.
  static ChatFormat fromDirectory(const std::string &dir);
  /// `where` names the template's origin in error messages.
  static ChatFormat fromTemplate(const std::string &chatTemplate,
                                 const std::string &bosToken,
                                 const std::string &eosToken,
                                 const std::string &where);

  ChatFamily family() const { return family_; }
  const char *familyName() const;
  /// The token text that ends the assistant's turn (<|eot_id|>,
  /// <|im_end|>, or the EOS token for Mistral).
  const std::string &endOfTurn() const { return endOfTurn_; }

  /// The prompt for `messages` (an optional system message first, then
  /// user and assistant turns alternating, starting and ending with a
  /// user turn), followed by the opening of the assistant's turn. The text
  /// holds the special tokens' text (BOS included where the template writes
  /// it): encode it without adding special tokens.
  std::string apply(const std::vector<ChatMessage> &messages) const;

private:
  ChatFamily family_ = ChatFamily::ChatML;
  std::string where_;
  std::string bos_, eos_, endOfTurn_;
  // Llama-3.1+: the system block's date line.
  std::optional<std::string> knowledgeDate_;
  std::string todayDate_;
  // ChatML: the template's default system message.
  std::optional<std::string> defaultSystem_;
  // Mistral: the literals around user turns and the system message.
  std::string instOpen_ = "[INST] ", instClose_ = " [/INST]";
  std::string assistantPrefix_;
  bool assistantTrim_ = false;
  std::optional<std::string> systemSeparator_; // unset: no system role
  bool systemOnLastUser_ = false;
};

} // namespace qfuse::text

#endif // QFUSE_TEXT_CHATFORMAT_H
