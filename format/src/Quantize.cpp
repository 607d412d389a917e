//===- Quantize.cpp - round-to-nearest quantization into any encoding -----===//
//
// The reference quantizer: statistics per (row, group), one scale (and zero
// point) each, codes by rint (half to even). The rules and the error bounds
// they guarantee are documented at quantizeRTN in Packing.h; the unit tests
// check those bounds, so change both together.
//
//===----------------------------------------------------------------------===//

#include "qfuse/format/Packing.h"
#include "qfuse/format/QuantizeRules.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace qfuse::format {
namespace {

bool fail(std::string &error, const std::string &message) {
  error = message;
  return false;
}

/// The two kept columns (ascending) of each group of 4: the largest
/// magnitude, the lower column on a tie, then the largest of the other
/// three, likewise. Written as two scans with a strict `>` (what a stable
/// sort by descending magnitude picks, without its undefined order for a
/// NaN: a NaN is never larger, so it is kept only where a scan starts).
/// WeightQuantizer::select24 emits these scans as IR; change both together.
void select24(const float *row, int64_t k, std::vector<uint8_t> &positions) {
  positions.resize(size_t(k / 2));
  for (int64_t quad = 0; quad < k / 4; ++quad) {
    const float *v = row + 4 * quad;
    int best = 0;
    for (int i = 1; i < 4; ++i)
      if (std::fabs(v[i]) > std::fabs(v[best]))
        best = i;
    int next = best == 0 ? 1 : 0;
    for (int i = next + 1; i < 4; ++i)
      if (i != best && std::fabs(v[i]) > std::fabs(v[next]))
        next = i;
    positions[2 * quad] = uint8_t(std::min(best, next));
    positions[2 * quad + 1] = uint8_t(std::max(best, next));
  }
}

struct GroupStats {
  double amax = 0;
  double min = std::numeric_limits<double>::infinity();
  double max = -std::numeric_limits<double>::infinity();
  bool any = false;
};

} // namespace

float storeScale(double s, ScalarType type) {
  switch (type) {
  case ScalarType::F16: {
    uint16_t bits = doubleToHalf(s);
    if (double(halfToFloat(bits)) < s)
      ++bits; // positive: the next code is the next value up
    return halfToFloat(bits);
  }
  case ScalarType::BF16: {
    float f = float(s);
    if (double(f) < s)
      f = std::nextafter(f, std::numeric_limits<float>::infinity());
    uint16_t bits = floatToBFloat16(f);
    if (bfloat16ToFloat(bits) < f)
      ++bits;
    return bfloat16ToFloat(bits);
  }
  case ScalarType::F32: {
    float f = float(s);
    if (double(f) < s)
      f = std::nextafter(f, std::numeric_limits<float>::infinity());
    return f;
  }
  case ScalarType::F8E8M0FNU: {
    // encodeE8M0Ceil takes a float; make sure that float is not below s.
    float f = float(s);
    if (double(f) < s)
      f = std::nextafter(f, std::numeric_limits<float>::infinity());
    return decodeE8M0(encodeE8M0Ceil(f));
  }
  case ScalarType::F8E4M3FN:
    return decodeE4M3(encodeE4M3(float(s)));
  case ScalarType::None:
    break;
  }
  return float(s);
}

NearestEntry::NearestEntry(const float *table, int64_t size) {
  for (int64_t i = 0; i < size; ++i)
    entries.push_back({table[i], int32_t(i)});
  std::sort(entries.begin(), entries.end(), [](const Entry &a, const Entry &b) {
    return a.value < b.value || (a.value == b.value && a.index < b.index);
  });
  entries.erase(std::unique(entries.begin(), entries.end(),
                            [](const Entry &a, const Entry &b) {
                              return a.value == b.value;
                            }),
                entries.end());
}

int32_t NearestEntry::operator()(double x) const {
  if (std::isnan(x))
    return entries.front().index;
  auto it = std::lower_bound(
      entries.begin(), entries.end(), x,
      [](const Entry &e, double v) { return double(e.value) < v; });
  if (it == entries.begin())
    return it->index;
  if (it == entries.end())
    return entries.back().index;
  const Entry &below = *(it - 1);
  double dBelow = x - double(below.value);
  double dAbove = double(it->value) - x;
  if (dBelow < dAbove || (dBelow == dAbove && below.index < it->index))
    return below.index;
  return it->index;
}

namespace {

/// The group of each input column: from g_idx with act-order, otherwise
/// consecutive runs of groupSize (all zero when per-channel or unquantized).
bool columnGroups(const Encoding &enc, int64_t k, int64_t groups,
                  const QuantizeOptions &options, Unpacked &result,
                  std::vector<int32_t> &groupOf, std::string &error) {
  groupOf.assign(size_t(k), 0);
  if (enc.actOrder) {
    for (int64_t col = 0; col < k; ++col) {
      int32_t g = options.gIdx ? options.gIdx[col]
                               : int32_t(col / enc.groupSize);
      if (g < 0 || g >= groups)
        return fail(error, "g_idx[" + std::to_string(col) + "] = " +
                               std::to_string(g) + " is outside [0, " +
                               std::to_string(groups) + ")");
      groupOf[col] = g;
    }
    result.gIdx = groupOf;
  } else if (enc.isQuantized() && !enc.isPerChannel()) {
    for (int64_t col = 0; col < k; ++col)
      groupOf[col] = int32_t(col / enc.groupSize);
  }
  return true;
}

/// The codebook of NF4 and codebook encodings (empty for the others) and its
/// largest magnitude, which a group's largest magnitude is scaled to.
bool codebookTable(const Encoding &enc, unsigned bits,
                   const QuantizeOptions &options, Unpacked &result,
                   std::vector<float> &table, double &tableMax,
                   std::string &error) {
  if (enc.format == ElementFormat::NF4) {
    table.assign(std::begin(kNF4Table), std::end(kNF4Table));
  } else if (enc.format == ElementFormat::Codebook) {
    if (enc.hasInlineTable) {
      table = enc.table;
    } else {
      if (!options.table)
        return fail(error, "codebook table '" + enc.tableName +
                               "' is named, not inline: pass its values in "
                               "QuantizeOptions::table");
      table.assign(options.table, options.table + (int64_t(1) << bits));
      result.table = table;
    }
  }
  tableMax = 0;
  for (float v : table)
    tableMax = std::max(tableMax, double(std::fabs(v)));
  if (!table.empty() && !(tableMax > 0))
    return fail(error, "codebook has no non-zero entry to scale to");
  return true;
}

/// The input column of each stored value, row by row: every column, or with
/// 2:4 sparsity the two kept of each four (recorded in result.positions).
std::vector<int64_t> keptColumns(const Encoding &enc, const float *w, int64_t n,
                                 int64_t k, int64_t stored, Unpacked &result) {
  std::vector<int64_t> keptCols(size_t(n * stored));
  if (enc.isSparse24())
    result.positions.resize(size_t(n * stored));
  std::vector<uint8_t> rowPositions;
  for (int64_t row = 0; row < n; ++row) {
    if (enc.isSparse24()) {
      select24(w + row * k, k, rowPositions);
      for (int64_t j = 0; j < stored; ++j) {
        result.positions[row * stored + j] = rowPositions[j];
        keptCols[row * stored + j] = 4 * (j / 2) + rowPositions[j];
      }
    } else {
      for (int64_t j = 0; j < stored; ++j)
        keptCols[row * stored + j] = j;
    }
  }
  return keptCols;
}

/// NVFP4: one global scale for the tensor, 448 * 6 / amax.
bool nvfp4GlobalScale(const float *w, int64_t n, int64_t k, int64_t stored,
                      const std::vector<int64_t> &keptCols, Unpacked &result,
                      std::string &error) {
  double amax = 0;
  for (int64_t i = 0; i < n * stored; ++i)
    amax = std::max(amax, double(std::fabs(w[(i / stored) * k + keptCols[i]])));
  result.globalScale =
      amax > 0 ? float(double(kE4M3Max) * kE2M1Max / amax) : 1.0f;
  if (!std::isfinite(result.globalScale))
    return fail(error, "NVFP4 global scale 448 * 6 / " + std::to_string(amax) +
                           " overflows f32");
  return true;
}

/// What every row of one quantization shares.
struct RowQuantizer {
  const Encoding &enc;
  unsigned bits;
  int64_t stored;
  int64_t groups;
  bool isFloatZero;
  double qmaxUnsigned;
  double tableMax;
  const NearestEntry &nearest;
  const std::vector<int32_t> &groupOf;

  /// One scale (and zero point) per group of `row`, from its statistics.
  bool scales(int64_t row, const std::vector<GroupStats> &stats,
              Unpacked &result, std::string &error) const;
  /// The code of `v` in group `g` of `row`, once that group's scale is known.
  int32_t code(double v, int64_t row, int64_t g, const Unpacked &result) const;
  /// Statistics, scales and codes of one row.
  bool quantize(int64_t row, const float *wRow, const int64_t *cols,
                std::vector<GroupStats> &stats, Unpacked &result,
                std::string &error) const;
};

bool RowQuantizer::scales(int64_t row, const std::vector<GroupStats> &stats,
                          Unpacked &result, std::string &error) const {
  for (int64_t g = 0; g < groups; ++g) {
    const GroupStats &s = stats[g];
    double exact = 0; // the unrounded scale
    double zero = 0;
    switch (enc.format) {
    case ElementFormat::Int4:
    case ElementFormat::Int8:
      exact = s.amax / double((1 << (bits - 1)) - 1);
      break;
    case ElementFormat::UInt4:
    case ElementFormat::UInt8: {
      double lo = s.any ? s.min : 0, hi = s.any ? s.max : 0;
      if (!isFloatZero) { // integer zero points need 0 inside the range
        lo = std::min(lo, 0.0);
        hi = std::max(hi, 0.0);
      }
      exact = (hi - lo) / qmaxUnsigned;
      zero = lo; // turned into a zero point once the scale is known
      break;
    }
    case ElementFormat::FP8E4M3:
      exact = s.amax / kE4M3Max;
      break;
    case ElementFormat::FP4E2M1:
      exact = s.amax / kE2M1Max;
      if (enc.globalScale)
        exact *= result.globalScale;
      break;
    case ElementFormat::NF4:
    case ElementFormat::Codebook:
      exact = s.amax / tableMax;
      break;
    case ElementFormat::F16:
    case ElementFormat::BF16:
      break;
    }
    float scale;
    if (enc.globalScale)
      scale = storeScale(exact, enc.scaleType); // may be 0 for a zero block
    else
      scale = exact > 0 ? storeScale(exact, enc.scaleType) : 1.0f;
    if (!std::isfinite(scale) || (!enc.globalScale && !(scale > 0)))
      return fail(error, "scale of row " + std::to_string(row) + ", group " +
                             std::to_string(g) + " (" + std::to_string(exact) +
                             ") does not fit " + scalarTypeName(enc.scaleType));
    result.scales[row * groups + g] = scale;
    if (enc.isUnsigned()) {
      double z = -zero / scale;
      if (isFloatZero)
        z = roundToScalarType(float(z), enc.scaleType);
      else
        z = std::min(std::max(std::rint(z), 0.0), qmaxUnsigned);
      result.zeros[row * groups + g] = float(z);
    }
  }
  return true;
}

int32_t RowQuantizer::code(double v, int64_t row, int64_t g,
                           const Unpacked &result) const {
  const double scale = result.scales[row * groups + g];
  int32_t code = 0;
  switch (enc.format) {
  case ElementFormat::Int4:
  case ElementFormat::Int8: {
    double qmax = double((1 << (bits - 1)) - 1);
    code = int32_t(std::min(std::max(std::rint(v / scale), -qmax), qmax));
    break;
  }
  case ElementFormat::UInt4:
  case ElementFormat::UInt8: {
    double z = result.zeros[row * groups + g];
    double q =
        isFloatZero ? std::rint(v / scale + z) : std::rint(v / scale) + z;
    code = int32_t(std::min(std::max(q, 0.0), qmaxUnsigned));
    break;
  }
  case ElementFormat::FP8E4M3:
    code = encodeE4M3(float(v / scale));
    break;
  case ElementFormat::FP4E2M1:
    if (enc.globalScale)
      code = scale > 0 ? encodeE2M1(float(v * result.globalScale / scale)) : 0;
    else
      code = encodeE2M1(float(v / scale));
    break;
  case ElementFormat::NF4:
  case ElementFormat::Codebook:
    code = nearest(v / scale);
    break;
  case ElementFormat::F16:
  case ElementFormat::BF16:
    break;
  }
  return code;
}

bool RowQuantizer::quantize(int64_t row, const float *wRow, const int64_t *cols,
                            std::vector<GroupStats> &stats, Unpacked &result,
                            std::string &error) const {
  int32_t *codes = result.codes.data() + row * stored;
  if (!enc.isQuantized()) {
    for (int64_t j = 0; j < stored; ++j)
      codes[j] = enc.format == ElementFormat::F16
                     ? int32_t(floatToHalf(wRow[cols[j]]))
                     : int32_t(floatToBFloat16(wRow[cols[j]]));
    return true;
  }

  // Statistics per group over the kept values.
  std::fill(stats.begin(), stats.end(), GroupStats());
  for (int64_t j = 0; j < stored; ++j) {
    double v = wRow[cols[j]];
    // NaN would slip past the statistics (max ignores it) into a code.
    if (!std::isfinite(v))
      return fail(error, "weight [" + std::to_string(row) + ", " +
                             std::to_string(cols[j]) + "] is " +
                             (std::isnan(v) ? "NaN" : "infinite") +
                             "; round-to-nearest needs finite weights");
    GroupStats &s = stats[groupOf[cols[j]]];
    s.amax = std::max(s.amax, std::fabs(v));
    s.min = std::min(s.min, v);
    s.max = std::max(s.max, v);
    s.any = true;
  }
  if (!scales(row, stats, result, error))
    return false;
  for (int64_t j = 0; j < stored; ++j)
    codes[j] = code(wRow[cols[j]], row, groupOf[cols[j]], result);
  return true;
}

} // namespace

bool quantizeRTN(const Encoding &enc, const float *w, int64_t n, int64_t k,
                 Unpacked &u, std::string &error,
                 const QuantizeOptions &options) {
  if (!validate(enc, n, k, error))
    return false;
  const int64_t stored = storedPerRow(enc, k);
  const int64_t groups = numGroups(enc, k);
  const unsigned bits = codeBits(enc);
  Unpacked result;

  std::vector<int32_t> groupOf;
  if (!columnGroups(enc, k, groups, options, result, groupOf, error))
    return false;
  std::vector<float> table;
  double tableMax = 0;
  if (!codebookTable(enc, bits, options, result, table, tableMax, error))
    return false;
  NearestEntry nearest(table.empty() ? nullptr : table.data(),
                       int64_t(table.size()));
  const std::vector<int64_t> keptCols =
      keptColumns(enc, w, n, k, stored, result);
  if (enc.globalScale &&
      !nvfp4GlobalScale(w, n, k, stored, keptCols, result, error))
    return false;

  result.codes.resize(size_t(n * stored));
  if (enc.isQuantized()) {
    result.scales.resize(size_t(n * groups));
    if (enc.isUnsigned())
      result.zeros.resize(size_t(n * groups));
  }
  const RowQuantizer rows{enc,
                          bits,
                          stored,
                          groups,
                          enc.zeroPoint == ZeroPointKind::Float,
                          double((1u << bits) - 1),
                          tableMax,
                          nearest,
                          groupOf};
  std::vector<GroupStats> stats(size_t(std::max<int64_t>(groups, 1)));
  for (int64_t row = 0; row < n; ++row)
    if (!rows.quantize(row, w + row * k, keptCols.data() + row * stored, stats,
                       result, error))
      return false;
  u = std::move(result);
  return true;
}

bool quantizeRTN(const Encoding &enc, const float *w, int64_t n, int64_t k,
                 TensorMap &components, std::string &error,
                 const QuantizeOptions &options) {
  Unpacked u;
  return quantizeRTN(enc, w, n, k, u, error, options) &&
         pack(enc, u, n, k, components, error);
}

} // namespace qfuse::format
