//===- QFAttrs.cpp - #qf.enc, #qf.layout, #qf.tiling ------------------------===//
//
// Parsing, printing and verification of the attributes that describe packed
// weights. The verifiers are where inconsistent encodings are rejected, each
// message naming what is wrong and what was expected.
//
//===----------------------------------------------------------------------===//

#include "qfuse/Dialect/QF/IR/QFDialect.h"

#include "qfuse/Dialect/QF/IR/FormatBridge.h"

#include "qfuse/format/Numerics.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::qf;

#include "qfuse/Dialect/QF/IR/QFEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "qfuse/Dialect/QF/IR/QFAttrs.cpp.inc"

void QFDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "qfuse/Dialect/QF/IR/QFAttrs.cpp.inc"
      >();
}

namespace {
/// Group size recorded while parsing when neither `group` nor `per_channel`
/// was given; the verifier turns it into an error for quantized formats.
constexpr int64_t kGroupUnset = qfuse::format::Encoding::kGroupUnset;
static_assert(EncodingAttr::kPerChannel ==
              qfuse::format::Encoding::kPerChannel);

bool isUnquantizedFormat(ElementFormat f) {
  return f == ElementFormat::F16 || f == ElementFormat::BF16;
}

/// Parses `key [= value] (, key [= value])*` after the leading element that
/// the caller has consumed; `parseEntry` consumes the value for each key.
/// A key given twice is an error rather than "the last one wins".
ParseResult
parseEntries(AsmParser &parser,
             llvm::function_ref<ParseResult(StringRef key, SMLoc loc)> parseEntry) {
  llvm::StringSet<> seen;
  while (succeeded(parser.parseOptionalComma())) {
    SMLoc loc = parser.getCurrentLocation();
    StringRef key;
    if (parser.parseKeyword(&key))
      return failure();
    if (!seen.insert(key).second)
      return parser.emitError(loc) << "duplicate entry '" << key << "'";
    if (parseEntry(key, loc))
      return failure();
  }
  return success();
}

ParseResult parseInt64Entry(AsmParser &parser, int64_t &value) {
  return failure(parser.parseEqual() || parser.parseInteger(value));
}
} // namespace

//===----------------------------------------------------------------------===//
// EncodingAttr
//===----------------------------------------------------------------------===//

unsigned EncodingAttr::getCodeBits() const {
  return qfuse::format::codeBits(
      static_cast<qfuse::format::ElementFormat>(getFormat()), getIndexBits());
}

bool EncodingAttr::isQuantized() const {
  return !isUnquantizedFormat(getFormat());
}

int64_t EncodingAttr::getNumGroups(int64_t k) const {
  if (!isQuantized())
    return 0;
  if (isPerChannel())
    return 1;
  return (k + getGroupSize() - 1) / getGroupSize();
}

SmallVector<double> EncodingAttr::getCodebookValues() const {
  if (getFormat() == ElementFormat::NF4)
    return SmallVector<double>(std::begin(qfuse::format::kNF4Table),
                               std::end(qfuse::format::kNF4Table));
  SmallVector<double> values;
  if (auto table = getTable())
    for (const APFloat &v : table.getValues<APFloat>())
      values.push_back(v.convertToDouble());
  return values;
}

Attribute EncodingAttr::parse(AsmParser &parser, Type) {
  SMLoc formatLoc = parser.getCurrentLocation();
  StringRef formatName;
  if (parser.parseLess() || parser.parseKeyword(&formatName))
    return {};
  std::optional<ElementFormat> format = symbolizeElementFormat(formatName);
  if (!format) {
    parser.emitError(formatLoc)
        << "unknown element format '" << formatName
        << "'; expected one of int4, uint4, int8, uint8, fp8e4m3, fp4e2m1, "
           "nf4, codebook, f16, bf16";
    return {};
  }

  int64_t bits = 0;
  DenseFPElementsAttr table;
  StringAttr tableName;
  Type tableType;
  int64_t group = kGroupUnset;
  Type scaleType;
  bool globalScale = false;
  ZeroPointKind zero = ZeroPointKind::None;
  bool actOrder = false;
  Sparsity sparsity = Sparsity::Dense;

  auto parseEntry = [&](StringRef key, SMLoc loc) -> ParseResult {
    if (key == "bits")
      return parseInt64Entry(parser, bits);
    if (key == "group" || key == "per_channel") {
      if (group != kGroupUnset)
        return parser.emitError(loc) << "'group' and 'per_channel' are "
                                        "exclusive; give one granularity";
      if (key == "per_channel") {
        group = EncodingAttr::kPerChannel;
        return success();
      }
      // 0 and -1 are the per-channel and unset markers: reject them here,
      // before they could pass for either.
      if (parser.parseEqual())
        return failure();
      SMLoc valueLoc = parser.getCurrentLocation();
      if (parser.parseInteger(group))
        return failure();
      if (group <= 0)
        return parser.emitError(valueLoc)
               << "group size must be at least 2 (or per_channel), got "
               << group;
      return success();
    }
    if (key == "scale")
      return failure(parser.parseEqual() || parser.parseType(scaleType));
    if (key == "global_scale") {
      globalScale = true;
      return success();
    }
    if (key == "act_order") {
      actOrder = true;
      return success();
    }
    if (key == "zero") {
      StringRef kind;
      SMLoc kindLoc = parser.getCurrentLocation();
      if (parser.parseEqual() || parser.parseKeyword(&kind))
        return failure();
      std::optional<ZeroPointKind> parsed = symbolizeZeroPointKind(kind);
      if (!parsed || *parsed == ZeroPointKind::None)
        return parser.emitError(kindLoc)
               << "unknown zero point kind '" << kind
               << "'; expected 'int' or 'float'";
      zero = *parsed;
      return success();
    }
    if (key == "sparse") {
      int64_t kept = 0, of = 0;
      SMLoc patternLoc = parser.getCurrentLocation();
      if (parser.parseEqual() || parser.parseInteger(kept) ||
          parser.parseColon() || parser.parseInteger(of))
        return failure();
      if (kept != 2 || of != 4)
        return parser.emitError(patternLoc)
               << "unsupported sparsity " << kept << ":" << of
               << "; only 2:4 structured sparsity is supported";
      sparsity = Sparsity::TwoFour;
      return success();
    }
    if (key == "table") {
      if (parser.parseEqual())
        return failure();
      std::string name;
      if (succeeded(parser.parseOptionalString(&name))) {
        tableName = parser.getBuilder().getStringAttr(name);
        return failure(parser.parseColon() || parser.parseType(tableType));
      }
      Attribute attr;
      SMLoc attrLoc = parser.getCurrentLocation();
      if (parser.parseAttribute(attr))
        return failure();
      table = dyn_cast<DenseFPElementsAttr>(attr);
      if (!table)
        return parser.emitError(attrLoc)
               << "codebook table must be a dense floating-point tensor "
                  "(dense<[...]> : tensor<Nxf16>) or a name (\"name\" : f16)";
      return success();
    }
    return parser.emitError(loc)
           << "unknown encoding entry '" << key
           << "'; expected bits, table, group, per_channel, scale, "
              "global_scale, zero, act_order or sparse";
  };
  if (parseEntries(parser, parseEntry) || parser.parseGreater())
    return {};
  if (bits < 0 || bits > 64) {
    parser.emitError(formatLoc) << "'bits' out of range: " << bits;
    return {};
  }
  return parser.getChecked<EncodingAttr>(
      formatLoc, parser.getContext(), *format, static_cast<unsigned>(bits),
      table, tableName, tableType, group, scaleType, globalScale, zero,
      actOrder, sparsity);
}

void EncodingAttr::print(AsmPrinter &printer) const {
  printer << "<" << stringifyElementFormat(getFormat());
  if (getFormat() == ElementFormat::Codebook) {
    printer << ", bits = " << getIndexBits();
    if (getTable()) {
      printer << ", table = ";
      printer.printAttribute(getTable());
    } else if (getTableName()) {
      printer << ", table = ";
      printer.printString(getTableName().getValue());
      printer << " : " << getTableType();
    }
  }
  if (isQuantized()) {
    if (isPerChannel())
      printer << ", per_channel";
    else
      printer << ", group = " << getGroupSize();
  }
  if (getScaleType())
    printer << ", scale = " << getScaleType();
  if (getGlobalScale())
    printer << ", global_scale";
  if (getZeroPoint() != ZeroPointKind::None)
    printer << ", zero = " << stringifyZeroPointKind(getZeroPoint());
  if (getActOrder())
    printer << ", act_order";
  if (getSparsity() == Sparsity::TwoFour)
    printer << ", sparse = 2:4";
  printer << ">";
}

/// The rules are the format library's (format::verifyEncoding), which the
/// runtime applies to the encodings it reads; only the types it cannot name
/// are refused here.
LogicalResult EncodingAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, ElementFormat format,
    unsigned indexBits, DenseFPElementsAttr table, StringAttr tableName,
    Type tableType, int64_t groupSize, Type scaleType, bool globalScale,
    ZeroPointKind zeroPoint, bool actOrder, Sparsity sparsity) {
  FailureOr<qfuse::format::Encoding> enc = toFormatEncoding(
      emitError, format, indexBits, table, tableName, tableType, groupSize,
      scaleType, globalScale, zeroPoint, actOrder, sparsity);
  if (failed(enc))
    return failure();
  std::string error;
  if (!qfuse::format::verifyEncoding(*enc, error))
    return emitError() << error;
  return success();
}

//===----------------------------------------------------------------------===//
// LayoutAttr
//===----------------------------------------------------------------------===//

Attribute LayoutAttr::parse(AsmParser &parser, Type) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef kindName;
  if (parser.parseLess() || parser.parseKeyword(&kindName))
    return {};
  std::optional<LayoutKind> kind = symbolizeLayoutKind(kindName);
  if (!kind) {
    parser.emitError(loc) << "unknown layout '" << kindName
                          << "'; expected 'row_major' or 'tiled'";
    return {};
  }
  int64_t tileN = 0, tileK = 0, interleave = *kind == LayoutKind::Tiled;
  auto parseEntry = [&](StringRef key, SMLoc keyLoc) -> ParseResult {
    if (key == "tile_n")
      return parseInt64Entry(parser, tileN);
    if (key == "tile_k")
      return parseInt64Entry(parser, tileK);
    if (key == "interleave")
      return parseInt64Entry(parser, interleave);
    return parser.emitError(keyLoc)
           << "unknown layout entry '" << key
           << "'; expected tile_n, tile_k or interleave";
  };
  if (parseEntries(parser, parseEntry) || parser.parseGreater())
    return {};
  return parser.getChecked<LayoutAttr>(loc, parser.getContext(), *kind, tileN,
                                       tileK, interleave);
}

void LayoutAttr::print(AsmPrinter &printer) const {
  printer << "<" << stringifyLayoutKind(getKind());
  if (getKind() == LayoutKind::Tiled) {
    printer << ", tile_n = " << getTileN() << ", tile_k = " << getTileK();
    if (getInterleave() != 1)
      printer << ", interleave = " << getInterleave();
  }
  printer << ">";
}

LogicalResult LayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 LayoutKind kind, int64_t tileN, int64_t tileK,
                                 int64_t interleave) {
  std::string error;
  if (!qfuse::format::verifyLayout(
          toFormatLayout(kind, tileN, tileK, interleave), error))
    return emitError() << error;
  return success();
}

//===----------------------------------------------------------------------===//
// BatchTilingAttr
//===----------------------------------------------------------------------===//

LogicalResult
BatchTilingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                        int64_t batch, TilingAttr tiling, LayoutAttr layout) {
  if (batch <= 0)
    return emitError() << "batch must be positive, got " << batch;
  if (!tiling)
    return emitError() << "batch " << batch << " needs a tiling";
  return success();
}

//===----------------------------------------------------------------------===//
// TargetAttr
//===----------------------------------------------------------------------===//

namespace {
/// The digits of "sm_90a" (90), or nullopt when `chip` is not sm_<NN>[a].
std::optional<int64_t> smVersionOf(StringRef chip) {
  if (!chip.consume_front("sm_"))
    return std::nullopt;
  chip.consume_back("a");
  int64_t version;
  if (chip.empty() || chip.getAsInteger(10, version) || version <= 0)
    return std::nullopt;
  return version;
}
} // namespace

LogicalResult TargetAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 StringRef chip, int64_t smCount,
                                 int64_t maxSharedPerBlock,
                                 int64_t bandwidthGbps, int64_t peakF16Tflops) {
  if (!smVersionOf(chip))
    return emitError() << "chip must be sm_<NN> or sm_<NN>a, got '" << chip
                       << "'";
  if (smCount <= 0 || maxSharedPerBlock <= 0 || bandwidthGbps <= 0 ||
      peakF16Tflops <= 0)
    return emitError() << "target sizes must be positive, got sm_count = "
                       << smCount << ", max_shared_per_block = "
                       << maxSharedPerBlock << ", bandwidth_gbps = "
                       << bandwidthGbps << ", peak_f16_tflops = "
                       << peakF16Tflops;
  return success();
}

int64_t TargetAttr::getSmVersion() const { return *smVersionOf(getChip()); }

bool TargetAttr::isArchSpecific() const { return getChip().ends_with("a"); }

//===----------------------------------------------------------------------===//
// TilingAttr
//===----------------------------------------------------------------------===//

namespace {
/// One entry of #qf.tiling: its printed key, default, and the member it sets.
struct TilingField {
  const char *key;
  int64_t defaultValue;
};
constexpr TilingField kTilingFields[] = {
    {"block_m", 1},         {"block_n", 1},   {"block_k", 0},
    {"threads_per_row", 32}, {"vec_bytes", 16}, {"k_unroll", 1},
    {"split_k", 1},          {"stages", 1},     {"cluster_k", 1}};
constexpr size_t kNumTilingFields = std::size(kTilingFields);

std::array<int64_t, kNumTilingFields> tilingValues(TilingAttr attr) {
  return {attr.getBlockM(),       attr.getBlockN(),    attr.getBlockK(),
          attr.getThreadsPerRow(), attr.getVecBytes(),  attr.getKUnroll(),
          attr.getSplitK(),        attr.getStages(),    attr.getClusterK()};
}
} // namespace

Attribute TilingAttr::parse(AsmParser &parser, Type) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef kernelName;
  if (parser.parseLess() || parser.parseKeyword(&kernelName))
    return {};
  std::optional<KernelKind> kernel = symbolizeKernelKind(kernelName);
  if (!kernel) {
    parser.emitError(loc) << "unknown kernel kind '" << kernelName
                          << "'; expected 'matvec', 'mma' or 'wgmma'";
    return {};
  }
  std::array<int64_t, kNumTilingFields> values;
  for (size_t i = 0; i < kNumTilingFields; ++i)
    values[i] = kTilingFields[i].defaultValue;
  auto parseEntry = [&](StringRef key, SMLoc keyLoc) -> ParseResult {
    for (size_t i = 0; i < kNumTilingFields; ++i)
      if (key == kTilingFields[i].key)
        return parseInt64Entry(parser, values[i]);
    return parser.emitError(keyLoc)
           << "unknown tiling entry '" << key
           << "'; expected block_m, block_n, block_k, threads_per_row, "
              "vec_bytes, k_unroll, split_k, stages or cluster_k";
  };
  if (parseEntries(parser, parseEntry) || parser.parseGreater())
    return {};
  return parser.getChecked<TilingAttr>(loc, parser.getContext(), *kernel,
                                       values[0], values[1], values[2],
                                       values[3], values[4], values[5],
                                       values[6], values[7], values[8]);
}

void TilingAttr::print(AsmPrinter &printer) const {
  printer << "<" << stringifyKernelKind(getKernel());
  auto values = tilingValues(*this);
  for (size_t i = 0; i < kNumTilingFields; ++i)
    if (values[i] != kTilingFields[i].defaultValue)
      printer << ", " << kTilingFields[i].key << " = " << values[i];
  printer << ">";
}

LogicalResult TilingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 KernelKind kernel, int64_t blockM,
                                 int64_t blockN, int64_t blockK,
                                 int64_t threadsPerRow, int64_t vecBytes,
                                 int64_t kUnroll, int64_t splitK,
                                 int64_t stages, int64_t clusterK) {
  if (blockM < 1 || blockN < 1 || blockK < 0 || kUnroll < 1 || splitK < 1 ||
      stages < 1 || clusterK < 1)
    return emitError() << "tiling sizes must be positive (block_k may be 0 "
                          "for 'whole K')";
  if (threadsPerRow < 1 || threadsPerRow > 32 ||
      !llvm::isPowerOf2_64(threadsPerRow))
    return emitError() << "threads_per_row must be a power of two from 1 to "
                          "32 (a warp shares a row), got "
                       << threadsPerRow;
  if (vecBytes != 4 && vecBytes != 8 && vecBytes != 16)
    return emitError() << "vec_bytes must be 4, 8 or 16, got " << vecBytes;
  if (kernel == KernelKind::MatVec && clusterK != 1)
    return emitError() << "cluster_k applies to mma kernels; matvec kernels "
                          "split K inside a block (split_k)";
  if (clusterK > 8)
    return emitError() << "cluster_k must be at most 8 (the portable "
                          "cluster size), got "
                       << clusterK;
  if (kernel == KernelKind::MatVec && blockM > 8)
    return emitError() << "matvec kernels take batch block_m <= 8, got "
                       << blockM << "; use 'mma' for larger batches";
  return success();
}
