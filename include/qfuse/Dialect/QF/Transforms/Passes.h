//===- Passes.h - qf transformation passes ----------------------*- C++ -*-===//

#ifndef QFUSE_DIALECT_QF_TRANSFORMS_PASSES_H
#define QFUSE_DIALECT_QF_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Quant/IR/Quant.h"
#include "mlir/Pass/Pass.h"
#include "qfuse/Dialect/QF/IR/QFDialect.h"

namespace mlir {
namespace qf {

#define GEN_PASS_DECL
#include "qfuse/Dialect/QF/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "qfuse/Dialect/QF/Transforms/Passes.h.inc"

} // namespace qf
} // namespace mlir

#endif // QFUSE_DIALECT_QF_TRANSFORMS_PASSES_H
