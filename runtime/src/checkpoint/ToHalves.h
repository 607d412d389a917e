//===- ToHalves.h - float elements rounded to f16 or bf16 -------*- C++ -*-===//
//
// The one rounding of checkpoint floats (f16, bf16, f32) into f16 or bf16
// elements: format::floatToHalf / floatToBFloat16 of the value widened to
// f32, which is what quantizeRTN's unquantized path and convertDense store.
// Into f16 from bf16 or f32 it runs the F16C convert 8 at a time where the
// CPU has it (the same bits: round to nearest even, subnormals, overflow to
// inf, quiet NaNs keeping their top payload bits; DenseAsStoredTest
// compares every bf16 pattern).
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_RUNTIME_SRC_CHECKPOINT_TOHALVES_H
#define QFUSE_RUNTIME_SRC_CHECKPOINT_TOHALVES_H

#include "qfuse/runtime/checkpoint/DType.h"

#include <cstddef>
#include <cstdint>

namespace qfuse::runtime {

/// Elements [first, last) of `data` (of `from`: F16, BF16 or F32) rounded
/// to `to` (F16 or BF16), written little-endian at out + 2 i.
void roundToHalves(DType from, const uint8_t *data, size_t first,
                   size_t last, DType to, uint8_t *out);

/// Element i of `data` (of `from`: F16, BF16 or F32) as an f32.
float widenedElement(DType from, const uint8_t *data, size_t i);

} // namespace qfuse::runtime

#endif // QFUSE_RUNTIME_SRC_CHECKPOINT_TOHALVES_H
