//===- FloatText.cpp - float literals exactly as MLIR prints them ---------===//
//
// A transcription of IEEEFloat::toString (llvm/lib/Support/APFloat.cpp) over
// a minimal unsigned big integer: the exact value N * 2^e becomes the
// decimal integer N * 5^-e (or N << e), which is first cut to the digits
// the format precision needs by integer division (truncating), then rounded
// half-up to the precision, then laid out.
//
//===----------------------------------------------------------------------===//

#include "FloatText.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

namespace qfuse::format::detail {
namespace {

/// Little-endian 32-bit limbs; only what toString needs.
class BigUInt {
public:
  explicit BigUInt(uint64_t v) {
    limbs = {uint32_t(v), uint32_t(v >> 32)};
    trim();
  }

  bool isZero() const { return limbs.empty(); }

  unsigned activeBits() const {
    if (limbs.empty())
      return 0;
    unsigned top = 32;
    while (!(limbs.back() >> (top - 1)))
      --top;
    return unsigned(32 * (limbs.size() - 1)) + top;
  }

  void multiplySmall(uint32_t factor) {
    uint64_t carry = 0;
    for (uint32_t &limb : limbs) {
      uint64_t v = uint64_t(limb) * factor + carry;
      limb = uint32_t(v);
      carry = v >> 32;
    }
    if (carry)
      limbs.push_back(uint32_t(carry));
  }

  void shiftLeft(unsigned bits) {
    for (; bits >= 31; bits -= 31)
      multiplySmall(1u << 31);
    if (bits)
      multiplySmall(1u << bits);
  }

  /// Divides by `divisor` in place and returns the remainder.
  uint32_t divideSmall(uint32_t divisor) {
    uint64_t rest = 0;
    for (size_t i = limbs.size(); i-- > 0;) {
      uint64_t v = (rest << 32) | limbs[i];
      limbs[i] = uint32_t(v / divisor);
      rest = v % divisor;
    }
    trim();
    return uint32_t(rest);
  }

private:
  void trim() {
    while (!limbs.empty() && limbs.back() == 0)
      limbs.pop_back();
  }
  std::vector<uint32_t> limbs;
};

/// The integer-stage AdjustToPrecision: drops (truncates) decimal digits the
/// precision cannot need, judged by bit length.
void adjustToPrecision(BigUInt &significand, int &exp,
                       unsigned formatPrecision) {
  unsigned bits = significand.activeBits();
  unsigned bitsRequired = (formatPrecision * 196 + 58) / 59;
  if (bits <= bitsRequired)
    return;
  unsigned tensRemovable = (bits - bitsRequired) * 59 / 196;
  exp += int(tensRemovable);
  for (unsigned i = 0; i < tensRemovable; ++i)
    significand.divideSmall(10);
}

/// The digit-stage AdjustToPrecision: round half up to formatPrecision
/// digits. `buffer` holds digits least significant first.
void adjustToPrecision(std::string &buffer, int &exp,
                       unsigned formatPrecision) {
  unsigned n = unsigned(buffer.size());
  if (n <= formatPrecision)
    return;
  unsigned firstSignificant = n - formatPrecision;
  if (buffer[firstSignificant - 1] < '5') {
    while (firstSignificant < n && buffer[firstSignificant] == '0')
      ++firstSignificant;
    exp += int(firstSignificant);
    buffer.erase(0, firstSignificant);
    return;
  }
  for (unsigned i = firstSignificant; i != n; ++i) {
    if (buffer[i] == '9') {
      ++firstSignificant;
    } else {
      ++buffer[i];
      break;
    }
  }
  if (firstSignificant == n) { // carried through every digit
    exp += int(firstSignificant);
    buffer = "1";
    return;
  }
  exp += int(firstSignificant);
  buffer.erase(0, firstSignificant);
}

} // namespace

std::string apfloatToString(double value, unsigned precisionBits,
                            unsigned formatPrecision,
                            unsigned formatMaxPadding, bool truncateZero) {
  std::string str;
  if (std::signbit(value))
    str += '-';
  value = std::fabs(value);
  if (value == 0) {
    if (!formatMaxPadding) {
      if (truncateZero) {
        str += "0.0E+0";
      } else {
        str += "0.0";
        if (formatPrecision > 1)
          str.append(formatPrecision - 1, '0');
        str += "e+00";
      }
    } else {
      str += '0';
    }
    return str;
  }

  // value = significand * 2^exp with an odd significand.
  int e2;
  double m = std::frexp(value, &e2);
  uint64_t significand = uint64_t(std::ldexp(m, 53));
  int exp = e2 - 53;
  while (!(significand & 1)) {
    significand >>= 1;
    ++exp;
  }
  if (!formatPrecision) // Steele & White: enough digits to round-trip
    formatPrecision = 2 + precisionBits * 59 / 196;

  BigUInt decimal(significand);
  if (exp > 0) {
    decimal.shiftLeft(unsigned(exp));
    exp = 0;
  } else if (exp < 0) { // N * 2^-t == N * 5^t * 10^-t
    for (int t = -exp; t > 0; --t)
      decimal.multiplySmall(5);
  }
  adjustToPrecision(decimal, exp, formatPrecision);

  std::string buffer; // least significant digit first
  bool inTrail = true;
  while (!decimal.isZero()) {
    char digit = char('0' + decimal.divideSmall(10));
    if (inTrail && digit == '0') {
      ++exp;
    } else {
      buffer += digit;
      inTrail = false;
    }
  }
  adjustToPrecision(buffer, exp, formatPrecision);

  const unsigned nDigits = unsigned(buffer.size());
  bool scientific;
  if (!formatMaxPadding) {
    scientific = true;
  } else if (exp >= 0) {
    scientific = unsigned(exp) > formatMaxPadding ||
                 nDigits + unsigned(exp) > formatPrecision;
  } else {
    int msd = exp + int(nDigits - 1);
    scientific = msd < 0 && unsigned(-msd) > formatMaxPadding;
  }

  if (scientific) {
    exp += int(nDigits - 1);
    str += buffer[nDigits - 1];
    str += '.';
    if (nDigits == 1 && truncateZero)
      str += '0';
    else
      for (unsigned i = 1; i != nDigits; ++i)
        str += buffer[nDigits - 1 - i];
    if (!truncateZero && formatPrecision > nDigits - 1)
      str.append(formatPrecision - nDigits + 1, '0');
    str += truncateZero ? 'E' : 'e';
    str += exp >= 0 ? '+' : '-';
    std::string expDigits = std::to_string(exp < 0 ? -exp : exp);
    if (!truncateZero && expDigits.size() < 2)
      expDigits = "0" + expDigits;
    return str + expDigits;
  }
  if (exp >= 0) {
    for (unsigned i = 0; i != nDigits; ++i)
      str += buffer[nDigits - 1 - i];
    return str.append(unsigned(exp), '0');
  }
  int wholeDigits = exp + int(nDigits);
  unsigned i = 0;
  if (wholeDigits > 0) {
    for (; i != unsigned(wholeDigits); ++i)
      str += buffer[nDigits - 1 - i];
    str += '.';
  } else {
    str += "0.";
    str.append(unsigned(-wholeDigits), '0');
  }
  for (; i != nDigits; ++i)
    str += buffer[nDigits - 1 - i];
  return str;
}

std::string mlirFloatText(double value, unsigned precisionBits, uint64_t bits,
                          bool (*readsBack)(const char *text, uint64_t bits)) {
  if (std::isfinite(value)) {
    std::string text = apfloatToString(value, precisionBits, 6, 0, false);
    if (readsBack(text.c_str(), bits))
      return text;
    text = apfloatToString(value, precisionBits, 0, 3, true);
    if (text.find('.') != std::string::npos)
      return text;
  }
  char hex[24];
  std::snprintf(hex, sizeof(hex), "0x%llX", (unsigned long long)bits);
  return hex;
}

} // namespace qfuse::format::detail
