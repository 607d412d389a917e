//===- DenseAsStored.h - f16/bf16 checkpoint tensors as their own codes -*- C++ -*-===//
//
// Binding an fp16 model (the GPTQ calibration plan, fp16 baselines) packs
// every checkpoint tensor into the unquantized f16 encoding. When the
// tensor is stored as f16 (bf16 into bf16), its little-endian bytes are
// exactly that encoding's row-major codes: quantizeRTN's f16 -> f32 -> f16
// round trip is the identity on every value but NaN payloads. So the
// loader takes the bytes instead of converting each element twice: as they
// lie in the mapped file (denseCodesAsStored), or copied (packDenseAsStored).
// A tensor of another float type (a bf16 checkpoint into the f16 plan) is
// converted straight into the codes, element by element as quantizeRTN
// rounds it, on every core (packDenseConverted), instead of through f32
// rows, int32 codes and packing: the same bytes in one pass.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_RUNTIME_CHECKPOINT_DENSEASSTORED_H
#define QFUSE_RUNTIME_CHECKPOINT_DENSEASSTORED_H

#include "qfuse/format/Encoding.h"
#include "qfuse/format/Tensor.h"
#include "qfuse/runtime/checkpoint/DType.h"

#include <cstdint>
#include <optional>

namespace qfuse::runtime {

/// The row-major codes component of the [n, k] tensor `data` of `dtype`,
/// viewing `data` itself, when `enc` is the unquantized dense encoding of
/// that same dtype (f16 or bf16) and the tensor holds no NaN; std::nullopt
/// otherwise (the caller converts). The NaN scan runs on `threads` threads
/// (0: every core).
std::optional<format::TensorView>
denseCodesAsStored(const format::Encoding &enc, DType dtype,
                   const uint8_t *data, int64_t n, int64_t k,
                   unsigned threads = 0);

/// Fills `components` with the row-major components format::quantizeRTN
/// and format::pack would make from the [n, k] tensor `data` of `dtype`
/// (a copy of denseCodesAsStored's view), and returns true, when that view
/// is there; otherwise returns false and leaves `components` alone (the
/// caller converts as before).
bool packDenseAsStored(const format::Encoding &enc, DType dtype,
                       const uint8_t *data, int64_t n, int64_t k,
                       format::TensorMap &components);

/// Fills `components` with the row-major components format::quantizeRTN
/// and format::pack would make from the [n, k] tensor `data` of `dtype`
/// (f16, bf16 or f32) converted to the unquantized dense encoding `enc` of
/// another type (f16 or bf16), and returns true; returns false and leaves
/// `components` alone for any other pair (the caller converts as before).
bool packDenseConverted(const format::Encoding &enc, DType dtype,
                        const uint8_t *data, int64_t n, int64_t k,
                        format::TensorMap &components);

} // namespace qfuse::runtime

#endif // QFUSE_RUNTIME_CHECKPOINT_DENSEASSTORED_H
