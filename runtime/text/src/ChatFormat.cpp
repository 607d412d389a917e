//===- ChatFormat.cpp - Built-in chat formats matched to the template -----===//

#include "qfuse/text/ChatFormat.h"

#include <nlohmann/json.hpp>

#include <ctime>
#include <fstream>

namespace qfuse::text {

using nlohmann::json;

namespace {

/// A string literal inside a Jinja tag, unescaped, and where it ends.
struct Literal {
  std::string text;
  size_t begin = 0, end = 0; // [begin, end) covers the quotes
};

/// The string literals of every {{ }} and {% %} tag of `t`, in order.
std::vector<Literal> literalsOf(const std::string &t) {
  std::vector<Literal> out;
  size_t i = 0;
  while ((i = t.find('{', i)) != std::string::npos) {
    if (i + 1 >= t.size() || (t[i + 1] != '{' && t[i + 1] != '%')) {
      ++i;
      continue;
    }
    const std::string close = t[i + 1] == '{' ? "}}" : "%}";
    i += 2;
    while (i < t.size() && t.compare(i, 2, close) != 0) {
      const char q = t[i];
      if (q != '\'' && q != '"') {
        ++i;
        continue;
      }
      Literal lit;
      lit.begin = i++;
      while (i < t.size() && t[i] != q) {
        if (t[i] == '\\' && i + 1 < t.size()) {
          const char e = t[++i];
          lit.text += e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e;
        } else {
          lit.text += t[i];
        }
        ++i;
      }
      lit.end = ++i;
      out.push_back(std::move(lit));
    }
  }
  return out;
}

const Literal *findLiteral(const std::vector<Literal> &lits,
                           const std::string &part) {
  for (const Literal &l : lits)
    if (l.text.find(part) != std::string::npos)
      return &l;
  return nullptr;
}

/// The first literal that starts after `t`'s first `anchor` (skipping
/// only spaces, '+' and '='), if any.
std::optional<std::string> literalAfter(const std::string &t,
                                        const std::vector<Literal> &lits,
                                        const std::string &anchor) {
  for (size_t at = t.find(anchor); at != std::string::npos;
       at = t.find(anchor, at + 1)) {
    size_t i = at + anchor.size();
    while (i < t.size() && (t[i] == ' ' || t[i] == '+' || t[i] == '='))
      ++i;
    for (const Literal &l : lits)
      if (l.begin == i)
        return l.text;
  }
  return std::nullopt;
}

/// Python's str.strip() over ASCII whitespace (Jinja's `trim`).
std::string trim(const std::string &s) {
  const char *ws = " \t\n\r\v\f";
  const size_t b = s.find_first_not_of(ws);
  if (b == std::string::npos)
    return "";
  return s.substr(b, s.find_last_not_of(ws) - b + 1);
}

std::optional<std::string> tokenText(const json &config, const char *key) {
  if (!config.contains(key))
    return std::nullopt;
  const json &v = config[key];
  if (v.is_string())
    return v.get<std::string>();
  if (v.is_object() && v.contains("content") && v["content"].is_string())
    return v["content"].get<std::string>();
  return std::nullopt;
}

} // namespace

ChatFormat ChatFormat::fromDirectory(const std::string &dir) {
  const std::string path = dir + "/tokenizer_config.json";
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw TokenizerError(path + ": cannot open (the chat template is read "
                                "from tokenizer_config.json's chat_template)");
  json c;
  try {
    c = json::parse(in);
  } catch (const json::exception &e) {
    throw TokenizerError(path + ": not valid JSON: " + e.what());
  }
  if (!c.contains("chat_template"))
    throw TokenizerError(path + ": no chat_template: this model has no chat "
                                "format (use a prompt without --chat)");
  const json &t = c["chat_template"];
  std::string text;
  if (t.is_string()) {
    text = t.get<std::string>();
  } else if (t.is_array()) {
    // Named templates: [{"name": "default", "template": ...}, ...].
    for (const json &named : t)
      if (named.is_object() && named.value("name", "") == "default" &&
          named.contains("template") && named["template"].is_string())
        text = named["template"].get<std::string>();
    if (text.empty())
      throw TokenizerError(path + ": chat_template is a list without a "
                                  "template named \"default\"");
  } else {
    throw TokenizerError(path + ": chat_template is neither a string nor a "
                                "list of named templates");
  }
  return fromTemplate(text, tokenText(c, "bos_token").value_or(""),
                      tokenText(c, "eos_token").value_or(""),
                      path + ": chat_template");
}

ChatFormat ChatFormat::fromTemplate(const std::string &t,
                                    const std::string &bosToken,
                                    const std::string &eosToken,
                                    const std::string &where) {
  ChatFormat f;
  f.where_ = where;
  f.bos_ = bosToken;
  f.eos_ = eosToken;
  const std::vector<Literal> lits = literalsOf(t);
  const bool writesBos = t.find("bos_token") != std::string::npos;
  if (!writesBos)
    f.bos_.clear();

  if (t.find("<|start_header_id|>") != std::string::npos &&
      t.find("<|eot_id|>") != std::string::npos) {
    f.family_ = ChatFamily::Llama3;
    f.endOfTurn_ = "<|eot_id|>";
    if (const Literal *k = findLiteral(lits, "Cutting Knowledge Date:")) {
      f.knowledgeDate_ = k->text;
      // transformers defines strftime_now; without it the template's
      // default date_string applies.
      if (t.find("strftime_now") != std::string::npos) {
        char buf[32];
        const std::time_t now = std::time(nullptr);
        std::tm tm{};
        localtime_r(&now, &tm);
        std::strftime(buf, sizeof buf, "%d %b %Y", &tm);
        f.todayDate_ = buf;
      } else if (auto date = literalAfter(t, lits, "set date_string")) {
        f.todayDate_ = *date;
      } else {
        throw TokenizerError(where + ": a Llama-3.1-style template without "
                                     "a default date_string");
      }
    }
  } else if (t.find("<|im_start|>") != std::string::npos &&
             t.find("<|im_end|>") != std::string::npos) {
    f.family_ = ChatFamily::ChatML;
    f.endOfTurn_ = "<|im_end|>";
    const std::string open = "<|im_start|>system\n";
    for (const Literal &l : lits)
      if (l.text.rfind(open, 0) == 0 && l.text.size() > open.size()) {
        const size_t end = l.text.find("<|im_end|>");
        if (end != std::string::npos)
          f.defaultSystem_ = l.text.substr(open.size(), end - open.size());
      }
  } else if (t.find("[INST]") != std::string::npos &&
             t.find("[/INST]") != std::string::npos) {
    f.family_ = ChatFamily::Mistral;
    f.endOfTurn_ = eosToken;
    const Literal *open = findLiteral(lits, "[INST]");
    const Literal *close = findLiteral(lits, "[/INST]");
    if (!open || !close || open->text.find("[/INST]") != std::string::npos)
      throw TokenizerError(where + ": a Mistral-style template whose [INST] "
                                   "and [/INST] are not separate string "
                                   "literals; qfuse applies only the "
                                   "Mistral instruct templates");
    f.instOpen_ = open->text;
    f.instClose_ = close->text;
    if (t.find("system_message") != std::string::npos) {
      auto sep = literalAfter(t, lits, "+ system_message");
      if (!sep)
        throw TokenizerError(where + ": a Mistral-style template that uses "
                                     "system_message without a literal "
                                     "after it");
      f.systemSeparator_ = *sep;
      f.systemOnLastUser_ =
          t.find("loop.last and system_message") != std::string::npos;
    }
    // The assistant turn: [' ' +] content[|trim] + eos_token.
    for (const char *content :
         {"message['content']", "message[\"content\"]", "message.content"}) {
      for (const char *tail : {" + eos_token", "|trim + eos_token",
                               " | trim + eos_token"}) {
        const size_t at = t.find(std::string(content) + tail);
        if (at == std::string::npos)
          continue;
        f.assistantTrim_ = std::string(tail).find("trim") != std::string::npos;
        size_t i = at;
        while (i > 0 && (t[i - 1] == ' ' || t[i - 1] == '+'))
          --i;
        for (const Literal &l : lits)
          if (l.end == i && l.text == " ")
            f.assistantPrefix_ = " ";
      }
    }
  } else {
    throw TokenizerError(
        where + ": not a chat format qfuse knows; it applies built-in "
                "formats recognised by their markers: Llama-3 "
                "(<|start_header_id|> ... <|eot_id|>), ChatML as in Qwen2 "
                "(<|im_start|> ... <|im_end|>) and Mistral instruct ([INST] "
                "... [/INST])");
  }
  return f;
}

const char *ChatFormat::familyName() const {
  switch (family_) {
  case ChatFamily::Llama3:
    return knowledgeDate_ ? "Llama-3.1" : "Llama-3";
  case ChatFamily::ChatML:
    return "ChatML";
  case ChatFamily::Mistral:
    return "Mistral instruct";
  }
  return "?";
}

std::string ChatFormat::apply(const std::vector<ChatMessage> &messages) const {
  std::optional<std::string> system;
  size_t first = 0;
  if (!messages.empty() && messages[0].role == "system") {
    system = messages[0].content;
    first = 1;
  }
  for (size_t i = first; i < messages.size(); ++i) {
    const std::string expected = (i - first) % 2 == 0 ? "user" : "assistant";
    if (messages[i].role != expected)
      throw TokenizerError(where_ + ": message " + std::to_string(i) +
                           " has role '" + messages[i].role + "', expected '" +
                           expected +
                           "' (an optional system message, then user and "
                           "assistant turns alternating)");
  }
  if (messages.size() == first || messages.back().role != "user")
    throw TokenizerError(where_ + ": the conversation must end with a user "
                                  "message");

  std::string out;
  switch (family_) {
  case ChatFamily::Llama3: {
    out = bos_;
    auto header = [&](const std::string &role) {
      out += "<|start_header_id|>" + role + "<|end_header_id|>\n\n";
    };
    size_t from = 0;
    if (knowledgeDate_) {
      header("system");
      out += *knowledgeDate_ + "Today Date: " + todayDate_ + "\n\n" +
             (system ? trim(*system) : "") + "<|eot_id|>";
      from = first;
    }
    for (size_t i = from; i < messages.size(); ++i) {
      header(messages[i].role);
      out += trim(messages[i].content) + "<|eot_id|>";
    }
    header("assistant");
    break;
  }
  case ChatFamily::ChatML: {
    const std::optional<std::string> sys = system ? system : defaultSystem_;
    if (sys)
      out += "<|im_start|>system\n" + *sys + "<|im_end|>\n";
    for (size_t i = first; i < messages.size(); ++i)
      out += "<|im_start|>" + messages[i].role + "\n" + messages[i].content +
             "<|im_end|>\n";
    out += "<|im_start|>assistant\n";
    break;
  }
  case ChatFamily::Mistral: {
    if (system && !systemSeparator_)
      throw TokenizerError(where_ + ": this Mistral template has no system "
                                    "role (it does not use system_message); "
                                    "leave out the system message");
    out = bos_;
    for (size_t i = first; i < messages.size(); ++i) {
      const ChatMessage &m = messages[i];
      if (m.role == "assistant") {
        out += assistantPrefix_ + (assistantTrim_ ? trim(m.content) : m.content) +
               eos_;
        continue;
      }
      const bool withSystem =
          system && (systemOnLastUser_ ? i + 1 == messages.size() : i == first);
      out += instOpen_ +
             (withSystem ? *system + *systemSeparator_ : std::string()) +
             m.content + instClose_;
    }
    break;
  }
  }
  return out;
}

} // namespace qfuse::text
