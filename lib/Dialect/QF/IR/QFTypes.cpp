//===- QFTypes.cpp - !qf.weight ---------------------------------------------===//
//
// The packed weight type. Its verifier checks what only the shape can tell:
// that groups, 2:4 blocks and packed rows fit K.
//
//===----------------------------------------------------------------------===//

#include "qfuse/Dialect/QF/IR/QFDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::qf;

#define GET_TYPEDEF_CLASSES
#include "qfuse/Dialect/QF/IR/QFTypes.cpp.inc"

void QFDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "qfuse/Dialect/QF/IR/QFTypes.cpp.inc"
      >();
}

Type WeightType::parse(AsmParser &parser) {
  SMLoc loc = parser.getCurrentLocation();
  SmallVector<int64_t, 2> shape;
  EncodingAttr encoding;
  if (parser.parseLess() ||
      parser.parseDimensionList(shape, /*allowDynamic=*/false,
                                /*withTrailingX=*/false))
    return {};
  if (shape.size() != 2) {
    parser.emitError(loc) << "weight shape must be NxK (out x in), got "
                          << shape.size() << " dimension(s)";
    return {};
  }
  if (parser.parseComma() || parser.parseAttribute(encoding))
    return {};
  LayoutAttr layout = LayoutAttr::get(parser.getContext());
  if (succeeded(parser.parseOptionalComma()) && parser.parseAttribute(layout))
    return {};
  if (parser.parseGreater())
    return {};
  return parser.getChecked<WeightType>(loc, parser.getContext(), shape[0],
                                       shape[1], encoding, layout);
}

void WeightType::print(AsmPrinter &printer) const {
  printer << "<" << getN() << "x" << getK() << ", ";
  printer.printAttribute(getEncoding());
  if (!getLayout().isRowMajor()) {
    printer << ", ";
    printer.printAttribute(getLayout());
  }
  printer << ">";
}

LogicalResult WeightType::verify(function_ref<InFlightDiagnostic()> emitError,
                                 int64_t n, int64_t k, EncodingAttr encoding,
                                 LayoutAttr layout) {
  if (n <= 0 || k <= 0)
    return emitError() << "weight shape must be positive, got " << n << "x"
                       << k;
  if (!encoding || !layout)
    return emitError() << "weight needs an encoding and a layout";
  if (encoding.isQuantized() && !encoding.isPerChannel() &&
      k % encoding.getGroupSize() != 0)
    return emitError() << "group size " << encoding.getGroupSize()
                       << " does not divide K = " << k;
  if (encoding.isSparse24() && k % 4 != 0)
    return emitError() << "2:4 sparsity needs K to be a multiple of 4, got K = "
                       << k;
  // Rows are packed independently; sub-byte codes must end on a byte so that
  // row n starts at byte n * rowBytes in every layout.
  int64_t storedPerRow = encoding.isSparse24() ? k / 2 : k;
  unsigned bits = encoding.getCodeBits();
  if ((storedPerRow * bits) % 8 != 0)
    return emitError() << "a row of " << storedPerRow << " stored " << bits
                       << "-bit codes does not end on a byte boundary (K = "
                       << k << ")";
  // The mma fragment layout stores whole tiles, padded past N and K; the
  // matvec's tiled layouts reorder whole rows of tiles.
  if (layout.getKind() == LayoutKind::Tiled && !isMmaFragmentLayout(layout) &&
      k % layout.getTileK() != 0)
    return emitError() << "tiled layout needs tile_k to divide K; got tile_k = "
                       << layout.getTileK() << ", K = " << k;
  return success();
}
