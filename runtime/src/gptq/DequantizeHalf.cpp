//===- DequantizeHalf.cpp - a quantized weight as f16, rows on threads ----===//
//
// format::dequantize (format/src/Packing.cpp) one row range per thread, with
// the same f32 expressions in the same order, rounded to f16 in place.
// Where a group holds many more elements than there are codes (4-bit codes
// in groups of 128), the f16 of every code of a group is computed once and
// looked up: the same expression, a sixteenth of the conversions.
//
//===----------------------------------------------------------------------===//

#include "qfuse/runtime/gptq/DequantizeHalf.h"

#include "ParallelRows.h"

#include "qfuse/format/Numerics.h"
#include "qfuse/runtime/Error.h"

#include <vector>

namespace qfuse::runtime {

void dequantizeToHalf(const format::Encoding &enc, const format::Unpacked &u,
                      int64_t n, int64_t k, uint16_t *out) {
  if (enc.isSparse24())
    throw Error("dequantizeToHalf: 2:4 encodings are not dense");
  const int64_t groups = format::numGroups(enc, k);
  const bool quantized = enc.isQuantized();
  if (u.codes.size() != size_t(n * k) ||
      (quantized && u.scales.size() != size_t(n * groups)) ||
      (enc.isUnsigned() && u.zeros.size() != size_t(n * groups)) ||
      (enc.actOrder && u.gIdx.size() != size_t(k)))
    throw Error("dequantizeToHalf: the codes, scales, zeros or g_idx do not "
                "match [" + std::to_string(n) + ", " + std::to_string(k) +
                "] of '" + format::printEncoding(enc) + "'");
  const float *table = nullptr;
  if (enc.format == format::ElementFormat::NF4)
    table = format::kNF4Table;
  else if (enc.format == format::ElementFormat::Codebook)
    table = enc.hasInlineTable ? enc.table.data() : u.table.data();
  const bool unsignedFormat = enc.isUnsigned();
  // format::dequantize's value of `code` in group g of `row`.
  auto value = [&](int64_t row, int64_t g, int32_t code) -> float {
    const float v = format::codeValue(enc.format, code, table);
    if (!quantized)
      return v;
    const float scale = u.scales[size_t(row * groups + g)];
    if (unsignedFormat)
      return scale * (float(code) - u.zeros[size_t(row * groups + g)]);
    if (enc.globalScale)
      return (v * scale) / u.globalScale;
    return scale * v;
  };
  auto groupOf = [&](int64_t col) -> int64_t {
    return enc.actOrder ? u.gIdx[size_t(col)]
           : enc.isPerChannel() || !quantized ? 0
                                              : col / enc.groupSize;
  };
  // Few codes per group (4-bit: 16 for 128 elements): each row's groups
  // get a table of every code's f16, made by the same expression, and the
  // elements look theirs up.
  int32_t minCode = 0, maxCode = -1;
  if (quantized)
    format::codeRange(enc.format, format::codeBits(enc), minCode, maxCode);
  const int64_t codes = int64_t(maxCode) - minCode + 1;
  const bool useTables = quantized && codes > 0 && codes * groups * 2 <= k;
  detail::parallelRows(n, [&](int64_t first, int64_t last) {
    std::vector<uint16_t> tables(useTables ? size_t(codes * groups) : 0);
    for (int64_t row = first; row < last; ++row) {
      const int32_t *rowCodes = u.codes.data() + row * k;
      uint16_t *rowOut = out + row * k;
      if (!useTables) {
        for (int64_t col = 0; col < k; ++col)
          rowOut[col] =
              format::floatToHalf(value(row, groupOf(col), rowCodes[col]));
        continue;
      }
      for (int64_t g = 0; g < groups; ++g)
        for (int64_t c = 0; c < codes; ++c)
          tables[size_t(g * codes + c)] =
              format::floatToHalf(value(row, g, int32_t(minCode + c)));
      for (int64_t col = 0; col < k; ++col) {
        const int64_t c = int64_t(rowCodes[col]) - minCode;
        // Codes are in range (quantizeRTN and the solver clamp them); one
        // outside takes the direct expression.
        rowOut[col] = c >= 0 && c < codes
                          ? tables[size_t(groupOf(col) * codes + c)]
                          : format::floatToHalf(
                                value(row, groupOf(col), rowCodes[col]));
      }
    }
  });
}

} // namespace qfuse::runtime
