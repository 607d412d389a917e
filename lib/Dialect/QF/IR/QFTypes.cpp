//===- QFTypes.cpp - !qf.weight ---------------------------------------------===//
//
// The packed weight type. Its verifier checks what only the shape can tell:
// that groups, 2:4 blocks and packed rows fit K.
//
//===----------------------------------------------------------------------===//

#include "qfuse/Dialect/QF/IR/QFDialect.h"

#include "qfuse/Dialect/QF/IR/FormatBridge.h"

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
  std::string error;
  if (!qfuse::format::verifyWeight(toFormatEncoding(encoding),
                            toFormatLayout(layout.getKind(), layout.getTileN(),
                                           layout.getTileK(),
                                           layout.getInterleave()),
                            n, k, error))
    return emitError() << error;
  return success();
}
