//===- UnicodeData.cpp - Letter/number/space classes and NFC --------------===//
//
// Lookups into the generated UCD tables (UnicodeTables.inc) and the NFC
// algorithm of UAX #15: full canonical decomposition (Hangul syllables
// algorithmically), canonical ordering by combining class, then canonical
// composition of unblocked pairs.
//
//===----------------------------------------------------------------------===//

#include "qfuse/text/Unicode.h"

#include <algorithm>
#include <cstdint>

namespace qfuse::text {
namespace {

enum Category : uint8_t { kLetter, kNumber };
struct CategoryRange {
  char32_t first, last;
  Category category;
};
struct CccRange {
  char32_t first, last;
  uint8_t ccc;
};
struct Decomposition {
  char32_t codePoint, first, second;
};
struct Composition {
  char32_t first, second, composite;
};

#include "UnicodeTables.inc"

template <typename Range, size_t N>
const Range *findRange(const Range (&table)[N], char32_t c) {
  const Range *it = std::upper_bound(
      table, table + N, c,
      [](char32_t value, const Range &r) { return value < r.first; });
  if (it == table)
    return nullptr;
  --it;
  return c <= it->last ? it : nullptr;
}

const CategoryRange *category(char32_t c) {
  return findRange(kCategoryRanges, c);
}

uint8_t combiningClass(char32_t c) {
  if (c < 0x300)
    return 0;
  const CccRange *r = findRange(kCccRanges, c);
  return r ? r->ccc : 0;
}

// Hangul syllable arithmetic (Unicode chapter 3.12).
constexpr char32_t kSBase = 0xAC00, kLBase = 0x1100, kVBase = 0x1161,
                   kTBase = 0x11A7;
constexpr char32_t kLCount = 19, kVCount = 21, kTCount = 28,
                   kNCount = kVCount * kTCount, kSCount = kLCount * kNCount;

void decompose(char32_t c, std::u32string &out) {
  if (c >= kSBase && c < kSBase + kSCount) {
    char32_t s = c - kSBase;
    out.push_back(kLBase + s / kNCount);
    out.push_back(kVBase + (s % kNCount) / kTCount);
    if (s % kTCount)
      out.push_back(kTBase + s % kTCount);
    return;
  }
  const Decomposition *end = std::end(kDecompositions);
  const Decomposition *it = std::lower_bound(
      std::begin(kDecompositions), end, c,
      [](const Decomposition &d, char32_t value) {
        return d.codePoint < value;
      });
  if (it == end || it->codePoint != c) {
    out.push_back(c);
    return;
  }
  decompose(it->first, out);
  if (it->second)
    decompose(it->second, out);
}

/// The primary composite of `a` and `b`, or 0.
char32_t compose(char32_t a, char32_t b) {
  if (a >= kLBase && a < kLBase + kLCount && b >= kVBase &&
      b < kVBase + kVCount)
    return kSBase + ((a - kLBase) * kVCount + (b - kVBase)) * kTCount;
  if (a >= kSBase && a < kSBase + kSCount && (a - kSBase) % kTCount == 0 &&
      b > kTBase && b < kTBase + kTCount)
    return a + (b - kTBase);
  const Composition *end = std::end(kCompositions);
  const Composition *it = std::lower_bound(
      std::begin(kCompositions), end, std::make_pair(a, b),
      [](const Composition &p, const std::pair<char32_t, char32_t> &key) {
        return std::make_pair(p.first, p.second) < key;
      });
  return it != end && it->first == a && it->second == b ? it->composite : 0;
}

} // namespace

bool isLetter(char32_t c) {
  if (c < 0x80)
    return (c | 0x20) >= 'a' && (c | 0x20) <= 'z';
  const CategoryRange *r = category(c);
  return r && r->category == kLetter;
}

bool isNumber(char32_t c) {
  if (c < 0x80)
    return c >= '0' && c <= '9';
  const CategoryRange *r = category(c);
  return r && r->category == kNumber;
}

bool isSpace(char32_t c) {
  switch (c) {
  case 0x09: case 0x0A: case 0x0B: case 0x0C: case 0x0D: case 0x20:
  case 0xA0: case 0x1680: case 0x2028: case 0x2029: case 0x202F:
  case 0x205F: case 0x3000: case 0xFEFF:
    return true;
  default:
    return c >= 0x2000 && c <= 0x200A;
  }
}

std::u32string toNfc(std::u32string_view text) {
  // Below U+0300 nothing combines, so such text is already NFC.
  if (std::all_of(text.begin(), text.end(),
                  [](char32_t c) { return c < 0x300; }))
    return std::u32string(text);

  std::u32string d;
  d.reserve(text.size() + 8);
  for (char32_t c : text)
    decompose(c, d);

  // Canonical ordering: stable sort of each run of non-starters.
  for (size_t i = 0; i < d.size();) {
    if (combiningClass(d[i]) == 0) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < d.size() && combiningClass(d[j]) != 0)
      ++j;
    std::stable_sort(d.begin() + i, d.begin() + j,
                     [](char32_t a, char32_t b) {
                       return combiningClass(a) < combiningClass(b);
                     });
    i = j;
  }

  // Canonical composition.
  std::u32string out;
  out.reserve(d.size());
  size_t starter = std::u32string::npos; // index in `out`
  int lastClass = -1; // class of the last character kept after the starter
  for (char32_t c : d) {
    int cc = combiningClass(c);
    if (starter != std::u32string::npos) {
      bool blocked = lastClass != -1 && (lastClass == 0 || lastClass >= cc);
      if (!blocked) {
        if (char32_t composite = compose(out[starter], c)) {
          out[starter] = composite;
          continue;
        }
      }
    }
    if (cc == 0) {
      starter = out.size();
      lastClass = -1;
    } else {
      lastClass = cc;
    }
    out.push_back(c);
  }
  return out;
}

} // namespace qfuse::text
