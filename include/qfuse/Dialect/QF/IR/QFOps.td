//===- QFOps.td - qf operations ------------------------------*- tablegen -*-===//
//
// Weight references, quantize/dequantize, (fused) matmul on packed weights,
// the GPTQ block update, and the decode-layer ops that later passes lower.
// All ops work on tensors (value semantics); the runtime executes them in
// place where the plan says so.
//
//===----------------------------------------------------------------------===//

#ifndef QFUSE_DIALECT_QF_IR_QFOPS_TD
#define QFUSE_DIALECT_QF_IR_QFOPS_TD

include "qfuse/Dialect/QF/IR/QFTypes.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/OpAsmInterface.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

def QF_ActivationTensor : TensorRankOf<[F16, BF16], [2]>;
def QF_FloatTensor : TensorOf<[F16, BF16, F32]>;

def QF_EpilogueActivation : I32EnumAttr<"EpilogueActivation",
    "activation applied in a fused matmul's epilogue", [
      I32EnumAttrCase<"None", 0, "none">,
      // The weight is the gate projection and the `up` operand the up
      // projection, both [N, K]; the result is silu(x W^T) * (x Up^T).
      I32EnumAttrCase<"SiluMul", 1, "silu_mul">
    ]> {
  let cppNamespace = "::mlir::qf";
  let genSpecializedAttr = 0;
}
def QF_EpilogueActivationAttr
    : EnumAttr<QF_Dialect, QF_EpilogueActivation, "activation">;

//===----------------------------------------------------------------------===//
// Weights
//===----------------------------------------------------------------------===//

def QF_WeightRefOp : QF_Op<"weight_ref", [Pure]> {
  let summary = "A packed weight resolved by name at run time";
  let description = [{
    ```mlir
    %w = qf.weight_ref "model.layers.0.self_attn.q_proj"
           : !qf.weight<4096x4096, #qf.enc<int4, group = 128, scale = f16>>
    ```
    The runtime finds the packed codes, scales, zero points, g_idx and 2:4
    metadata of this weight under the name in the weight files, validates
    them against the type, and repacks them into the type's layout. Weights
    are never inlined into the IR.
  }];
  let arguments = (ins StrAttr:$name);
  let results = (outs QF_AnyWeight:$result);
  let assemblyFormat = "$name attr-dict `:` qualified(type($result))";
  let hasVerifier = 1;
}

def QF_TensorRefOp : QF_Op<"tensor_ref", [Pure]> {
  let summary = "A dense tensor (norm weight, embedding, bias) resolved by name";
  let description = [{
    ```mlir
    %g = qf.tensor_ref "model.norm.weight" : tensor<4096xf16>
    ```
    Also carries weights typed with the upstream `quant` dialect, which
    `qf-import-quant` turns into `qf.weight_ref`.
  }];
  let arguments = (ins StrAttr:$name);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = "$name attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def QF_DequantizeOp : QF_Op<"dequantize", [Pure]> {
  let summary = "Expand a packed weight into a dense [N, K] tensor";
  let description = [{
    ```mlir
    %d = qf.dequantize %w : !qf.weight<256x1536, #enc> -> tensor<256x1536xf16>
    ```
    Computes each element as its encoding defines (scale * (q - zero),
    scale * table[q], ...) in f32 and rounds once to the result type. Fusion
    passes exist so that this op never runs on its own in a compiled model.
  }];
  let arguments = (ins QF_AnyWeight:$weight);
  let results = (outs TensorRankOf<[F16, BF16, F32], [2]>:$result);
  let assemblyFormat =
      "$weight attr-dict `:` qualified(type($weight)) `->` type($result)";
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

def QF_QuantizeOp : QF_Op<"quantize", [Pure]> {
  let summary = "Round-to-nearest quantization of a dense [N, K] tensor";
  let description = [{
    ```mlir
    %w = qf.quantize %d : tensor<256x1536xf16> -> !qf.weight<256x1536, #enc>
    ```
    Scales come from the absolute maximum of each group (and the minimum for
    formats with zero points); codes round half to even.
  }];
  let arguments = (ins TensorRankOf<[F16, BF16, F32], [2]>:$input);
  let results = (outs QF_AnyWeight:$result);
  let assemblyFormat =
      "$input attr-dict `:` type($input) `->` qualified(type($result))";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Matmul
//===----------------------------------------------------------------------===//

def QF_MatmulOp : QF_Op<"matmul", [Pure]> {
  let summary = "Activations [M, K] times weight^T [K, N] -> [M, N]";
  let description = [{
    ```mlir
    %y = qf.matmul %x, %w : tensor<?x4096xf16>, !qf.weight<1024x4096, #enc>
           -> tensor<?x1024xf16>
    ```
    The weight is either a packed `!qf.weight` or a dense [N, K] tensor of
    the activation type. Products accumulate in f32; the result has the
    activation element type. M may be dynamic (the batch).
  }];
  let arguments = (ins QF_ActivationTensor:$input,
                       AnyTypeOf<[QF_AnyWeight, QF_ActivationTensor]>:$weight);
  let results = (outs QF_ActivationTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight attr-dict `:` type($input) `,` qualified(type($weight))
    `->` type($result)
  }];
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

def QF_FusedMatmulOp : QF_Op<"fused_matmul", [Pure, AttrSizedOperandSegments]> {
  let summary = "A matmul on a packed weight with its neighbours fused in";
  let description = [{
    What the fusion passes produce and the kernel generators consume:

    ```mlir
    %y = qf.fused_matmul %x, %wgate up(%wup : !qf.weight<14336x4096, #enc>)
           norm(%gamma : tensor<4096xf16>) residual(%r : tensor<1x14336xf16>)
           {norm_eps = 1.0e-05 : f32, activation = #qf<activation silu_mul>,
            tiling = #qf.tiling<matvec, block_n = 4>}
         : tensor<1x4096xf16>, !qf.weight<14336x4096, #enc>
           -> tensor<1x14336xf16>
    ```
    In order:
    * the optional RMSNorm prologue: each input row becomes
      `round(x * rsqrt(mean(x^2) + norm_eps) * norm)`, rounded to the
      activation type exactly as a separate `qf.rms_norm` result would be,
      so fusing the norm does not change the matmul's input (`norm` is [K]);
      on an act_order weight (qf-fuse-act-order-norm) it may run as a
      launch of its own that writes the rows in the weight's sorted column
      order, with the same values;
    * or, on an act_order weight only, the optional silu_mul prologue
      (qf-fuse-act-order-silu-mul): with `silu_mul(%up)` the matmul reads
      `round(silu(input) * up)` ([M, K] each), rounded to the activation
      type exactly as a separate `qf.silu_mul` result would be; qf-to-gpu
      runs it as a launch of its own that writes the product in the
      weight's sorted column order (docs/act-order.md);
    * the packed weight is decoded on chip (never materialized);
    * `bias` ([N]) is added;
    * the epilogue activation: `silu_mul` takes a second packed weight `up`
      of the same type (the up projection; the first weight is the gate
      projection) and gives `silu(x Wgate^T) * (x Wup^T)`. The two weights
      stay separate tensors, as in the checkpoint. A bias cannot be combined
      with `silu_mul` (no supported model has MLP biases);
    * `residual` ([M, N]) is added.
    Products accumulate in f32 and the result is rounded once.
  }];
  let arguments = (ins
    QF_ActivationTensor:$input,
    QF_AnyWeight:$weight,
    Optional<QF_AnyWeight>:$up,
    Optional<TensorRankOf<[F16, BF16], [1]>>:$norm,
    Optional<TensorRankOf<[F16, BF16], [1]>>:$bias,
    Optional<QF_ActivationTensor>:$residual,
    Optional<QF_ActivationTensor>:$silu_mul_up,
    OptionalAttr<F32Attr>:$norm_eps,
    DefaultValuedAttr<QF_EpilogueActivationAttr,
                      "::mlir::qf::EpilogueActivation::None">:$activation,
    OptionalAttr<QF_TilingAttr>:$tiling
  );
  let results = (outs QF_ActivationTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight
    (`up` `(` $up^ `:` qualified(type($up)) `)`)?
    (`norm` `(` $norm^ `:` type($norm) `)`)?
    (`bias` `(` $bias^ `:` type($bias) `)`)?
    (`residual` `(` $residual^ `:` type($residual) `)`)?
    (`silu_mul` `(` $silu_mul_up^ `:` type($silu_mul_up) `)`)?
    attr-dict `:` type($input) `,` qualified(type($weight)) `->` type($result)
  }];
  let extraClassDeclaration = [{
    /// Whether the RMSNorm prologue is an act_order weight's: qf-to-gpu
    /// then runs it as a norm launch of its own that writes the rows in
    /// the weight's sorted column order (docs/act-order.md), which any
    /// kernel reads, rather than inside the matvec.
    bool hasPermutedNorm() {
      return getNorm() && getWeight().getType().getEncoding().getActOrder();
    }
    /// Whether the input is a silu_mul's gate, whose up is `silu_mul_up`:
    /// qf-to-gpu runs the product as a launch of its own (in the act_order
    /// weight's sorted column order where the kernel reads it so).
    bool hasSiluMulPrologue() { return static_cast<bool>(getSiluMulUp()); }
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// GPTQ
//===----------------------------------------------------------------------===//

def QF_GPTQBlockUpdateOp : QF_Op<"gptq_block_update",
                                 [Pure, AttrSizedOperandSegments,
                                  AttrSizedResultSegments]> {
  let summary = "Quantize a block of weight columns with GPTQ error feedback";
  let description = [{
    One block of Algorithm 1 of GPTQ (Frantar et al.) over R rows and B
    columns: for each column j in order, q = quant(w[:, j]) on the `grid`,
    err = (w[:, j] - q) / U[j, j], and w[:, j+1:] -= err * U[j, j+1:], where
    U is the block's [B, B] slice of the upper Cholesky factor of H^-1.

    ```mlir
    // Groups computed inside the block on the updated weights:
    %codes, %err, %scales = qf.gptq_block_update %w, %u
        {grid = #qf.enc<int4, group = 128, scale = f16>, column_offset = 256}
      : (tensor<4096x128xf32>, tensor<128x128xf32>)
        -> (tensor<4096x128xi8>, tensor<4096x128xf32>, tensor<4096x1xf32>)
    // Static scales (per channel, static groups, act-order): one per column.
    %codes, %err = qf.gptq_block_update %w, %u scales(%s : tensor<4096x128xf32>)
        {grid = #qf.enc<int8, per_channel, scale = f32>}
      : (tensor<4096x128xf32>, tensor<128x128xf32>)
        -> (tensor<4096x128xi8>, tensor<4096x128xf32>)
    // NVFP4: one global scale per row (rows of several modules, each with
    // its own), in either mode.
    %codes, %err, %scales = qf.gptq_block_update %w, %u
        global_scale(%g : tensor<4096xf32>)
        {grid = #qf.enc<fp4e2m1, group = 16, scale = f8E4M3FN, global_scale>}
      : (tensor<4096x128xf32>, tensor<128x128xf32>)
        -> (tensor<4096x128xi8>, tensor<4096x128xf32>, tensor<4096x8xf32>)
    ```
    Results: the codes, the scaled error block E (for the lazy update
    W[:, rest] -= E * U[block, rest]), and in the dynamic mode the group
    scales (and zero points for formats that have them), [R, B / group].

    With `values` (an f16 [R, B] result, written after the other results'
    types), each code's value on the grid rounded to f16, which is what
    dequantizing the packed weight gives: the quantized block as the next
    layer's calibration reads it, without a dequantization on the host.
    ```mlir
    %codes, %err, %values, %scales = qf.gptq_block_update %w, %u
        {grid = #qf.enc<int4, group = 128, scale = f16>}
      : (tensor<?x128xf32>, tensor<128x128xf32>)
        -> (tensor<?x128xi8>, tensor<?x128xf32>, tensor<?x1xf32>)
        values tensor<?x128xf16>
    ```

    `global_scale` ([R] f32) is required exactly when the grid has
    `global_scale` (NVFP4): row r's scales are e4m3(amax / 6 * g[r]), its
    codes e2m1(w * g[r] / s) and its values (e2m1 * s) / g[r].
  }];
  let arguments = (ins
    TensorRankOf<[F32], [2]>:$weights,
    TensorRankOf<[F32], [2]>:$hinv_chol,
    Optional<TensorRankOf<[F32], [2]>>:$scales,
    Optional<TensorRankOf<[F32], [2]>>:$zeros,
    Optional<TensorRankOf<[F32], [1]>>:$global_scale,
    QF_EncodingAttr:$grid,
    DefaultValuedAttr<I64Attr, "0">:$column_offset
  );
  let results = (outs
    TensorRankOf<[I8], [2]>:$codes,
    TensorRankOf<[F32], [2]>:$error,
    Optional<TensorRankOf<[F16], [2]>>:$values,
    Variadic<TensorRankOf<[F32], [2]>>:$group_params
  );
  let assemblyFormat = [{
    $weights `,` $hinv_chol
    (`scales` `(` $scales^ `:` type($scales) `)`)?
    (`zeros` `(` $zeros^ `:` type($zeros) `)`)?
    (`global_scale` `(` $global_scale^ `:` type($global_scale) `)`)?
    attr-dict `:` `(` type($weights) `,` type($hinv_chol) `)`
    `->` `(` type($codes) `,` type($error) (`,` type($group_params)^)? `)`
    (`values` type($values)^)?
  }];
  let hasVerifier = 1;
}

def QF_RowMinMaxOp : QF_Op<"row_min_max", [Pure]> {
  let summary = "Each row's smallest and largest element, exactly";
  let description = [{
    For a [R, K] f32 matrix, result[r] = [min, max] of row r, selected by
    comparisons as gptq::Grid's statsOf does (std::min / std::max from the
    first column on): of elements that compare equal (-0 and +0), the one
    in the lowest column. NaN elements are skipped, as there. Every
    Grid::fit reads a group only through its min, max and amax (= the
    larger magnitude of min and max), so fitting the two values gives a
    whole row's per-channel parameters bit for bit, from 2 floats a row.

    ```mlir
    %mm = qf.row_min_max %w : tensor<?x4096xf32> -> tensor<?x2xf32>
    // A tile of 256 rows (python3 -m qfuse compile-gptq): the GPTQ solver
    // moves it over the stacked rows, so the artifact's buffers stay small.
    %mt = qf.row_min_max %t : tensor<256x4096xf32> -> tensor<256x2xf32>
    ```
  }];
  let arguments = (ins TensorRankOf<[F32], [2]>:$weights);
  let results = (outs TensorRankOf<[F32], [2]>:$min_max);
  let assemblyFormat = [{
    $weights attr-dict `:` type($weights) `->` type($min_max)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Decode-layer ops
//===----------------------------------------------------------------------===//

def QF_RMSNormOp : QF_Op<"rms_norm", [Pure]> {
  let summary = "y = x / sqrt(mean(x^2) + eps) * gamma, per row";
  let arguments = (ins QF_ActivationTensor:$input,
                       TensorRankOf<[F16, BF16], [1]>:$gamma, F32Attr:$eps);
  let results = (outs QF_ActivationTensor:$result);
  let assemblyFormat = [{
    $input `,` $gamma attr-dict `:` type($input) `,` type($gamma) `->` type($result)
  }];
  let hasVerifier = 1;
}

def QF_RotaryOp : QF_Op<"rotary", [Pure]> {
  let summary = "Rotary position embedding on [M, heads * head_dim]";
  let description = [{
    Rotates each head's (i, i + head_dim/2) pairs ("rotate half", as in
    Llama and Qwen2) by position * inv_freq[i], inv_freq[i] =
    theta^(-2i/head_dim). With `scaling_factor` and its three companions,
    inv_freq is rescaled as Llama 3 does (rope_type "llama3").
  }];
  let arguments = (ins QF_ActivationTensor:$input,
                       TensorRankOf<[I32], [1]>:$positions,
                       I64Attr:$head_dim, F64Attr:$theta,
                       OptionalAttr<F64Attr>:$scaling_factor,
                       OptionalAttr<F64Attr>:$low_freq_factor,
                       OptionalAttr<F64Attr>:$high_freq_factor,
                       OptionalAttr<I64Attr>:$original_max_position);
  let results = (outs QF_ActivationTensor:$result);
  let assemblyFormat = [{
    $input `,` $positions attr-dict `:` type($input) `,` type($positions)
    `->` type($result)
  }];
  let hasVerifier = 1;
}

def QF_AttentionOp : QF_Op<"attention", [Pure]> {
  let summary = "Causal grouped-query attention against a KV cache";
  let description = [{
    Writes the M new key/value rows into the caches at `positions`, then
    attends each query row (num_heads heads) to cache rows [0, position],
    head h reading kv head h / (num_heads / num_kv_heads). Returns the output
    [M, num_heads * head_dim] and the updated caches.

    With `rope_theta` (and optionally the Llama 3 scaling attributes
    `scaling_factor`, `low_freq_factor`, `high_freq_factor`,
    `original_max_position`, all four or none, as on `qf.rotary`), query
    and key are rotated first, exactly as `qf.rotary` with `theta =
    rope_theta` and the same scaling would (rotate half, per head of
    head_dim, by the row's position, rounded to the element type); the
    cache receives the rotated key. `qf-fuse-rotary-attention` produces
    this form so that rotary, cache write and attention are one launch.

    Contract of the rotary form (the Generator's: the M rows of a call are
    consecutive positions of one sequence): positions[i] = positions[0] + i.
    The GPU kernel reads the rows of earlier positions from the cache and
    the rows of this call directly from `key` and `value`, so it never
    waits for its own cache writes; it checks the contract and, when it is
    broken, writes NaN to every output row (cache rows are still written
    at their positions).
  }];
  let arguments = (ins QF_ActivationTensor:$query, QF_ActivationTensor:$key,
                       QF_ActivationTensor:$value,
                       QF_ActivationTensor:$key_cache,
                       QF_ActivationTensor:$value_cache,
                       TensorRankOf<[I32], [1]>:$positions,
                       I64Attr:$num_heads, I64Attr:$num_kv_heads,
                       I64Attr:$head_dim,
                       OptionalAttr<F64Attr>:$rope_theta,
                       OptionalAttr<F64Attr>:$scaling_factor,
                       OptionalAttr<F64Attr>:$low_freq_factor,
                       OptionalAttr<F64Attr>:$high_freq_factor,
                       OptionalAttr<I64Attr>:$original_max_position);
  let results = (outs QF_ActivationTensor:$result,
                      QF_ActivationTensor:$key_cache_out,
                      QF_ActivationTensor:$value_cache_out);
  let assemblyFormat = [{
    $query `,` $key `,` $value `,` $key_cache `,` $value_cache `,` $positions
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def QF_SiluMulOp : QF_Op<"silu_mul", [Pure, SameOperandsAndResultType]> {
  let summary = "silu(gate) * up, elementwise";
  let arguments = (ins QF_ActivationTensor:$gate, QF_ActivationTensor:$up);
  let results = (outs QF_ActivationTensor:$result);
  let assemblyFormat = "$gate `,` $up attr-dict `:` type($result)";
}

def QF_AddOp : QF_Op<"add", [Pure, Commutative, SameOperandsAndResultType]> {
  let summary = "Elementwise sum (residual connections)";
  let arguments = (ins QF_ActivationTensor:$lhs, QF_ActivationTensor:$rhs);
  let results = (outs QF_ActivationTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` type($result)";
}

def QF_EmbeddingOp : QF_Op<"embedding", [Pure]> {
  let summary = "Gather rows of a [V, H] table by token id";
  let arguments = (ins TensorRankOf<[F16, BF16], [2]>:$table,
                       TensorRankOf<[I32], [1]>:$ids);
  let results = (outs QF_ActivationTensor:$result);
  let assemblyFormat = [{
    $table `,` $ids attr-dict `:` type($table) `,` type($ids) `->` type($result)
  }];
  let hasVerifier = 1;
}

def QF_ArgmaxOp : QF_Op<"argmax", [Pure]> {
  let summary = "Index of the largest value of each row (greedy decoding)";
  let description = [{ Ties go to the lowest index; NaN is never chosen. }];
  let arguments = (ins QF_ActivationTensor:$input);
  let results = (outs TensorRankOf<[I32], [1]>:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def QF_SampleOp : QF_Op<"sample", [Pure]> {
  let summary = "Draw one token per row (temperature, top-k, top-p, min-p, "
                "repetition penalty, seeded)";
  let description = [{
    Samples an id from each row of `logits` [M, V]. Per row, in the order of
    Hugging Face's generate(): the repetition penalty on the tokens whose
    `penalty_mask` byte is non-zero (x / r, or x * r where x < 0), then the
    temperature, top-k, top-p and min-p filters (ties with the last kept
    value stay), then a draw from the renormalised distribution with the
    uniform of Philox4x32-10 keyed by the seed at counter `counters[m]`.
    Temperature 0 takes the argmax after the penalty (ties to the lowest id),
    as `qf.argmax` does.

    `params` [R, 8] i32 holds each row's parameters (f32 values as their
    bits; slots in qfuse/format/Sampling.h), `penalty_mask` [R, V] i8 the
    tokens seen; R is M (a row each) or 1 (one row shared by every row).
    The runtime writes both before a step, so a captured graph replays
    (docs/sampling.md).

    ```mlir
    %ids = qf.sample %logits, %params, %mask, %positions
        : tensor<?x32000xf16>, tensor<1x8xi32>, tensor<1x32000xi8>,
          tensor<?xi32> -> tensor<?xi32>
    ```
  }];
  let arguments = (ins QF_ActivationTensor:$logits,
                       TensorRankOf<[I32], [2]>:$params,
                       TensorRankOf<[I8], [2]>:$penalty_mask,
                       TensorRankOf<[I32], [1]>:$counters);
  let results = (outs TensorRankOf<[I32], [1]>:$result);
  let assemblyFormat = [{
    $logits `,` $params `,` $penalty_mask `,` $counters attr-dict `:`
    type($logits) `,` type($params) `,` type($penalty_mask) `,`
    type($counters) `->` type($result)
  }];
  let hasVerifier = 1;
}

#endif // QFUSE_DIALECT_QF_IR_QFOPS_TD
