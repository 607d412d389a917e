//===- ByteLevel.cpp - GPT-2's byte <-> printable character map -----------===//

#include "ByteLevel.h"

#include "qfuse/text/Unicode.h"

#include <array>

namespace qfuse::text {
namespace {

bool standsForItself(unsigned b) {
  return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) ||
         (b >= 0xAE && b <= 0xFF);
}

struct Tables {
  std::array<std::string, 256> byteToUtf8;
  std::array<int, 324> charToByte; // indexed by code point, -1 if none

  Tables() {
    charToByte.fill(-1);
    unsigned next = 256;
    for (unsigned b = 0; b < 256; ++b) {
      char32_t c = standsForItself(b) ? b : next++;
      appendUtf8(byteToUtf8[b], c);
      charToByte[c] = static_cast<int>(b);
    }
  }
};

const Tables &tables() {
  static const Tables t;
  return t;
}

} // namespace

void appendByteLevel(std::string &out, std::string_view bytes) {
  const Tables &t = tables();
  for (unsigned char b : bytes)
    out += t.byteToUtf8[b];
}

std::optional<std::string> byteLevelToBytes(std::string_view token) {
  const Tables &t = tables();
  std::string out;
  for (char32_t c : decodeUtf8(token)) {
    if (c >= t.charToByte.size() || t.charToByte[c] < 0)
      return std::nullopt;
    out.push_back(static_cast<char>(t.charToByte[c]));
  }
  return out;
}

} // namespace qfuse::text
