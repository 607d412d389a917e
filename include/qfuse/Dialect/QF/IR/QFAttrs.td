//===- QFAttrs.td - qf encodings, layouts and tilings --------*- tablegen -*-===//
//
// The attributes that make a packed weight self-describing: how each element
// is stored (#qf.enc), how the packed bytes are ordered (#qf.layout), and the
// kernel shape a fused op was given (#qf.tiling).
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_DIALECT_QF_IR_QFATTRS_TD
#define QFUSE_DIALECT_QF_IR_QFATTRS_TD

include "qfuse/Dialect/QF/IR/QFBase.td"
include "mlir/IR/EnumAttr.td"

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def QF_ElementFormat : I32EnumAttr<"ElementFormat",
    "how one weight element is stored", [
      I32EnumAttrCase<"Int4", 0, "int4">,         // signed, symmetric [-8, 7]
      I32EnumAttrCase<"UInt4", 1, "uint4">,       // unsigned [0, 15] minus a zero point
      I32EnumAttrCase<"Int8", 2, "int8">,         // signed, symmetric
      I32EnumAttrCase<"UInt8", 3, "uint8">,       // unsigned minus a zero point
      I32EnumAttrCase<"FP8E4M3", 4, "fp8e4m3">,   // float8_e4m3fn
      I32EnumAttrCase<"FP4E2M1", 5, "fp4e2m1">,   // {0,.5,1,1.5,2,3,4,6} with sign
      I32EnumAttrCase<"NF4", 6, "nf4">,           // the bitsandbytes NormalFloat4 table
      I32EnumAttrCase<"Codebook", 7, "codebook">, // 2..8-bit index into a table
      I32EnumAttrCase<"F16", 8, "f16">,           // unquantized (2:4 sparse fp16)
      I32EnumAttrCase<"BF16", 9, "bf16">          // unquantized (2:4 sparse bf16)
    ]> {
  let cppNamespace = "::mlir::qf";
  let genSpecializedAttr = 0;
}

def QF_ZeroPointKind : I32EnumAttr<"ZeroPointKind",
    "zero points of unsigned formats", [
      I32EnumAttrCase<"None", 0, "none">,
      I32EnumAttrCase<"Int", 1, "int">,     // packed like the codes (GPTQ/AWQ)
      I32EnumAttrCase<"Float", 2, "float">  // one value per group, scale type
    ]> {
  let cppNamespace = "::mlir::qf";
  let genSpecializedAttr = 0;
}

def QF_Sparsity : I32EnumAttr<"Sparsity", "structured sparsity", [
      I32EnumAttrCase<"Dense", 0, "dense">,
      I32EnumAttrCase<"TwoFour", 1, "2:4">  // 2 kept values + 2-bit positions per 4
    ]> {
  let cppNamespace = "::mlir::qf";
  let genSpecializedAttr = 0;
}

def QF_LayoutKind : I32EnumAttr<"LayoutKind", "packed storage order", [
      // The checkpoint order: rows of N, elements packed along K least
      // significant bits first (compressed-tensors pack-quantized).
      I32EnumAttrCase<"RowMajor", 0, "row_major">,
      // Kernel-chosen: [tile_n x tile_k] tiles stored contiguously, and inside
      // a tile `interleave` consecutive K-chunks of different rows adjacent so
      // that one 128-bit load feeds a thread's whole unroll.
      I32EnumAttrCase<"Tiled", 1, "tiled">
    ]> {
  let cppNamespace = "::mlir::qf";
  let genSpecializedAttr = 0;
}

def QF_LaunchArgKind : I32EnumAttr<"LaunchArgKind",
    "what a launch binds one kernel parameter to", [
      I32EnumAttrCase<"Operand", 0, "operand">,         // the op's operand i
      I32EnumAttrCase<"Result", 1, "result">,           // the op's result i
      I32EnumAttrCase<"I32", 2, "i32">,                 // an i32 immediate
      I32EnumAttrCase<"F32", 3, "f32">,                 // an f32 immediate
      I32EnumAttrCase<"Activations", 4, "activations">, // the matmul's input
      I32EnumAttrCase<"Component", 5, "component">,     // a packed-weight component
      I32EnumAttrCase<"Scratch", 6, "scratch">,         // a scratch buffer by name
      I32EnumAttrCase<"Output", 7, "output">,           // the matmul's result
      I32EnumAttrCase<"Residual", 8, "residual">,       // the matmul's residual
      // A component of the weight of the matmul that reads the result.
      I32EnumAttrCase<"ReaderComponent", 9, "reader_component">
    ]> {
  let cppNamespace = "::mlir::qf";
  let genSpecializedAttr = 0;
}

def QF_KernelKind : I32EnumAttr<"KernelKind", "fused matmul kernel family", [
      I32EnumAttrCase<"MatVec", 0, "matvec">,  // CUDA-core GEMV, batch 1..8
      I32EnumAttrCase<"MMA", 1, "mma">,         // tensor-core mma.sync GEMM
      // The same kernel with warpgroup MMA (sm_90a): wgmma.mma_async with
      // the decoded weights as the register A operand.
      I32EnumAttrCase<"WGMMA", 2, "wgmma">,
      // No fused kernel: a generated dequantize into an f16 (bf16) workspace
      // and a cuBLAS gemm (docs/fallback.md), for what the others refuse.
      I32EnumAttrCase<"DequantGemm", 3, "dequant_gemm">
    ]> {
  let cppNamespace = "::mlir::qf";
  let genSpecializedAttr = 0;
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

class QF_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<QF_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

def QF_EncodingAttr : QF_Attr<"Encoding", "enc"> {
  let summary = "How the elements of a packed weight are stored and scaled";
  let description = [{
    The element format first, then `key [= value]` entries:

    ```mlir
    #qf.enc<int4, group = 128, scale = f16>                       // GPTQ sym
    #qf.enc<uint4, group = 128, scale = f16, zero = int>          // GPTQ/AWQ asym
    #qf.enc<int4, group = 128, scale = f16, act_order>            // + g_idx
    #qf.enc<int8, per_channel, scale = bf16>
    #qf.enc<fp8e4m3, per_channel, scale = f32>
    #qf.enc<fp4e2m1, group = 16, scale = f8E4M3FN, global_scale>  // NVFP4
    #qf.enc<fp4e2m1, group = 32, scale = f8E8M0FNU>               // MXFP4
    #qf.enc<nf4, group = 64, scale = f32>                         // bitsandbytes
    #qf.enc<codebook, bits = 3, table = dense<[...]> : tensor<8xf16>, group = 128, scale = f16>
    #qf.enc<codebook, bits = 4, table = "lut.layer0" : f32, per_channel, scale = f16>
    #qf.enc<f16, sparse = 2:4>                                    // 2:4 fp16
    #qf.enc<int4, group = 128, scale = f16, sparse = 2:4>         // 2:4 + int4
    ```

    The value of element (n, k) is `scale[n, g(k)] * (q - zero[n, g(k)])`
    for integer formats, `scale[n, g(k)] * table[q]` for codebooks and NF4,
    and `scale[n, g(k)] * fp(q) / global_scale` for NVFP4, where
    `g(k) = k / group` (or `g_idx[k]` under `act_order`).
  }];
  let parameters = (ins
    EnumParameter<QF_ElementFormat>:$format,
    "unsigned":$indexBits,
    OptionalParameter<"::mlir::DenseFPElementsAttr">:$table,
    OptionalParameter<"::mlir::StringAttr">:$tableName,
    OptionalParameter<"::mlir::Type">:$tableType,
    "int64_t":$groupSize,
    OptionalParameter<"::mlir::Type">:$scaleType,
    "bool":$globalScale,
    EnumParameter<QF_ZeroPointKind>:$zeroPoint,
    "bool":$actOrder,
    EnumParameter<QF_Sparsity>:$sparsity
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Group size that stands for "one scale per output channel".
    static constexpr int64_t kPerChannel = 0;

    /// Bits of one stored code (4 for int4/uint4/fp4/nf4, the index width of
    /// a codebook, 16 for unquantized f16/bf16).
    unsigned getCodeBits() const;
    /// True for every format that needs scales (all but f16/bf16).
    bool isQuantized() const;
    bool isPerChannel() const { return getGroupSize() == kPerChannel; }
    bool isSparse24() const { return getSparsity() == Sparsity::TwoFour; }
    /// Scale groups along K for a weight with K input columns.
    int64_t getNumGroups(int64_t k) const;
    /// The codebook values (NF4's fixed table, an inline table), or empty.
    ::llvm::SmallVector<double> getCodebookValues() const;
  }];
}

def QF_LayoutAttr : QF_Attr<"Layout", "layout"> {
  let summary = "Byte order of the packed data of a weight";
  let description = [{
    ```mlir
    #qf.layout<row_major>
    #qf.layout<tiled, tile_n = 16, tile_k = 64, interleave = 4>
    ```
    `row_major` is the checkpoint order and the default, omitted in types.
    `tiled` is chosen by `qf-choose-layout` for a specific kernel; the runtime
    repacks checkpoint data into it with the shared layout library.
  }];
  let parameters = (ins
    EnumParameter<QF_LayoutKind>:$kind,
    "int64_t":$tileN,
    "int64_t":$tileK,
    "int64_t":$interleave
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let builders = [
    AttrBuilder<(ins), [{
      return $_get($_ctxt, LayoutKind::RowMajor, 0, 0, 0);
    }]>
  ];
  let extraClassDeclaration = [{
    bool isRowMajor() const { return getKind() == LayoutKind::RowMajor; }
  }];
}

def QF_BatchTilingAttr : QF_Attr<"BatchTiling", "batch_tiling"> {
  let summary = "The kernel one compiled batch of a fused matmul runs";
  let description = [{
    An entry of a `qf.fused_matmul`'s `qf.batch_tilings` (qf-select-tiling
    with `batch-sizes`): the batch, its tiling, and after qf-choose-layout the
    weight layout that tiling's kernel reads.

    ```mlir
    #qf.batch_tiling<batch = 16, tiling = #qf.tiling<mma, block_m = 16, block_n = 32, block_k = 64, split_k = 4, stages = 4>, layout = #qf.layout<tiled, tile_n = 32, tile_k = 32>>
    ```
  }];
  let parameters = (ins
    "int64_t":$batch,
    "TilingAttr":$tiling,
    OptionalParameter<"LayoutAttr">:$layout
  );
  let assemblyFormat = [{
    `<` `batch` `=` $batch `,` `tiling` `=` qualified($tiling)
    (`,` `layout` `=` qualified($layout)^)? `>`
  }];
  let genVerifyDecl = 1;
}

// An optional attribute parameter printed in full (`#qf.layout<row_major>`,
// not `<row_major>`) inside a struct() assembly format.
class QF_OptionalQualifiedParameter<string type>
    : OptionalParameter<type> {
  let printer = "$_printer.printAttribute($_self)";
}

def QF_LaunchArgAttr : QF_Attr<"LaunchArg", "arg"> {
  let summary = "What one kernel parameter of a #qf.launch is bound to";
  let description = [{
    An entry of a `#qf.launch`'s `args`, parallel to its `params`: the op's
    operand or result `i`, an i32 or f32 immediate, or (the fallback's
    launches) the fused matmul's activations, a component of its packed
    weight, a scratch buffer, its output or its residual, or a component
    of the weight of the act_order matmul that reads its output (which it
    writes in that weight's sorted column order, docs/act-order.md). The
    artifact writer turns each into the step's argument.

    ```mlir
    #qf.arg<operand 0>
    #qf.arg<result 1>
    #qf.arg<i32 4096>
    #qf.arg<f32 9.99999974E-6>
    #qf.arg<activations "input">
    #qf.arg<component "perm">
    #qf.arg<reader_component "perm">
    #qf.arg<scratch "gate">
    #qf.arg<output>
    #qf.arg<residual>
    ```
  }];
  let parameters = (ins
    EnumParameter<QF_LaunchArgKind>:$kind,
    OptionalParameter<"std::optional<int64_t>">:$integer,
    OptionalParameter<"FloatAttr">:$real,
    OptionalParameter<"StringAttr">:$name
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let builders = [
    AttrBuilder<(ins "LaunchArgKind":$kind, "int64_t":$integer), [{
      return $_get($_ctxt, kind, integer, FloatAttr(), StringAttr());
    }]>,
    AttrBuilder<(ins "float":$value), [{
      return $_get($_ctxt, LaunchArgKind::F32, std::nullopt,
                   FloatAttr::get(Float32Type::get($_ctxt), value),
                   StringAttr());
    }]>,
    AttrBuilder<(ins "LaunchArgKind":$kind, "StringRef":$name), [{
      return $_get($_ctxt, kind, std::nullopt, FloatAttr(),
                   StringAttr::get($_ctxt, name));
    }]>,
    AttrBuilder<(ins "LaunchArgKind":$kind), [{
      return $_get($_ctxt, kind, std::nullopt, FloatAttr(), StringAttr());
    }]>
  ];
}

def QF_LaunchAttr : QF_Attr<"Launch", "launch"> {
  let summary = "One kernel launch that qf-to-gpu recorded on an op";
  let description = [{
    An entry of an op's `qf.launches`: the batch it runs at, the kernel in
    `@qf_kernels`, its grid, block, static and dynamic shared memory and
    parameter names, in the order the artifact writer binds them. Decode
    ops and the fallback's elementwise launches say what each parameter is
    bound to (`args`: one `#qf.arg<...>` per parameter); fused matmuls bind
    theirs by name. `layout` is the weight layout the kernel
    reads when it is not the operand's, `input = "permuted"` marks a matmul
    that reads the act_order permute's output. The fallback's launches
    (docs/fallback.md) name their `step` ("dequantize", "silu_mul", "add",
    "permute"), the qf.group `member` they serve and, for "dequantize", the
    `weight` ("weight" or "up"). Parameters print in alphabetical order, as
    the dictionaries they replace did.

    ```mlir
    #qf.launch<batch = 1, block = [128, 1, 1], dynamic_shared_bytes = 0, grid = [1024, 1, 1], kernel = @qf_kernels::@qf_matvec_0_m1, params = ["x", "codes", "scales", "y"], shared_bytes = 32>
    ```
  }];
  let parameters = (ins
    OptionalParameter<"ArrayAttr">:$args,
    "int64_t":$batch,
    "DenseI64ArrayAttr":$block,
    "int64_t":$dynamic_shared_bytes,
    "DenseI64ArrayAttr":$grid,
    OptionalParameter<"StringAttr">:$input,
    "SymbolRefAttr":$kernel,
    QF_OptionalQualifiedParameter<"LayoutAttr">:$layout,
    OptionalParameter<"std::optional<int64_t>">:$member,
    "ArrayAttr":$params,
    "int64_t":$shared_bytes,
    OptionalParameter<"StringAttr">:$step,
    OptionalParameter<"StringAttr">:$weight
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The kernel's name in @qf_kernels.
    StringRef getKernelName() const {
      return getKernel().getLeafReference().getValue();
    }
  }];
}

def QF_FallbackGemmAttr : QF_Attr<"FallbackGemm", "fallback_gemm"> {
  let summary = "A cuBLAS gemm of the dequantize + cuBLAS fallback";
  let description = [{
    An entry of a `qf.fused_matmul`'s `qf.launches` (docs/fallback.md): at
    `batch`, the gemm of qf.group `member`'s weight, which the dequantize
    launch before it wrote into the workspace, `into` the output ("y") or
    the gated matmul's scratch buffer ("gate", "up"). It launches no kernel
    of ours.

    ```mlir
    #qf.fallback_gemm<batch = 512, into = "y", member = 0>
    ```
  }];
  let parameters = (ins
    "int64_t":$batch,
    "StringAttr":$into,
    "int64_t":$member
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def QF_TargetAttr : QF_Attr<"Target", "target"> {
  let summary = "The GPU kernels are generated and tiled for";
  let description = [{
    ```mlir
    #qf.target<chip = "sm_90a", sm_count = 132, max_shared_per_block = 232448, bandwidth_gbps = 4800, peak_f16_tflops = 989>
    ```
    `chip` is the PTX target (`sm_80`, `sm_89`, `sm_90`, `sm_90a`; the `a`
    suffix adds the architecture-specific instructions such as wgmma).
    `max_shared_per_block` is the shared memory one block may opt in to, in
    bytes; the others feed the cost model. The known chips are one table
    (`getKnownTarget`, KnownTargets.cpp), which the `chip` options of the
    passes and of qfuse-compile resolve through.
  }];
  let parameters = (ins
    StringRefParameter<"PTX target, sm_<NN>[a]">:$chip,
    "int64_t":$sm_count,
    "int64_t":$max_shared_per_block,
    "int64_t":$bandwidth_gbps,
    "int64_t":$peak_f16_tflops
  );
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The compute capability as a number: 80, 89, 90.
    int64_t getSmVersion() const;
    /// sm_90a and the like: architecture-specific instructions (wgmma).
    bool isArchSpecific() const;
  }];
}

def QF_TilingAttr : QF_Attr<"Tiling", "tiling"> {
  let summary = "The kernel variant and tile shape chosen for a fused matmul";
  let description = [{
    ```mlir
    #qf.tiling<matvec, block_n = 4, threads_per_row = 32, vec_bytes = 16, k_unroll = 2, split_k = 1>
    #qf.tiling<mma, block_m = 64, block_n = 128, block_k = 64, stages = 3, split_k = 1>
    #qf.tiling<mma, block_m = 16, block_n = 128, block_k = 64, stages = 4, cluster_k = 4>
    ```
    `split_k` splits K across the warps of a block (reduced in shared
    memory); `cluster_k` (mma on sm_90) splits it across the blocks of a
    thread-block cluster, reduced through distributed shared memory.
    Entries not given take their default (block_m = 1, block_n = 1,
    block_k = 0, threads_per_row = 32, vec_bytes = 16, k_unroll = 1,
    split_k = 1, stages = 1, cluster_k = 1) and are not printed.
  }];
  let parameters = (ins
    EnumParameter<QF_KernelKind>:$kernel,
    "int64_t":$blockM,
    "int64_t":$blockN,
    "int64_t":$blockK,
    "int64_t":$threadsPerRow,
    "int64_t":$vecBytes,
    "int64_t":$kUnroll,
    "int64_t":$splitK,
    "int64_t":$stages,
    "int64_t":$clusterK
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

#endif // QFUSE_DIALECT_QF_IR_QFATTRS_TD
