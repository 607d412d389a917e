//===- QFToCPU.h - the CPU reference lowering of fused matmuls --*- C++ -*-===//
//
// What tools need to run the functions `qf-to-cpu` generates: where they
// are, how each op records its function, and the pipeline that lowers them
// to the LLVM dialect for mlir::ExecutionEngine or mlir-runner.
//
//   %y = qf.fused_matmul %x, %w {qf.cpu_reference = {
//          function = @qf_cpu::@qf_cpu_matmul_0,
//          params = ["x", "codes", "scales", "y"]}} : ...
//   module @qf_cpu { func.func @qf_cpu_matmul_0(...) {llvm.emit_c_interface} }
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_CONVERSION_QFTOCPU_H
#define QFUSE_CONVERSION_QFTOCPU_H

#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringRef.h"

namespace mlir {
namespace qf {

/// The nested `builtin.module` that holds every generated function.
inline constexpr llvm::StringLiteral kCPUModuleName = "qf_cpu";
/// The dictionary each lowered qf.fused_matmul carries:
/// {function = @qf_cpu::@name, params = ["x", ..., "y"]}.
inline constexpr llvm::StringLiteral kCPUReferenceAttrName =
    "qf.cpu_reference";

/// Adds to `pm` (anchored on a builtin.module holding only generated
/// functions, e.g. @qf_cpu cloned out of the compiled module) the passes that
/// lower scf/arith/math/memref/func to the LLVM dialect:
///   arith-expand{include-bf16}, convert-scf-to-cf, convert-math-to-llvm,
///   expand-strided-metadata, finalize-memref-to-llvm, convert-arith-to-llvm,
///   convert-func-to-llvm, convert-cf-to-llvm, reconcile-unrealized-casts.
void buildQFCPUToLLVMPipeline(OpPassManager &pm);

} // namespace qf
} // namespace mlir

#endif // QFUSE_CONVERSION_QFTOCPU_H
