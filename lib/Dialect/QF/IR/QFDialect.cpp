//===- QFDialect.cpp - qf dialect registration and aliases -----------------===//

#include "qfuse/Dialect/QF/IR/QFDialect.h"

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::qf;

#include "qfuse/Dialect/QF/IR/QFDialect.cpp.inc"

namespace {
/// Prints encodings under short aliases (`#int4_g128`), as Triton prints its
/// layouts, so that types with long encodings stay readable.
struct QFOpAsmInterface : public OpAsmDialectInterface {
  using OpAsmDialectInterface::OpAsmDialectInterface;

  AliasResult getAlias(Attribute attr, raw_ostream &os) const override {
    if (auto enc = dyn_cast<EncodingAttr>(attr)) {
      os << stringifyElementFormat(enc.getFormat());
      if (enc.isQuantized()) {
        if (enc.isPerChannel())
          os << "_pc";
        else
          os << "_g" << enc.getGroupSize();
      }
      if (enc.isSparse24())
        os << "_2of4";
      return AliasResult::OverridableAlias;
    }
    if (auto layout = dyn_cast<LayoutAttr>(attr)) {
      if (layout.isRowMajor())
        return AliasResult::NoAlias;
      os << "tiled_" << layout.getTileN() << "x" << layout.getTileK();
      return AliasResult::OverridableAlias;
    }
    return AliasResult::NoAlias;
  }
};
} // namespace

void QFDialect::initialize() {
  registerAttributes();
  registerTypes();
  addOperations<
#define GET_OP_LIST
#include "qfuse/Dialect/QF/IR/QFOps.cpp.inc"
      >();
  addInterfaces<QFOpAsmInterface>();
}
