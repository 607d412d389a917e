//===- QFDialect.h - qf dialect ---------------------------------*- C++ -*-===//
//
// Entry header of the qf dialect: enums, attributes, types, ops.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_DIALECT_QF_IR_QFDIALECT_H
#define QFUSE_DIALECT_QF_IR_QFDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "qfuse/Dialect/QF/IR/QFDialect.h.inc"
#include "qfuse/Dialect/QF/IR/QFEnums.h.inc"

namespace mlir::qf {
/// The tensor-core kernel families (mma.sync and wgmma): one generator, one
/// weight layout, batch tiles of 16 rows and more.
inline bool isTensorCoreKernel(KernelKind kind) {
  return kind == KernelKind::MMA || kind == KernelKind::WGMMA;
}
} // namespace mlir::qf

#define GET_ATTRDEF_CLASSES
#include "qfuse/Dialect/QF/IR/QFAttrs.h.inc"

namespace mlir::qf {
/// True for `#qf.layout<tiled, tile_n = 32, tile_k = 32>`, the tensor-core
/// kernel's mma B-fragment order (qfuse/format/MmaLayout.h), which stores
/// whole 32 x 32 tiles of any N and K.
inline bool isMmaFragmentLayout(LayoutAttr layout) {
  return layout.getKind() == LayoutKind::Tiled && layout.getTileN() == 32 &&
         layout.getTileK() == 32 && layout.getInterleave() <= 1;
}
} // namespace mlir::qf

#define GET_TYPEDEF_CLASSES
#include "qfuse/Dialect/QF/IR/QFTypes.h.inc"

#define GET_OP_CLASSES
#include "qfuse/Dialect/QF/IR/QFOps.h.inc"

#endif // QFUSE_DIALECT_QF_IR_QFDIALECT_H
