//===- Passes.h - qf conversion passes --------------------------*- C++ -*-===//

#ifndef QFUSE_CONVERSION_PASSES_H
#define QFUSE_CONVERSION_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
namespace qf {

#define GEN_PASS_DECL
#include "qfuse/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "qfuse/Conversion/Passes.h.inc"

} // namespace qf
} // namespace mlir

#endif // QFUSE_CONVERSION_PASSES_H
