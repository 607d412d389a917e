//===- QuantizeReference.h - qf.quantize's CPU reference --------*- C++ -*-===//
//
// qf-to-cpu's lowering of qf.quantize (QuantizeReference.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_LIB_CONVERSION_QFTOCPU_QUANTIZEREFERENCE_H
#define QFUSE_LIB_CONVERSION_QFTOCPU_QUANTIZEREFERENCE_H

#include "qfuse/Dialect/QF/IR/QFDialect.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringMap.h"

namespace mlir {
namespace qf {

/// The functions already emitted, by (encoding, K, input type), with their
/// parameter names; `next` numbers the next one.
struct QuantizeFunctions {
  llvm::StringMap<std::pair<std::string, SmallVector<std::string>>> byKey;
  int64_t next = 0;
};

/// Emits (or reuses) the reference function of `op` into `cpuModule` and
/// records it on the op as qf.cpu_reference {function, params = ["w",
/// "codes", "scales", ("zeros",) "status"]}. An encoding the generated
/// quantizer does not take gets a remark and no function, and succeeds:
/// the host quantizes it.
LogicalResult lowerQuantizeToCPU(QuantizeOp op, ModuleOp cpuModule,
                                 QuantizeFunctions &emitted);

} // namespace qf
} // namespace mlir

#endif // QFUSE_LIB_CONVERSION_QFTOCPU_QUANTIZEREFERENCE_H
