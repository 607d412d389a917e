//===- Utf8.cpp - UTF-8 decoding with WHATWG replacement, and encoding ----===//
//
// The decoder is the WHATWG Encoding Standard's UTF-8 decoder: each maximal
// subpart of an ill-formed sequence becomes one U+FFFD, so its output equals
// JavaScript's TextDecoder and Python's bytes.decode(errors="replace").
//
//===----------------------------------------------------------------------===//

#include "qfuse/text/Unicode.h"

namespace qfuse::text {
namespace {

constexpr char32_t kReplacement = 0xFFFD;

/// The WHATWG UTF-8 decoder's state between bytes.
struct Utf8Decoder {
  char32_t codePoint = 0;
  int needed = 0, seen = 0;
  unsigned char lower = 0x80, upper = 0xBF;

  /// Feeds one byte. Returns true when `b` must be fed again (it ended an
  /// ill-formed sequence without belonging to it). Emits through `emit`.
  template <typename Emit> bool feed(unsigned char b, Emit &&emit) {
    if (needed == 0) {
      if (b <= 0x7F) {
        emit(b);
      } else if (b >= 0xC2 && b <= 0xDF) {
        needed = 1;
        codePoint = b & 0x1F;
      } else if (b >= 0xE0 && b <= 0xEF) {
        if (b == 0xE0)
          lower = 0xA0;
        if (b == 0xED)
          upper = 0x9F;
        needed = 2;
        codePoint = b & 0x0F;
      } else if (b >= 0xF0 && b <= 0xF4) {
        if (b == 0xF0)
          lower = 0x90;
        if (b == 0xF4)
          upper = 0x8F;
        needed = 3;
        codePoint = b & 0x07;
      } else {
        emit(kReplacement);
      }
      return false;
    }
    if (b < lower || b > upper) {
      reset();
      emit(kReplacement);
      return true;
    }
    lower = 0x80;
    upper = 0xBF;
    codePoint = (codePoint << 6) | (b & 0x3F);
    if (++seen == needed) {
      emit(codePoint);
      reset();
    }
    return false;
  }

  void reset() {
    codePoint = 0;
    needed = seen = 0;
    lower = 0x80;
    upper = 0xBF;
  }
};

template <typename Emit> void decode(std::string_view bytes, Emit &&emit) {
  Utf8Decoder decoder;
  for (size_t i = 0; i < bytes.size(); ++i)
    if (decoder.feed(static_cast<unsigned char>(bytes[i]), emit))
      --i;
  if (decoder.needed != 0)
    emit(kReplacement);
}

} // namespace

std::u32string decodeUtf8(std::string_view bytes) {
  std::u32string out;
  out.reserve(bytes.size());
  decode(bytes, [&](char32_t c) { out.push_back(c); });
  return out;
}

std::string toValidUtf8(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  decode(bytes, [&](char32_t c) { appendUtf8(out, c); });
  return out;
}

void appendUtf8(std::string &out, char32_t c) {
  if (c < 0x80) {
    out.push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (c >> 6)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (c >> 12)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (c >> 18)));
    out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

std::string encodeUtf8(std::u32string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char32_t c : text)
    appendUtf8(out, c);
  return out;
}

size_t incompleteUtf8Tail(std::string_view bytes) {
  Utf8Decoder decoder;
  auto ignore = [](char32_t) {};
  for (size_t i = 0; i < bytes.size(); ++i)
    if (decoder.feed(static_cast<unsigned char>(bytes[i]), ignore))
      --i;
  return decoder.needed == 0 ? 0 : static_cast<size_t>(decoder.seen) + 1;
}

} // namespace qfuse::text
