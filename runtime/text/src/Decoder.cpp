//===- Decoder.cpp - The decoder of a tokenizer.json ----------------------===//

#include "Decoder.h"

#include "ByteLevel.h"
#include "JsonInteger.h"

#include "qfuse/text/TokenizerError.h"

#include <nlohmann/json.hpp>

#include <functional>

namespace qfuse::text {

using nlohmann::json;

namespace {

/// The byte of a "<0xNN>" token, or -1.
int byteFallbackValue(const std::string &t) {
  if (t.size() != 6 || t.compare(0, 3, "<0x") != 0 || t[5] != '>')
    return -1;
  auto hex = [](char c) {
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                  : -1;
  };
  int hi = hex(t[3]), lo = hex(t[4]);
  return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

/// A Strip decoder's most leading or trailing characters: more than any
/// token holds, so far past what tokenizer.json files use.
constexpr int64_t kMaxStripCount = 1 << 20;

/// `config[key]` (0 where absent) as a count of characters to strip, or
/// `fail` naming the field: a JSON float or out-of-range integer has no
/// such count (and converting it to one is undefined).
size_t readStripCount(const json &config, const char *key,
                      const std::function<void(const std::string &)> &fail) {
  if (!config.contains(key))
    return 0;
  const json &v = config[key];
  if (!isIntegerUpTo(v, kMaxStripCount))
    fail(std::string("'") + key + "' must be an integer from 0 to " +
         std::to_string(kMaxStripCount) + ", got " + v.dump());
  return size_t(v.get<int64_t>());
}

} // namespace

Decoder Decoder::fromJson(const json &config, const std::string &file) {
  if (config.is_null())
    throw TokenizerError(file + ": a null decoder is not supported");
  Decoder d;
  d.add(config, file);
  bool byteLevel = !d.steps_.empty() && d.steps_[0].kind == Step::ByteLevel;
  if (!byteLevel && !d.fused_)
    throw TokenizerError(file + ": decoder: a Sequence without Fuse is not "
                               "supported");
  return d;
}

void Decoder::add(const json &config, const std::string &file) {
  std::string type = config.value("type", std::string());
  auto fail = [&](const std::string &what) {
    throw TokenizerError(file + ": decoder '" + type + "': " + what);
  };
  if (type != "Sequence" && stripCount_ != 0)
    fail("only a Strip at the end of the sequence is supported");
  if (type == "Sequence") {
    for (const json &step : config.at("decoders"))
      add(step, file);
  } else if (type == "ByteLevel") {
    if (!steps_.empty() || fused_)
      fail("ByteLevel must be the only decoder");
    steps_.push_back({Step::ByteLevel, {}, {}});
  } else if (type == "Replace" || type == "ByteFallback") {
    if (fused_)
      fail("must come before Fuse");
    if (type == "ByteFallback") {
      steps_.push_back({Step::ByteFallback, {}, {}});
      return;
    }
    const json &pattern = config.at("pattern");
    if (!pattern.contains("String"))
      fail("only String patterns are supported, not " + pattern.dump());
    std::string from = pattern["String"].get<std::string>();
    if (from.empty())
      fail("empty pattern");
    steps_.push_back({Step::Replace, from, config.at("content").get<std::string>()});
  } else if (type == "Fuse") {
    fused_ = true;
  } else if (type == "Strip") {
    if (!fused_)
      fail("must come after Fuse");
    if (readStripCount(config, "stop", fail) != 0)
      fail("stop != 0 is not supported");
    stripContent_ = config.at("content").get<std::string>();
    stripCount_ = readStripCount(config, "start", fail);
  } else {
    throw TokenizerError(file + ": decoder type '" + type +
                         "' is not supported (supported: ByteLevel, Replace, "
                         "ByteFallback, Fuse, Strip, Sequence)");
  }
}

void Decoder::appendToken(const std::string &token, bool added,
                          std::string &out) const {
  std::string t = token;
  for (const Step &step : steps_) {
    switch (step.kind) {
    case Step::ByteLevel:
      if (!added)
        if (std::optional<std::string> bytes = byteLevelToBytes(t))
          t = std::move(*bytes);
      break;
    case Step::Replace: {
      std::string replaced;
      size_t i = 0;
      for (size_t hit; (hit = t.find(step.pattern, i)) != std::string::npos;
           i = hit + step.pattern.size())
        replaced.append(t, i, hit - i).append(step.content);
      replaced.append(t, i, std::string::npos);
      t = std::move(replaced);
      break;
    }
    case Step::ByteFallback:
      if (int b = byteFallbackValue(t); b >= 0)
        t = std::string(1, static_cast<char>(b));
      break;
    }
  }
  out += t;
}

} // namespace qfuse::text
