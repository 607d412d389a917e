//===- PtxNames.cpp - registers, labels and numbers as PTX spells them ----===//

#include "PtxParser.h"

#include <cctype>
#include <cstdlib>

namespace qfuse::sim::ptx {

uint32_t lookupRegister(const FunctionSyntax &fn, uint32_t scope,
                        std::string_view name) {
  size_t digits = name.size();
  while (digits > 0 && std::isdigit(static_cast<unsigned char>(name[digits - 1])))
    --digits;
  std::string_view prefix = name.substr(0, digits);
  bool hasIndex = digits < name.size() && digits > 0 &&
                  (name.size() - digits == 1 || name[digits] != '0');
  uint32_t index = hasIndex ? uint32_t(std::strtoul(
                                  std::string(name.substr(digits)).c_str(),
                                  nullptr, 10))
                            : 0;
  for (uint32_t s = scope; s != kNone; s = fn.scopes[s].parent) {
    const auto &sc = fn.scopes[s];
    auto it = sc.regs.find(name);
    if (it != sc.regs.end())
      return it->second;
    if (hasIndex)
      for (const auto &r : sc.ranges)
        if (r.prefix == prefix && index < r.count)
          return r.base + index;
  }
  return kNone;
}

uint32_t lookupLabel(const FunctionSyntax &fn, uint32_t scope,
                     std::string_view name) {
  for (uint32_t s = scope; s != kNone; s = fn.scopes[s].parent) {
    auto it = fn.scopes[s].labels.find(name);
    if (it != fn.scopes[s].labels.end())
      return it->second;
  }
  return kNone;
}

const std::vector<std::string> *lookupTargetList(const FunctionSyntax &fn,
                                                 uint32_t scope,
                                                 std::string_view name) {
  for (uint32_t s = scope; s != kNone; s = fn.scopes[s].parent) {
    auto it = fn.scopes[s].targetLists.find(name);
    if (it != fn.scopes[s].targetLists.end())
      return &it->second;
  }
  return nullptr;
}

bool parseNumber(std::string_view text, bool negative, Number &out) {
  std::string s(text);
  if (!s.empty() && (s.back() == 'U' || s.back() == 'u'))
    s.pop_back();
  char *end = nullptr;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'f' || s[1] == 'F') &&
      s.size() == 10) {
    out.kind = Number::F32Bits;
    out.bits = std::strtoull(s.c_str() + 2, &end, 16);
  } else if (s.size() > 2 && s[0] == '0' && (s[1] == 'd' || s[1] == 'D') &&
             s.size() == 18) {
    out.kind = Number::F64Bits;
    out.bits = std::strtoull(s.c_str() + 2, &end, 16);
  } else if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    out.bits = std::strtoull(s.c_str() + 2, &end, 16);
  } else if (s.size() > 2 && s[0] == '0' && (s[1] == 'b' || s[1] == 'B')) {
    out.bits = std::strtoull(s.c_str() + 2, &end, 2);
  } else if (s.find_first_of(".eE") != std::string::npos) {
    out.kind = Number::Float;
    out.value = std::strtod(s.c_str(), &end);
    if (negative)
      out.value = -out.value;
    return end && *end == '\0';
  } else if (s.size() > 1 && s[0] == '0') {
    out.bits = std::strtoull(s.c_str() + 1, &end, 8);
  } else {
    out.bits = std::strtoull(s.c_str(), &end, 10);
  }
  if (!end || *end != '\0')
    return false;
  if (negative) {
    if (out.kind == Number::F32Bits)
      out.bits ^= 0x80000000u;
    else if (out.kind == Number::F64Bits)
      out.bits ^= 0x8000000000000000ull;
    else
      out.bits = ~out.bits + 1;
  }
  return true;
}

} // namespace qfuse::sim::ptx
