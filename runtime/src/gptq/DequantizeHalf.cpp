//===- DequantizeHalf.cpp - a quantized weight as f16, rows on threads ----===//
//
// format::dequantize (format/src/Packing.cpp) one row range per thread, with
// the same f32 expressions in the same order, rounded to f16 in place.
//
//===----------------------------------------------------------------------===//

#include "qfuse/runtime/gptq/DequantizeHalf.h"

#include "ParallelRows.h"

#include "qfuse/format/Numerics.h"
#include "qfuse/runtime/Error.h"

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
  detail::parallelRows(n, [&](int64_t first, int64_t last) {
    for (int64_t row = first; row < last; ++row)
      for (int64_t col = 0; col < k; ++col) {
        const int32_t code = u.codes[size_t(row * k + col)];
        const float value = format::codeValue(enc.format, code, table);
        float w;
        if (!quantized) {
          w = value;
        } else {
          const int64_t g = enc.actOrder         ? u.gIdx[size_t(col)]
                            : enc.isPerChannel() ? 0
                                                 : col / enc.groupSize;
          const float scale = u.scales[size_t(row * groups + g)];
          if (unsignedFormat)
            w = scale * (float(code) - u.zeros[size_t(row * groups + g)]);
          else if (enc.globalScale)
            w = (value * scale) / u.globalScale;
          else
            w = scale * value;
        }
        out[row * k + col] = format::floatToHalf(w);
      }
  });
}

} // namespace qfuse::runtime
