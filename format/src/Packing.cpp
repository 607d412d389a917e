//===- Packing.cpp - row-major components <-> unpacked values -------------===//
//
// The component table, bit streams, and pack/unpack between the byte layout
// documented in Packing.h and the one-number-per-element Unpacked form.
//
//===----------------------------------------------------------------------===//

#include "qfuse/format/Packing.h"

#include "qfuse/format/ScalarIO.h"

#include <cmath>
#include <set>

namespace qfuse::format {

using detail::readScalar;
using detail::writeScalar;

namespace {

bool fail(std::string &error, const std::string &message) {
  error = message;
  return false;
}

std::string at(int64_t row, int64_t col) {
  return "(" + std::to_string(row) + ", " + std::to_string(col) + ")";
}

uint32_t mask(unsigned bits) {
  return bits >= 32 ? 0xFFFFFFFFu : (1u << bits) - 1;
}

/// The codebook a code indexes, or null for formats without one.
const float *tableOf(const Encoding &enc, const Unpacked &u) {
  if (enc.format == ElementFormat::NF4)
    return kNF4Table;
  if (enc.format != ElementFormat::Codebook)
    return nullptr;
  return enc.hasInlineTable ? enc.table.data() : u.table.data();
}

} // namespace

//===----------------------------------------------------------------------===//
// Component table
//===----------------------------------------------------------------------===//

DType scalarDType(ScalarType type) {
  switch (type) {
  case ScalarType::F16:
    return DType::F16;
  case ScalarType::BF16:
    return DType::BF16;
  case ScalarType::F32:
  case ScalarType::None:
    return DType::F32;
  case ScalarType::F8E4M3FN:
    return DType::F8E4M3;
  case ScalarType::F8E8M0FNU:
    return DType::F8E8M0;
  }
  return DType::F32;
}

int64_t rowBytes(const Encoding &enc, int64_t k) {
  return (storedPerRow(enc, k) * codeBits(enc) + 7) / 8;
}

bool componentSpecs(const Encoding &enc, int64_t n, int64_t k,
                    std::vector<ComponentSpec> &specs, std::string &error) {
  if (!validate(enc, n, k, error))
    return false;
  specs.clear();
  const int64_t groups = numGroups(enc, k);
  const unsigned bits = codeBits(enc);
  specs.push_back({kCodes, DType::U8, {n, rowBytes(enc, k)}});
  if (enc.isQuantized())
    specs.push_back({kScales, scalarDType(enc.scaleType), {n, groups}});
  if (enc.zeroPoint == ZeroPointKind::Int)
    specs.push_back({kZeros, DType::U8, {n, (groups * bits + 7) / 8}});
  if (enc.zeroPoint == ZeroPointKind::Float)
    specs.push_back({kZeros, scalarDType(enc.scaleType), {n, groups}});
  if (enc.globalScale)
    specs.push_back({kGlobalScale, DType::F32, {1}});
  if (enc.actOrder)
    specs.push_back({kGIdx, DType::I32, {k}});
  if (enc.isSparse24())
    specs.push_back({kMetadata, DType::U8, {n, (k + 7) / 8}});
  if (enc.format == ElementFormat::Codebook && enc.hasNamedTable())
    specs.push_back({kTable, scalarDType(enc.tableType),
                     {int64_t(1) << enc.indexBits}});
  return true;
}

bool checkComponents(const Encoding &enc, const TensorMap &components,
                     int64_t n, int64_t k, std::string &error) {
  std::vector<ComponentSpec> specs;
  if (!componentSpecs(enc, n, k, specs, error))
    return false;
  std::set<std::string> expected;
  for (const ComponentSpec &spec : specs) {
    expected.insert(spec.name);
    auto it = components.find(spec.name);
    if (it == components.end())
      return fail(error, "missing component '" + spec.name + "' (" +
                             describe(spec.dtype, spec.shape) + ") of a " +
                             std::to_string(n) + "x" + std::to_string(k) +
                             " weight with encoding <" + printEncoding(enc) +
                             ">");
    if (!checkTensor(it->second.view(), "component '" + spec.name + "'",
                     spec.dtype, spec.shape, error))
      return false;
  }
  for (const auto &entry : components)
    if (!expected.count(entry.first))
      return fail(error, "unexpected component '" + entry.first +
                             "' for encoding <" + printEncoding(enc) + ">");
  return true;
}

//===----------------------------------------------------------------------===//
// Bit streams and codes
//===----------------------------------------------------------------------===//

void putBits(uint8_t *stream, int64_t index, unsigned bits, uint32_t value) {
  value &= mask(bits);
  if (bits == 8) {
    stream[index] = uint8_t(value);
    return;
  }
  uint64_t first = uint64_t(index) * bits;
  for (unsigned done = 0; done < bits;) {
    uint64_t bit = first + done;
    unsigned offset = unsigned(bit & 7);
    unsigned take = std::min(8 - offset, bits - done);
    stream[bit >> 3] |= uint8_t(((value >> done) & mask(take)) << offset);
    done += take;
  }
}

uint32_t getBits(const uint8_t *stream, int64_t index, unsigned bits) {
  if (bits == 8)
    return stream[index];
  if (bits == 4)
    return (stream[index >> 1] >> ((index & 1) * 4)) & 0xF;
  uint64_t first = uint64_t(index) * bits;
  uint32_t value = 0;
  for (unsigned done = 0; done < bits;) {
    uint64_t bit = first + done;
    unsigned offset = unsigned(bit & 7);
    unsigned take = std::min(8 - offset, bits - done);
    value |= uint32_t((stream[bit >> 3] >> offset) & mask(take)) << done;
    done += take;
  }
  return value;
}

int32_t codeFromByte(ElementFormat format, uint8_t byte) {
  const bool signedCodes =
      format == ElementFormat::Int4 || format == ElementFormat::Int8;
  return signedCodes ? int32_t(int8_t(byte)) : int32_t(byte);
}

uint32_t storedCode(ElementFormat format, int32_t code) {
  if (format == ElementFormat::Int4)
    return uint32_t(code + 8) & 0xF;
  if (format == ElementFormat::Int8)
    return uint32_t(code) & 0xFF;
  return uint32_t(code);
}

int32_t logicalCode(ElementFormat format, uint32_t stored) {
  if (format == ElementFormat::Int4)
    return int32_t(stored & 0xF) - 8;
  if (format == ElementFormat::Int8)
    return int32_t(int8_t(uint8_t(stored)));
  return int32_t(stored);
}

void codeRange(ElementFormat format, unsigned bits, int32_t &min,
               int32_t &max) {
  if (format == ElementFormat::Int4 || format == ElementFormat::Int8) {
    min = -(int32_t(1) << (bits - 1));
    max = (int32_t(1) << (bits - 1)) - 1;
    return;
  }
  min = 0;
  max = int32_t(mask(bits));
}

float codeValue(ElementFormat format, int32_t code, const float *table) {
  switch (format) {
  case ElementFormat::Int4:
  case ElementFormat::UInt4:
  case ElementFormat::Int8:
  case ElementFormat::UInt8:
    return float(code);
  case ElementFormat::FP8E4M3:
    return decodeE4M3(uint8_t(code));
  case ElementFormat::FP4E2M1:
    return decodeE2M1(uint8_t(code));
  case ElementFormat::NF4:
    return kNF4Table[code & 0xF];
  case ElementFormat::Codebook:
    return table ? table[code] : 0.0f;
  case ElementFormat::F16:
    return halfToFloat(uint16_t(code));
  case ElementFormat::BF16:
    return bfloat16ToFloat(uint16_t(code));
  }
  return 0.0f;
}

//===----------------------------------------------------------------------===//
// pack
//===----------------------------------------------------------------------===//

namespace {

bool checkSize(const std::string &what, size_t actual, int64_t expected,
               std::string &error) {
  if (int64_t(actual) == expected)
    return true;
  return fail(error, what + ": expected " + std::to_string(expected) +
                         " values, got " + std::to_string(actual));
}

/// Writes N x G values of a scale type, each exactly representable.
bool writeValues(const std::string &what, ScalarType type,
                 const std::vector<float> &values, int64_t groups,
                 Tensor &out, std::string &error) {
  for (size_t i = 0; i < values.size(); ++i)
    if (!writeScalar(type, out.data.data(), int64_t(i), values[i]))
      return fail(error, what + " " + at(int64_t(i) / groups, int64_t(i) % groups) +
                             " = " + std::to_string(values[i]) +
                             " is not representable in " +
                             scalarTypeName(type));
  return true;
}

} // namespace

namespace {

/// The codes of rows [0, n): `codeAt(i)` is the logical code of stored
/// position i (row-major over [N, stored]), range-checked and written as
/// its stored bits into the codes component.
template <typename CodeAt>
bool packCodes(const Encoding &enc, int64_t n, int64_t k, CodeAt codeAt,
               TensorMap &out, std::string &error) {
  const int64_t stored = storedPerRow(enc, k);
  const unsigned bits = codeBits(enc);
  int32_t minCode, maxCode;
  codeRange(enc.format, bits, minCode, maxCode);
  const int64_t codeRowBytes = rowBytes(enc, k);
  uint8_t *codes = out[kCodes].data.data();
  auto outside = [&](int64_t row, int64_t j, int32_t code) {
    return fail(error, "code " + at(row, j) + " = " + std::to_string(code) +
                           " is outside [" + std::to_string(minCode) + ", " +
                           std::to_string(maxCode) + "] of " +
                           formatName(enc.format));
  };
  // 4-bit codes two at a time into one byte (putBits' order: the even
  // position in the low nibble): GPTQ packs hundreds of millions per layer.
  const bool pairs = bits == 4 && stored % 2 == 0;
  for (int64_t row = 0; row < n; ++row) {
    uint8_t *rowOut = codes + row * codeRowBytes;
    for (int64_t j = 0; j < stored; j += pairs ? 2 : 1) {
      const int32_t code = codeAt(row * stored + j);
      if (code < minCode || code > maxCode)
        return outside(row, j, code);
      if (!pairs) {
        putBits(rowOut, j, bits, storedCode(enc.format, code));
        continue;
      }
      const int32_t next = codeAt(row * stored + j + 1);
      if (next < minCode || next > maxCode)
        return outside(row, j + 1, next);
      rowOut[j >> 1] = uint8_t(storedCode(enc.format, code) |
                               storedCode(enc.format, next) << 4);
    }
  }
  return true;
}

bool packRest(const Encoding &enc, const Unpacked &u, int64_t n, int64_t k,
              TensorMap &out, std::string &error);

/// The components of `enc` at [n, k], zero-filled.
bool emptyComponents(const Encoding &enc, int64_t n, int64_t k,
                     TensorMap &out, std::string &error) {
  std::vector<ComponentSpec> specs;
  if (!componentSpecs(enc, n, k, specs, error))
    return false;
  for (const ComponentSpec &spec : specs)
    out[spec.name] = Tensor(spec.dtype, spec.shape);
  return true;
}

} // namespace

bool pack(const Encoding &enc, const Unpacked &u, int64_t n, int64_t k,
          TensorMap &components, std::string &error) {
  TensorMap out;
  if (!emptyComponents(enc, n, k, out, error))
    return false;
  if (!checkSize("codes", u.codes.size(), n * storedPerRow(enc, k), error) ||
      !packCodes(enc, n, k, [&](int64_t i) { return u.codes[size_t(i)]; },
                 out, error) ||
      !packRest(enc, u, n, k, out, error))
    return false;
  components = std::move(out);
  return true;
}

bool packCodeBytes(const Encoding &enc, const uint8_t *codeBytes,
                   const Unpacked &params, int64_t n, int64_t k,
                   TensorMap &components, std::string &error) {
  if (enc.isSparse24() || codeBits(enc) > 8)
    return fail(error, "packCodeBytes takes dense codes of at most 8 bits, "
                       "not '" + printEncoding(enc) + "'");
  if (!params.codes.empty())
    return fail(error, "packCodeBytes: the codes come as bytes; params holds "
                       "codes too");
  TensorMap out;
  if (!emptyComponents(enc, n, k, out, error))
    return false;
  auto codeAt = [&](int64_t i) {
    return codeFromByte(enc.format, codeBytes[i]);
  };
  if (!packCodes(enc, n, k, codeAt, out, error) ||
      !packRest(enc, params, n, k, out, error))
    return false;
  components = std::move(out);
  return true;
}

bool packWithCodes(const Encoding &enc, std::vector<uint8_t> codes,
                   const Unpacked &params, int64_t n, int64_t k,
                   TensorMap &components, std::string &error) {
  if (enc.isSparse24())
    return fail(error, "packWithCodes takes dense codes, not '" +
                           printEncoding(enc) + "'");
  if (!params.codes.empty())
    return fail(error, "packWithCodes: the codes come packed; params holds "
                       "codes too");
  TensorMap out;
  if (!emptyComponents(enc, n, k, out, error))
    return false;
  if (codes.size() != out[kCodes].data.size())
    return fail(error, "packed codes: expected " +
                           std::to_string(out[kCodes].data.size()) +
                           " bytes, got " + std::to_string(codes.size()));
  out[kCodes].data = std::move(codes);
  if (!packRest(enc, params, n, k, out, error))
    return false;
  components = std::move(out);
  return true;
}

namespace {

/// Everything pack() writes after the codes.
bool packRest(const Encoding &enc, const Unpacked &u, int64_t n, int64_t k,
              TensorMap &out, std::string &error) {
  const int64_t stored = storedPerRow(enc, k);
  const int64_t groups = numGroups(enc, k);
  const unsigned bits = codeBits(enc);

  // 2:4 positions -> metadata.
  if (enc.isSparse24()) {
    if (!checkSize("2:4 positions", u.positions.size(), n * stored, error))
      return false;
    uint8_t *meta = out[kMetadata].data.data();
    const int64_t metaRowBytes = (k + 7) / 8;
    for (int64_t row = 0; row < n; ++row)
      for (int64_t j = 0; j < stored; j += 2) {
        uint8_t first = u.positions[row * stored + j];
        uint8_t second = u.positions[row * stored + j + 1];
        if (first >= second || second > 3)
          return fail(error, "2:4 positions of row " + std::to_string(row) +
                                 ", columns " + std::to_string(2 * j) + ".." +
                                 std::to_string(2 * j + 3) + " are " +
                                 std::to_string(first) + ", " +
                                 std::to_string(second) +
                                 "; expected two increasing positions in 0..3");
        putBits(meta + row * metaRowBytes, j, 2, first);
        putBits(meta + row * metaRowBytes, j + 1, 2, second);
      }
  } else if (!u.positions.empty()) {
    return fail(error, "2:4 positions given for a dense encoding");
  }

  // Scales, zeros, global scale.
  if (enc.isQuantized()) {
    if (!checkSize("scales", u.scales.size(), n * groups, error) ||
        !writeValues("scale", enc.scaleType, u.scales, groups, out[kScales],
                     error))
      return false;
  }
  if (enc.zeroPoint == ZeroPointKind::Int) {
    if (!checkSize("zeros", u.zeros.size(), n * groups, error))
      return false;
    const int64_t zeroRowBytes = (groups * bits + 7) / 8;
    uint8_t *zeros = out[kZeros].data.data();
    for (int64_t i = 0; i < n * groups; ++i) {
      float z = u.zeros[i];
      if (!(z >= 0 && z <= float(mask(bits)) && z == std::floor(z)))
        return fail(error, "zero point " + at(i / groups, i % groups) + " = " +
                               std::to_string(z) + " is not an integer in [0, " +
                               std::to_string(mask(bits)) + "]");
      putBits(zeros + (i / groups) * zeroRowBytes, i % groups, bits,
              uint32_t(z));
    }
  } else if (enc.zeroPoint == ZeroPointKind::Float) {
    if (!checkSize("zeros", u.zeros.size(), n * groups, error) ||
        !writeValues("zero point", enc.scaleType, u.zeros, groups, out[kZeros],
                     error))
      return false;
  } else if (!u.zeros.empty()) {
    return fail(error, "zero points given for an encoding without them");
  }
  if (enc.globalScale)
    detail::storeF32(out[kGlobalScale].data.data(), u.globalScale);

  // g_idx.
  if (enc.actOrder) {
    if (!checkSize("g_idx", u.gIdx.size(), k, error))
      return false;
    uint8_t *gIdx = out[kGIdx].data.data();
    for (int64_t col = 0; col < k; ++col) {
      int32_t g = u.gIdx[col];
      if (g < 0 || g >= groups)
        return fail(error, "g_idx[" + std::to_string(col) + "] = " +
                               std::to_string(g) + " is outside [0, " +
                               std::to_string(groups) + ")");
      detail::storeLE32(gIdx + 4 * col, uint32_t(g));
    }
  } else if (!u.gIdx.empty()) {
    return fail(error, "g_idx given for an encoding without act_order");
  }

  // Named codebook table.
  if (enc.format == ElementFormat::Codebook && enc.hasNamedTable()) {
    int64_t entries = int64_t(1) << enc.indexBits;
    if (!checkSize("codebook table '" + enc.tableName + "'", u.table.size(),
                   entries, error) ||
        !writeValues("table entry", enc.tableType, u.table, entries,
                     out[kTable], error))
      return false;
  } else if (!u.table.empty()) {
    return fail(error, "a codebook table given for an encoding without a "
                       "named table");
  }

  return true;
}

} // namespace

//===----------------------------------------------------------------------===//
// unpack
//===----------------------------------------------------------------------===//

bool unpack(const Encoding &enc, const TensorMap &components, int64_t n,
            int64_t k, Unpacked &u, std::string &error) {
  if (!checkComponents(enc, components, n, k, error))
    return false;
  auto data = [&](const char *name) {
    return components.find(name)->second.data.data();
  };
  const int64_t stored = storedPerRow(enc, k);
  const int64_t groups = numGroups(enc, k);
  const unsigned bits = codeBits(enc);
  Unpacked result;

  const int64_t codeRowBytes = rowBytes(enc, k);
  const uint8_t *codes = data(kCodes);
  result.codes.resize(size_t(n * stored));
  for (int64_t row = 0; row < n; ++row)
    for (int64_t j = 0; j < stored; ++j)
      result.codes[row * stored + j] =
          logicalCode(enc.format, getBits(codes + row * codeRowBytes, j, bits));

  if (enc.isSparse24()) {
    const uint8_t *meta = data(kMetadata);
    const int64_t metaRowBytes = (k + 7) / 8;
    result.positions.resize(size_t(n * stored));
    for (int64_t row = 0; row < n; ++row)
      for (int64_t j = 0; j < stored; j += 2) {
        uint8_t first = uint8_t(getBits(meta + row * metaRowBytes, j, 2));
        uint8_t second = uint8_t(getBits(meta + row * metaRowBytes, j + 1, 2));
        if (first >= second)
          return fail(error, "component 'meta': positions of row " +
                                 std::to_string(row) + ", columns " +
                                 std::to_string(2 * j) + ".." +
                                 std::to_string(2 * j + 3) + " are " +
                                 std::to_string(first) + ", " +
                                 std::to_string(second) +
                                 "; expected first < second");
        result.positions[row * stored + j] = first;
        result.positions[row * stored + j + 1] = second;
      }
  }

  if (enc.isQuantized()) {
    result.scales.resize(size_t(n * groups));
    for (int64_t i = 0; i < n * groups; ++i)
      result.scales[i] = readScalar(enc.scaleType, data(kScales), i);
  }
  if (enc.zeroPoint == ZeroPointKind::Int) {
    const int64_t zeroRowBytes = (groups * bits + 7) / 8;
    result.zeros.resize(size_t(n * groups));
    for (int64_t i = 0; i < n * groups; ++i)
      result.zeros[i] = float(
          getBits(data(kZeros) + (i / groups) * zeroRowBytes, i % groups, bits));
  } else if (enc.zeroPoint == ZeroPointKind::Float) {
    result.zeros.resize(size_t(n * groups));
    for (int64_t i = 0; i < n * groups; ++i)
      result.zeros[i] = readScalar(enc.scaleType, data(kZeros), i);
  }
  if (enc.globalScale)
    result.globalScale = detail::loadF32(data(kGlobalScale));
  if (enc.actOrder) {
    result.gIdx.resize(size_t(k));
    for (int64_t col = 0; col < k; ++col) {
      int32_t g = int32_t(detail::loadLE32(data(kGIdx) + 4 * col));
      if (g < 0 || g >= groups)
        return fail(error, "component 'g_idx': g_idx[" + std::to_string(col) +
                               "] = " + std::to_string(g) +
                               " is outside [0, " + std::to_string(groups) +
                               ")");
      result.gIdx[col] = g;
    }
  }
  if (enc.format == ElementFormat::Codebook && enc.hasNamedTable()) {
    int64_t entries = int64_t(1) << enc.indexBits;
    result.table.resize(size_t(entries));
    for (int64_t i = 0; i < entries; ++i)
      result.table[i] = readScalar(enc.tableType, data(kTable), i);
  }
  u = std::move(result);
  return true;
}

//===----------------------------------------------------------------------===//
// dequantize
//===----------------------------------------------------------------------===//

bool dequantize(const Encoding &enc, const Unpacked &u, int64_t n, int64_t k,
                std::vector<float> &w, std::string &error) {
  // Packing checks every size and range; reuse it rather than repeat it.
  TensorMap scratch;
  if (!pack(enc, u, n, k, scratch, error))
    return false;
  const int64_t stored = storedPerRow(enc, k);
  const int64_t groups = numGroups(enc, k);
  const float *table = tableOf(enc, u);
  const bool unsignedFormat = enc.isUnsigned();
  w.assign(size_t(n * k), 0.0f);
  for (int64_t row = 0; row < n; ++row) {
    for (int64_t j = 0; j < stored; ++j) {
      int64_t col = enc.isSparse24()
                        ? 4 * (j / 2) + u.positions[row * stored + j]
                        : j;
      int32_t code = u.codes[row * stored + j];
      float value = codeValue(enc.format, code, table);
      float &out = w[row * k + col];
      if (!enc.isQuantized()) {
        out = value;
        continue;
      }
      int64_t g = enc.actOrder         ? u.gIdx[col]
                  : enc.isPerChannel() ? 0
                                       : col / enc.groupSize;
      float scale = u.scales[row * groups + g];
      if (unsignedFormat)
        out = scale * (float(code) - u.zeros[row * groups + g]);
      else if (enc.globalScale)
        out = (value * scale) / u.globalScale;
      else
        out = scale * value;
    }
  }
  return true;
}

bool dequantize(const Encoding &enc, const TensorMap &components, int64_t n,
                int64_t k, std::vector<float> &w, std::string &error) {
  Unpacked u;
  return unpack(enc, components, n, k, u, error) &&
         dequantize(enc, u, n, k, w, error);
}

} // namespace qfuse::format
