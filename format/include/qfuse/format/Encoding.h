//===- Encoding.h - how the elements of a packed weight are stored -*- C++ -*-===//
//
// The plain C++ twin of the dialect's `#qf.enc<...>` attribute
// (include/qfuse/Dialect/QF/IR/QFAttrs.td): the same parameters, the same
// text syntax, the same verifier rules and messages, without MLIR. The
// runtime and Python read encodings from artifacts and configs through this;
// the compiler can use it where it must not depend on an MLIRContext.
//
//   #qf.enc<int4, group = 128, scale = f16>                  // GPTQ sym
//   #qf.enc<uint4, group = 128, scale = f16, zero = int>     // GPTQ/AWQ asym
//   #qf.enc<fp4e2m1, group = 16, scale = f8E4M3FN, global_scale> // NVFP4
//   #qf.enc<codebook, bits = 3, table = dense<[...]> : tensor<8xf16>,
//           group = 128, scale = f16>
//
// parseEncoding takes the text between `#qf.enc<` and `>`. No function here
// throws: failures return false and a message in `error`.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_FORMAT_ENCODING_H
#define QFUSE_FORMAT_ENCODING_H

#include "qfuse/format/Numerics.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace qfuse::format {

/// How one weight element is stored (the dialect's ElementFormat).
enum class ElementFormat {
  Int4,     // signed, symmetric [-8, 7]
  UInt4,    // unsigned [0, 15] minus a zero point
  Int8,     // signed, symmetric
  UInt8,    // unsigned minus a zero point
  FP8E4M3,  // float8_e4m3fn
  FP4E2M1,  // {0, .5, 1, 1.5, 2, 3, 4, 6} with sign
  NF4,      // the bitsandbytes NormalFloat4 table
  Codebook, // 2..8-bit index into a table
  F16,      // unquantized (2:4 sparse fp16)
  BF16      // unquantized (2:4 sparse bf16)
};

/// The float types that appear as scale or codebook table types, spelled as
/// MLIR spells them (f16, bf16, f32, f8E4M3FN, f8E8M0FNU).
enum class ScalarType { None, F16, BF16, F32, F8E4M3FN, F8E8M0FNU };

enum class ZeroPointKind {
  None,
  Int,  // packed like the codes (GPTQ/AWQ)
  Float // one value per group, in the scale type
};

enum class Sparsity { Dense, TwoFour };

/// The parameters of `#qf.enc<...>`, field for field.
struct Encoding {
  /// Group size that stands for "one scale per output channel".
  static constexpr int64_t kPerChannel = 0;
  /// Neither `group` nor `per_channel` given (valid only when unquantized).
  static constexpr int64_t kGroupUnset = -1;

  ElementFormat format = ElementFormat::F16;
  /// Codebook index width (`bits = B`); 0 for every other format.
  unsigned indexBits = 0;

  /// Inline table (`table = dense<[...]> : tensor<Nxf16>`): its shape and its
  /// values, already rounded to tableType.
  bool hasInlineTable = false;
  std::vector<int64_t> tableShape;
  std::vector<float> table;
  /// Named table (`table = "name" : f16`), resolved at run time.
  std::string tableName;
  /// Element type of the inline or named table.
  ScalarType tableType = ScalarType::None;

  int64_t groupSize = kGroupUnset;
  ScalarType scaleType = ScalarType::None;
  bool globalScale = false;
  ZeroPointKind zeroPoint = ZeroPointKind::None;
  bool actOrder = false;
  Sparsity sparsity = Sparsity::Dense;

  bool isQuantized() const;
  bool isPerChannel() const { return groupSize == kPerChannel; }
  bool isSparse24() const { return sparsity == Sparsity::TwoFour; }
  bool hasNamedTable() const { return !tableName.empty(); }
  bool isUnsigned() const {
    return format == ElementFormat::UInt4 || format == ElementFormat::UInt8;
  }

  /// Field-wise equality; table values compare by bits.
  bool operator==(const Encoding &other) const;
  bool operator!=(const Encoding &other) const { return !(*this == other); }
};

//===----------------------------------------------------------------------===//
// Queries
//===----------------------------------------------------------------------===//

/// Bits of one stored code: 4 for int4/uint4/fp4/nf4, 8 for int8/uint8/fp8,
/// the index width of a codebook, 16 for unquantized f16/bf16.
unsigned codeBits(const Encoding &enc);
/// The same from the format and a codebook's index width (0 otherwise).
unsigned codeBits(ElementFormat format, unsigned indexBits);

/// Scale groups along K for a weight with K input columns: 0 when
/// unquantized, 1 per channel, ceil(K / group) otherwise.
int64_t numGroups(const Encoding &enc, int64_t k);

/// Stored elements per row: K, or K / 2 under 2:4 sparsity.
int64_t storedPerRow(const Encoding &enc, int64_t k);

/// The codebook values of nf4 (the built-in table) or of an inline table;
/// empty for a named table and for every other format.
std::vector<float> codebookValues(const Encoding &enc);

/// The dialect's spelling of each enum value ("int4", "f8E4M3FN", "int").
const char *formatName(ElementFormat format);
const char *scalarTypeName(ScalarType type);
const char *zeroPointName(ZeroPointKind kind);

/// Size in bytes of one value of a scalar type (0 for None).
unsigned scalarTypeBytes(ScalarType type);

/// Round `value` to the nearest value of `type`, and back to float; E8M0
/// rounds up to a power of two (MX scales never shrink).
float roundToScalarType(float value, ScalarType type);

//===----------------------------------------------------------------------===//
// Text
//===----------------------------------------------------------------------===//

/// Parses the body of `#qf.enc<...>`, e.g. "uint4, group = 128, scale = f16,
/// zero = int", and verifies it (verifyEncoding). Accepts what the dialect
/// parser accepts: entries in any order after the format, each at most once
/// (group and per_channel exclusive), integers in decimal or 0x hex, inline tables as dense<[...]>, dense<splat> or
/// dense<"0xHEX"> over tensor<Nxf16|f32>, named tables with string escapes.
bool parseEncoding(std::string_view text, Encoding &enc, std::string &error);

/// The canonical text, in the dialect printer's order: format, bits, table,
/// group / per_channel, scale, global_scale, zero, act_order, sparse = 2:4.
/// Without the surrounding `#qf.enc<` `>`. Byte for byte the dialect
/// printer's text, inline tables included (APFloat's float formatting,
/// splats as one value, more than 100 values as hex), so strings from the
/// compiler and from here compare equal; parseEncoding(printEncoding(e)) == e
/// for every valid e.
std::string printEncoding(const Encoding &enc);

/// Encodings by the names users know:
///   int4-g128        int4, group = 128, scale = f16
///   uint4-g128-asym  uint4, group = 128, scale = f16, zero = int
///   nf4              nf4, group = 64, scale = f32
///   nvfp4            fp4e2m1, group = 16, scale = f8E4M3FN, global_scale
///   mxfp4            fp4e2m1, group = 32, scale = f8E8M0FNU
///   fp8              fp8e4m3, per_channel, scale = f32
///   int8             int8, per_channel, scale = f16
///   2:4              f16, sparse = 2:4
///   2:4+int4         int4, group = 128, scale = f16, sparse = 2:4
/// and the family {int4,uint4,int8,uint8}-g<G>[-asym] (e.g. "int4-g64",
/// "uint8-g32-asym"; the unsigned formats need -asym, which means zero = int).
bool encodingFromName(std::string_view name, Encoding &enc, std::string &error);

/// The fixed names above, for help texts.
std::vector<std::string> encodingNames();

//===----------------------------------------------------------------------===//
// Verification
//===----------------------------------------------------------------------===//

/// The dialect's EncodingAttr::verify: the encoding on its own.
bool verifyEncoding(const Encoding &enc, std::string &error);

/// The most elements a weight may have (2^48), so that no size derived from
/// its shape wraps int64.
inline constexpr int64_t kMaxWeightElements = int64_t(1) << 48;

/// verifyEncoding plus the dialect's WeightType::verify for a row-major
/// [N, K] weight: positive shape of at most kMaxWeightElements, group
/// divides K, 2:4 needs K % 4 == 0, and every packed row ends on a byte.
bool validate(const Encoding &enc, int64_t n, int64_t k, std::string &error);

} // namespace qfuse::format

#endif // QFUSE_FORMAT_ENCODING_H
