//===- CPUReferenceAttr.h - the qf.cpu_reference an op carries --*- C++ -*-===//
//
// The one place that writes kCPUReferenceAttrName (QFToCPU.h) on a lowered
// op: {function = @qf_cpu::@<function>, params = [...]}.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_LIB_CONVERSION_QFTOCPU_CPUREFERENCEATTR_H
#define QFUSE_LIB_CONVERSION_QFTOCPU_CPUREFERENCEATTR_H

#include "mlir/IR/Operation.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace mlir {
namespace qf {

void setCPUReference(Operation *op, llvm::StringRef function,
                     llvm::ArrayRef<std::string> params);

} // namespace qf
} // namespace mlir

#endif // QFUSE_LIB_CONVERSION_QFTOCPU_CPUREFERENCEATTR_H
