//===- Grid.h - the quantization grid GPTQ rounds onto ---------*- C++ -*-===//
//
// One grid per element format, the same grid as round-to-nearest
// (format::quantizeRTN, whose rules Packing.h documents): given the weights
// of one (row, group), `fit` computes the group's scale (and zero point);
// `code` maps one weight to its code with RTN's exact arithmetic (double,
// rint = round half to even, nearest table entry with ties to the lower
// index); `value` is the f32 number that code stands for, computed exactly as
// format::dequantize does. So GPTQ with an identity Hessian reproduces RTN
// code for code, and the error GPTQ feeds back is the true reconstruction
// error.
//
//   Grid            formats                          fit (per group)
//   IntegerGrid     int4/int8 sym, uint4/uint8       s = amax / qmax, or the
//                   with zero = int | float          [min, max] range / qmax
//   MinifloatGrid   fp8e4m3, fp4e2m1 (f16/f32/MX     s = amax / 448 | 6, NVFP4:
//                   scales, NVFP4 global_scale)      e4m3(amax / 6 * global)
//   CodebookGrid    nf4, codebook (inline or named)  s = amax / max|table|
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_GPTQ_GRID_H
#define QFUSE_GPTQ_GRID_H

#include "qfuse/format/Encoding.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace qfuse::gptq {

/// The parameters of one (row, group): the values format::Unpacked stores in
/// `scales` and `zeros`, exactly representable in the encoding's scale type.
struct GroupParams {
  float scale = 1.0f;
  /// Unsigned formats only: the zero point (an integer for zero = int).
  float zero = 0.0f;
};

struct GridOptions {
  /// Codebook with a named table: its 2^bits values (copied).
  const float *table = nullptr;
  /// NVFP4 (global_scale) only: the tensor's f32 global scale, as
  /// nvfp4GlobalScale computes it from the whole weight.
  float globalScale = 1.0f;
};

class Grid {
public:
  virtual ~Grid() = default;

  /// The parameters of a group holding `count` (>= 1) weights, by RTN's
  /// rule. Fails (message in `error`) when the scale does not fit the scale
  /// type, e.g. amax / 7 above the f16 range.
  virtual bool fit(const float *w, int64_t count, GroupParams &params,
                   std::string &error) const = 0;
  /// The logical code (Packing.h's table) nearest to w on the group's grid.
  virtual int32_t code(float w, const GroupParams &params) const = 0;
  /// The value of a code, in f32, bit for bit what format::dequantize gives.
  virtual float value(int32_t code, const GroupParams &params) const = 0;

  const format::Encoding &encoding() const { return enc; }
  /// NVFP4's global scale (1 for every other format).
  float globalScale() const { return global; }
  /// The codebook (nf4 or the inline/named table); empty for other formats.
  const std::vector<float> &table() const { return values; }

protected:
  Grid(const format::Encoding &enc, float global, std::vector<float> values)
      : enc(enc), global(global), values(std::move(values)) {}

  format::Encoding enc;
  float global;
  std::vector<float> values;
};

/// The grid of a dense quantized encoding; null with a message for
/// unquantized or 2:4 encodings, a named table without GridOptions::table,
/// a table with no non-zero entry, or a non-finite global scale.
std::unique_ptr<Grid> makeGrid(const format::Encoding &enc,
                               const GridOptions &options, std::string &error);

/// NVFP4's tensor-wide scale, as quantizeRTN computes it: 448 * 6 / amax in
/// double, rounded to f32; 1 when every weight is 0. Infinite when amax is
/// so small that the quotient overflows f32 (makeGrid rejects that).
float nvfp4GlobalScale(const float *w, int64_t count);

} // namespace qfuse::gptq

#endif // QFUSE_GPTQ_GRID_H
