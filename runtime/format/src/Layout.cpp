//===- Layout.cpp - #qf.layout text and the repack into kernel layouts ----===//
//
// Text and verification mirror LayoutAttr::parse/print/verify in
// lib/Dialect/QF/IR/QFAttrs.cpp; the byte order is the one documented in
// Layout.h.
//
//===----------------------------------------------------------------------===//

#include "qfuse/format/Layout.h"

#include <cctype>

namespace qfuse::format {
namespace {

bool fail(std::string &error, const std::string &message) {
  error = message;
  return false;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
    s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
    s.remove_suffix(1);
  return s;
}

/// "key = value" with a decimal value.
bool parseIntegerEntry(std::string_view entry, std::string &key,
                       int64_t &value, bool &hasValue) {
  size_t eq = entry.find('=');
  key = std::string(trim(entry.substr(0, eq)));
  hasValue = eq != std::string_view::npos;
  if (!hasValue)
    return true;
  std::string_view text = trim(entry.substr(eq + 1));
  bool negative = !text.empty() && text.front() == '-';
  if (negative)
    text.remove_prefix(1);
  if (text.empty() || text.size() > 18)
    return false;
  value = 0;
  for (char c : text) {
    if (!std::isdigit(static_cast<unsigned char>(c)))
      return false;
    value = value * 10 + (c - '0');
  }
  value = negative ? -value : value;
  return true;
}

/// Whether `layout` is one repack() knows for `enc`, and why not.
bool checkRepackable(const Encoding &enc, const Layout &layout, int64_t n,
                     int64_t k, std::string &error) {
  if (!validate(enc, n, k, error) || !verifyLayout(layout, error))
    return false;
  if (layout.isRowMajor())
    return true;
  if (k % layout.tileK != 0)
    return fail(error, "tiled layout needs tile_k to divide K; got tile_k = " +
                           std::to_string(layout.tileK) +
                           ", K = " + std::to_string(k));
  if (codeBits(enc) != 4 || layout.tileN != 1 || layout.interleave != 1)
    return fail(error, "the byte order of <" + printLayout(layout) +
                           "> is not defined for <" + printEncoding(enc) +
                           ">: tiled layouts are defined for 4-bit codes with "
                           "tile_n = 1 and interleave = 1");
  if (rowBytes(enc, k) % 4 != 0 || (layout.tileK * 4) % 32 != 0)
    return fail(error, "the tiled 4-bit layout reorders whole 32-bit words; "
                       "a row of " +
                           std::to_string(rowBytes(enc, k)) +
                           " bytes or tile_k = " + std::to_string(layout.tileK) +
                           " is not whole words");
  return true;
}

/// Applies the nibble permutation (or its inverse) to every 32-bit word.
void permuteWords(std::vector<uint8_t> &bytes, bool toTiled) {
  for (size_t w = 0; w + 4 <= bytes.size(); w += 4) {
    uint32_t in = uint32_t(bytes[w]) | uint32_t(bytes[w + 1]) << 8 |
                  uint32_t(bytes[w + 2]) << 16 | uint32_t(bytes[w + 3]) << 24;
    uint32_t out = 0;
    for (int slot = 0; slot < 8; ++slot) {
      int element = kNibbleOrder[slot];
      if (toTiled) // slot <- element
        out |= ((in >> (4 * element)) & 0xF) << (4 * slot);
      else // element <- slot
        out |= ((in >> (4 * slot)) & 0xF) << (4 * element);
    }
    for (int b = 0; b < 4; ++b)
      bytes[w + b] = uint8_t(out >> (8 * b));
  }
}

bool convert(const Encoding &enc, const Layout &layout, const TensorMap &in,
             int64_t n, int64_t k, TensorMap &out, std::string &error,
             bool toTiled) {
  if (!checkRepackable(enc, layout, n, k, error) ||
      !checkComponents(enc, in, n, k, error))
    return false;
  TensorMap result = in;
  if (!layout.isRowMajor())
    permuteWords(result[kCodes].data, toTiled);
  out = std::move(result);
  return true;
}

} // namespace

bool verifyLayout(const Layout &layout, std::string &error) {
  if (layout.isRowMajor()) {
    if (layout.tileN != 0 || layout.tileK != 0 || layout.interleave != 0)
      return fail(error, "row_major layout takes no tile_n, tile_k or "
                         "interleave");
    return true;
  }
  if (layout.tileN <= 0 || layout.tileK <= 0)
    return fail(error, "tiled layout needs positive tile_n and tile_k, got " +
                           std::to_string(layout.tileN) + " and " +
                           std::to_string(layout.tileK));
  if (layout.interleave <= 0 || layout.tileN % layout.interleave != 0)
    return fail(error, "interleave must be positive and divide tile_n = " +
                           std::to_string(layout.tileN) + ", got " +
                           std::to_string(layout.interleave));
  return true;
}

bool parseLayout(std::string_view text, Layout &layout, std::string &error) {
  text = trim(text);
  constexpr std::string_view kPrefix = "#qf.layout<";
  if (text.substr(0, kPrefix.size()) == kPrefix && text.back() == '>')
    text = trim(text.substr(kPrefix.size(), text.size() - kPrefix.size() - 1));
  size_t comma = text.find(',');
  std::string kind(trim(text.substr(0, comma)));
  Layout result;
  if (kind == "row_major") {
    result.kind = LayoutKind::RowMajor;
  } else if (kind == "tiled") {
    result.kind = LayoutKind::Tiled;
    result.interleave = 1;
  } else {
    return fail(error, "unknown layout '" + kind +
                           "'; expected 'row_major' or 'tiled'");
  }
  std::vector<std::string> seen;
  while (comma != std::string_view::npos) {
    text = text.substr(comma + 1);
    comma = text.find(',');
    std::string key;
    int64_t value = 0;
    bool hasValue = false;
    if (!parseIntegerEntry(text.substr(0, comma), key, value, hasValue))
      return fail(error, "expected an integer value for '" + key + "'");
    for (const std::string &s : seen)
      if (s == key)
        return fail(error, "duplicate entry '" + key + "'");
    seen.push_back(key);
    int64_t *field = key == "tile_n"       ? &result.tileN
                     : key == "tile_k"     ? &result.tileK
                     : key == "interleave" ? &result.interleave
                                           : nullptr;
    if (!field)
      return fail(error, "unknown layout entry '" + key +
                             "'; expected tile_n, tile_k or interleave");
    if (!hasValue)
      return fail(error, "expected '=' after '" + key + "'");
    *field = value;
  }
  if (!verifyLayout(result, error))
    return false;
  layout = result;
  return true;
}

std::string printLayout(const Layout &layout) {
  if (layout.isRowMajor())
    return "row_major";
  std::string text = "tiled, tile_n = " + std::to_string(layout.tileN) +
                     ", tile_k = " + std::to_string(layout.tileK);
  if (layout.interleave != 1)
    text += ", interleave = " + std::to_string(layout.interleave);
  return text;
}

bool repack(const Encoding &enc, const Layout &layout,
            const TensorMap &rowMajor, int64_t n, int64_t k, TensorMap &out,
            std::string &error) {
  return convert(enc, layout, rowMajor, n, k, out, error, /*toTiled=*/true);
}

bool unrepack(const Encoding &enc, const Layout &layout,
              const TensorMap &packed, int64_t n, int64_t k,
              TensorMap &rowMajor, std::string &error) {
  return convert(enc, layout, packed, n, k, rowMajor, error,
                 /*toTiled=*/false);
}

} // namespace qfuse::format
