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
    it on the op as `qf.launches`: one `#qf.launch` per batch size with the
    kernel name, grid, block, shared memory and parameter names. A dynamic
    batch dimension is compiled for each of `batch-sizes`.

    Ops the generator cannot take (format, layout or tiling it does not
    support) fail with a diagnostic naming the op and the reason; with
    `fallback-on-limits` (qfuse-compile sets it) a matvec or tensor-core
    tiling its generator cannot plan runs the dequantize + cuBLAS fallback
    instead, with a remark naming the reason (an RMSNorm prologue, which
    the fallback does not fuse, keeps the error).
    `gpu-module-to-binary` then produces PTX (and cubin through ptxas).

    Every `qf.quantize` into a row-major weight gets the round-to-nearest
    kernel of its (encoding, K, input type), one block per row so that one
    kernel serves every row count, built from the same IR as qf-to-cpu's
    reference (WeightQuantizer.h); encodings it does not take get a remark
    and no launch (the runtime quantizes them on the host).

    With `grid-dependency`, on sm_90 and later every kernel waits
    (`griddepcontrol.wait`) before it touches memory an earlier kernel may
    write: at its start, or where its generator marked it, after L2
    prefetches of its weights (`grid-dependency-prefetch`). Launched as a
    programmatic dependent (the runtime asks for it per kernel,
    docs/artifact.md), it is scheduled before the kernel ahead of it has
    finished; `grid-dependency-trigger` says where a kernel releases the
    next one (`griddepcontrol.launch_dependents`).
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_90\"",
           "Target chip (KnownTargets.h: sm_80, sm_89, sm_90, sm_90a; sm_90a adds the wgmma "
           "kernel)">,
    Option<"features", "features", "std::string", /*default=*/"\"+ptx80\"",
           "PTX features of the NVVM target">,
    ListOption<"batchSizes", "batch-sizes", "int64_t",
               "Batch sizes to compile a dynamic M for (default 1)">,
    Option<"fallbackOnLimits", "fallback-on-limits", "bool",
           /*default=*/"false",
           "Run a tiling the generator cannot plan on the dequantize + cuBLAS "
           "fallback (with a remark) instead of failing">,
    Option<"permuteStagedMaxK", "permute-staged-max-k", "int64_t",
           /*default=*/"24576",
           "The longest row the act_order permute kernel stages in shared "
           "memory, once per block (at most 24576); longer rows gather from "
           "global memory (kernel qf_permute_k<K>_g)">,
    Option<"actOrderSortedOutput", "act-order-sorted-output", "bool",
           /*default=*/"true",
           "At batches up to 16, a gated matmul whose result only an "
           "act_order matmul reads stores it in that matmul's sorted column "
           "order, so that no permute launch runs before it "
           "(docs/act-order.md)">,
    Option<"sortedAttentionMaxBatch", "sorted-attention-max-batch", "int64_t",
           /*default=*/"16",
           "With act-order-sorted-output, the largest batch at which "
           "attention stores an act_order o_proj's input in its sorted "
           "column order (from 32 the tiled kernel, slower than the "
           "permute launch there)">,
    Option<"gridDependency", "grid-dependency", "bool", /*default=*/"false",
           "On sm_90 and later, start every kernel with griddepcontrol "
           "(launch_dependents, wait) so that the runtime may launch it with "
           "programmatic stream serialization (qfuse-compile sets it)">,
    Option<"gridDependencyTrigger", "grid-dependency-trigger", "std::string",
           /*default=*/"\"none\"",
           "With grid-dependency, where griddepcontrol.launch_dependents "
           "releases the next kernel: none (when this one ends), start, or "
           "late (after the main loop the generator marked, else before the "
           "first global store)">,
    Option<"gridDependencyPrefetch", "grid-dependency-prefetch", "bool",
           /*default=*/"false",
           "With grid-dependency: keep the L2 prefetches of weights that "
           "generators place before the wait">
  ];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect", "::mlir::LLVM::LLVMDialect",
    "::mlir::NVVM::NVVMDialect", "::mlir::arith::ArithDialect",
    "::mlir::scf::SCFDialect", "::mlir::cf::ControlFlowDialect",
    // The fallback's dequantize kernel decodes through memrefs; the
    // quantize kernel rounds with math.roundeven.
    "::mlir::memref::MemRefDialect", "::mlir::math::MathDialect"
  ];
}

def QFToCPU : Pass<"qf-to-cpu", "::mlir::ModuleOp"> {
  let summary = "Lower fused qf matmuls to a CPU reference (scf/arith/memref)";
  let description = [{
    For every `qf.fused_matmul`, emits a public `func.func` into the nested
    `builtin.module @qf_cpu` that computes the same result as the GPU kernel
    from the same packed bytes, and records how to call it on the op:

    ```mlir
    %y = qf.fused_matmul %x, %w bias(%b : tensor<256xf16>)
           {qf.cpu_reference = {function = @qf_cpu::@qf_cpu_matmul_0,
                                params = ["x", "codes", "scales", "bias", "y"]}}
         : tensor<?x1536xf16>, !qf.weight<256x1536, #int4, #tiled> -> ...
    module @qf_cpu {
      func.func @qf_cpu_matmul_0(%x: memref<?x1536xf16>,
                                 %codes: memref<256x768xi8>,
                                 %scales: memref<256x12xf16>,
                                 %bias: memref<256xf16>,
                                 %y: memref<?x256xf16>)
          attributes {llvm.emit_c_interface}
    }
    ```

    Every parameter is a memref of the raw buffer the runtime binds under
    that name, in the byte layout of the weight type (`row_major`, the
    pair-interleaved `tiled, tile_n = 1` layout over 4-bit codes, the mma
    fragment layout `tiled, tile_n = 32, tile_k = 32`; act_order columns
    sorted by group, Layout.h): codes, meta, integer zero points and f8
    scales as i8, scales and float zero points in their f16/bf16/f32 type,
    the act_order `perm` as i32, a named codebook table in its type.
    The batch M is the dynamic first dimension of x, residual and y unless
    the op's M is static. Functions carry `llvm.emit_c_interface`, so after
    lowering each is callable as `_mlir_ciface_<name>` with pointers to
    memref descriptors (the order of `params`).

    Numerics: every weight is decoded in f32 exactly as Packing.h defines
    it (w = scale * (q - zero), scale * table[q], e2m1 * scale / global, ...),
    the activations are widened to f32 (RMSNorm applied in f32), each output
    is a sequential f32 sum over K, the epilogue (bias, silu_mul, residual)
    runs in f32, and the result is rounded once to the output type.

    The functions are then canonicalized and CSE'd. With `lower-to-llvm`,
    the nested module is also lowered to the LLVM
    dialect (the pipeline of `qf::buildQFCPUToLLVMPipeline`), ready for
    `mlir::ExecutionEngine` or mlir-runner. Ops that cannot be lowered fail
    with a diagnostic naming the op and the reason.

    Every `qf.quantize` gets `@qf_cpu_quantize_<i>(w, codes, scales[, zeros],
    status)` over a dynamic row count: format::quantizeRTN's packed
    row-major bytes, status 1 where a weight or scale is not finite.
    Encodings the generated quantizer does not take get a remark.
  }];
  let options = [
    Option<"lowerToLLVM", "lower-to-llvm", "bool", /*default=*/"false",
           "Also lower the generated functions to the LLVM dialect">
  ];
  let dependentDialects = [
    "::mlir::func::FuncDialect", "::mlir::memref::MemRefDialect",
    "::mlir::arith::ArithDialect", "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect", "::mlir::LLVM::LLVMDialect",
    "::mlir::cf::ControlFlowDialect"
  ];
}

#endif // QFUSE_CONVERSION_PASSES_TD
