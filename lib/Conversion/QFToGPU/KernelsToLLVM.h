//===- KernelsToLLVM.h - generated kernels' scf/arith -> LLVM - -*- C++ -*-===//
//
// The last step of qf-to-gpu: the kernels it generated still hold scf,
// arith and cf ops; gpu-module-to-binary serializes only the LLVM and NVVM
// dialects.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_LIB_CONVERSION_QFTOGPU_KERNELSTOLLVM_H
#define QFUSE_LIB_CONVERSION_QFTOGPU_KERNELSTOLLVM_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

namespace mlir {
namespace qf {

/// scf/arith/cf inside the kernels -> LLVM dialect. Kernel values are
/// LLVM-compatible (i32, f32, vectors, pointers), except in the dequantize
/// kernel, whose decoder works on memrefs over its pointers
/// (DequantizeKernel.cpp): their descriptors' casts fold away at the end.
LogicalResult lowerKernelsToLLVM(gpu::GPUModuleOp gpuModule);

} // namespace qf
} // namespace mlir

#endif // QFUSE_LIB_CONVERSION_QFTOGPU_KERNELSTOLLVM_H
