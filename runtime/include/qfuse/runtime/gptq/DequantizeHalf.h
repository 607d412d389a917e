//===- DequantizeHalf.h - a quantized weight as f16, rows on threads -*- C++ -*-===//
//
// What the GPTQ pipeline rebinds after each layer so that the next layer's
// calibration sees the quantized weights: format::dequantize's value of
// every element, rounded once to f16 (format::floatToHalf), written
// straight into the caller's [n, K] buffer, rows split over the cores. It
// restates format::dequantize's formulas (dense encodings) without that
// function's full repack check, and is tested bit for bit against it.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_RUNTIME_GPTQ_DEQUANTIZEHALF_H
#define QFUSE_RUNTIME_GPTQ_DEQUANTIZEHALF_H

#include "qfuse/format/Encoding.h"
#include "qfuse/format/Packing.h"

#include <cstdint>

namespace qfuse::runtime {

/// out[r * k + c] = f16(format::dequantize(enc, u)[r * k + c]) for the
/// [n, k] weight `u`. Throws on a 2:4 encoding or sizes that do not match.
void dequantizeToHalf(const format::Encoding &enc, const format::Unpacked &u,
                      int64_t n, int64_t k, uint16_t *out);

} // namespace qfuse::runtime

#endif // QFUSE_RUNTIME_GPTQ_DEQUANTIZEHALF_H
