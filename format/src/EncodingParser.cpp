//===- EncodingParser.cpp - text of #qf.enc<...> without MLIR -------------===//
//
// A small recursive-descent parser for the body of `#qf.enc<...>`, following
// EncodingAttr::parse in lib/Dialect/QF/IR/QFAttrs.cpp: the element format,
// then `key [= value]` entries in any order, then
// the same verification. A key may appear once; 'group' and 'per_channel'
// exclude each other. Syntax errors name the column; verifier errors are the
// dialect's messages verbatim.
//
//===----------------------------------------------------------------------===//

#include "qfuse/format/Encoding.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace qfuse::format {
namespace {

/// Tables longer than any codebook (2^8) are certainly wrong; the cap keeps
/// a typo like tensor<100000000xf16> from allocating gigabytes.
constexpr int64_t kMaxTableValues = 1 << 16;

bool isIdStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool isIdChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' ||
         c == '.';
}

class Parser {
public:
  Parser(std::string_view text, std::string &error) : text(text), error(error) {}

  bool parse(Encoding &enc);

private:
  // Lexing -----------------------------------------------------------------
  void skipSpace() {
    while (pos < text.size() && std::isspace(static_cast<unsigned char>(text[pos])))
      ++pos;
  }
  bool atEnd() {
    skipSpace();
    return pos >= text.size();
  }
  bool consumeIf(char c) {
    skipSpace();
    if (pos < text.size() && text[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  }
  bool expect(char c, const char *after) {
    if (consumeIf(c))
      return true;
    return syntaxError(std::string("expected '") + c + "'" + after);
  }
  bool syntaxError(const std::string &message) {
    skipSpace();
    error = message + " at column " + std::to_string(pos + 1);
    return false;
  }

  bool parseKeyword(std::string &out, const char *what);
  bool parseInteger(int64_t &out);
  bool parseString(std::string &out);
  bool parseFloatLiteral(double &out, bool &isBitPattern, uint64_t &bits);

  // Grammar ----------------------------------------------------------------
  bool parseEntry(const std::string &key, size_t keyPos, Encoding &enc,
                  int64_t &bits);
  bool parseScalarType(ScalarType &out, bool forTable);
  bool parseTable(Encoding &enc);
  bool parseDenseElements(std::vector<double> &values,
                          std::vector<uint64_t> &bitValues,
                          std::vector<bool> &isBits, std::string &hex,
                          bool &splat);
  bool parseTensorType(std::vector<int64_t> &shape, ScalarType &type);

  std::string_view text;
  std::string &error;
  size_t pos = 0;
};

bool Parser::parseKeyword(std::string &out, const char *what) {
  skipSpace();
  size_t start = pos;
  if (pos >= text.size() || !isIdStart(text[pos]))
    return syntaxError(std::string("expected ") + what);
  while (pos < text.size() && isIdChar(text[pos]))
    ++pos;
  out.assign(text.substr(start, pos - start));
  return true;
}

bool Parser::parseInteger(int64_t &out) {
  skipSpace();
  bool negative = consumeIf('-');
  skipSpace();
  size_t start = pos;
  int base = 10;
  if (text.substr(pos, 2) == "0x" || text.substr(pos, 2) == "0X") {
    base = 16;
    pos += 2;
    start = pos;
  }
  uint64_t value = 0;
  while (pos < text.size() &&
         (base == 16 ? std::isxdigit(static_cast<unsigned char>(text[pos]))
                     : std::isdigit(static_cast<unsigned char>(text[pos])))) {
    char c = text[pos];
    unsigned digit = std::isdigit(static_cast<unsigned char>(c))
                         ? unsigned(c - '0')
                         : unsigned(std::tolower(c) - 'a' + 10);
    if (value > (uint64_t(std::numeric_limits<int64_t>::max()) - digit) / base)
      return syntaxError("integer out of range");
    value = value * base + digit;
    ++pos;
  }
  if (pos == start)
    return syntaxError("expected an integer");
  out = negative ? -int64_t(value) : int64_t(value);
  return true;
}

/// A string literal with MLIR's escapes: \" \\ \n \t and \XX (two hex digits).
bool Parser::parseString(std::string &out) {
  if (!expect('"', " to start a string"))
    return false;
  out.clear();
  while (pos < text.size() && text[pos] != '"') {
    char c = text[pos++];
    if (c != '\\') {
      out += c;
      continue;
    }
    if (pos >= text.size())
      break;
    char e = text[pos++];
    if (e == '"' || e == '\\') {
      out += e;
    } else if (e == 'n') {
      out += '\n';
    } else if (e == 't') {
      out += '\t';
    } else if (pos < text.size() && std::isxdigit(static_cast<unsigned char>(e)) &&
               std::isxdigit(static_cast<unsigned char>(text[pos]))) {
      char hex[3] = {e, text[pos++], 0};
      out += static_cast<char>(std::strtoul(hex, nullptr, 16));
    } else {
      --pos;
      return syntaxError("unknown escape in string literal");
    }
  }
  if (pos >= text.size())
    return syntaxError("unterminated string literal");
  ++pos; // closing quote
  return true;
}

/// A float literal as MLIR's lexer takes it: [-]digits.digits[e[+-]digits]
/// (the '.' is required), or a 0x hex integer that is the value's bit
/// pattern in the element type.
bool Parser::parseFloatLiteral(double &out, bool &isBitPattern,
                               uint64_t &bits) {
  skipSpace();
  size_t start = pos;
  bool negative = consumeIf('-');
  skipSpace();
  if (text.substr(pos, 2) == "0x" || text.substr(pos, 2) == "0X") {
    if (negative)
      return syntaxError("hexadecimal float literal should not have a "
                         "leading minus");
    int64_t value;
    if (!parseInteger(value))
      return false;
    isBitPattern = true;
    bits = uint64_t(value);
    return true;
  }
  size_t digits = pos;
  while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos])))
    ++pos;
  if (pos == digits)
    return syntaxError("expected a floating point literal");
  if (pos >= text.size() || text[pos] != '.')
    return syntaxError("unexpected decimal integer literal for a floating "
                       "point value; add a trailing dot to make the literal "
                       "a float");
  ++pos;
  while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos])))
    ++pos;
  if (pos < text.size() && (text[pos] == 'e' || text[pos] == 'E')) {
    size_t save = pos++;
    if (pos < text.size() && (text[pos] == '+' || text[pos] == '-'))
      ++pos;
    size_t expDigits = pos;
    while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos])))
      ++pos;
    if (pos == expDigits)
      pos = save; // "1.0e" is 1.0 followed by a keyword; let the caller fail
  }
  std::string literal(text.substr(start, pos - start));
  literal.erase(std::remove_if(literal.begin(), literal.end(),
                               [](char c) { return std::isspace(static_cast<unsigned char>(c)); }),
                literal.end());
  out = std::strtod(literal.c_str(), nullptr);
  isBitPattern = false;
  return true;
}

bool Parser::parseScalarType(ScalarType &out, bool forTable) {
  size_t start = (skipSpace(), pos);
  std::string name;
  if (!parseKeyword(name, "a type"))
    return false;
  static const struct {
    const char *name;
    ScalarType type;
  } kTypes[] = {{"f16", ScalarType::F16},
                {"bf16", ScalarType::BF16},
                {"f32", ScalarType::F32},
                {"f8E4M3FN", ScalarType::F8E4M3FN},
                {"f8E8M0FNU", ScalarType::F8E8M0FNU}};
  for (const auto &t : kTypes)
    if (name == t.name) {
      out = t.type;
      return true;
    }
  pos = start;
  if (forTable)
    error = "codebook table values must be f16 or f32, got '" + name + "'";
  else
    error = "scale type must be f16, bf16, f32, f8E4M3FN or f8E8M0FNU, got '" +
            name + "'";
  return false;
}

/// `tensor<D0xD1x...xT>`: the dimension list is one token run in MLIR, so it
/// is split here on 'x' rather than lexed.
bool Parser::parseTensorType(std::vector<int64_t> &shape, ScalarType &type) {
  std::string keyword;
  if (!parseKeyword(keyword, "'tensor'"))
    return false;
  if (keyword != "tensor")
    return syntaxError("codebook table must be a dense floating-point tensor "
                       "(dense<[...]> : tensor<Nxf16>) or a name (\"name\" : "
                       "f16)");
  if (!expect('<', " after 'tensor'"))
    return false;
  shape.clear();
  for (;;) {
    skipSpace();
    size_t start = pos;
    while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos])))
      ++pos;
    if (pos == start)
      break; // no more dimensions: the element type follows
    int64_t dim = std::strtoll(std::string(text.substr(start, pos - start)).c_str(),
                               nullptr, 10);
    shape.push_back(dim);
    if (pos >= text.size() || text[pos] != 'x')
      return syntaxError("expected 'x' in a tensor shape");
    ++pos;
  }
  if (!parseScalarType(type, /*forTable=*/true))
    return false;
  return expect('>', " to end the tensor type");
}

/// The part between `dense<` and `>`: a (nested) list, one splat value, or
/// a "0x..." hex string of the raw little-endian data.
bool Parser::parseDenseElements(std::vector<double> &values,
                                std::vector<uint64_t> &bitValues,
                                std::vector<bool> &isBits, std::string &hex,
                                bool &splat) {
  skipSpace();
  splat = false;
  if (pos < text.size() && text[pos] == '"') {
    std::string data;
    if (!parseString(data))
      return false;
    if (data.size() < 2 || data.compare(0, 2, "0x") != 0 ||
        data.size() % 2 != 0)
      return syntaxError("expected a \"0x...\" hex string of table data");
    hex = data.substr(2);
    for (char c : hex)
      if (!std::isxdigit(static_cast<unsigned char>(c)))
        return syntaxError("invalid hex digit in table data");
    return true;
  }
  auto parseOne = [&]() {
    double value = 0;
    bool isBitPattern = false;
    uint64_t bits = 0;
    if (!parseFloatLiteral(value, isBitPattern, bits))
      return false;
    values.push_back(value);
    bitValues.push_back(bits);
    isBits.push_back(isBitPattern);
    return true;
  };
  if (!consumeIf('[')) {
    splat = true;
    return parseOne();
  }
  // Nested lists flatten in row-major order; the verifier checks the shape.
  int depth = 1;
  bool needValue = true;
  while (depth > 0) {
    if (consumeIf('[')) {
      ++depth;
      needValue = true;
      continue;
    }
    if (consumeIf(']')) {
      --depth;
      needValue = false;
      continue;
    }
    if (!needValue) {
      if (!expect(',', " between table values"))
        return false;
      needValue = true;
      continue;
    }
    if (static_cast<int64_t>(values.size()) >= kMaxTableValues)
      return syntaxError("codebook table too large");
    if (!parseOne())
      return false;
    needValue = false;
  }
  return true;
}

bool Parser::parseTable(Encoding &enc) {
  skipSpace();
  if (pos < text.size() && text[pos] == '"') {
    std::string name;
    if (!parseString(name) || !expect(':', " after the table name"))
      return false;
    ScalarType type;
    if (!parseScalarType(type, /*forTable=*/true))
      return false;
    enc.tableName = name;
    enc.tableType = type;
    enc.hasInlineTable = false;
    enc.table.clear();
    enc.tableShape.clear();
    return true;
  }
  std::string keyword;
  size_t start = pos;
  if (!parseKeyword(keyword, "'dense' or a table name") || keyword != "dense") {
    pos = start;
    return syntaxError("codebook table must be a dense floating-point tensor "
                       "(dense<[...]> : tensor<Nxf16>) or a name (\"name\" : "
                       "f16)");
  }
  std::vector<double> values;
  std::vector<uint64_t> bitValues;
  std::vector<bool> isBits;
  std::string hex;
  bool splat = false;
  if (!expect('<', " after 'dense'") ||
      !parseDenseElements(values, bitValues, isBits, hex, splat) ||
      !expect('>', " to end the dense table") ||
      !expect(':', " before the table type"))
    return false;
  std::vector<int64_t> shape;
  ScalarType type;
  if (!parseTensorType(shape, type))
    return false;

  int64_t count = 1;
  for (int64_t d : shape) {
    if (d > kMaxTableValues || count * d > kMaxTableValues)
      return syntaxError("codebook table too large");
    count *= d;
  }
  const unsigned bytes = scalarTypeBytes(type);
  // Each literal becomes a value of the table type, rounded once; a hex
  // literal is the value's bit pattern.
  auto convert = [&](bool isBitPattern, uint64_t b, double value) -> float {
    if (!isBitPattern) {
      if (type == ScalarType::F16)
        return halfToFloat(doubleToHalf(value));
      return roundToScalarType(static_cast<float>(value), type);
    }
    switch (type) {
    case ScalarType::F16:
      return halfToFloat(uint16_t(b));
    case ScalarType::BF16:
      return bfloat16ToFloat(uint16_t(b));
    case ScalarType::F8E4M3FN:
      return decodeE4M3(uint8_t(b));
    case ScalarType::F8E8M0FNU:
      return decodeE8M0(uint8_t(b));
    case ScalarType::F32:
    case ScalarType::None:
      break;
    }
    uint32_t b32 = uint32_t(b);
    float f;
    std::memcpy(&f, &b32, sizeof(f));
    return f;
  };

  enc.table.clear();
  if (!hex.empty()) {
    if (int64_t(hex.size() / 2) != count * int64_t(bytes))
      return syntaxError("hex table data of " + std::to_string(hex.size() / 2) +
                         " bytes does not fill its " + std::to_string(count) +
                         " values");
    for (int64_t i = 0; i < count; ++i) {
      uint64_t b = 0;
      for (unsigned j = 0; j < bytes; ++j) { // little-endian
        std::string byte = hex.substr(2 * (i * bytes + j), 2);
        b |= uint64_t(std::strtoul(byte.c_str(), nullptr, 16)) << (8 * j);
      }
      enc.table.push_back(convert(true, b, 0.0));
    }
  } else if (splat) {
    enc.table.assign(size_t(count), convert(isBits[0], bitValues[0], values[0]));
  } else {
    if (int64_t(values.size()) != count)
      return syntaxError("table has " + std::to_string(values.size()) +
                         " values but its type holds " + std::to_string(count));
    for (size_t i = 0; i < values.size(); ++i)
      enc.table.push_back(convert(isBits[i], bitValues[i], values[i]));
  }
  enc.hasInlineTable = true;
  enc.tableShape = shape;
  enc.tableType = type;
  enc.tableName.clear();
  return true;
}

bool Parser::parseEntry(const std::string &key, size_t keyPos, Encoding &enc,
                        int64_t &bits) {
  if (key == "bits")
    return expect('=', " after 'bits'") && parseInteger(bits);
  if (key == "group" || key == "per_channel") {
    if (enc.groupSize != Encoding::kGroupUnset) {
      pos = keyPos;
      return syntaxError("'group' and 'per_channel' are exclusive; give one "
                         "granularity");
    }
    if (key == "per_channel") {
      enc.groupSize = Encoding::kPerChannel;
      return true;
    }
    // 0 and -1 are the per-channel and unset markers: reject them here,
    // before they could pass for either.
    if (!expect('=', " after 'group'"))
      return false;
    size_t valuePos = (skipSpace(), pos);
    int64_t group;
    if (!parseInteger(group))
      return false;
    if (group <= 0) {
      pos = valuePos;
      return syntaxError("group size must be at least 2 (or per_channel), "
                         "got " +
                         std::to_string(group));
    }
    enc.groupSize = group;
    return true;
  }
  if (key == "scale")
    return expect('=', " after 'scale'") &&
           parseScalarType(enc.scaleType, /*forTable=*/false);
  if (key == "global_scale") {
    enc.globalScale = true;
    return true;
  }
  if (key == "act_order") {
    enc.actOrder = true;
    return true;
  }
  if (key == "zero") {
    std::string kind;
    if (!expect('=', " after 'zero'") || !parseKeyword(kind, "'int' or 'float'"))
      return false;
    if (kind == "int")
      enc.zeroPoint = ZeroPointKind::Int;
    else if (kind == "float")
      enc.zeroPoint = ZeroPointKind::Float;
    else
      return syntaxError("unknown zero point kind '" + kind +
                         "'; expected 'int' or 'float'");
    return true;
  }
  if (key == "sparse") {
    int64_t kept = 0, of = 0;
    if (!expect('=', " after 'sparse'") || !parseInteger(kept) ||
        !expect(':', " in the sparsity pattern") || !parseInteger(of))
      return false;
    if (kept != 2 || of != 4)
      return syntaxError("unsupported sparsity " + std::to_string(kept) + ":" +
                         std::to_string(of) +
                         "; only 2:4 structured sparsity is supported");
    enc.sparsity = Sparsity::TwoFour;
    return true;
  }
  if (key == "table")
    return expect('=', " after 'table'") && parseTable(enc);
  pos = keyPos;
  return syntaxError("unknown encoding entry '" + key +
                     "'; expected bits, table, group, per_channel, scale, "
                     "global_scale, zero, act_order or sparse");
}

bool Parser::parse(Encoding &result) {
  Encoding enc;
  std::string formatText;
  if (!parseKeyword(formatText, "an element format"))
    return false;
  static const ElementFormat kFormats[] = {
      ElementFormat::Int4,     ElementFormat::UInt4,   ElementFormat::Int8,
      ElementFormat::UInt8,    ElementFormat::FP8E4M3, ElementFormat::FP4E2M1,
      ElementFormat::NF4,      ElementFormat::Codebook, ElementFormat::F16,
      ElementFormat::BF16};
  bool known = false;
  for (ElementFormat f : kFormats)
    if (formatText == formatName(f)) {
      enc.format = f;
      known = true;
    }
  if (!known) {
    error = "unknown element format '" + formatText +
            "'; expected one of int4, uint4, int8, uint8, fp8e4m3, fp4e2m1, "
            "nf4, codebook, f16, bf16";
    return false;
  }

  int64_t bits = 0;
  std::vector<std::string> seen; // a key given twice is an error
  while (consumeIf(',')) {
    std::string key;
    size_t keyPos = (skipSpace(), pos);
    if (!parseKeyword(key, "an encoding entry"))
      return false;
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) {
      pos = keyPos;
      return syntaxError("duplicate entry '" + key + "'");
    }
    seen.push_back(key);
    if (!parseEntry(key, keyPos, enc, bits))
      return false;
  }
  if (!atEnd())
    return syntaxError("expected ',' or the end of the encoding");
  if (bits < 0 || bits > 64) {
    error = "'bits' out of range: " + std::to_string(bits);
    return false;
  }
  enc.indexBits = static_cast<unsigned>(bits);
  if (!verifyEncoding(enc, error))
    return false;
  result = enc;
  return true;
}

} // namespace

bool parseEncoding(std::string_view text, Encoding &enc, std::string &error) {
  // Also take the attribute as written in IR: #qf.enc<...>.
  std::string_view body = text;
  while (!body.empty() && std::isspace(static_cast<unsigned char>(body.front())))
    body.remove_prefix(1);
  while (!body.empty() && std::isspace(static_cast<unsigned char>(body.back())))
    body.remove_suffix(1);
  constexpr std::string_view kPrefix = "#qf.enc<";
  if (body.substr(0, kPrefix.size()) == kPrefix && !body.empty() &&
      body.back() == '>')
    body = body.substr(kPrefix.size(), body.size() - kPrefix.size() - 1);
  return Parser(body, error).parse(enc);
}

} // namespace qfuse::format
