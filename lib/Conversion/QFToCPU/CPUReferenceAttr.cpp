//===- CPUReferenceAttr.cpp - the qf.cpu_reference an op carries ----------===//

#include "CPUReferenceAttr.h"

#include "qfuse/Conversion/QFToCPU.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;

void qf::setCPUReference(Operation *op, StringRef function,
                         ArrayRef<std::string> params) {
  OpBuilder b(op->getContext());
  SmallVector<Attribute> names;
  for (const std::string &p : params)
    names.push_back(b.getStringAttr(p));
  op->setAttr(kCPUReferenceAttrName,
              b.getDictionaryAttr({
                  b.getNamedAttr("function",
                                 SymbolRefAttr::get(
                                     b.getStringAttr(kCPUModuleName),
                                     {FlatSymbolRefAttr::get(
                                         b.getStringAttr(function))})),
                  b.getNamedAttr("params", b.getArrayAttr(names)),
              }));
}
