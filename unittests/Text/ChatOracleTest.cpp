//===- ChatOracleTest.cpp - Chat formats against Jinja2 -------------------===//
//
// Every conversation of the fixtures' chat-oracle.json (written by
// unittests/Text/oracle/chat-oracle.py: the real chat templates of the npm
// tokenizer packages and of chat-templates.json, rendered by Jinja2 as
// transformers renders them) through ChatFormat: the same text, or an
// error where the template raised one or is not a known family.
//
//===----------------------------------------------------------------------===//

#include "qfuse/text/ChatFormat.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <fstream>

using namespace qfuse::text;
using nlohmann::json;

TEST(ChatOracle, BuiltInFormatsMatchTheTemplates) {
  const char *dir = std::getenv("QFUSE_TOKENIZER_FIXTURES");
  ASSERT_TRUE(dir) << "QFUSE_TOKENIZER_FIXTURES is not set";
  const std::string path = std::string(dir) + "/chat-oracle.json";
  std::ifstream in(path);
  ASSERT_TRUE(in) << path << " is missing (scripts/install-tokenizer-fixtures.sh)";
  const json cases = json::parse(in);
  ASSERT_GE(cases.size(), 30u);
  int matched = 0, refused = 0;
  for (const json &c : cases) {
    const std::string name = c["name"];
    std::vector<ChatMessage> messages;
    for (const json &m : c["messages"])
      messages.push_back({m["role"], m["content"]});
    std::string got, error;
    try {
      got = ChatFormat::fromTemplate(c["chat_template"], c["bos_token"],
                                     c["eos_token"], name)
                .apply(messages);
    } catch (const TokenizerError &e) {
      error = e.what();
    }
    const std::string where = name + ", " + std::to_string(messages.size()) +
                              " messages";
    if (name.find("unsupported") != std::string::npos) {
      EXPECT_NE(error.find("not a chat format qfuse knows"), std::string::npos)
          << where;
      ++refused;
    } else if (c.contains("error")) {
      EXPECT_FALSE(error.empty()) << where << ": Jinja2 raised '"
                                  << c["error"].get<std::string>() << "'";
      ++refused;
    } else {
      EXPECT_EQ(error, "") << where;
      EXPECT_EQ(got, c["text"].get<std::string>()) << where;
      ++matched;
    }
  }
  std::printf("chat oracle: %d renderings equal, %d refused as the template "
              "does\n", matched, refused);
}
