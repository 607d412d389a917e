//===- Packing.h - row-major packed storage of a weight --------*- C++ -*-===//
//
// The one definition of how a weight of logical shape [N, K] (N outputs, K
// inputs, Hugging Face's [out, in]) with a given #qf.enc is stored in
// `#qf.layout<row_major>`, the checkpoint order. Kernel layouts (`tiled`)
// are permutations of these same bytes.
//
// A packed weight is a set of named components (TensorMap). Every buffer is
// little-endian and row-major; N rows are packed independently.
//
//   component      present when               dtype                 shape
//   "codes"        always                     U8                    [N, rowBytes]
//   "scales"       quantized                  scale type (*)        [N, G]
//   "zeros"        zero = int                 U8                    [N, ceil(G*bits/8)]
//                  zero = float               scale type            [N, G]
//   "global_scale" global_scale (NVFP4)       F32                   [1]
//   "g_idx"        act_order                  I32                   [K]
//   "meta"         sparse = 2:4               U8                    [N, ceil(K/8)]
//   "table"        codebook, named table      table type (F16/F32)  [2^bits]
//
//   (*) f16 -> F16, bf16 -> BF16, f32 -> F32, f8E4M3FN -> F8_E4M3,
//       f8E8M0FNU -> F8_E8M0 (one byte, 2^(b-127)).
//   G = numGroups(enc, K): 1 per channel, K / group otherwise.
//   rowBytes = storedPerRow * bits / 8 with storedPerRow = K (K/2 under 2:4);
//   validate() guarantees this is a whole number of bytes.
//
// Codes: a row is one bit stream, element k at bits [k*bits, (k+1)*bits),
// least significant bit first -- exactly compressed-tensors pack-quantized,
// minus its int32 word padding. 4-bit codes, K = 8:
//
//        byte 0          byte 1          byte 2          byte 3
//   bit  7..4  3..0      7..4  3..0      7..4  3..0      7..4  3..0
//        [ c1 | c0 ]     [ c3 | c2 ]     [ c5 | c4 ]     [ c7 | c6 ]
//
// 3-bit codebook indices cross bytes (cK[i] is bit i of code K):
//
//   byte 0   bits 7..6 = c2[1:0]   5..3 = c1       2..0 = c0
//   byte 1   bit  7    = c5[0]     6..4 = c4       3..1 = c3    0 = c2[2]
//   byte 2   bits 7..5 = c7        4..2 = c6       1..0 = c5[2:1]
//
// What one code c holds (the logical code; see storedCode/logicalCode):
//   int4      q in [-8, 7] stored offset-binary, c = q + 8 (as pack-quantized)
//   uint4     q in [0, 15]
//   int8      q in [-128, 127] stored two's complement, c = q & 0xFF
//   uint8     q in [0, 255]
//   fp8e4m3   the float8_e4m3fn byte
//   fp4e2m1   sign << 3 | idx, idx into {0, .5, 1, 1.5, 2, 3, 4, 6}
//   nf4       index into kNF4Table;  codebook: index into the table
//   f16/bf16  the 16-bit value (2 bytes, little-endian)
//
// Scales and float zeros: one value per (row, group) in the scale type, row
// major. Integer zero points: a bit stream per row like the codes, one
// `bits`-wide unsigned value per group (uint4: two groups per byte, group 0
// in the low nibble).
//
// 2:4 sparsity: of each 4 consecutive columns exactly 2 are kept. "codes"
// holds the kept values in column order, [N, K/2] packed as above; scales
// stay indexed by the logical column (group of column k is k / group).
// "meta" holds, per group of 4 columns, the two kept positions (0..3,
// first < second) as 2-bit fields, LSB first:
//
//        meta byte j of row n
//   bit  7 6   5 4   3 2   1 0
//        b1    a1    b0    a0      quad 2j keeps columns 4*(2j) + {a0, b0},
//                                  quad 2j+1 keeps 4*(2j+1) + {a1, b1}
//   kept value 2i (codes) is column 4i + a_i, value 2i+1 is column 4i + b_i.
//
// Values (dequantize), computed in f32 with g = k / group (g_idx[k] under
// act_order):
//   int4, int8           w = scale[n, g] * q
//   uint4, uint8         w = scale[n, g] * (q - zero[n, g])
//   fp8e4m3              w = scale[n, g] * e4m3(c)
//   fp4e2m1              w = scale[n, g] * e2m1(c)
//   fp4e2m1 + global     w = (e2m1(c) * scale[n, g]) / global_scale  (NVFP4)
//   nf4, codebook        w = scale[n, g] * table[c]
//   f16, bf16            w = the value
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_FORMAT_PACKING_H
#define QFUSE_FORMAT_PACKING_H

#include "qfuse/format/Encoding.h"
#include "qfuse/format/Tensor.h"

#include <cstdint>
#include <string>
#include <vector>

namespace qfuse::format {

/// Component names.
inline constexpr const char *kCodes = "codes";
inline constexpr const char *kScales = "scales";
inline constexpr const char *kZeros = "zeros";
inline constexpr const char *kGlobalScale = "global_scale";
inline constexpr const char *kGIdx = "g_idx";
inline constexpr const char *kMetadata = "meta"; // 2:4 positions
inline constexpr const char *kTable = "table";

/// A packed weight: its encoding, logical shape and components.
struct PackedWeight {
  Encoding encoding;
  int64_t n = 0;
  int64_t k = 0;
  TensorMap components;
};

/// What one component must look like.
struct ComponentSpec {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
};

/// The components of a row-major [N, K] weight with encoding `enc`, in the
/// table's order. Fails if validate(enc, N, K) fails.
bool componentSpecs(const Encoding &enc, int64_t n, int64_t k,
                    std::vector<ComponentSpec> &specs, std::string &error);

/// Checks that `components` holds exactly the specified components with the
/// right dtypes and shapes; the message names the offending component.
bool checkComponents(const Encoding &enc, const TensorMap &components,
                     int64_t n, int64_t k, std::string &error);

/// The DType that stores values of a scale or table type.
DType scalarDType(ScalarType type);

/// Bytes of packed codes per row.
int64_t rowBytes(const Encoding &enc, int64_t k);

//===----------------------------------------------------------------------===//
// Bit streams and codes
//===----------------------------------------------------------------------===//

/// Writes the low `bits` (1..32) of `value` at element `index` of an
/// LSB-first bit stream (bits [index*bits, (index+1)*bits)). The target bits
/// must be zero.
void putBits(uint8_t *stream, int64_t index, unsigned bits, uint32_t value);
/// Reads element `index` of an LSB-first bit stream.
uint32_t getBits(const uint8_t *stream, int64_t index, unsigned bits);

/// Logical code -> the unsigned value stored in the bit stream (int4: q + 8,
/// int8: q & 0xFF, every other format: unchanged).
uint32_t storedCode(ElementFormat format, int32_t code);
/// The inverse of storedCode.
int32_t logicalCode(ElementFormat format, uint32_t stored);
/// The range of logical codes of a format with `bits`-wide codes.
void codeRange(ElementFormat format, unsigned bits, int32_t &min, int32_t &max);

/// The unscaled value of a logical code: q for integer formats, the decoded
/// float for fp8/fp4/f16/bf16, table[c] for nf4/codebook (`table` is the
/// codebook, ignored otherwise).
float codeValue(ElementFormat format, int32_t code, const float *table);

//===----------------------------------------------------------------------===//
// Unpacked form
//===----------------------------------------------------------------------===//

/// The content of a packed weight with one plain number per element: what
/// quantizers produce and kernels' references consume.
struct Unpacked {
  /// [N, storedPerRow] logical codes (see the table above).
  std::vector<int32_t> codes;
  /// 2:4 only: [N, K/2] column within its group of 4 of each kept value.
  std::vector<uint8_t> positions;
  /// [N, G] scale values, exactly representable in the scale type.
  std::vector<float> scales;
  /// [N, G] zero points (integers for zero = int), or empty.
  std::vector<float> zeros;
  /// NVFP4 only: the f32 global scale.
  float globalScale = 1.0f;
  /// act_order only: [K] group of each input column.
  std::vector<int32_t> gIdx;
  /// Codebook with a named table only: its 2^bits values.
  std::vector<float> table;
};

/// Packs `u` into components. Fails on sizes that do not match, codes out of
/// range, scales or zeros not representable, 2:4 positions not increasing.
bool pack(const Encoding &enc, const Unpacked &u, int64_t n, int64_t k,
          TensorMap &components, std::string &error);

/// The logical code whose low byte is `byte` (a code of at most 8 bits):
/// sign-extended for int4/int8, zero-extended for the other formats.
int32_t codeFromByte(ElementFormat format, uint8_t byte);

/// pack() of a dense weight whose codes come as bytes, [N, K] row-major:
/// each logical code's low byte (sign-extended back for int4/int8, as
/// storedCode's inverse expects), as GPTQ's kernel stores them. Every other
/// part (scales, zeros, global scale, g_idx, table) comes from `params`,
/// whose `codes` must be empty. Encodings of at most 8 code bits; the
/// result equals pack() of the same codes widened to int32.
bool packCodeBytes(const Encoding &enc, const uint8_t *codeBytes,
                   const Unpacked &params, int64_t n, int64_t k,
                   TensorMap &components, std::string &error);

/// pack() of a dense weight whose codes component comes packed already
/// (`codes`: its bytes, e.g. from the device's gather, FieldGather.h);
/// every other part from `params`, whose `codes` must be empty. Fails when
/// `codes` is not the component's size.
bool packWithCodes(const Encoding &enc, std::vector<uint8_t> codes,
                   const Unpacked &params, int64_t n, int64_t k,
                   TensorMap &components, std::string &error);

/// Unpacks and checks components (checkComponents, g_idx in range, 2:4
/// positions increasing).
bool unpack(const Encoding &enc, const TensorMap &components, int64_t n,
            int64_t k, Unpacked &u, std::string &error);

//===----------------------------------------------------------------------===//
// Values
//===----------------------------------------------------------------------===//

/// The dense [N, K] weight a packed weight stands for (row-major, f32),
/// computed by the formulas above. Pruned 2:4 entries are 0.
bool dequantize(const Encoding &enc, const TensorMap &components, int64_t n,
                int64_t k, std::vector<float> &w, std::string &error);
bool dequantize(const Encoding &enc, const Unpacked &u, int64_t n, int64_t k,
                std::vector<float> &w, std::string &error);

struct QuantizeOptions {
  /// act_order: the group of each input column, [K] (default k / group).
  const int32_t *gIdx = nullptr;
  /// Codebook with a named table: its 2^bits values.
  const float *table = nullptr;
};

/// Round-to-nearest quantization of a dense row-major [N, K] weight.
///
/// Per (row, group) of the elements that are kept:
///   symmetric integers   s = amax / qmax (qmax = 7, 127), q = rint(w / s),
///                        codes in [-qmax, qmax]
///   zero = int           range [min(min, 0), max(max, 0)], s = range / qmax
///                        (qmax = 15, 255), z = clamp(rint(-lo / s), 0, qmax),
///                        q = clamp(rint(w / s) + z, 0, qmax)
///   zero = float         s = (max - min) / qmax, z = -min / s (unrounded),
///                        q = clamp(rint(w / s + z), 0, qmax)
///   fp8e4m3              s = amax / 448, c = e4m3(w / s)
///   fp4e2m1              s = amax / 6, c = e2m1(w / s) (ties to even code)
///   NVFP4                global = 448 * 6 / amax(W), block scale
///                        e4m3(amax_block / 6 * global) (nearest),
///                        c = e2m1(w * global / scale)
///   nf4, codebook        s = amax / max|table|, c = nearest table entry
///                        (lower index on a tie)
///   f16, bf16            rounded to nearest
/// f16/bf16/f32 scales round UP into the scale type and E8M0 scales are the
/// next power of two up (not the OCP spec's floor(log2 amax) - emax, which
/// clips up to a third of a block), so the largest element is never clipped.
/// A group of zeros gets s = 1 (NVFP4: the recipe's 0, with codes 0). rint
/// rounds half to even. A NaN or infinite weight that is kept fails, naming
/// its [row, column]. Under 2:4, each
/// group of 4 keeps its two largest magnitudes (the lower column on a tie;
/// a NaN is never larger, so it is kept only in column 0 of its quad, or 1
/// when column 0 holds the largest), and the statistics
/// cover kept values only. act_order without options.gIdx (quantize at
/// load) groups consecutive columns, and g_idx is k / group.
///
/// Error bounds that follow, per element, with s the stored scale of its
/// group (s / global for NVFP4) and u the unit roundoff of the scale type:
///   integers, zero = int      |w - w'| <= s / 2
///   zero = float              |w - w'| <= s / 2 + s * |z| * u
///   fp8e4m3                   |w - w'| <= |w| / 16 + s / 1024
///   fp4e2m1 (f16/bf16/f32, MX) |w - w'| <= s (the half gap between 4 and 6)
///   NVFP4                     |w - w'| <= s, when the E4M3 block scale is in
///                             E4M3's normal range (>= 2^-6)
///   nf4 / codebook            |w - w'| <= s * h, h the largest distance from
///                             a point of [-m, m] to its nearest entry
///                             (m = max|table|; nf4: h = 0.152)
///   f16 / bf16                relative 2^-11 / 2^-8 (normal range)
/// Pruned 2:4 entries become exactly 0.
bool quantizeRTN(const Encoding &enc, const float *w, int64_t n, int64_t k,
                 TensorMap &components, std::string &error,
                 const QuantizeOptions &options = {});
bool quantizeRTN(const Encoding &enc, const float *w, int64_t n, int64_t k,
                 Unpacked &u, std::string &error,
                 const QuantizeOptions &options = {});

} // namespace qfuse::format

#endif // QFUSE_FORMAT_PACKING_H
