//===- WeightQuantizer.h - round-to-nearest of one weight row span -*- C++
//-*-===//
//
// The one IR definition of qf.quantize: format::quantizeRTN (Packing.h,
// QuantizeRules.h) written as scalar scf/arith/math over memrefs, f64 where
// the C++ uses double, math.roundeven for rint, selects that keep
// std::min/std::max's operand order (signed zeros). Two consumers: the CPU
// reference of qf.quantize (qf-to-cpu) and the GPU quantize kernel
// (qf-to-gpu, Ops/QuantizeKernel.cpp). Both write the row-major packed
// components of Packing.h byte for byte.
//
// The unit of work is a span of consecutive groups of one row whose codes
// and integer zero points fill whole bytes (uint4 zero points pack two
// groups per byte, so their span is two groups): units never share a byte,
// so a GPU thread per unit needs no atomics and no zeroed output.
//
// act_order without a g_idx (what quantize-at-load has) groups consecutive
// columns like the plain encoding; the units of row 0 also write the g_idx
// component, col / group (format::quantizeRTN's columnGroups). 2:4 keeps
// the two columns of each quad that select24 picks: the units read the kept
// values only and write their positions to the meta component. A group
// that splits quads (2 or 6 columns) takes the kept values whose columns
// it holds, so its count varies by quad; a unit is then the fewest groups
// of whole quads whose kept values fill whole bytes.
//
// Unquantized 2:4 (f16 or bf16 kept values) has no statistics: a unit keeps
// the quads of kKeptSpan columns, each kept value rounded to the stored
// type from its input bits as format::floatToHalf / floatToBFloat16 round
// it (NaN payloads included), and never sets the status.
//
// NVFP4's global scale depends on the whole tensor only through its largest
// magnitude: the consumer supplies it (a loop on the CPU, a device
// reduction before the GPU launch), prepareGlobalScale turns it into the
// scale as format::quantizeRTN does, and every unit reads that.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_CONVERSION_WEIGHTQUANTIZER_H
#define QFUSE_CONVERSION_WEIGHTQUANTIZER_H

#include "qfuse/Conversion/WeightDecoder.h"
#include "qfuse/format/Encoding.h"

#include <array>
#include <string>

namespace mlir {
namespace qf {

/// Why the generated quantizer does not take `enc` over `k` input columns
/// (those weights stay with the host's format::quantizeRTN), or "" when it
/// does. Not taken: unquantized formats without 2:4 (stored as they are),
/// named codebook tables.
std::string quantizeUnsupportedReason(const qfuse::format::Encoding &enc,
                                      int64_t k);

/// NVFP4's extra kernel input: the parameter holding the tensor's largest
/// magnitude (one f32; the runtime's DeviceQuantizer binds it by this name)
/// and the scratch buffer the launch record names for it.
inline constexpr const char *kQuantizeAmaxParam = "amax";
inline constexpr const char *kQuantizeAmaxBuffer = "qf_quantize_amax";

/// The memrefs one quantization reads and writes; N (the leading dimension)
/// may be dynamic.
struct QuantizeBuffers {
  Value input;  ///< [N, K] f16, bf16 or f32
  Value codes;  ///< [N, rowBytes] i8
  Value scales; ///< [N, G] in storageType(scale type)
  Value zeros;  ///< [N, ceil(G*bits/8)] i8 or [N, G] scale type; null if none
  Value globalScale; ///< [1] f32 (NVFP4's global_scale); null if none
  Value gIdx;        ///< [K] i32 (act_order's g_idx); null if none
  Value meta;        ///< [N, ceil(K/8)] i8 (2:4 positions); null if none

  /// Binds the memref of the component named `name` (format::kCodes, ...);
  /// false for a name that is not a quantizer output.
  bool bind(StringRef name, Value memref);
};

/// The memref types of `QuantizeBuffers` for `enc` over `k` columns with
/// rows `n` (ShapedType::kDynamic allowed), named codes, scales[, zeros]
/// [, global_scale][, g_idx][, meta] (format::componentSpecs' order).
SmallVector<std::pair<std::string, MemRefType>>
quantizeComponentTypes(MLIRContext *ctx, const qfuse::format::Encoding &enc,
                       int64_t n, int64_t k);

class WeightQuantizer {
public:
  /// Columns per unit of unquantized 2:4: 16 quads, so that a unit's kept
  /// values (64 bytes) and positions (4 bytes) are whole bytes.
  static constexpr int64_t kKeptSpan = 64;

  /// `enc` must pass quantizeUnsupportedReason(enc, k).
  WeightQuantizer(ScalarEmitter &e, const qfuse::format::Encoding &enc,
                  int64_t k, const QuantizeBuffers &buffers);

  /// Work units per row (ceil(G / groups per unit)).
  int64_t unitsPerRow() const;

  /// The largest |w| over every row of buf.input (f32): the loop
  /// nvfp4GlobalScale runs, for consumers that see the whole tensor.
  Value tensorAmax();
  /// NVFP4 only, before any quantizeUnit and dominating it: the global scale
  /// from the tensor's largest magnitude `amax` (f32), amax > 0 ?
  /// float(448 * 6 / amax) : 1. Returns an i1 that is false when it is not
  /// finite (the host refuses the tensor).
  Value prepareGlobalScale(Value amax);
  /// Writes the prepared global scale to buf.globalScale[0].
  void storeGlobalScale();

  /// Quantizes unit `u` of row `n` (index values): statistics, scale, zero
  /// point and codes of each of its groups, written to the buffers. Returns
  /// an i1 that is true when every weight was finite and every scale fits
  /// its type; where it is false the caller must fall back to the host
  /// quantizer, which reports the error (the written bytes are unspecified).
  Value quantizeUnit(Value n, Value u);

private:
  /// One group, continuing the unit's bit streams `streams` (codes' pending
  /// (bits, count), then meta's under 2:4): returns (ok, zero point bits or
  /// 0, the streams after the group).
  SmallVector<Value> quantizeGroup(Value n, Value g, ValueRange streams);
  /// quantizeGroup of unquantized 2:4: the kept values' 16-bit bits into
  /// codes (two bytes each, little-endian) and their positions into meta's
  /// stream; ok is always true (the host keeps non-finite values).
  SmallVector<Value> keepGroup(Value n, Value g, ValueRange streams);
  /// The stored f16 or bf16 bits (i32) of input element [n, c]: the
  /// host's floatToHalf / floatToBFloat16 of its f32 value.
  Value keptBits(Value n, Value c);
  /// The integer zero points of unit u's groups (`zeroBits`, LSB-first),
  /// as its whole bytes of zeros[n] (those inside the row).
  void storeZeroBytes(Value n, Value u, Value zeroBits);
  /// act_order, row 0 only: g_idx[c] = c / group for the columns of groups
  /// [g0, gEnd).
  void storeGroupIndex(Value n, Value g0, Value gEnd);

  /// The body of forStored: (weight as f64, its stored index j, its 2:4
  /// position in the quad as i32 or null when dense, whether its column is
  /// in [c0, c1) as i1 or null when it always is, carried values) -> the
  /// next carried values.
  using StoredBody =
      function_ref<SmallVector<Value>(Value, Value, Value, Value, ValueRange)>;
  /// Runs `body` over the values row n stores for the logical columns
  /// [c0, c1), in stored order: every column, or the two select24 keeps of
  /// each quad. A 2:4 group that splits quads (splitsQuads) runs over the
  /// quads that overlap [c0, c1): a kept value outside it gets a false
  /// `valid` and its carried values are kept as they were.
  SmallVector<Value> forStored(Value n, Value c0, Value c1, ValueRange inits,
                               StoredBody body);
  /// The kept (value f64, position i32) pairs of quad q of row n, the lower
  /// position first (format's select24).
  std::array<std::pair<Value, Value>, 2> select24(Value n, Value q);
  /// Appends the `width`-bit `field` (i32), element j of row n's LSB-first
  /// bit stream in `memref`, to the pending (bits, count) `acc`; stores the
  /// byte it completes, unless `valid` (i1, may be null) is false. Returns
  /// the next (bits, count).
  SmallVector<Value> appendField(Value memref, Value n, Value j, unsigned width,
                                 Value field, ValueRange acc,
                                 Value valid = Value());
  /// The input weight [n, c] widened to f64.
  Value loadWeight(Value n, Value c);
  /// The bits one weight stores, from its scale and zero point (f64).
  Value storedCode(Value v, Value scale, Value zero);

  ScalarEmitter &e;
  const qfuse::format::Encoding &enc;
  int64_t k, groups, groupCols, unitGroups;
  unsigned bits;
  /// 2:4 in groups that are not whole quads (format::quantizeRTN groups
  /// each kept value by its own column).
  bool splitsQuads;
  QuantizeBuffers buf;
  /// NVFP4: the tensor's largest magnitude and the global scale (f64), and
  /// the global scale as stored (f32); set by prepareGlobalScale.
  Value tensorAmaxF64, globalScaleF64, globalScaleF32;
};

} // namespace qf
} // namespace mlir

#endif // QFUSE_CONVERSION_WEIGHTQUANTIZER_H
