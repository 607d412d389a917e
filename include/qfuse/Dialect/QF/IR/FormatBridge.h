//===- FormatBridge.h - qf attributes as format library values --*- C++ -*-===//
//
// The dialect's #qf.enc / #qf.layout verifiers and the runtime both follow
// one rule set, qfuse_format (format/include/qfuse/format): these functions
// turn attribute parameters into that library's plain values, so that the
// verifiers call it instead of restating it.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_DIALECT_QF_IR_FORMATBRIDGE_H
#define QFUSE_DIALECT_QF_IR_FORMATBRIDGE_H

#include "qfuse/Dialect/QF/IR/QFDialect.h"

#include "qfuse/format/Encoding.h"
#include "qfuse/format/Layout.h"
#include "qfuse/format/SparseMmaLayout.h"

namespace mlir::qf {

namespace format = ::qfuse::format;

/// The format library's name for `type`, or ScalarType::None when it has
/// none (the format library names f16, bf16, f32, f8E4M3FN, f8E8M0FNU).
format::ScalarType toFormatScalarType(Type type);

/// The parameters of an EncodingAttr as a format::Encoding. Fails, with the
/// dialect's message, only for a scale or table type the format library
/// cannot name; every other rule is format::verifyEncoding's.
FailureOr<format::Encoding> toFormatEncoding(
    function_ref<InFlightDiagnostic()> emitError, ElementFormat format,
    unsigned indexBits, DenseFPElementsAttr table, StringAttr tableName,
    Type tableType, int64_t groupSize, Type scaleType, bool globalScale,
    ZeroPointKind zeroPoint, bool actOrder, Sparsity sparsity);

/// A verified EncodingAttr as a format::Encoding.
format::Encoding toFormatEncoding(EncodingAttr encoding);

/// A LayoutAttr's parameters as a format::Layout.
format::Layout toFormatLayout(LayoutKind kind, int64_t tileN, int64_t tileK,
                              int64_t interleave);

/// True for `#qf.layout<tiled, tile_n = 32, tile_k = 64>`, the mma.sp
/// kernel's 2:4 fragment order (qfuse/format/SparseMmaLayout.h), which
/// stores whole 32 x 128 tiles of any N and K; only 2:4 weights take it.
inline bool isSparseMmaLayout(LayoutAttr layout) {
  return format::isSparseMmaLayout(
      toFormatLayout(layout.getKind(), layout.getTileN(), layout.getTileK(),
                     layout.getInterleave()));
}

} // namespace mlir::qf

#endif // QFUSE_DIALECT_QF_IR_FORMATBRIDGE_H
