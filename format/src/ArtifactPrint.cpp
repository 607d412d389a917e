//===- ArtifactPrint.cpp - the artifact's text, byte for byte -------------===//
//
// How an artifact file is spelled: the layout llvm::json's pretty printer
// gave every artifact before the schema existed (two-space indent, sorted
// keys, "%.17g" doubles, \t \n \r and \u00XX escapes), kept so that a file
// compiled from the same IR keeps its bytes; and base64 for cubins.
//
//===----------------------------------------------------------------------===//

#include "qfuse/format/ArtifactJson.h"

#include <cctype>
#include <cstdio>
#include <limits>

namespace qfuse::format::artifact {
namespace {

void quote(const std::string &text, std::string &out) {
  static const char kHex[] = "0123456789abcdef";
  out += '"';
  for (unsigned char c : text) {
    if (c == '"' || c == '\\')
      out += '\\';
    if (c >= 0x20) {
      out += static_cast<char>(c);
      continue;
    }
    out += '\\';
    if (c == '\t')
      out += 't';
    else if (c == '\n')
      out += 'n';
    else if (c == '\r')
      out += 'r';
    else
      out += std::string("u00") + kHex[c >> 4] + kHex[c & 15];
  }
  out += '"';
}

void print(const nlohmann::json &value, int indent, std::string &out) {
  using Type = nlohmann::json::value_t;
  const std::string inner(indent + 2, ' ');
  switch (value.type()) {
  case Type::object:
  case Type::array: {
    const bool isObject = value.is_object();
    out += isObject ? '{' : '[';
    bool first = true;
    // nlohmann::json keeps object keys sorted, as llvm::json printed them.
    for (auto it = value.begin(); it != value.end(); ++it) {
      out += first ? "\n" : ",\n";
      first = false;
      out += inner;
      if (isObject) {
        quote(it.key(), out);
        out += ": ";
      }
      print(*it, indent + 2, out);
    }
    if (!first)
      out += "\n" + std::string(indent, ' ');
    out += isObject ? '}' : ']';
    return;
  }
  case Type::string:
    quote(value.get_ref<const std::string &>(), out);
    return;
  case Type::boolean:
    out += value.get<bool>() ? "true" : "false";
    return;
  case Type::number_integer:
    out += std::to_string(value.get<int64_t>());
    return;
  case Type::number_unsigned:
    out += std::to_string(value.get<uint64_t>());
    return;
  case Type::number_float: {
    char text[40];
    std::snprintf(text, sizeof(text), "%.*g",
                  std::numeric_limits<double>::max_digits10,
                  value.get<double>());
    out += text;
    return;
  }
  default:
    out += "null";
    return;
  }
}

} // namespace

std::string printJson(const nlohmann::json &value) {
  std::string out;
  print(value, 0, out);
  return out;
}

std::string printArtifact(const Artifact &artifact) {
  return printJson(toJson(artifact)) + "\n";
}

std::string encodeBase64(const std::vector<uint8_t> &bytes) {
  static const char kDigits[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    uint32_t group = uint32_t(bytes[i]) << 16;
    if (i + 1 < bytes.size())
      group |= uint32_t(bytes[i + 1]) << 8;
    if (i + 2 < bytes.size())
      group |= bytes[i + 2];
    out += kDigits[(group >> 18) & 63];
    out += kDigits[(group >> 12) & 63];
    out += i + 1 < bytes.size() ? kDigits[(group >> 6) & 63] : '=';
    out += i + 2 < bytes.size() ? kDigits[group & 63] : '=';
  }
  return out;
}

std::optional<std::vector<uint8_t>> decodeBase64(std::string_view text) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z')
      return c - 'A';
    if (c >= 'a' && c <= 'z')
      return c - 'a' + 26;
    if (c >= '0' && c <= '9')
      return c - '0' + 52;
    if (c == '+')
      return 62;
    if (c == '/')
      return 63;
    return -1;
  };
  std::vector<uint8_t> out;
  out.reserve(text.size() / 4 * 3);
  uint32_t accumulator = 0;
  int bits = 0;
  size_t symbols = 0, padding = 0;
  for (char c : text) {
    if (std::isspace(static_cast<unsigned char>(c)))
      continue;
    if (c == '=') {
      ++padding;
      ++symbols;
      continue;
    }
    if (padding > 0) // data after padding
      return std::nullopt;
    int v = value(c);
    if (v < 0)
      return std::nullopt;
    ++symbols;
    accumulator = (accumulator << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<uint8_t>(accumulator >> bits));
      accumulator &= (1u << bits) - 1;
    }
  }
  if (symbols % 4 != 0 || padding > 2)
    return std::nullopt;
  return out;
}

} // namespace qfuse::format::artifact
