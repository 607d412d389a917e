//===- StopTokens.cpp - Stop ids from a model directory, streamed text ----===//

#include "qfuse/text/StopTokens.h"

#include "JsonInteger.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>

namespace qfuse::text {

using nlohmann::json;

namespace {

/// eos_token_id of `path`: nullopt when the file or the key is absent.
std::optional<std::vector<int32_t>> eosIdsOf(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return std::nullopt;
  json c;
  try {
    c = json::parse(in);
  } catch (const json::exception &e) {
    throw TokenizerError(path + ": not valid JSON: " + e.what());
  }
  if (!c.is_object() || !c.contains("eos_token_id"))
    return std::nullopt;
  const json &v = c["eos_token_id"];
  std::vector<int32_t> ids;
  auto add = [&](const json &x) {
    if (!isIntegerUpTo(x, INT32_MAX))
      throw TokenizerError(path + ": eos_token_id holds " + x.dump() +
                           ", expected a non-negative token id");
    ids.push_back(x.get<int32_t>());
  };
  if (v.is_null())
    return ids;
  if (v.is_array()) {
    for (const json &x : v)
      add(x);
  } else {
    add(v);
  }
  return ids;
}

} // namespace

std::vector<int32_t> stopTokenIds(const std::string &modelDir,
                                  const Tokenizer &tokenizer,
                                  const std::string &extraToken) {
  std::vector<int32_t> ids;
  auto fromGeneration = eosIdsOf(modelDir + "/generation_config.json");
  auto fromConfig =
      fromGeneration ? fromGeneration : eosIdsOf(modelDir + "/config.json");
  if (fromConfig)
    ids = *fromConfig;
  if (auto eos = tokenizer.eosId())
    ids.push_back(*eos);
  if (!extraToken.empty()) {
    auto id = tokenizer.tokenToId(extraToken);
    if (!id)
      throw TokenizerError(modelDir + "/tokenizer.json: the end-of-turn "
                                      "token '" +
                           extraToken + "' is not in the vocabulary");
    ids.push_back(*id);
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

TextStreamer::TextStreamer(const Tokenizer &tokenizer,
                           std::vector<int32_t> stopIds)
    : decoder_(tokenizer, /*skipSpecialTokens=*/true),
      stopIds_(std::move(stopIds)) {}

bool TextStreamer::push(int32_t id, std::string &text) {
  text.clear();
  if (stopped_ ||
      std::find(stopIds_.begin(), stopIds_.end(), id) != stopIds_.end()) {
    stopped_ = true;
    return false;
  }
  text = decoder_.push(id);
  return true;
}

std::string TextStreamer::finish() { return decoder_.finish(); }

} // namespace qfuse::text
