//===- FormatBridge.cpp - qf attributes as format library values ----------===//

#include "qfuse/Dialect/QF/IR/FormatBridge.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace mlir::qf;

// The dialect's enums are declared case for case like the format library's.
static_assert(
    int(ElementFormat::BF16) == 9 && int(format::ElementFormat::BF16) == 9 &&
    int(ElementFormat::Codebook) == int(format::ElementFormat::Codebook) &&
    int(ElementFormat::FP4E2M1) == int(format::ElementFormat::FP4E2M1));
static_assert(int(ZeroPointKind::Float) == int(format::ZeroPointKind::Float));
static_assert(int(Sparsity::TwoFour) == int(format::Sparsity::TwoFour));

format::ScalarType mlir::qf::toFormatScalarType(Type type) {
  if (!type)
    return format::ScalarType::None;
  if (type.isF16())
    return format::ScalarType::F16;
  if (type.isBF16())
    return format::ScalarType::BF16;
  if (type.isF32())
    return format::ScalarType::F32;
  if (isa<Float8E4M3FNType>(type))
    return format::ScalarType::F8E4M3FN;
  if (isa<Float8E8M0FNUType>(type))
    return format::ScalarType::F8E8M0FNU;
  return format::ScalarType::None;
}

FailureOr<format::Encoding> mlir::qf::toFormatEncoding(
    function_ref<InFlightDiagnostic()> emitError, ElementFormat elementFormat,
    unsigned indexBits, DenseFPElementsAttr table, StringAttr tableName,
    Type tableType, int64_t groupSize, Type scaleType, bool globalScale,
    ZeroPointKind zeroPoint, bool actOrder, Sparsity sparsity) {
  format::Encoding enc;
  enc.format = static_cast<format::ElementFormat>(elementFormat);
  enc.indexBits = indexBits;
  if (table) {
    auto type = cast<ShapedType>(table.getType());
    // Checked before the values are read: a splat of 2^31 elements is one
    // value in the IR but billions in a loop.
    if (type.getNumElements() > 256)
      return emitError() << "a codebook table holds at most 256 values "
                            "(2^bits, bits <= 8), got "
                         << type.getNumElements(),
             failure();
    enc.hasInlineTable = true;
    enc.tableShape.assign(type.getShape().begin(), type.getShape().end());
    for (const APFloat &v : table.getValues<APFloat>())
      enc.table.push_back(v.convertToFloat());
    tableType = type.getElementType();
  }
  if (tableName)
    enc.tableName = tableName.getValue().str();
  enc.tableType = toFormatScalarType(tableType);
  if (tableType && enc.tableType == format::ScalarType::None)
    return emitError() << "codebook table values must be f16 or f32, got "
                       << tableType,
           failure();
  enc.scaleType = toFormatScalarType(scaleType);
  if (scaleType && enc.scaleType == format::ScalarType::None)
    return emitError() << "scale type must be f16, bf16, f32, f8E4M3FN or "
                          "f8E8M0FNU, got "
                       << scaleType,
           failure();
  enc.groupSize = groupSize;
  enc.globalScale = globalScale;
  enc.zeroPoint = static_cast<format::ZeroPointKind>(zeroPoint);
  enc.actOrder = actOrder;
  enc.sparsity = static_cast<format::Sparsity>(sparsity);
  return enc;
}

format::Encoding mlir::qf::toFormatEncoding(EncodingAttr e) {
  auto fail = [&]() -> InFlightDiagnostic {
    llvm_unreachable("a verified encoding converts");
  };
  return *toFormatEncoding(fail, e.getFormat(), e.getIndexBits(), e.getTable(),
                           e.getTableName(), e.getTableType(), e.getGroupSize(),
                           e.getScaleType(), e.getGlobalScale(),
                           e.getZeroPoint(), e.getActOrder(), e.getSparsity());
}

format::Layout mlir::qf::toFormatLayout(LayoutKind kind, int64_t tileN,
                                        int64_t tileK, int64_t interleave) {
  format::Layout layout;
  layout.kind = kind == LayoutKind::Tiled ? format::LayoutKind::Tiled
                                          : format::LayoutKind::RowMajor;
  layout.tileN = tileN;
  layout.tileK = tileK;
  layout.interleave = interleave;
  return layout;
}
