//===- ChatFormatTest.cpp - Built-in chat formats, hand-worked ------------===//
//
// Each family on a conversation worked out by hand from its template, the
// literals read from templates, and the errors. The real templates, rendered
// by Jinja2, are the oracle in ChatOracleTest.
//
//===----------------------------------------------------------------------===//

#include "qfuse/text/ChatFormat.h"

#include "TextTestUtil.h"

#include <gtest/gtest.h>

using namespace qfuse::text;

namespace {

std::string errorOf(const std::function<void()> &f) {
  try {
    f();
  } catch (const TokenizerError &e) {
    return e.what();
  }
  return "no error";
}

const std::vector<ChatMessage> kSystemUser = {{"system", "Be brief."},
                                              {"user", "Hi"}};

} // namespace

TEST(ChatFormat, Llama3) {
  const std::string t =
      "{% for message in messages %}{% set content = '<|start_header_id|>' + "
      "message['role'] + '<|end_header_id|>\\n\\n'+ message['content'] | trim "
      "+ '<|eot_id|>' %}{% if loop.index0 == 0 %}{% set content = bos_token + "
      "content %}{% endif %}{{ content }}{% endfor %}";
  ChatFormat f = ChatFormat::fromTemplate(t, "<B>", "<E>", "t");
  EXPECT_EQ(f.family(), ChatFamily::Llama3);
  EXPECT_EQ(f.endOfTurn(), "<|eot_id|>");
  EXPECT_EQ(f.apply({{"system", " Be brief. "}, {"user", "Hi\n"}}),
            "<B><|start_header_id|>system<|end_header_id|>\n\nBe "
            "brief.<|eot_id|><|start_header_id|>user<|end_header_id|>\n\n"
            "Hi<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n");
}

TEST(ChatFormat, Llama31DateFromTheTemplate) {
  const std::string t =
      "{{- bos_token }}{%- set date_string = \"3 Mar 2033\" %}{{- "
      "\"<|start_header_id|>system<|end_header_id|>\\n\\n\" }}{{- \"Cutting "
      "Knowledge Date: December 2023\\n\" }}<|eot_id|>";
  ChatFormat f = ChatFormat::fromTemplate(t, "<B>", "<E>", "t");
  EXPECT_STREQ(f.familyName(), "Llama-3.1");
  EXPECT_EQ(f.apply({{"user", "Hi"}}),
            "<B><|start_header_id|>system<|end_header_id|>\n\nCutting "
            "Knowledge Date: December 2023\nToday Date: 3 Mar 2033\n\n"
            "<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHi"
            "<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n");
}

TEST(ChatFormat, ChatMLWithAndWithoutADefaultSystem) {
  const std::string plain =
      "{% for m in messages %}{{'<|im_start|>' + m['role'] + '\\n' + "
      "m['content'] + '<|im_end|>' + '\\n'}}{% endfor %}";
  ChatFormat f = ChatFormat::fromTemplate(plain, "", "<|im_end|>", "t");
  EXPECT_EQ(f.family(), ChatFamily::ChatML);
  EXPECT_EQ(f.apply({{"user", "Hi"}}),
            "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
  ChatFormat d = ChatFormat::fromTemplate(
      "{{ '<|im_start|>system\\nYou help.<|im_end|>\\n' }}" + plain, "",
      "<|im_end|>", "t");
  EXPECT_EQ(d.apply({{"user", "Hi"}}),
            "<|im_start|>system\nYou help.<|im_end|>\n<|im_start|>user\nHi"
            "<|im_end|>\n<|im_start|>assistant\n");
  EXPECT_EQ(d.apply(kSystemUser),
            "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi"
            "<|im_end|>\n<|im_start|>assistant\n");
}

TEST(ChatFormat, MistralLiteralsComeFromTheTemplate) {
  const std::string v3 =
      "{%- if messages[0][\"role\"] == \"system\" %}{%- set system_message = "
      "messages[0][\"content\"] %}{%- endif %}{{- bos_token }}{%- if loop.last "
      "and system_message is defined %}{{- \"[INST] \" + system_message + "
      "\"\\n\\n\" + message[\"content\"] + \"[/INST]\" }}{%- endif %}{{- \" \" "
      "+ message[\"content\"]|trim + eos_token}}";
  ChatFormat f = ChatFormat::fromTemplate(v3, "<s>", "</s>", "t");
  EXPECT_EQ(f.family(), ChatFamily::Mistral);
  EXPECT_EQ(f.endOfTurn(), "</s>");
  EXPECT_EQ(f.apply({{"system", "S"},
                     {"user", "a"},
                     {"assistant", " b "},
                     {"user", "c"}}),
            "<s>[INST] a[/INST] b</s>[INST] S\n\nc[/INST]");
  const std::string v1 =
      "{{ bos_token }}{{ '[INST] ' + message['content'] + ' [/INST]' }}{{ "
      "message['content'] + eos_token}}";
  ChatFormat g = ChatFormat::fromTemplate(v1, "<s>", "</s>", "t");
  EXPECT_EQ(g.apply({{"user", "a"}, {"assistant", " b "}, {"user", "c"}}),
            "<s>[INST] a [/INST] b </s>[INST] c [/INST]");
  EXPECT_NE(errorOf([&] { g.apply(kSystemUser); })
                .find("t: this Mistral template has no system role"),
            std::string::npos);
}

TEST(ChatFormat, Errors) {
  EXPECT_NE(errorOf([] {
              ChatFormat::fromTemplate("{{ '### Instruction:' }}", "", "",
                                       "DIR/tokenizer_config.json");
            }).find("DIR/tokenizer_config.json: not a chat format qfuse knows"),
            std::string::npos);
  ChatFormat f = ChatFormat::fromTemplate("<|im_start|><|im_end|>", "", "", "t");
  EXPECT_NE(errorOf([&] { f.apply({{"assistant", "x"}}); })
                .find("message 0 has role 'assistant', expected 'user'"),
            std::string::npos);
  EXPECT_NE(errorOf([&] { f.apply({{"user", "x"}, {"assistant", "y"}}); })
                .find("must end with a user message"),
            std::string::npos);
  test::ScratchDir dir;
  EXPECT_NE(errorOf([&] { ChatFormat::fromDirectory(dir.path()); })
                .find(dir.path() + "/tokenizer_config.json: cannot open"),
            std::string::npos);
  dir.write("tokenizer_config.json", "{\"eos_token\": \"</s>\"}");
  EXPECT_NE(errorOf([&] { ChatFormat::fromDirectory(dir.path()); })
                .find("tokenizer_config.json: no chat_template"),
            std::string::npos);
  dir.write("tokenizer_config.json",
            "{\"bos_token\": {\"content\": \"<s>\"}, \"eos_token\": \"</s>\", "
            "\"chat_template\": [{\"name\": \"tool_use\", \"template\": \"x\"}, "
            "{\"name\": \"default\", \"template\": \"{{ bos_token }}{{ '[INST] "
            "' }}{{ ' [/INST]' }}\"}]}");
  EXPECT_EQ(ChatFormat::fromDirectory(dir.path()).apply({{"user", "q"}}),
            "<s>[INST] q [/INST]");
}
