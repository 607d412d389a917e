//===- Encoding.cpp - #qf.enc queries, verification and printing ----------===//
//
// The one rule set for encodings: the dialect's EncodingAttr and WeightType
// verifiers call verifyEncoding / validate (through FormatBridge.h), and the
// runtime applies them to what it reads, so both accept the same encodings
// with the same messages. The text parser is in EncodingParser.cpp.
//
//===----------------------------------------------------------------------===//

#include "qfuse/format/Encoding.h"

#include "FloatText.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <sstream>

namespace qfuse::format {

//===----------------------------------------------------------------------===//
// Names and queries
//===----------------------------------------------------------------------===//

const char *formatName(ElementFormat format) {
  switch (format) {
  case ElementFormat::Int4:
    return "int4";
  case ElementFormat::UInt4:
    return "uint4";
  case ElementFormat::Int8:
    return "int8";
  case ElementFormat::UInt8:
    return "uint8";
  case ElementFormat::FP8E4M3:
    return "fp8e4m3";
  case ElementFormat::FP4E2M1:
    return "fp4e2m1";
  case ElementFormat::NF4:
    return "nf4";
  case ElementFormat::Codebook:
    return "codebook";
  case ElementFormat::F16:
    return "f16";
  case ElementFormat::BF16:
    return "bf16";
  }
  return "?";
}

const char *scalarTypeName(ScalarType type) {
  switch (type) {
  case ScalarType::None:
    return "<<NULL TYPE>>"; // what MLIR prints for a missing type
  case ScalarType::F16:
    return "f16";
  case ScalarType::BF16:
    return "bf16";
  case ScalarType::F32:
    return "f32";
  case ScalarType::F8E4M3FN:
    return "f8E4M3FN";
  case ScalarType::F8E8M0FNU:
    return "f8E8M0FNU";
  }
  return "?";
}

const char *zeroPointName(ZeroPointKind kind) {
  switch (kind) {
  case ZeroPointKind::None:
    return "none";
  case ZeroPointKind::Int:
    return "int";
  case ZeroPointKind::Float:
    return "float";
  }
  return "?";
}

unsigned scalarTypeBytes(ScalarType type) {
  switch (type) {
  case ScalarType::None:
    return 0;
  case ScalarType::F16:
  case ScalarType::BF16:
    return 2;
  case ScalarType::F32:
    return 4;
  case ScalarType::F8E4M3FN:
  case ScalarType::F8E8M0FNU:
    return 1;
  }
  return 0;
}

float roundToScalarType(float value, ScalarType type) {
  switch (type) {
  case ScalarType::F16:
    return halfToFloat(floatToHalf(value));
  case ScalarType::BF16:
    return bfloat16ToFloat(floatToBFloat16(value));
  case ScalarType::F8E4M3FN:
    return decodeE4M3(encodeE4M3(value));
  case ScalarType::F8E8M0FNU:
    return decodeE8M0(encodeE8M0Ceil(value));
  case ScalarType::None:
  case ScalarType::F32:
    return value;
  }
  return value;
}

bool Encoding::isQuantized() const {
  return format != ElementFormat::F16 && format != ElementFormat::BF16;
}

bool Encoding::operator==(const Encoding &o) const {
  if (table.size() != o.table.size() ||
      (!table.empty() &&
       std::memcmp(table.data(), o.table.data(), table.size() * sizeof(float))))
    return false;
  return format == o.format && indexBits == o.indexBits &&
         hasInlineTable == o.hasInlineTable && tableShape == o.tableShape &&
         tableName == o.tableName && tableType == o.tableType &&
         groupSize == o.groupSize && scaleType == o.scaleType &&
         globalScale == o.globalScale && zeroPoint == o.zeroPoint &&
         actOrder == o.actOrder && sparsity == o.sparsity;
}

unsigned codeBits(const Encoding &enc) {
  return codeBits(enc.format, enc.indexBits);
}

unsigned codeBits(ElementFormat format, unsigned indexBits) {
  switch (format) {
  case ElementFormat::Int4:
  case ElementFormat::UInt4:
  case ElementFormat::FP4E2M1:
  case ElementFormat::NF4:
    return 4;
  case ElementFormat::Int8:
  case ElementFormat::UInt8:
  case ElementFormat::FP8E4M3:
    return 8;
  case ElementFormat::Codebook:
    return indexBits;
  case ElementFormat::F16:
  case ElementFormat::BF16:
    return 16;
  }
  return 0;
}

int64_t numGroups(const Encoding &enc, int64_t k) {
  if (!enc.isQuantized())
    return 0;
  if (enc.isPerChannel())
    return 1;
  if (enc.groupSize <= 0)
    return 0; // unset or invalid: verification reports it
  return (k + enc.groupSize - 1) / enc.groupSize;
}

int64_t storedPerRow(const Encoding &enc, int64_t k) {
  return enc.isSparse24() ? k / 2 : k;
}

std::vector<float> codebookValues(const Encoding &enc) {
  if (enc.format == ElementFormat::NF4)
    return std::vector<float>(std::begin(kNF4Table), std::end(kNF4Table));
  if (enc.format == ElementFormat::Codebook && enc.hasInlineTable)
    return enc.table;
  return {};
}

//===----------------------------------------------------------------------===//
// Verification (EncodingAttr::verify, WeightType::verify)
//===----------------------------------------------------------------------===//

namespace {

bool fail(std::string &error, const std::string &message) {
  error = message;
  return false;
}

std::string quoted(const std::string &text) { return "'" + text + "'"; }

std::string tensorTypeText(const std::vector<int64_t> &shape, ScalarType t) {
  std::string text = "tensor<";
  for (int64_t d : shape)
    text += std::to_string(d) + "x";
  return text + scalarTypeName(t) + ">";
}

std::string groupText(int64_t group) {
  return group == Encoding::kPerChannel ? std::string("per_channel")
                                        : std::to_string(group);
}

} // namespace

bool verifyEncoding(const Encoding &enc, std::string &error) {
  const std::string name = formatName(enc.format);
  const ElementFormat format = enc.format;
  const bool hasTable = enc.hasInlineTable;
  const bool hasName = !enc.tableName.empty();

  // Codebooks: index width and table agree.
  if (format == ElementFormat::Codebook) {
    if (enc.indexBits < 2 || enc.indexBits > 8)
      return fail(error, "codebook index width must be 2 to 8 bits, got " +
                             std::to_string(enc.indexBits));
    if (!hasTable && !hasName)
      return fail(error, "codebook needs a table: inline 'table = "
                         "dense<[...]> : tensor<Nxf16>' or named 'table = "
                         "\"name\" : f16'");
    if (hasTable && hasName)
      return fail(error, "codebook table given both inline and by name");
    int64_t expected = int64_t(1) << enc.indexBits;
    if (hasTable && (enc.tableShape.size() != 1 ||
                     enc.tableShape[0] != expected ||
                     int64_t(enc.table.size()) != expected))
      return fail(error, "codebook of " + std::to_string(enc.indexBits) +
                             "-bit indices needs a table of " +
                             std::to_string(expected) + " values, got " +
                             quoted(tensorTypeText(enc.tableShape,
                                                   enc.tableType)));
    if (enc.tableType != ScalarType::F16 && enc.tableType != ScalarType::F32)
      return fail(error, "codebook table values must be f16 or f32, got " +
                             quoted(scalarTypeName(enc.tableType)));
  } else {
    if (enc.indexBits != 0)
      return fail(error, "'bits' is only meaningful for codebook; '" + name +
                             "' has a fixed code width");
    if (hasTable || hasName)
      return fail(error,
                  std::string("only 'codebook' takes a table") +
                      (format == ElementFormat::NF4
                           ? " (nf4's table is built in)"
                           : ""));
  }

  // Unquantized formats take nothing but sparsity.
  if (!enc.isQuantized()) {
    if (enc.scaleType != ScalarType::None || enc.groupSize > 0 ||
        enc.groupSize == Encoding::kPerChannel ||
        enc.zeroPoint != ZeroPointKind::None || enc.globalScale ||
        enc.actOrder)
      return fail(error, "unquantized '" + name +
                             "' takes no scales, groups, zero points or "
                             "act_order");
    return true;
  }

  if (enc.scaleType == ScalarType::None)
    return fail(error, "'" + name +
                           "' needs scales: add 'scale = f16' (or bf16, f32, "
                           "f8E4M3FN, f8E8M0FNU)");
  if (enc.groupSize == Encoding::kGroupUnset)
    return fail(error, "'" + name +
                           "' needs a scale granularity: 'group = G' or "
                           "'per_channel'");
  if (enc.groupSize == 1 || enc.groupSize < Encoding::kPerChannel)
    return fail(error, "group size must be at least 2 (or per_channel), got " +
                           std::to_string(enc.groupSize));

  // MX: E8M0 power-of-two scales over blocks of 32.
  if (enc.scaleType == ScalarType::F8E8M0FNU) {
    if (format != ElementFormat::FP4E2M1 && format != ElementFormat::FP8E4M3 &&
        format != ElementFormat::Int8)
      return fail(error, "E8M0 scales (MX formats) apply to fp4e2m1, "
                         "fp8e4m3 or int8, not '" +
                             name + "'");
    if (enc.groupSize != 32)
      return fail(error, "E8M0 scales (MX formats) need group = 32, got " +
                             groupText(enc.groupSize));
  }
  // NVFP4: E4M3 scales over blocks of 16 plus a global f32 scale.
  if (enc.scaleType == ScalarType::F8E4M3FN) {
    if (format != ElementFormat::FP4E2M1)
      return fail(error, "E4M3 scales (NVFP4) apply to fp4e2m1, not '" +
                             name + "'");
    if (enc.groupSize != 16)
      return fail(error, "E4M3 scales (NVFP4) need group = 16, got " +
                             groupText(enc.groupSize));
    if (!enc.globalScale)
      return fail(error, "E4M3 scales (NVFP4) need 'global_scale': the "
                         "per-block scales are relative to one f32 scale");
  } else if (enc.globalScale) {
    return fail(error, "'global_scale' belongs to NVFP4 (E4M3 scales), not "
                       "to scale type " +
                           quoted(scalarTypeName(enc.scaleType)));
  }

  // Zero points: exactly the unsigned formats have them.
  if (enc.isUnsigned() && enc.zeroPoint == ZeroPointKind::None)
    return fail(error, "'" + name +
                           "' needs a zero point: 'zero = int' or 'zero = "
                           "float' (use '" +
                           (format == ElementFormat::UInt4 ? "int4" : "int8") +
                           "' for symmetric weights)");
  if (!enc.isUnsigned() && enc.zeroPoint != ZeroPointKind::None)
    return fail(error, "zero point on symmetric format '" + name +
                           "'; asymmetric weights use 'uint4' or 'uint8'");

  if (enc.actOrder && enc.isPerChannel())
    return fail(error, "'act_order' needs group scales: with per_channel "
                       "scales the group index is trivial");

  if (enc.isSparse24() &&
      (format == ElementFormat::NF4 || format == ElementFormat::Codebook ||
       format == ElementFormat::FP4E2M1))
    return fail(error, "2:4 sparsity is not supported with '" + name +
                           "'; it composes with f16, bf16, int4, uint4, "
                           "int8, uint8 and fp8e4m3");
  return true;
}

bool validate(const Encoding &enc, int64_t n, int64_t k, std::string &error) {
  if (!verifyEncoding(enc, error))
    return false;
  if (n <= 0 || k <= 0)
    return fail(error, "weight shape must be positive, got " +
                           std::to_string(n) + "x" + std::to_string(k));
  // Every size derived from the shape (elements, a component's bytes) stays
  // far from int64.
  if (n > kMaxWeightElements / k)
    return fail(error, "weight shape " + std::to_string(n) + "x" +
                           std::to_string(k) + " has more than 2^48 elements");
  if (enc.isQuantized() && !enc.isPerChannel() && k % enc.groupSize != 0)
    return fail(error, "group size " + std::to_string(enc.groupSize) +
                           " does not divide K = " + std::to_string(k));
  if (enc.isSparse24() && k % 4 != 0)
    return fail(error, "2:4 sparsity needs K to be a multiple of 4, got K = " +
                           std::to_string(k));
  // Rows are packed independently; sub-byte codes must end on a byte so that
  // row n starts at byte n * rowBytes in every layout.
  int64_t stored = storedPerRow(enc, k);
  unsigned bits = codeBits(enc);
  if ((stored * bits) % 8 != 0)
    return fail(error, "a row of " + std::to_string(stored) + " stored " +
                           std::to_string(bits) +
                           "-bit codes does not end on a byte boundary (K = " +
                           std::to_string(k) + ")");
  return true;
}

//===----------------------------------------------------------------------===//
// Printing (EncodingAttr::print)
//===----------------------------------------------------------------------===//

namespace {

/// MLIR prints dense attributes with more elements than this as hex.
constexpr size_t kHexThreshold = 100;

/// The raw little-endian bits of a table value in its table type. An f16 NaN
/// keeps the payload halfToFloat widened, signalling NaNs included, as
/// APFloat (the dialect printer) keeps it; floatToHalf would quiet 0x7C03
/// into 0x7E03, which parses back as a different table.
uint32_t tableBits(float value, ScalarType type) {
  if (type == ScalarType::F16) {
    if (!std::isnan(value))
      return floatToHalf(value);
    uint32_t bits;
    std::memcpy(&bits, &value, sizeof(bits));
    const uint32_t payload = (bits >> 13) & 0x3FF;
    return ((bits >> 16) & 0x8000) | 0x7C00 | (payload ? payload : 0x200);
  }
  if (type == ScalarType::BF16) // not a valid table type, but printable
    return floatToBFloat16(value);
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

/// Whether a float literal denotes exactly the table value with these bits
/// (decimal -> f64 -> the table type; the double rounding can only matter
/// within 2^-53 of a tie).
bool readsBackF16(const char *text, uint64_t bits) {
  return doubleToHalf(std::strtod(text, nullptr)) == bits;
}
bool readsBackBF16(const char *text, uint64_t bits) {
  return floatToBFloat16(std::strtof(text, nullptr)) == bits;
}
bool readsBackF32(const char *text, uint64_t bits) {
  float f = std::strtof(text, nullptr);
  uint32_t b;
  std::memcpy(&b, &f, sizeof(b));
  return b == bits;
}

/// One table value exactly as the dialect printer prints it.
std::string tableValueText(float value, ScalarType type) {
  switch (type) {
  case ScalarType::F16:
    return detail::mlirFloatText(value, 11, tableBits(value, type),
                                 readsBackF16);
  case ScalarType::BF16:
    return detail::mlirFloatText(value, 8, tableBits(value, type),
                                 readsBackBF16);
  default:
    return detail::mlirFloatText(value, 24, tableBits(value, type),
                                 readsBackF32);
  }
}

std::string tableText(const Encoding &enc) {
  std::ostringstream os;
  const std::vector<float> &values = enc.table;
  bool splat = !values.empty();
  for (float v : values)
    splat = splat && tableBits(v, enc.tableType) ==
                         tableBits(values[0], enc.tableType);
  os << "dense<";
  if (splat) {
    os << tableValueText(values[0], enc.tableType);
  } else if (values.size() > kHexThreshold) {
    os << "\"0x";
    unsigned bytes = scalarTypeBytes(enc.tableType);
    char hex[3];
    for (float v : values) {
      uint32_t bits = tableBits(v, enc.tableType);
      for (unsigned b = 0; b < bytes; ++b) { // little-endian, as MLIR stores
        std::snprintf(hex, sizeof(hex), "%02X", (bits >> (8 * b)) & 0xFF);
        os << hex;
      }
    }
    os << "\"";
  } else {
    os << "[";
    for (size_t i = 0; i < values.size(); ++i)
      os << (i ? ", " : "") << tableValueText(values[i], enc.tableType);
    os << "]";
  }
  os << "> : tensor<";
  for (int64_t d : enc.tableShape)
    os << d << "x";
  os << scalarTypeName(enc.tableType) << ">";
  return os.str();
}

/// A string literal as MLIR prints it: printable characters as they are,
/// '\\' and '"' and everything else as a two-digit hex escape (\22).
std::string stringLiteral(const std::string &text) {
  std::string out = "\"";
  char hex[4];
  for (unsigned char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c >= 0x20 && c < 0x7F && c != '"') {
      out += static_cast<char>(c);
    } else {
      std::snprintf(hex, sizeof(hex), "\\%02X", c);
      out += hex;
    }
  }
  return out + "\"";
}

} // namespace

std::string printEncoding(const Encoding &enc) {
  std::string out = formatName(enc.format);
  if (enc.format == ElementFormat::Codebook) {
    out += ", bits = " + std::to_string(enc.indexBits);
    if (enc.hasInlineTable)
      out += ", table = " + tableText(enc);
    else if (!enc.tableName.empty())
      out += ", table = " + stringLiteral(enc.tableName) + " : " +
             scalarTypeName(enc.tableType);
  }
  if (enc.isQuantized()) {
    if (enc.isPerChannel())
      out += ", per_channel";
    else
      out += ", group = " + std::to_string(enc.groupSize);
  }
  if (enc.scaleType != ScalarType::None)
    out += std::string(", scale = ") + scalarTypeName(enc.scaleType);
  if (enc.globalScale)
    out += ", global_scale";
  if (enc.zeroPoint != ZeroPointKind::None)
    out += std::string(", zero = ") + zeroPointName(enc.zeroPoint);
  if (enc.actOrder)
    out += ", act_order";
  if (enc.isSparse24())
    out += ", sparse = 2:4";
  return out;
}

} // namespace qfuse::format
