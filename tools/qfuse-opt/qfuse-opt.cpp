//===- qfuse-opt.cpp - the qf optimizer driver ------------------------------===//
//
// mlir-opt with the qf dialect and passes: every upstream dialect and pass
// the pipeline needs (func, arith, math, scf, memref, vector, tensor, linalg,
// bufferization, gpu, nvgpu, nvvm, llvm, quant, ...), the GPU-to-NVVM
// pipeline, and the NVVM target with its LLVM IR translations, so that
// `qfuse-opt` alone takes IR from qf to PTX.
//
// Registration lives in this one file because the headers it needs are the
// slowest to compile in the project; it should rarely change.
//
//===----------------------------------------------------------------------===//

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

#include "qfuse/Conversion/Passes.h"
#include "qfuse/Dialect/QF/IR/QFDialect.h"
#include "qfuse/Dialect/QF/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  mlir::qf::registerQFPasses();
  mlir::qf::registerQFConversionPasses();

  mlir::DialectRegistry registry;
  registry.insert<mlir::qf::QFDialect>();
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  // Serializing gpu.module to PTX/cubin needs the NVVM target attribute's
  // implementation and the LLVM IR translations (without them: a crash).
  mlir::NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  mlir::registerAllGPUToLLVMIRTranslations(registry);

  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "qfuse optimizer driver\n", registry));
}
