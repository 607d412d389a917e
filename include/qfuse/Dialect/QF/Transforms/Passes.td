//===- Passes.td - qf transformation passes ------------------*- tablegen -*-===//

#ifndef QFUSE_DIALECT_QF_TRANSFORMS_PASSES_TD
#define QFUSE_DIALECT_QF_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def QFImportQuant : Pass<"qf-import-quant"> {
  let summary = "Import upstream `quant` dialect weight types into qf encodings";
  let description = [{
    Rewrites weights typed with the upstream `quant` dialect into packed qf
    weights:

    ```mlir
    %t = qf.tensor_ref "w" : tensor<256x1024x!quant.uniform<i4:f16:{0:1, 1:128}, {...}>>
    %d = quant.dcast %t : tensor<256x1024x!quant.uniform<...>> to tensor<256x1024xf16>
    ```
    becomes
    ```mlir
    %w = qf.weight_ref "w" : !qf.weight<256x1024, #qf.enc<int4, group = 128, scale = f16>>
    %d = qf.dequantize %w : !qf.weight<...> -> tensor<256x1024xf16>
    ```
    Per-axis types on axis 0 become `per_channel`, sub-channel types with
    blocks {0:1, 1:G} become `group = G`; signed storage needs zero points of
    0, unsigned storage becomes `zero = int`. Scale and zero-point values
    written inside the type are not carried: qf weights are resolved by name,
    and the runtime reads them from the checkpoint (a remark says so). What
    qf cannot express (per-tensor scales, other axes or block shapes, other
    storage widths, uses other than `quant.dcast`) is an error at the op.
  }];
  let dependentDialects = ["::mlir::qf::QFDialect",
                           "::mlir::quant::QuantDialect"];
}

def QFFuseDequantMatmul : Pass<"qf-fuse-dequant-matmul"> {
  let summary = "Fuse dequantization into matmuls on packed weights";
  let description = [{
    Rewrites matmuls whose weight is a packed `!qf.weight`, directly or
    through `qf.dequantize`, into `qf.fused_matmul`, which decodes the
    weight on chip:

    ```mlir
    %d = qf.dequantize %w : !qf.weight<4096x4096, #enc> -> tensor<4096x4096xf16>
    %y = qf.matmul %x, %d : tensor<1x4096xf16>, tensor<4096x4096xf16> -> tensor<1x4096xf16>
    ```
    becomes
    ```mlir
    %y = qf.fused_matmul %x, %w : tensor<1x4096xf16>, !qf.weight<4096x4096, #enc> -> tensor<1x4096xf16>
    ```
    No tiling is chosen here (see `qf-select-tiling`). A dequantize left
    without users is erased, so the dense weight is never materialized; one
    that still has other users stays for them. A dequantize to f32 that is
    only rounded by a plain `arith.truncf` is folded first.

    Matmuls that stay (a dense weight not produced by `qf.dequantize`, a
    dequantized element type that differs from the activations') are
    reported under `-debug-only=qf-fuse-dequant-matmul`, and as remarks with
    `report-unfused`.
  }];
  let options = [
    Option<"reportUnfused", "report-unfused", "bool", /*default=*/"false",
           "Emit a remark for every matmul left unfused, saying why, and for "
           "every dequantize that still materializes a dense weight">
  ];
  let dependentDialects = ["::mlir::qf::QFDialect"];
}

def QFFuseActOrderNorm : Pass<"qf-fuse-act-order-norm"> {
  let summary = "Fold qf.rms_norm into the act_order matmuls that read it";
  let description = [{
    An act_order weight reads its activations in its sorted column order
    (docs/act-order.md), which qf-to-gpu writes with a permute launch of
    its own. When the activations are a `qf.rms_norm`'s result, the norm
    can write them in that order instead (the sum of squares does not
    depend on it): this pass makes such a norm the RMSNorm prologue of the
    act_order matmuls that read it, and qf-to-gpu lowers an act_order
    matmul's prologue as one norm launch that gathers x and gamma through
    the weight's perm, in place of the norm launch and the permute.

    ```mlir
    %n = qf.rms_norm %h, %g {eps = 1.0e-05 : f32} : tensor<?x4096xf16>, tensor<4096xf16> -> tensor<?x4096xf16>
    %q = qf.fused_matmul %n, %wq {qf.group = 0 : i64} : tensor<?x4096xf16>, !qf.weight<4096x4096, #ao> -> tensor<?x4096xf16>
    ```
    becomes
    ```mlir
    %q = qf.fused_matmul %h, %wq norm(%g : tensor<4096xf16>) {norm_eps = 1.0e-05 : f32, qf.group = 0 : i64} : ...
    ```
    It runs after qf-fuse-gated-mlp and qf-fuse-shared-input, which leave
    act_order matmuls with a prologue ungrouped: the groups form first, and
    every member then takes the same prologue.

    Not fused (the norm stays, with a remark under `report-unfused`): a norm
    with any user that is not an act_order fused matmul reading it as input
    (the norm would run anyway), a user that already has a prologue, or bf16
    activations (the norm kernel reads f16).
  }];
  let options = [
    Option<"reportUnfused", "report-unfused", "bool", /*default=*/"false",
           "Emit a remark for every qf.rms_norm read by an act_order matmul "
           "and left unfused, saying why">
  ];
  let dependentDialects = ["::mlir::qf::QFDialect"];
}

def QFFuseActOrderSiluMul : Pass<"qf-fuse-act-order-silu-mul"> {
  let summary = "Fold qf.silu_mul into the act_order matmul that reads it";
  let description = [{
    down_proj's activations are a `qf.silu_mul`'s result, which qf-to-gpu
    permutes into an act_order weight's sorted column order with a launch
    of its own. The silu_mul launch can write them in that order instead
    (a gather on its read side), so this pass makes a silu_mul read only
    by one act_order fused matmul that matmul's silu_mul prologue, and
    qf-to-gpu lowers it as one launch, in place of the silu_mul launch and
    the permute:

        xp[m, j] = silu(gate[m, perm[j]]) * up[m, perm[j]]

    Each element is the one a plain silu_mul computes, moved: no guard.

    ```mlir
    %a = qf.silu_mul %g, %u : tensor<?x14336xf16>
    %y = qf.fused_matmul %a, %wd : tensor<?x14336xf16>, !qf.weight<4096x14336, #ao> -> tensor<?x4096xf16>
    ```
    becomes
    ```mlir
    %y = qf.fused_matmul %g, %wd silu_mul(%u : tensor<?x14336xf16>) : tensor<?x14336xf16>, !qf.weight<4096x14336, #ao> -> tensor<?x4096xf16>
    ```
    Runs after qf-fuse-gated-mlp (which takes the silu_mul first where it
    fuses gate/up) and qf-fuse-shared-input (which does not group a matmul
    with this prologue).

    Not fused (the silu_mul stays, with a remark under `report-unfused`): a
    silu_mul with another user or more than one (the product would be
    written anyway), a reader that already has a prologue, or bf16
    activations (the kernel reads f16).
  }];
  let options = [
    Option<"reportUnfused", "report-unfused", "bool", /*default=*/"false",
           "Emit a remark for every qf.silu_mul read by an act_order matmul "
           "and left unfused, saying why">
  ];
  let dependentDialects = ["::mlir::qf::QFDialect"];
}

def QFFuseRMSNormPrologue : Pass<"qf-fuse-rmsnorm-prologue"> {
  let summary = "Fold qf.rms_norm into the fused matmuls that read it";
  let description = [{
    A `qf.rms_norm` whose every user is a `qf.fused_matmul` reading it as
    its input becomes those matmuls' RMSNorm prologue: each takes the
    un-normalized input, `norm(%gamma)` and `norm_eps`, and the norm op is
    erased. Each matmul kernel recomputes the row's sum of squares (K f16
    per row, M <= 8 rows: cheap next to the weight stream), which saves the
    norm's launch and its output's round trip through memory.

    ```mlir
    %n = qf.rms_norm %h, %g {eps = 1.0e-05 : f32} : tensor<1x4096xf16>, tensor<4096xf16> -> tensor<1x4096xf16>
    %q = qf.fused_matmul %n, %wq : tensor<1x4096xf16>, !qf.weight<4096x4096, #enc> -> tensor<1x4096xf16>
    ```
    becomes
    ```mlir
    %q = qf.fused_matmul %h, %wq norm(%g : tensor<4096xf16>) {norm_eps = 1.0e-05 : f32} : tensor<1x4096xf16>, !qf.weight<4096x4096, #enc> -> tensor<1x4096xf16>
    ```
    The fused prologue rounds the normalized value to the activation type,
    as the separate norm's result is, so the matmul sees the same input.

    Not fused (the norm stays, with a remark under `report-unfused`): a norm
    with any user that is not a fused matmul reading it as input (the norm
    would run anyway, so nothing is saved), a user that already has a
    prologue, or a user on a dense f16/bf16 weight (a cuBLAS step, which
    has no prologue).
  }];
  let options = [
    Option<"reportUnfused", "report-unfused", "bool", /*default=*/"false",
           "Emit a remark for every qf.rms_norm left unfused, saying why">
  ];
  let dependentDialects = ["::mlir::qf::QFDialect"];
}

def QFFuseRotaryAttention : Pass<"qf-fuse-rotary-attention"> {
  let summary = "Fold the rotaries of query and key into qf.attention";
  let description = [{
    A `qf.attention` whose query and key are results of `qf.rotary` ops
    takes their inputs and the rotary's parameters (`rope_theta`, and the
    Llama 3 scaling attributes when present); the rotaries are erased. The
    GPU kernel then rotates query and key itself and writes the rotated
    key to the cache: rotary(q), rotary(k), the cache write and the
    attention become one launch per layer.

    ```mlir
    %qr = qf.rotary %q, %pos {head_dim = 128 : i64, theta = 500000.0 : f64} : ...
    %kr = qf.rotary %k, %pos {head_dim = 128 : i64, theta = 500000.0 : f64} : ...
    %o, %kc1, %vc1 = qf.attention %qr, %kr, %v, %kc, %vc, %pos {num_heads = 32 : i64, num_kv_heads = 8 : i64, head_dim = 128 : i64} : ...
    ```
    becomes
    ```mlir
    %o, %kc1, %vc1 = qf.attention %q, %k, %v, %kc, %vc, %pos {head_dim = 128 : i64, num_heads = 32 : i64, num_kv_heads = 8 : i64, rope_theta = 500000.0 : f64} : ...
    ```
    The fused form assumes the op's contract (qf.attention's description):
    the M rows are consecutive positions, as the Generator runs them.

    Not fused (remark under `report-unfused`): a query or key that is not a
    `qf.rotary` result, a rotary whose result has another user (it would
    run anyway), a rotary on other positions than the attention's or with
    another head_dim, query and key rotaries with different theta or
    scaling, and an attention that already rotates.
  }];
  let options = [
    Option<"reportUnfused", "report-unfused", "bool", /*default=*/"false",
           "Emit a remark for every qf.attention left without its rotaries, "
           "saying why">
  ];
  let dependentDialects = ["::mlir::qf::QFDialect"];
}

def QFFuseEpilogue : Pass<"qf-fuse-epilogue"> {
  let summary = "Fold residual adds and bias adds into fused matmuls";
  let description = [{
    The one place where elementwise adds after a fused matmul become its
    epilogue (`qf-fuse-dequant-matmul` only replaces the matmul itself):

    * residual: `qf.add` of a fused matmul result and another tensor of the
      result type becomes `residual(%r)`:
      ```mlir
      %o = qf.fused_matmul %a, %wo : ... -> tensor<1x4096xf16>
      %h1 = qf.add %h, %o : tensor<1x4096xf16>
      ```
      becomes
      ```mlir
      %h1 = qf.fused_matmul %a, %wo residual(%h : tensor<1x4096xf16>) : ... -> tensor<1x4096xf16>
      ```
    * bias: `qf.add` of a fused matmul result and a
      `linalg.broadcast ins(%b : tensor<N>) ... dimensions = [0]` becomes
      `bias(%b)`, when the matmul has no residual or activation yet (the
      bias comes before both).

    The matmul's result must have no other user (it would need to exist
    unfused as well). The fused op is created at the add, after both
    operands. Adds left alone are reported with `report-unfused`.
  }];
  let options = [
    Option<"reportUnfused", "report-unfused", "bool", /*default=*/"false",
           "Emit a remark for every qf.add of a fused matmul result left "
           "unfused, saying why">
  ];
  let dependentDialects = ["::mlir::qf::QFDialect"];
}

def QFFuseGatedMLP : Pass<"qf-fuse-gated-mlp"> {
  let summary = "Fuse silu(gate) * up and its two projections into one matmul";
  let description = [{
    `qf.silu_mul` of two fused matmuls that read the same input with the
    same weight type (encoding, shape, layout) and the same prologue
    becomes one fused matmul with `activation = silu_mul` and the up
    projection as its `up` weight: one launch instead of three, and the
    [M, N] gate and up results never reach memory.

    ```mlir
    %g = qf.fused_matmul %x, %wg : ... -> tensor<1x14336xf16>
    %u = qf.fused_matmul %x, %wu : ... -> tensor<1x14336xf16>
    %a = qf.silu_mul %g, %u : tensor<1x14336xf16>
    ```
    becomes
    ```mlir
    %a = qf.fused_matmul %x, %wg up(%wu : !qf.weight<14336x4096, #enc>) {activation = #qf<activation silu_mul>} : ... -> tensor<1x14336xf16>
    ```
    The weights stay two tensors, as the checkpoint stores them. Not fused
    (remark under `report-unfused`): projections with other users, with a
    bias or residual (the fused form has neither before the activation),
    different inputs, encodings, shapes or prologues, act_order weights
    on bf16 activations, dense f16/bf16 weights
    (cuBLAS steps), or matmuls that already have a tiling (run before
    `qf-select-tiling`).

    act_order gate and up fuse under the contract that their column
    permutations (`perm`, weight data) are equal, as GPTQ's desc_act makes
    them (one Hessian per input): the kernel reads the input permuted once
    by gate's perm. `qf-to-gpu` guards those launches with the contract and
    adds the dequantize + cuBLAS fallback for perms that differ; the runtime
    compares the perms when it loads the weights (docs/act-order.md).
  }];
  let options = [
    Option<"reportUnfused", "report-unfused", "bool", /*default=*/"false",
           "Emit a remark for every qf.silu_mul left unfused, saying why">
  ];
  let dependentDialects = ["::mlir::qf::QFDialect"];
}

def QFFuseSharedInput : Pass<"qf-fuse-shared-input"> {
  let summary = "Launch fused matmuls that share an input as one kernel";
  let description = [{
    Horizontal fusion. Fused matmuls in one block that read the same input
    with the same weight encoding, layout and K, the same prologue and the
    same kinds of epilogue operands (q, k and v; gate and up when not
    gated) get a common `qf.group` id:

    ```mlir
    %q = qf.fused_matmul %x, %wq {qf.group = 0 : i64} : ...
    %k = qf.fused_matmul %x, %wk {qf.group = 0 : i64} : ...
    %v = qf.fused_matmul %x, %wv {qf.group = 0 : i64} : ...
    ```
    The ops stay separate (their weights, results and CPU references are
    unchanged); `qf-to-gpu` emits one matvec kernel for the group, with
    the first member's tiling, whose blocks are partitioned across the
    members in program order, records its launch on the first member and
    none on the others. Member i > 0 binds its parameters with a `.i`
    suffix (`codes.1`, `scales.1`, `y.1`, `residual.1`, ...).

    Not grouped (remarks under `report-unfused`): matmuls with a tiling
    already (run before `qf-select-tiling`), dense f16/bf16 weights (cuBLAS
    steps), silu_mul matmuls, named codebooks (one shared table per block), and members whose bias or
    residual is computed after the group's first matmul (the kernel runs
    there). With `gate-up-only`, only matmuls whose single user is one
    `qf.silu_mul` group, with that silu_mul's other operand (gate and up
    that `qf-fuse-gated-mlp` left unfused).

    act_order weights group under the contract that the members' column
    permutations (`perm`, weight data known at load time) are equal, as
    GPTQ's desc_act makes them for modules that read one input: the
    group's kernel reads the input permuted once, by the first member's
    perm. `qf-to-gpu` guards the grouped launches with the contract and
    adds a per-member fallback for perms that differ, which the runtime
    picks when it loads the weights (docs/act-order.md).
  }];
  let options = [
    Option<"reportUnfused", "report-unfused", "bool", /*default=*/"false",
           "Emit a remark for every fused matmul sharing its input with "
           "another that is left out of a group, saying why">,
    Option<"gateUpOnly", "gate-up-only", "bool", /*default=*/"false",
           "Group only matmuls whose results feed one qf.silu_mul (gate and "
           "up left unfused by qf-fuse-gated-mlp), nothing else">
  ];
  let dependentDialects = ["::mlir::qf::QFDialect"];
}

def QFSelectTiling : Pass<"qf-select-tiling"> {
  let summary = "Choose a kernel and tile shape for each fused matmul";
  let description = [{
    Gives every `qf.fused_matmul` without a `tiling` one, chosen by a cost
    model over (M, N, K, encoding, target) or taken from a tuning database,
    and records the predicted time as `qf.predicted_us` (bytes that must move
    / `bandwidth-gbps` + 3 us launch cost; the bytes are those `qf-roofline`
    reports). A dynamic M (the batch) is taken to be `batch`.

    M from `tensor-core-min-m` (default 0: the measured crossover, from
    M = 3 to 8 by the weight's size and decode family; a positive value
    applies below 8 only to weights of at least
    `tensor-core-small-min-weights`; docs/defaults.md) up gets the tensor-core `mma` kernel where it takes the weight
    (TensorCoreSupport.h: 2-, 3-, 4- and 8-bit codes without 2:4, K a
    multiple of 8; act_order on permuted activations from the batch where
    the matvec's shared activations pass 24 KB; not an op with an RMSNorm
    prologue; `qf.group` members follow their first member). What neither
    kernel takes, and batches from `dequant-gemm-min-m` (512) on sm_80/sm_90,
    get `dequant_gemm`: a dequantize into a workspace and cuBLAS
    (docs/fallback.md).
    Smaller M, and such weights up to M = 8, get the CUDA-core `matvec`
    kernel; a block has 4 warps (8 when
    split_k = 8), `split_k` warps of a block share the same rows, each
    reducing a contiguous 1/split_k of K, combined through shared memory;
    each warp handles `rows = block_n * split_k / warps` rows (1, 2 or 4);
    each lane loads `vec_bytes` of packed codes per row per iteration, and
    `k_unroll` iterations are unrolled. The model picks:

    * `vec_bytes`: the largest of 16, 8, 4 dividing a row's packed bytes
      (K * bits / 8; the kept K / 2 under 2:4). A row that none divides
      cannot use matvec and falls back to `mma` (with a remark).
    * `split_k` in {1, 2, 4, 8}: each warp's slice must be a whole number of
      lane loads and at least one full warp iteration (32 * vec_bytes bytes);
      slices longer than 4096 bytes are split (long K: down projections).
    * rows per warp: 1 at M = 1; at M >= 2 the most of 4, 2, 1 (activation
      reuse) that still reaches the warp target.
    * the warp target: the grid's warps should reach ~4 * `sm-count` * 4
      (within 1/16); candidates are tried by rows (descending), then split_k
      (ascending), and the first reaching the target wins; if none does, the
      one with most warps (small N: k/v projections).
    * `k_unroll` = min(4, iterations per lane), the iterations of the
      busiest lane (slice bytes / (32 * vec_bytes), rounded up);
      `threads_per_row` = 32; `block_m` = M (the activation rows each block
      reads).

    `mma`: block_m = M rounded up to 16 (at most 64); (block_n, split_k)
    from (128, 1), (64, 2), (32, 4), (32, 8), the first that gives every SM
    two blocks within the shared-memory budget; block_k 128 at M <= 32 when
    it fits, else 64; 4 stages when they fit, else 3.

    `tuning-db=<file.json>` overrides the model per shape. The file is a
    JSON array of entries
    `{"m": 1, "n": 4096, "k": 4096, "encoding": "int4, group = 128, scale = f16",
      "tiling": "matvec, block_n = 4, split_k = 2"}`,
    where `encoding` and `tiling` are the bodies of `#qf.enc<...>` and
    `#qf.tiling<...>`, `n` is the weight's N (2N for silu_mul) and `m` the
    static M or `batch`. An unreadable or malformed database is an error
    naming the file and the entry.

    `batch-sizes=<list>` (what qf-to-gpu compiles a dynamic M for) lets one
    op run different kernels per batch. When M is dynamic, each listed batch
    whose own tiling (chosen for that batch) differs from the one chosen for
    `batch` gets it in the discardable attribute

    ```mlir
    qf.batch_tilings = [
      #qf.batch_tiling<batch = 16, tiling = #qf.tiling<mma, ...>>,
      #qf.batch_tiling<batch = 128, tiling = #qf.tiling<mma, ...>>
    ]
    ```

    except that matvec batches share a matvec `tiling` (its generator
    specializes each batch anyway). Batches not listed there run `tiling`.
    `qf-choose-layout` adds the weight layout each entry's kernel reads, and
    `qf-to-gpu` emits each batch's kernel from its entry.
  }];
  let options = [
    Option<"smCount", "sm-count", "int64_t", /*default=*/"0",
           "Streaming multiprocessors of the target GPU (0: the chip's, "
           "from #qf.target's table)">,
    Option<"bandwidthGbps", "bandwidth-gbps", "double", /*default=*/"4300.0",
           "Memory bandwidth of the target in GB/s, for qf.predicted_us">,
    Option<"batch", "batch", "int64_t", /*default=*/"1",
           "M assumed for matmuls whose M (the batch) is dynamic">,
    Option<"tuningDb", "tuning-db", "std::string", /*default=*/"",
           "JSON file of measured tilings that override the cost model">,
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_90\"",
           "Target (sm_80, sm_89, sm_90, sm_90a; KnownTargets.h): sm_90a "
           "takes the tuning database's sm_90a entries (wgmma tilings)">,
    ListOption<"batchSizes", "batch-sizes", "int64_t",
               "Batch sizes a dynamic M is compiled for: those whose best "
               "kernel differs get their own tiling (qf.batch_tilings)">,
    Option<"tensorCoreMinM", "tensor-core-min-m", "int64_t",
           /*default=*/"::mlir::qf::kTensorCoreMinM",
           "Smallest M that runs the tensor-core kernel where it can (0: "
           "the measured crossover per weight size and decode family; 9 and "
           "up: the matvec for every M it takes)">,
    Option<"tensorCoreSmallMinWeights", "tensor-core-small-min-weights",
           "int64_t",
           /*default=*/"::mlir::qf::kTensorCoreSmallBatchMinWeights",
           "Below M = 8, the fewest weight elements that run the tensor-core "
           "kernel from a positive tensor-core-min-m, or the measured "
           "crossover's large weights with 0 (0: every weight it takes)">,
    Option<"dequantGemmMinM", "dequant-gemm-min-m", "int64_t",
           /*default=*/"::mlir::qf::kDequantGemmMinM",
           "Smallest M that runs the dequantize + cuBLAS fallback instead of "
           "the mma.sync kernel (0: only where no fused kernel takes the "
           "weight)">,
    Option<"wgmmaMinRows", "wgmma-min-rows", "int64_t",
           /*default=*/"::mlir::qf::kWgmmaMinRows",
           "sm_90a: the fewest weight rows that run the wgmma kernel at "
           "batches 128 to 511 (every weight from 512)">,
    Option<"mmaTieBreak", "mma-tie-break", "bool", /*default=*/"false",
           "Among mma.sync tilings predicted within 1% of the fastest, take "
           "the one with the least blocks' work (default false, the first, "
           "until it is timed on the zoo; docs/cost-model.md)">
  ];
  let dependentDialects = ["::mlir::qf::QFDialect"];
}

def QFChooseLayout : Pass<"qf-choose-layout"> {
  let summary = "Choose the packed storage layout each kernel reads";
  let description = [{
    Retypes the weights of `qf.fused_matmul`s that have a `matvec` tiling
    and integer 4-bit codes (int4, uint4) to

    ```mlir
    #qf.layout<tiled, tile_n = 1, tile_k = T>    // T = vec_bytes * 8 / bits
    ```

    so that one lane's `vec_bytes` load is one tile. Tiles follow each other
    in row-major order, so only the order of codes inside each 32-bit word
    changes: word j of a row holds codes 8j..8j+7 (for 2:4, of the kept
    codes) in nibble order [0, 2, 4, 6, 1, 3, 5, 7]:

    ```
    bits:     31..28 27..24 23..20 19..16 15..12 11..8  7..4   3..0
    row_major:  e7     e6     e5     e4     e3     e2     e1     e0
    tiled:      e7     e5     e3     e1     e6     e4     e2     e0
    ```

    so `(word >> 4i) & 0x000F000F` yields the consecutive pair (e2i, e2i+1)
    in the two 16-bit halves of a register, which one `lop3` with 0x64006400
    turns into half2(1024 + e2i, 1024 + e2i+1) without shuffles. The
    format library (format/, Layout.h) implements this
    repack from the checkpoint order. Table formats (fp4e2m1, nf4, 4-bit
    codebooks) decode a whole byte through a table and keep row_major.

    The `qf.weight_ref` result is retyped with all its uses; when one
    weight_ref feeds consumers that want different layouts (a matvec and an
    mma, a dequantize), it is cloned once per layout, and the original keeps
    row_major for the rest. Table and 8-bit formats, `mma` tilings, and
    weights not produced by `qf.weight_ref` keep their layout.

    An op with `qf.batch_tilings` (qf-select-tiling `batch-sizes`) reads its
    weight in a second layout for those batches: each entry gets the layout
    its kernel reads, `layout = #qf.layout<tiled, tile_n = 32, tile_k = 32>`
    for the tensor-core kernel. The weight operand keeps the layout of
    `tiling`; the runtime packs the one checkpoint tensor into both
    (docs/artifact.md, weights in several layouts).
  }];
  let dependentDialects = ["::mlir::qf::QFDialect"];
}

def QFRoofline : Pass<"qf-roofline", "::mlir::ModuleOp"> {
  let summary = "Report the bytes, FLOPs and roofline time of each fused matmul";
  let description = [{
    Emits a remark per `qf.fused_matmul` (and with `json=<file>` writes a JSON
    array, one object per op) with the bytes it must move, split into weight
    codes, scales (and the NVFP4 global scale), zero points, metadata (g_idx,
    2:4 positions, codebook tables), activations in, outputs, and the
    residual, bias and norm operands; the bytes per weight element against
    fp16's 2; the FLOPs (2 * M * N * K); and the predicted time, bytes /
    `bandwidth-gbps` + 3 us launch cost, as `qf-select-tiling` predicts it.
    The compute time at `peak-tflops` is reported beside it. A dynamic M
    (the batch) is taken to be `batch`.
  }];
  let options = [
    Option<"bandwidthGbps", "bandwidth-gbps", "double", /*default=*/"4300.0",
           "Memory bandwidth in GB/s">,
    Option<"peakTflops", "peak-tflops", "double", /*default=*/"800.0",
           "Peak dense fp16/bf16 tensor throughput in TFLOP/s">,
    Option<"batch", "batch", "int64_t", /*default=*/"1",
           "M assumed for matmuls whose M (the batch) is dynamic">,
    Option<"jsonFile", "json", "std::string", /*default=*/"",
           "Also write the report as a JSON array to this file">
  ];
  let dependentDialects = ["::mlir::qf::QFDialect"];
}

#endif // QFUSE_DIALECT_QF_TRANSFORMS_PASSES_TD
