//===- Passes.td - qf conversion passes ----------------------*- tablegen -*-===//

#ifndef QFUSE_CONVERSION_PASSES_TD
#define QFUSE_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def QFToGPU : Pass<"qf-to-gpu", "::mlir::ModuleOp"> {
  let summary = "Generate NVVM kernels for fused qf matmuls";
  let description = [{
    For every `qf.fused_matmul` carrying a `#qf.tiling<matvec, ...>`, emits
    one kernel per batch size into `gpu.module @qf_kernels` (an `llvm.func`
    with `nvvm.kernel`, written in the LLVM and NVVM dialects so the chosen
    loads and bit tricks reach the PTX as written) and records how to launch
    it on the op as `qf.launches`: one dictionary per batch size with the
    kernel name, grid, block, shared memory and parameter names. A dynamic
    batch dimension is compiled for each of `batch-sizes`.

    Ops the generator cannot take (format, layout or tiling it does not
    support) fail with a diagnostic naming the op and the reason.
    `gpu-module-to-binary` then produces PTX (and cubin through ptxas).
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_90\"",
           "Target SM (sm_80 or sm_90)">,
    Option<"features", "features", "std::string", /*default=*/"\"+ptx80\"",
           "PTX features of the NVVM target">,
    ListOption<"batchSizes", "batch-sizes", "int64_t",
               "Batch sizes to compile a dynamic M for (default 1)">
  ];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect", "::mlir::LLVM::LLVMDialect",
    "::mlir::NVVM::NVVMDialect", "::mlir::arith::ArithDialect",
    "::mlir::scf::SCFDialect", "::mlir::cf::ControlFlowDialect"
  ];
}

#endif // QFUSE_CONVERSION_PASSES_TD
