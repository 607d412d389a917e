//===- Grid.cpp - RTN's grids, one group and one element at a time --------===//
//
// Every formula here is quantizeRTN's (format/src/Quantize.cpp, rules
// documented at quantizeRTN in Packing.h), restated per group so that GPTQ
// can fit a group on weights that earlier columns have already updated and
// round one column at a time. GridTest checks fit/code/value against
// quantizeRTN and format::dequantize on every scale type; change them
// together.
//
//===----------------------------------------------------------------------===//

#include "qfuse/gptq/Grid.h"

#include "qfuse/format/Numerics.h"
#include "qfuse/format/Packing.h"
#include "qfuse/format/QuantizeRules.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace qfuse::gptq {

using format::ElementFormat;
using format::Encoding;
using format::ScalarType;

namespace {

/// amax, min and max of a group, in double (exact: no arithmetic).
struct GroupStats {
  double amax = 0;
  double min = std::numeric_limits<double>::infinity();
  double max = -std::numeric_limits<double>::infinity();
};

GroupStats statsOf(const float *w, int64_t count) {
  GroupStats s;
  for (int64_t i = 0; i < count; ++i) {
    double v = w[i];
    s.amax = std::max(s.amax, std::fabs(v));
    s.min = std::min(s.min, v);
    s.max = std::max(s.max, v);
  }
  return s;
}

/// The stored scale from the unrounded one (RTN: a zero group gets 1, NVFP4
/// keeps 0), or false when it does not fit the scale type.
bool finishScale(const Encoding &enc, double exact, float &scale,
                 std::string &error) {
  if (enc.globalScale)
    scale = format::storeScale(exact, enc.scaleType); // may be 0 for a zero block
  else
    scale = exact > 0 ? format::storeScale(exact, enc.scaleType) : 1.0f;
  if (std::isfinite(scale) && (enc.globalScale || scale > 0))
    return true;
  error = "group scale " + std::to_string(exact) + " does not fit " +
          format::scalarTypeName(enc.scaleType);
  return false;
}

//===----------------------------------------------------------------------===//
// Integers
//===----------------------------------------------------------------------===//

class IntegerGrid final : public Grid {
public:
  explicit IntegerGrid(const Encoding &enc)
      : Grid(enc, 1.0f, {}), bits(format::codeBits(enc)),
        isUnsigned(enc.isUnsigned()),
        isFloatZero(enc.zeroPoint == format::ZeroPointKind::Float),
        qmaxSigned(double((1 << (bits - 1)) - 1)),
        qmaxUnsigned(double((1u << bits) - 1)) {}

  bool fit(const float *w, int64_t count, GroupParams &p,
           std::string &error) const override {
    GroupStats s = statsOf(w, count);
    if (!isUnsigned) {
      p.zero = 0.0f;
      return finishScale(enc, s.amax / qmaxSigned, p.scale, error);
    }
    double lo = s.min, hi = s.max;
    if (!isFloatZero) { // integer zero points need 0 inside the range
      lo = std::min(lo, 0.0);
      hi = std::max(hi, 0.0);
    }
    if (!finishScale(enc, (hi - lo) / qmaxUnsigned, p.scale, error))
      return false;
    double z = -lo / p.scale;
    if (isFloatZero)
      z = format::roundToScalarType(float(z), enc.scaleType);
    else
      z = std::min(std::max(std::rint(z), 0.0), qmaxUnsigned);
    p.zero = float(z);
    return true;
  }

  int32_t code(float w, const GroupParams &p) const override {
    const double v = w, scale = p.scale;
    if (!isUnsigned)
      return int32_t(
          std::min(std::max(std::rint(v / scale), -qmaxSigned), qmaxSigned));
    const double z = p.zero;
    double q =
        isFloatZero ? std::rint(v / scale + z) : std::rint(v / scale) + z;
    return int32_t(std::min(std::max(q, 0.0), qmaxUnsigned));
  }

  float value(int32_t code, const GroupParams &p) const override {
    if (isUnsigned)
      return p.scale * (float(code) - p.zero);
    return p.scale * float(code);
  }

private:
  unsigned bits;
  bool isUnsigned, isFloatZero;
  double qmaxSigned, qmaxUnsigned;
};

//===----------------------------------------------------------------------===//
// fp8 E4M3 and fp4 E2M1 (with f16/bf16/f32, E8M0 or NVFP4 scales)
//===----------------------------------------------------------------------===//

class MinifloatGrid final : public Grid {
public:
  MinifloatGrid(const Encoding &enc, float global)
      : Grid(enc, enc.globalScale ? global : 1.0f, {}),
        isFP8(enc.format == ElementFormat::FP8E4M3) {}

  bool fit(const float *w, int64_t count, GroupParams &p,
           std::string &error) const override {
    double amax = statsOf(w, count).amax;
    double exact = isFP8 ? amax / format::kE4M3Max : amax / format::kE2M1Max;
    if (enc.globalScale)
      exact *= global;
    p.zero = 0.0f;
    return finishScale(enc, exact, p.scale, error);
  }

  int32_t code(float w, const GroupParams &p) const override {
    const double v = w, scale = p.scale;
    if (isFP8)
      return format::encodeE4M3(float(v / scale));
    if (enc.globalScale)
      return p.scale > 0 ? format::encodeE2M1(float(v * global / scale)) : 0;
    return format::encodeE2M1(float(v / scale));
  }

  float value(int32_t code, const GroupParams &p) const override {
    float decoded = isFP8 ? format::decodeE4M3(uint8_t(code))
                          : format::decodeE2M1(uint8_t(code));
    if (enc.globalScale)
      return (decoded * p.scale) / global;
    return p.scale * decoded;
  }

private:
  bool isFP8;
};

//===----------------------------------------------------------------------===//
// nf4 and codebooks
//===----------------------------------------------------------------------===//

class CodebookGrid final : public Grid {
public:
  CodebookGrid(const Encoding &enc, std::vector<float> table)
      : Grid(enc, 1.0f, std::move(table)),
        nearest(values.data(), int64_t(values.size())) {
    for (float v : values)
      tableMax = std::max(tableMax, double(std::fabs(v)));
  }

  bool hasNonZeroEntry() const { return tableMax > 0; }

  bool fit(const float *w, int64_t count, GroupParams &p,
           std::string &error) const override {
    p.zero = 0.0f;
    return finishScale(enc, statsOf(w, count).amax / tableMax, p.scale, error);
  }

  /// The entry nearest to w / scale; on a tie, the lower index (the rule
  /// RTN uses, format::NearestEntry).
  int32_t code(float w, const GroupParams &p) const override {
    return nearest(double(w) / double(p.scale));
  }

  float value(int32_t code, const GroupParams &p) const override {
    return p.scale * values[size_t(code)];
  }

private:
  format::NearestEntry nearest;
  double tableMax = 0;
};

} // namespace

float nvfp4GlobalScale(const float *w, int64_t count) {
  double amax = 0;
  for (int64_t i = 0; i < count; ++i)
    amax = std::max(amax, double(std::fabs(w[i])));
  return amax > 0 ? float(double(format::kE4M3Max) * format::kE2M1Max / amax)
                  : 1.0f;
}

std::unique_ptr<Grid> makeGrid(const Encoding &enc, const GridOptions &options,
                               std::string &error) {
  if (!format::verifyEncoding(enc, error))
    return nullptr;
  if (!enc.isQuantized() || enc.isSparse24()) {
    error = "GPTQ needs a dense quantized encoding, got '" +
            format::printEncoding(enc) + "'";
    return nullptr;
  }
  switch (enc.format) {
  case ElementFormat::Int4:
  case ElementFormat::UInt4:
  case ElementFormat::Int8:
  case ElementFormat::UInt8:
    return std::make_unique<IntegerGrid>(enc);
  case ElementFormat::FP8E4M3:
  case ElementFormat::FP4E2M1:
    if (enc.globalScale &&
        !(std::isfinite(options.globalScale) && options.globalScale > 0)) {
      error = "NVFP4 global scale " + std::to_string(options.globalScale) +
              " is not a positive finite f32";
      return nullptr;
    }
    return std::make_unique<MinifloatGrid>(enc, options.globalScale);
  case ElementFormat::NF4:
  case ElementFormat::Codebook: {
    std::vector<float> table = format::codebookValues(enc);
    if (table.empty()) { // a named table
      if (!options.table) {
        error = "codebook table '" + enc.tableName +
                "' is named, not inline: pass its values in "
                "GridOptions::table";
        return nullptr;
      }
      table.assign(options.table,
                   options.table + (int64_t(1) << format::codeBits(enc)));
    }
    auto grid = std::make_unique<CodebookGrid>(enc, std::move(table));
    if (!grid->hasNonZeroEntry()) {
      error = "codebook has no non-zero entry to scale to";
      return nullptr;
    }
    return grid;
  }
  case ElementFormat::F16:
  case ElementFormat::BF16:
    break;
  }
  error = "no grid for format " + std::string(format::formatName(enc.format));
  return nullptr;
}

} // namespace qfuse::gptq
