//===- NamedEncodings.cpp - "int4-g128", "nvfp4", ... -> #qf.enc ----------===//
//
// The short names users type on command lines and in configs. Each is
// defined by its #qf.enc text, so the name table reads like documentation
// and goes through the one parser.
//
//===----------------------------------------------------------------------===//

#include "qfuse/format/Encoding.h"

#include <cctype>

namespace qfuse::format {
namespace {

struct NamedEncoding {
  const char *name;
  const char *text;
};

constexpr NamedEncoding kNamedEncodings[] = {
    {"int4-g128", "int4, group = 128, scale = f16"},
    {"uint4-g128-asym", "uint4, group = 128, scale = f16, zero = int"},
    {"nf4", "nf4, group = 64, scale = f32"},
    {"nvfp4", "fp4e2m1, group = 16, scale = f8E4M3FN, global_scale"},
    {"mxfp4", "fp4e2m1, group = 32, scale = f8E8M0FNU"},
    {"fp8", "fp8e4m3, per_channel, scale = f32"},
    {"int8", "int8, per_channel, scale = f16"},
    {"2:4", "f16, sparse = 2:4"},
    {"2:4+int4", "int4, group = 128, scale = f16, sparse = 2:4"},
};

/// {int4,uint4,int8,uint8}-g<G>[-asym]: integer formats with f16 group
/// scales; "-asym" (required for the unsigned ones) adds integer zeros.
bool parseIntegerFamily(std::string_view name, std::string &text) {
  for (const char *format : {"uint4", "uint8", "int4", "int8"}) {
    std::string prefix = std::string(format) + "-g";
    if (name.substr(0, prefix.size()) != prefix)
      continue;
    std::string_view rest = name.substr(prefix.size());
    size_t digits = 0;
    while (digits < rest.size() &&
           std::isdigit(static_cast<unsigned char>(rest[digits])))
      ++digits;
    if (digits == 0 || digits > 9)
      return false;
    std::string_view suffix = rest.substr(digits);
    bool isUnsigned = format[0] == 'u';
    if (suffix != (isUnsigned ? "-asym" : ""))
      return false;
    text = std::string(format) + ", group = " +
           std::string(rest.substr(0, digits)) + ", scale = f16" +
           (isUnsigned ? ", zero = int" : "");
    return true;
  }
  return false;
}

} // namespace

std::vector<std::string> encodingNames() {
  std::vector<std::string> names;
  for (const NamedEncoding &named : kNamedEncodings)
    names.push_back(named.name);
  return names;
}

bool encodingFromName(std::string_view name, Encoding &enc,
                      std::string &error) {
  std::string text;
  for (const NamedEncoding &named : kNamedEncodings)
    if (name == named.name)
      text = named.text;
  if (text.empty() && !parseIntegerFamily(name, text)) {
    error = "unknown encoding name '" + std::string(name) + "'; expected one of";
    for (const NamedEncoding &named : kNamedEncodings)
      error += std::string(" ") + named.name;
    error += ", or {int4,int8}-g<G>, {uint4,uint8}-g<G>-asym";
    return false;
  }
  return parseEncoding(text, enc, error);
}

} // namespace qfuse::format
