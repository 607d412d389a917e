// Every diagnostic of the qf op verifiers (QFOps.cpp), one case each, plus a
// few of the ODS type constraints.

// RUN: qfuse-opt %s -split-input-file -verify-diagnostics

#enc = #qf.enc<int4, group = 32, scale = f16>

func.func @weight_ref_empty_name() {
  // expected-error@+1 {{'qf.weight_ref' op needs a non-empty weight name}}
  %0 = qf.weight_ref "" : !qf.weight<64x64, #enc>
  return
}

// -----

func.func @tensor_ref_empty_name() {
  // expected-error@+1 {{'qf.tensor_ref' op needs a non-empty tensor name}}
  %0 = qf.tensor_ref "" : tensor<64xf16>
  return
}

// -----

func.func @tensor_ref_dynamic() {
  // expected-error@+1 {{'qf.tensor_ref' op result #0 must be statically shaped tensor of any type values}}
  %0 = qf.tensor_ref "t" : tensor<?xf16>
  return
}

// -----

#enc = #qf.enc<int4, group = 32, scale = f16>

func.func @dequantize_shape(%w: !qf.weight<64x128, #enc>) {
  // expected-error@+1 {{'qf.dequantize' op result must be [64, 128], got 'tensor<128x64xf16>'}}
  %0 = qf.dequantize %w : !qf.weight<64x128, #enc> -> tensor<128x64xf16>
  return
}

// -----

#enc = #qf.enc<int4, group = 32, scale = f16>

func.func @dequantize_element(%w: !qf.weight<64x128, #enc>) {
  // expected-error@+1 {{'qf.dequantize' op result #0 must be 2D tensor of 16-bit float or bfloat16 type or 32-bit float values}}
  %0 = qf.dequantize %w : !qf.weight<64x128, #enc> -> tensor<64x128xf64>
  return
}

// -----

#enc = #qf.enc<int4, group = 32, scale = f16>

func.func @quantize_shape(%d: tensor<64x96xf32>) {
  // expected-error@+1 {{'qf.quantize' op input must be [64, 128], got 'tensor<64x96xf32>'}}
  %0 = qf.quantize %d : tensor<64x96xf32> -> !qf.weight<64x128, #enc>
  return
}

// -----

func.func @matmul_dense_dynamic(%x: tensor<1x64xf16>, %d: tensor<?x64xf16>) {
  // expected-error@+1 {{'qf.matmul' op dense weight must have a static [N, K] shape, got 'tensor<?x64xf16>'}}
  %0 = qf.matmul %x, %d : tensor<1x64xf16>, tensor<?x64xf16> -> tensor<1x?xf16>
  return
}

// -----

func.func @matmul_dense_element(%x: tensor<1x64xf16>, %d: tensor<32x64xbf16>) {
  // expected-error@+1 {{'qf.matmul' op dense weight element type 'bf16' must match the activations' 'f16'}}
  %0 = qf.matmul %x, %d : tensor<1x64xf16>, tensor<32x64xbf16> -> tensor<1x32xf16>
  return
}

// -----

#enc = #qf.enc<int4, group = 32, scale = f16>

func.func @matmul_input_k(%x: tensor<?x96xf16>, %w: !qf.weight<32x64, #enc>) {
  // expected-error@+1 {{'qf.matmul' op input must be [?, 64], got 'tensor<?x96xf16>'}}
  %0 = qf.matmul %x, %w : tensor<?x96xf16>, !qf.weight<32x64, #enc> -> tensor<?x32xf16>
  return
}

// -----

#enc = #qf.enc<int4, group = 32, scale = f16>

func.func @matmul_result_element(%x: tensor<1x64xf16>, %w: !qf.weight<32x64, #enc>) {
  // expected-error@+1 {{'qf.matmul' op result element type 'bf16' must match the activations' 'f16'}}
  %0 = qf.matmul %x, %w : tensor<1x64xf16>, !qf.weight<32x64, #enc> -> tensor<1x32xbf16>
  return
}

// -----

#enc = #qf.enc<int4, group = 32, scale = f16>

func.func @matmul_result_n(%x: tensor<1x64xf16>, %w: !qf.weight<32x64, #enc>) {
  // expected-error@+1 {{'qf.matmul' op result must be [1, 32], got 'tensor<1x64xf16>'}}
  %0 = qf.matmul %x, %w : tensor<1x64xf16>, !qf.weight<32x64, #enc> -> tensor<1x64xf16>
  return
}

// -----

func.func @matmul_result_m(%x: tensor<2x64xf16>, %d: tensor<32x64xf16>) {
  // expected-error@+1 {{'qf.matmul' op result must be [2, 32], got 'tensor<4x32xf16>'}}
  %0 = qf.matmul %x, %d : tensor<2x64xf16>, tensor<32x64xf16> -> tensor<4x32xf16>
  return
}

// -----

func.func @matmul_f32_activations(%x: tensor<1x64xf32>, %d: tensor<32x64xf32>) {
  // expected-error@+1 {{'qf.matmul' op operand #0 must be 2D tensor of 16-bit float or bfloat16 type values}}
  %0 = qf.matmul %x, %d : tensor<1x64xf32>, tensor<32x64xf32> -> tensor<1x32xf32>
  return
}

// -----

#enc = #qf.enc<int4, group = 32, scale = f16>

func.func @fused_input_k(%x: tensor<1x32xf16>, %w: !qf.weight<64x64, #enc>) {
  // expected-error@+1 {{'qf.fused_matmul' op input must be [1, 64], got 'tensor<1x32xf16>'}}
  %0 = qf.fused_matmul %x, %w : tensor<1x32xf16>, !qf.weight<64x64, #enc> -> tensor<1x64xf16>
  return
}

// -----

#enc = #qf.enc<int4, group = 32, scale = f16>

func.func @fused_result_element(%x: tensor<1x64xbf16>, %w: !qf.weight<64x64, #enc>) {
  // expected-error@+1 {{'qf.fused_matmul' op result element type 'f16' must match the activations' 'bf16'}}
  %0 = qf.fused_matmul %x, %w : tensor<1x64xbf16>, !qf.weight<64x64, #enc> -> tensor<1x64xf16>
  return
}

// -----

#enc = #qf.enc<int4, group = 32, scale = f16>

func.func @fused_norm_size(%x: tensor<1x64xf16>, %w: !qf.weight<32x64, #enc>, %g: tensor<32xf16>) {
  // expected-error@+1 {{'qf.fused_matmul' op norm weight must have 64 elements, got 'tensor<32xf16>'}}
  %0 = qf.fused_matmul %x, %w norm(%g : tensor<32xf16>) {norm_eps = 1.0e-5 : f32}
       : tensor<1x64xf16>, !qf.weight<32x64, #enc> -> tensor<1x32xf16>
  return
}

// -----

#enc = #qf.enc<int4, group = 32, scale = f16>

func.func @fused_norm_element(%x: tensor<1x64xf16>, %w: !qf.weight<32x64, #enc>, %g: tensor<64xbf16>) {
  // expected-error@+1 {{'qf.fused_matmul' op norm weight element type must match the activations}}
  %0 = qf.fused_matmul %x, %w norm(%g : tensor<64xbf16>) {norm_eps = 1.0e-5 : f32}
       : tensor<1x64xf16>, !qf.weight<32x64, #enc> -> tensor<1x32xf16>
  return
}

// -----

#enc = #qf.enc<int4, group = 32, scale = f16>

func.func @fused_norm_no_eps(%x: tensor<1x64xf16>, %w: !qf.weight<32x64, #enc>, %g: tensor<64xf16>) {
  // expected-error@+1 {{'qf.fused_matmul' op RMSNorm prologue needs 'norm_eps'}}
  %0 = qf.fused_matmul %x, %w norm(%g : tensor<64xf16>)
       : tensor<1x64xf16>, !qf.weight<32x64, #enc> -> tensor<1x32xf16>
  return
}

// -----

#enc = #qf.enc<int4, group = 32, scale = f16>

func.func @fused_norm_eps_zero(%x: tensor<1x64xf16>, %w: !qf.weight<32x64, #enc>, %g: tensor<64xf16>) {
  // expected-error@+1 {{'qf.fused_matmul' op norm_eps must be positive}}
  %0 = qf.fused_matmul %x, %w norm(%g : tensor<64xf16>) {norm_eps = 0.0 : f32}
       : tensor<1x64xf16>, !qf.weight<32x64, #enc> -> tensor<1x32xf16>
  return
}

// -----

#enc = #qf.enc<int4, group = 32, scale = f16>

func.func @fused_norm_eps_nan(%x: tensor<1x64xf16>, %w: !qf.weight<32x64, #enc>, %g: tensor<64xf16>) {
  // expected-error@+1 {{'qf.fused_matmul' op norm_eps must be positive}}
  %0 = qf.fused_matmul %x, %w norm(%g : tensor<64xf16>) {norm_eps = 0x7FC00000 : f32}
       : tensor<1x64xf16>, !qf.weight<32x64, #enc> -> tensor<1x32xf16>
  return
}

// -----

#enc = #qf.enc<int4, group = 32, scale = f16>

func.func @fused_eps_without_norm(%x: tensor<1x64xf16>, %w: !qf.weight<32x64, #enc>) {
  // expected-error@+1 {{'qf.fused_matmul' op 'norm_eps' given without a norm prologue}}
  %0 = qf.fused_matmul %x, %w {norm_eps = 1.0e-5 : f32}
       : tensor<1x64xf16>, !qf.weight<32x64, #enc> -> tensor<1x32xf16>
  return
}

// -----

#enc = #qf.enc<int4, group = 32, scale = f16>

func.func @fused_bias_size(%x: tensor<1x64xf16>, %w: !qf.weight<32x64, #enc>, %b: tensor<64xf16>) {
  // expected-error@+1 {{'qf.fused_matmul' op bias must have 32 elements, got 'tensor<64xf16>'}}
  %0 = qf.fused_matmul %x, %w bias(%b : tensor<64xf16>)
       : tensor<1x64xf16>, !qf.weight<32x64, #enc> -> tensor<1x32xf16>
  return
}

// -----

#enc = #qf.enc<int4, group = 32, scale = f16>

func.func @fused_bias_element(%x: tensor<1x64xf16>, %w: !qf.weight<32x64, #enc>, %b: tensor<32xbf16>) {
  // expected-error@+1 {{'qf.fused_matmul' op bias element type must match the activations}}
  %0 = qf.fused_matmul %x, %w bias(%b : tensor<32xbf16>)
       : tensor<1x64xf16>, !qf.weight<32x64, #enc> -> tensor<1x32xf16>
  return
}

// -----

#enc = #qf.enc<int8, per_channel, scale = f16>

func.func @fused_silu_mul_without_up(%x: tensor<1x64xf16>, %w: !qf.weight<32x64, #enc>) {
  // expected-error@+1 {{'qf.fused_matmul' op silu_mul needs the up projection as 'up(...)' beside the gate weight}}
  %0 = qf.fused_matmul %x, %w {activation = #qf<activation silu_mul>}
       : tensor<1x64xf16>, !qf.weight<32x64, #enc> -> tensor<1x32xf16>
  return
}

// -----

#enc = #qf.enc<int8, per_channel, scale = f16>

func.func @fused_up_without_silu_mul(%x: tensor<1x64xf16>, %w: !qf.weight<32x64, #enc>) {
  // expected-error@+1 {{'qf.fused_matmul' op 'up(...)' is only meaningful with activation = silu_mul}}
  %0 = qf.fused_matmul %x, %w up(%w : !qf.weight<32x64, #enc>)
       : tensor<1x64xf16>, !qf.weight<32x64, #enc> -> tensor<1x32xf16>
  return
}

// -----

#enc = #qf.enc<int4, group = 32, scale = f16>
#enc8 = #qf.enc<int8, group = 32, scale = f16>

func.func @fused_silu_mul_up_type(%x: tensor<1x64xf16>, %w: !qf.weight<32x64, #enc>, %u: !qf.weight<32x64, #enc8>) {
  // expected-error@+1 {{'qf.fused_matmul' op up weight type '!qf.weight<32x64, #qf.enc<int8, group = 32, scale = f16>>' must match the gate weight type '!qf.weight<32x64, #qf.enc<int4, group = 32, scale = f16>>'}}
  %0 = qf.fused_matmul %x, %w up(%u : !qf.weight<32x64, #enc8>) {activation = #qf<activation silu_mul>}
       : tensor<1x64xf16>, !qf.weight<32x64, #enc> -> tensor<1x32xf16>
  return
}

// -----

#enc = #qf.enc<int4, group = 32, scale = f16>

func.func @fused_silu_mul_bias(%x: tensor<1x64xf16>, %w: !qf.weight<32x64, #enc>, %b: tensor<32xf16>) {
  // expected-error@+1 {{'qf.fused_matmul' op bias cannot be combined with silu_mul: the gate and up projections would each need their own}}
  %0 = qf.fused_matmul %x, %w up(%w : !qf.weight<32x64, #enc>) bias(%b : tensor<32xf16>) {activation = #qf<activation silu_mul>}
       : tensor<1x64xf16>, !qf.weight<32x64, #enc> -> tensor<1x32xf16>
  return
}

// -----

#enc = #qf.enc<int4, group = 32, scale = f16>

func.func @fused_silu_mul_result(%x: tensor<1x64xf16>, %w: !qf.weight<64x64, #enc>) {
  // expected-error@+1 {{'qf.fused_matmul' op result must be [1, 64], got 'tensor<1x32xf16>'}}
  %0 = qf.fused_matmul %x, %w up(%w : !qf.weight<64x64, #enc>) {activation = #qf<activation silu_mul>}
       : tensor<1x64xf16>, !qf.weight<64x64, #enc> -> tensor<1x32xf16>
  return
}

// -----

#enc = #qf.enc<int4, group = 32, scale = f16>

func.func @fused_residual_type(%x: tensor<?x64xf16>, %w: !qf.weight<32x64, #enc>, %r: tensor<1x32xf16>) {
  // expected-error@+1 {{'qf.fused_matmul' op residual type 'tensor<1x32xf16>' must match the result type 'tensor<?x32xf16>'}}
  %0 = qf.fused_matmul %x, %w residual(%r : tensor<1x32xf16>)
       : tensor<?x64xf16>, !qf.weight<32x64, #enc> -> tensor<?x32xf16>
  return
}

// -----

#enc = #qf.enc<int4, group = 32, scale = f16>

func.func @fused_dense_weight(%x: tensor<1x64xf16>, %d: tensor<32x64xf16>) {
  // expected-error@+1 {{'qf.fused_matmul' op operand #1 must be packed quantized weight}}
  %0 = "qf.fused_matmul"(%x, %d) <{operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0>}>
       : (tensor<1x64xf16>, tensor<32x64xf16>) -> tensor<1x32xf16>
  return
}

// -----

// Rows may be dynamic (one kernel per plan batch); the block's columns not.
func.func @gptq_dynamic_columns(%w: tensor<256x?xf32>, %u: tensor<128x128xf32>) {
  // expected-error@+1 {{'qf.gptq_block_update' op weight block must have a static column count, got 'tensor<256x?xf32>'}}
  %c, %e, %s = qf.gptq_block_update %w, %u {grid = #qf.enc<int4, group = 128, scale = f16>}
    : (tensor<256x?xf32>, tensor<128x128xf32>)
      -> (tensor<256x?xi8>, tensor<256x?xf32>, tensor<256x1xf32>)
  return
}

// -----

func.func @gptq_unquantized_grid(%w: tensor<64x128xf32>, %u: tensor<128x128xf32>) {
  // expected-error@+1 {{'qf.gptq_block_update' op grid must be a dense quantized encoding, got #qf.enc<f16>}}
  %c, %e = qf.gptq_block_update %w, %u {grid = #qf.enc<f16>}
    : (tensor<64x128xf32>, tensor<128x128xf32>) -> (tensor<64x128xi8>, tensor<64x128xf32>)
  return
}

// -----

func.func @gptq_sparse_grid(%w: tensor<64x128xf32>, %u: tensor<128x128xf32>) {
  // expected-error@+1 {{'qf.gptq_block_update' op grid must be a dense quantized encoding, got #qf.enc<int4, group = 128, scale = f16, sparse = 2:4>}}
  %c, %e, %s = qf.gptq_block_update %w, %u {grid = #qf.enc<int4, group = 128, scale = f16, sparse = 2:4>}
    : (tensor<64x128xf32>, tensor<128x128xf32>)
      -> (tensor<64x128xi8>, tensor<64x128xf32>, tensor<64x1xf32>)
  return
}

// -----

func.func @gptq_hinv_shape(%w: tensor<64x128xf32>, %u: tensor<64x64xf32>) {
  // expected-error@+1 {{'qf.gptq_block_update' op hinv_chol must be [128, 128], got 'tensor<64x64xf32>'}}
  %c, %e, %s = qf.gptq_block_update %w, %u {grid = #qf.enc<int4, group = 128, scale = f16>}
    : (tensor<64x128xf32>, tensor<64x64xf32>)
      -> (tensor<64x128xi8>, tensor<64x128xf32>, tensor<64x1xf32>)
  return
}

// -----

func.func @gptq_codes_shape(%w: tensor<64x128xf32>, %u: tensor<128x128xf32>) {
  // expected-error@+1 {{'qf.gptq_block_update' op codes must be [64, 128], got 'tensor<64x64xi8>'}}
  %c, %e, %s = qf.gptq_block_update %w, %u {grid = #qf.enc<int4, group = 128, scale = f16>}
    : (tensor<64x128xf32>, tensor<128x128xf32>)
      -> (tensor<64x64xi8>, tensor<64x128xf32>, tensor<64x1xf32>)
  return
}

// -----

func.func @gptq_error_shape(%w: tensor<64x128xf32>, %u: tensor<128x128xf32>) {
  // expected-error@+1 {{'qf.gptq_block_update' op error must be [64, 128], got 'tensor<32x128xf32>'}}
  %c, %e, %s = qf.gptq_block_update %w, %u {grid = #qf.enc<int4, group = 128, scale = f16>}
    : (tensor<64x128xf32>, tensor<128x128xf32>)
      -> (tensor<64x128xi8>, tensor<32x128xf32>, tensor<64x1xf32>)
  return
}

// -----

func.func @gptq_negative_offset(%w: tensor<64x128xf32>, %u: tensor<128x128xf32>) {
  // expected-error@+1 {{'qf.gptq_block_update' op column_offset must be non-negative, got -128}}
  %c, %e, %s = qf.gptq_block_update %w, %u
      {grid = #qf.enc<int4, group = 128, scale = f16>, column_offset = -128}
    : (tensor<64x128xf32>, tensor<128x128xf32>)
      -> (tensor<64x128xi8>, tensor<64x128xf32>, tensor<64x1xf32>)
  return
}

// -----

func.func @gptq_negative_offset_static(%w: tensor<64x128xf32>, %u: tensor<128x128xf32>, %s: tensor<64x128xf32>) {
  // expected-error@+1 {{'qf.gptq_block_update' op column_offset must be non-negative, got -1}}
  %c, %e = qf.gptq_block_update %w, %u scales(%s : tensor<64x128xf32>)
      {grid = #qf.enc<int8, per_channel, scale = f32>, column_offset = -1}
    : (tensor<64x128xf32>, tensor<128x128xf32>) -> (tensor<64x128xi8>, tensor<64x128xf32>)
  return
}

// -----

func.func @gptq_static_scales_shape(%w: tensor<64x128xf32>, %u: tensor<128x128xf32>, %s: tensor<64x1xf32>) {
  // expected-error@+1 {{'qf.gptq_block_update' op scales must be [64, 128], got 'tensor<64x1xf32>'}}
  %c, %e = qf.gptq_block_update %w, %u scales(%s : tensor<64x1xf32>)
      {grid = #qf.enc<int8, per_channel, scale = f32>}
    : (tensor<64x128xf32>, tensor<128x128xf32>) -> (tensor<64x128xi8>, tensor<64x128xf32>)
  return
}

// -----

func.func @gptq_static_missing_zeros(%w: tensor<64x128xf32>, %u: tensor<128x128xf32>, %s: tensor<64x128xf32>) {
  // expected-error@+1 {{'qf.gptq_block_update' op grid has zero points: pass 'zeros(...)' with the scales}}
  %c, %e = qf.gptq_block_update %w, %u scales(%s : tensor<64x128xf32>)
      {grid = #qf.enc<uint4, group = 32, scale = f16, zero = int>}
    : (tensor<64x128xf32>, tensor<128x128xf32>) -> (tensor<64x128xi8>, tensor<64x128xf32>)
  return
}

// -----

func.func @gptq_static_extra_zeros(%w: tensor<64x128xf32>, %u: tensor<128x128xf32>, %s: tensor<64x128xf32>) {
  // expected-error@+1 {{'qf.gptq_block_update' op grid has no zero points, but 'zeros(...)' was given}}
  %c, %e = qf.gptq_block_update %w, %u scales(%s : tensor<64x128xf32>) zeros(%s : tensor<64x128xf32>)
      {grid = #qf.enc<int4, group = 32, scale = f16>}
    : (tensor<64x128xf32>, tensor<128x128xf32>) -> (tensor<64x128xi8>, tensor<64x128xf32>)
  return
}

// -----

func.func @gptq_static_zeros_shape(%w: tensor<64x128xf32>, %u: tensor<128x128xf32>, %s: tensor<64x128xf32>, %z: tensor<64x4xf32>) {
  // expected-error@+1 {{'qf.gptq_block_update' op zeros must be [64, 128], got 'tensor<64x4xf32>'}}
  %c, %e = qf.gptq_block_update %w, %u scales(%s : tensor<64x128xf32>) zeros(%z : tensor<64x4xf32>)
      {grid = #qf.enc<uint4, group = 32, scale = f16, zero = int>}
    : (tensor<64x128xf32>, tensor<128x128xf32>) -> (tensor<64x128xi8>, tensor<64x128xf32>)
  return
}

// -----

func.func @gptq_static_group_params(%w: tensor<64x128xf32>, %u: tensor<128x128xf32>, %s: tensor<64x128xf32>) {
  // expected-error@+1 {{'qf.gptq_block_update' op with static scales the op returns only codes and error}}
  %c, %e, %p = qf.gptq_block_update %w, %u scales(%s : tensor<64x128xf32>)
      {grid = #qf.enc<int4, group = 32, scale = f16>}
    : (tensor<64x128xf32>, tensor<128x128xf32>)
      -> (tensor<64x128xi8>, tensor<64x128xf32>, tensor<64x4xf32>)
  return
}

// -----

func.func @gptq_zeros_without_scales(%w: tensor<64x128xf32>, %u: tensor<128x128xf32>, %z: tensor<64x128xf32>) {
  // expected-error@+1 {{'qf.gptq_block_update' op 'zeros(...)' needs 'scales(...)'}}
  %c, %e, %s, %zz = qf.gptq_block_update %w, %u zeros(%z : tensor<64x128xf32>)
      {grid = #qf.enc<uint4, group = 32, scale = f16, zero = int>}
    : (tensor<64x128xf32>, tensor<128x128xf32>)
      -> (tensor<64x128xi8>, tensor<64x128xf32>, tensor<64x4xf32>, tensor<64x4xf32>)
  return
}

// -----

func.func @gptq_dynamic_per_channel(%w: tensor<64x128xf32>, %u: tensor<128x128xf32>) {
  // expected-error@+1 {{'qf.gptq_block_update' op per-channel scales come from the whole row: pass them as 'scales(...)'}}
  %c, %e, %s = qf.gptq_block_update %w, %u {grid = #qf.enc<int8, per_channel, scale = f32>}
    : (tensor<64x128xf32>, tensor<128x128xf32>)
      -> (tensor<64x128xi8>, tensor<64x128xf32>, tensor<64x1xf32>)
  return
}

// -----

func.func @gptq_dynamic_partial_group(%w: tensor<64x96xf32>, %u: tensor<96x96xf32>) {
  // expected-error@+1 {{'qf.gptq_block_update' op a block computing its own scales must hold whole groups: 96 columns at offset 0 with group 64}}
  %c, %e, %s = qf.gptq_block_update %w, %u {grid = #qf.enc<int4, group = 64, scale = f16>}
    : (tensor<64x96xf32>, tensor<96x96xf32>)
      -> (tensor<64x96xi8>, tensor<64x96xf32>, tensor<64x1xf32>)
  return
}

// -----

func.func @gptq_dynamic_misaligned_offset(%w: tensor<64x128xf32>, %u: tensor<128x128xf32>) {
  // expected-error@+1 {{'qf.gptq_block_update' op a block computing its own scales must hold whole groups: 128 columns at offset 32 with group 64}}
  %c, %e, %s = qf.gptq_block_update %w, %u
      {grid = #qf.enc<int4, group = 64, scale = f16>, column_offset = 32}
    : (tensor<64x128xf32>, tensor<128x128xf32>)
      -> (tensor<64x128xi8>, tensor<64x128xf32>, tensor<64x2xf32>)
  return
}

// -----

func.func @gptq_dynamic_missing_scales(%w: tensor<64x128xf32>, %u: tensor<128x128xf32>) {
  // expected-error@+1 {{'qf.gptq_block_update' op expected 1 group parameter result(s) (scales), got 0}}
  %c, %e = qf.gptq_block_update %w, %u {grid = #qf.enc<int4, group = 64, scale = f16>}
    : (tensor<64x128xf32>, tensor<128x128xf32>) -> (tensor<64x128xi8>, tensor<64x128xf32>)
  return
}

// -----

func.func @gptq_dynamic_missing_zeros(%w: tensor<64x128xf32>, %u: tensor<128x128xf32>) {
  // expected-error@+1 {{'qf.gptq_block_update' op expected 2 group parameter result(s) (scales, zeros), got 1}}
  %c, %e, %s = qf.gptq_block_update %w, %u {grid = #qf.enc<uint4, group = 64, scale = f16, zero = int>}
    : (tensor<64x128xf32>, tensor<128x128xf32>)
      -> (tensor<64x128xi8>, tensor<64x128xf32>, tensor<64x2xf32>)
  return
}

// -----

func.func @gptq_dynamic_group_params_shape(%w: tensor<64x128xf32>, %u: tensor<128x128xf32>) {
  // expected-error@+1 {{'qf.gptq_block_update' op group parameters must be [64, 2], got 'tensor<64x1xf32>'}}
  %c, %e, %s = qf.gptq_block_update %w, %u {grid = #qf.enc<int4, group = 64, scale = f16>}
    : (tensor<64x128xf32>, tensor<128x128xf32>)
      -> (tensor<64x128xi8>, tensor<64x128xf32>, tensor<64x1xf32>)
  return
}

// -----

func.func @gptq_codes_element(%w: tensor<64x128xf32>, %u: tensor<128x128xf32>) {
  // expected-error@+1 {{'qf.gptq_block_update' op result #0 must be 2D tensor of 8-bit signless integer values}}
  %c, %e, %s = qf.gptq_block_update %w, %u {grid = #qf.enc<int4, group = 128, scale = f16>}
    : (tensor<64x128xf32>, tensor<128x128xf32>)
      -> (tensor<64x128xi32>, tensor<64x128xf32>, tensor<64x1xf32>)
  return
}

// -----

func.func @rms_norm_result(%x: tensor<1x64xf16>, %g: tensor<64xf16>) {
  // expected-error@+1 {{'qf.rms_norm' op result type must match the input type}}
  %0 = qf.rms_norm %x, %g {eps = 1.0e-5 : f32} : tensor<1x64xf16>, tensor<64xf16> -> tensor<?x64xf16>
  return
}

// -----

func.func @rms_norm_gamma_element(%x: tensor<1x64xf16>, %g: tensor<64xbf16>) {
  // expected-error@+1 {{'qf.rms_norm' op gamma element type must match the input}}
  %0 = qf.rms_norm %x, %g {eps = 1.0e-5 : f32} : tensor<1x64xf16>, tensor<64xbf16> -> tensor<1x64xf16>
  return
}

// -----

func.func @rms_norm_eps(%x: tensor<1x64xf16>, %g: tensor<64xf16>) {
  // expected-error@+1 {{'qf.rms_norm' op eps must be positive}}
  %0 = qf.rms_norm %x, %g {eps = -1.0e-5 : f32} : tensor<1x64xf16>, tensor<64xf16> -> tensor<1x64xf16>
  return
}

// -----

func.func @rms_norm_gamma_size(%x: tensor<1x64xf16>, %g: tensor<32xf16>) {
  // expected-error@+1 {{'qf.rms_norm' op gamma must have 64 elements, got 'tensor<32xf16>'}}
  %0 = qf.rms_norm %x, %g {eps = 1.0e-5 : f32} : tensor<1x64xf16>, tensor<32xf16> -> tensor<1x64xf16>
  return
}

// -----

func.func @rotary_result(%x: tensor<1x256xf16>, %p: tensor<1xi32>) {
  // expected-error@+1 {{'qf.rotary' op result type must match the input type}}
  %0 = qf.rotary %x, %p {head_dim = 64 : i64, theta = 1.0e+04 : f64}
       : tensor<1x256xf16>, tensor<1xi32> -> tensor<1x256xbf16>
  return
}

// -----

func.func @rotary_odd_head_dim(%x: tensor<1x255xf16>, %p: tensor<1xi32>) {
  // expected-error@+1 {{'qf.rotary' op head_dim must be positive and even, got 51}}
  %0 = qf.rotary %x, %p {head_dim = 51 : i64, theta = 1.0e+04 : f64}
       : tensor<1x255xf16>, tensor<1xi32> -> tensor<1x255xf16>
  return
}

// -----

func.func @rotary_zero_head_dim(%x: tensor<1x256xf16>, %p: tensor<1xi32>) {
  // expected-error@+1 {{'qf.rotary' op head_dim must be positive and even, got 0}}
  %0 = qf.rotary %x, %p {head_dim = 0 : i64, theta = 1.0e+04 : f64}
       : tensor<1x256xf16>, tensor<1xi32> -> tensor<1x256xf16>
  return
}

// -----

func.func @rotary_row_width(%x: tensor<1x200xf16>, %p: tensor<1xi32>) {
  // expected-error@+1 {{'qf.rotary' op row width 200 is not a whole number of heads of 64}}
  %0 = qf.rotary %x, %p {head_dim = 64 : i64, theta = 1.0e+04 : f64}
       : tensor<1x200xf16>, tensor<1xi32> -> tensor<1x200xf16>
  return
}

// -----

func.func @rotary_theta(%x: tensor<1x256xf16>, %p: tensor<1xi32>) {
  // expected-error@+1 {{'qf.rotary' op theta must be positive}}
  %0 = qf.rotary %x, %p {head_dim = 64 : i64, theta = 0.0 : f64}
       : tensor<1x256xf16>, tensor<1xi32> -> tensor<1x256xf16>
  return
}

// -----

func.func @rotary_partial_llama3(%x: tensor<1x256xf16>, %p: tensor<1xi32>) {
  // expected-error@+1 {{'qf.rotary' op llama3 rope scaling needs all of scaling_factor, low_freq_factor, high_freq_factor and original_max_position}}
  %0 = qf.rotary %x, %p {head_dim = 64 : i64, theta = 5.0e+05 : f64, scaling_factor = 8.0 : f64}
       : tensor<1x256xf16>, tensor<1xi32> -> tensor<1x256xf16>
  return
}

// -----

func.func @rotary_positions(%x: tensor<2x256xf16>, %p: tensor<1xi32>) {
  // expected-error@+1 {{'qf.rotary' op positions must have 2 elements, got 'tensor<1xi32>'}}
  %0 = qf.rotary %x, %p {head_dim = 64 : i64, theta = 1.0e+04 : f64}
       : tensor<2x256xf16>, tensor<1xi32> -> tensor<2x256xf16>
  return
}

// -----

func.func @attention_nonpositive(%q: tensor<1x256xf16>, %k: tensor<1x64xf16>, %c: tensor<16x64xf16>, %p: tensor<1xi32>) {
  // expected-error@+1 {{'qf.attention' op num_heads, num_kv_heads and head_dim must be positive}}
  %o, %kc, %vc = qf.attention %q, %k, %k, %c, %c, %p {num_heads = 4 : i64, num_kv_heads = 0 : i64, head_dim = 64 : i64}
    : (tensor<1x256xf16>, tensor<1x64xf16>, tensor<1x64xf16>, tensor<16x64xf16>, tensor<16x64xf16>, tensor<1xi32>)
      -> (tensor<1x256xf16>, tensor<16x64xf16>, tensor<16x64xf16>)
  return
}

// -----

func.func @attention_gqa_ratio(%q: tensor<1x256xf16>, %k: tensor<1x192xf16>, %c: tensor<16x192xf16>, %p: tensor<1xi32>) {
  // expected-error@+1 {{'qf.attention' op num_heads = 4 must be a multiple of num_kv_heads = 3}}
  %o, %kc, %vc = qf.attention %q, %k, %k, %c, %c, %p {num_heads = 4 : i64, num_kv_heads = 3 : i64, head_dim = 64 : i64}
    : (tensor<1x256xf16>, tensor<1x192xf16>, tensor<1x192xf16>, tensor<16x192xf16>, tensor<16x192xf16>, tensor<1xi32>)
      -> (tensor<1x256xf16>, tensor<16x192xf16>, tensor<16x192xf16>)
  return
}

// -----

func.func @attention_cache_types(%q: tensor<1x256xf16>, %k: tensor<1x64xf16>, %c: tensor<16x64xf16>, %c2: tensor<32x64xf16>, %p: tensor<1xi32>) {
  // expected-error@+1 {{'qf.attention' op key and value caches must have the same type}}
  %o, %kc, %vc = qf.attention %q, %k, %k, %c, %c2, %p {num_heads = 4 : i64, num_kv_heads = 1 : i64, head_dim = 64 : i64}
    : (tensor<1x256xf16>, tensor<1x64xf16>, tensor<1x64xf16>, tensor<16x64xf16>, tensor<32x64xf16>, tensor<1xi32>)
      -> (tensor<1x256xf16>, tensor<16x64xf16>, tensor<16x64xf16>)
  return
}

// -----

func.func @attention_updated_cache_types(%q: tensor<1x256xf16>, %k: tensor<1x64xf16>, %c: tensor<16x64xf16>, %p: tensor<1xi32>) {
  // expected-error@+1 {{'qf.attention' op updated caches must have the caches' type}}
  %o, %kc, %vc = qf.attention %q, %k, %k, %c, %c, %p {num_heads = 4 : i64, num_kv_heads = 1 : i64, head_dim = 64 : i64}
    : (tensor<1x256xf16>, tensor<1x64xf16>, tensor<1x64xf16>, tensor<16x64xf16>, tensor<16x64xf16>, tensor<1xi32>)
      -> (tensor<1x256xf16>, tensor<16x64xf16>, tensor<?x64xf16>)
  return
}

// -----

func.func @attention_element_types(%q: tensor<1x256xf16>, %k: tensor<1x64xbf16>, %v: tensor<1x64xf16>, %c: tensor<16x64xf16>, %p: tensor<1xi32>) {
  // expected-error@+1 {{'qf.attention' op all activations and caches must share one element type}}
  %o, %kc, %vc = qf.attention %q, %k, %v, %c, %c, %p {num_heads = 4 : i64, num_kv_heads = 1 : i64, head_dim = 64 : i64}
    : (tensor<1x256xf16>, tensor<1x64xbf16>, tensor<1x64xf16>, tensor<16x64xf16>, tensor<16x64xf16>, tensor<1xi32>)
      -> (tensor<1x256xf16>, tensor<16x64xf16>, tensor<16x64xf16>)
  return
}

// -----

func.func @attention_query_shape(%q: tensor<1x128xf16>, %k: tensor<1x64xf16>, %c: tensor<16x64xf16>, %p: tensor<1xi32>) {
  // expected-error@+1 {{'qf.attention' op query must be [1, 256], got 'tensor<1x128xf16>'}}
  %o, %kc, %vc = qf.attention %q, %k, %k, %c, %c, %p {num_heads = 4 : i64, num_kv_heads = 1 : i64, head_dim = 64 : i64}
    : (tensor<1x128xf16>, tensor<1x64xf16>, tensor<1x64xf16>, tensor<16x64xf16>, tensor<16x64xf16>, tensor<1xi32>)
      -> (tensor<1x256xf16>, tensor<16x64xf16>, tensor<16x64xf16>)
  return
}

// -----

func.func @attention_key_shape(%q: tensor<1x256xf16>, %k: tensor<1x128xf16>, %v: tensor<1x64xf16>, %c: tensor<16x64xf16>, %p: tensor<1xi32>) {
  // expected-error@+1 {{'qf.attention' op key must be [1, 64], got 'tensor<1x128xf16>'}}
  %o, %kc, %vc = qf.attention %q, %k, %v, %c, %c, %p {num_heads = 4 : i64, num_kv_heads = 1 : i64, head_dim = 64 : i64}
    : (tensor<1x256xf16>, tensor<1x128xf16>, tensor<1x64xf16>, tensor<16x64xf16>, tensor<16x64xf16>, tensor<1xi32>)
      -> (tensor<1x256xf16>, tensor<16x64xf16>, tensor<16x64xf16>)
  return
}

// -----

func.func @attention_value_shape(%q: tensor<1x256xf16>, %k: tensor<1x64xf16>, %v: tensor<2x64xf16>, %c: tensor<16x64xf16>, %p: tensor<1xi32>) {
  // expected-error@+1 {{'qf.attention' op value must be [1, 64], got 'tensor<2x64xf16>'}}
  %o, %kc, %vc = qf.attention %q, %k, %v, %c, %c, %p {num_heads = 4 : i64, num_kv_heads = 1 : i64, head_dim = 64 : i64}
    : (tensor<1x256xf16>, tensor<1x64xf16>, tensor<2x64xf16>, tensor<16x64xf16>, tensor<16x64xf16>, tensor<1xi32>)
      -> (tensor<1x256xf16>, tensor<16x64xf16>, tensor<16x64xf16>)
  return
}

// -----

func.func @attention_cache_width(%q: tensor<1x256xf16>, %k: tensor<1x64xf16>, %c: tensor<16x128xf16>, %p: tensor<1xi32>) {
  // expected-error@+1 {{'qf.attention' op caches must be [16, 64], got 'tensor<16x128xf16>'}}
  %o, %kc, %vc = qf.attention %q, %k, %k, %c, %c, %p {num_heads = 4 : i64, num_kv_heads = 1 : i64, head_dim = 64 : i64}
    : (tensor<1x256xf16>, tensor<1x64xf16>, tensor<1x64xf16>, tensor<16x128xf16>, tensor<16x128xf16>, tensor<1xi32>)
      -> (tensor<1x256xf16>, tensor<16x128xf16>, tensor<16x128xf16>)
  return
}

// -----

func.func @attention_result_shape(%q: tensor<1x256xf16>, %k: tensor<1x64xf16>, %c: tensor<16x64xf16>, %p: tensor<1xi32>) {
  // expected-error@+1 {{'qf.attention' op result must be [1, 256], got 'tensor<1x64xf16>'}}
  %o, %kc, %vc = qf.attention %q, %k, %k, %c, %c, %p {num_heads = 4 : i64, num_kv_heads = 1 : i64, head_dim = 64 : i64}
    : (tensor<1x256xf16>, tensor<1x64xf16>, tensor<1x64xf16>, tensor<16x64xf16>, tensor<16x64xf16>, tensor<1xi32>)
      -> (tensor<1x64xf16>, tensor<16x64xf16>, tensor<16x64xf16>)
  return
}

// -----

func.func @attention_positions(%q: tensor<1x256xf16>, %k: tensor<1x64xf16>, %c: tensor<16x64xf16>, %p: tensor<4xi32>) {
  // expected-error@+1 {{'qf.attention' op positions must have 1 elements, got 'tensor<4xi32>'}}
  %o, %kc, %vc = qf.attention %q, %k, %k, %c, %c, %p {num_heads = 4 : i64, num_kv_heads = 1 : i64, head_dim = 64 : i64}
    : (tensor<1x256xf16>, tensor<1x64xf16>, tensor<1x64xf16>, tensor<16x64xf16>, tensor<16x64xf16>, tensor<4xi32>)
      -> (tensor<1x256xf16>, tensor<16x64xf16>, tensor<16x64xf16>)
  return
}

// -----

func.func @silu_mul_types(%g: tensor<1x64xf16>, %u: tensor<1x64xbf16>) {
  // expected-error@+1 {{'qf.silu_mul' op requires the same type for all operands and results}}
  %0 = "qf.silu_mul"(%g, %u) : (tensor<1x64xf16>, tensor<1x64xbf16>) -> tensor<1x64xf16>
  return
}

// -----

func.func @add_types(%a: tensor<1x64xf16>, %b: tensor<2x64xf16>) {
  // expected-error@+1 {{'qf.add' op requires the same type for all operands and results}}
  %0 = "qf.add"(%a, %b) : (tensor<1x64xf16>, tensor<2x64xf16>) -> tensor<1x64xf16>
  return
}

// -----

func.func @embedding_element(%t: tensor<1000x64xf16>, %ids: tensor<1xi32>) {
  // expected-error@+1 {{'qf.embedding' op result element type must match the table}}
  %0 = qf.embedding %t, %ids : tensor<1000x64xf16>, tensor<1xi32> -> tensor<1x64xbf16>
  return
}

// -----

func.func @embedding_ids(%t: tensor<1000x64xf16>, %ids: tensor<3xi32>) {
  // expected-error@+1 {{'qf.embedding' op ids must have 2 elements, got 'tensor<3xi32>'}}
  %0 = qf.embedding %t, %ids : tensor<1000x64xf16>, tensor<3xi32> -> tensor<2x64xf16>
  return
}

// -----

func.func @embedding_width(%t: tensor<1000x64xf16>, %ids: tensor<?xi32>) {
  // expected-error@+1 {{'qf.embedding' op result must be [?, 64], got 'tensor<?x128xf16>'}}
  %0 = qf.embedding %t, %ids : tensor<1000x64xf16>, tensor<?xi32> -> tensor<?x128xf16>
  return
}

// -----

func.func @argmax_size(%l: tensor<2x1000xf16>) {
  // expected-error@+1 {{'qf.argmax' op result must have 2 elements, got 'tensor<1xi32>'}}
  %0 = qf.argmax %l : tensor<2x1000xf16> -> tensor<1xi32>
  return
}

// -----

func.func @attention_scaling_without_rope(%q: tensor<1x256xf16>, %k: tensor<1x64xf16>, %c: tensor<16x64xf16>, %p: tensor<1xi32>) {
  // expected-error@+1 {{'qf.attention' op llama3 rope scaling attributes need rope_theta}}
  %o, %kc, %vc = qf.attention %q, %k, %k, %c, %c, %p {num_heads = 4 : i64, num_kv_heads = 1 : i64, head_dim = 64 : i64, scaling_factor = 8.0 : f64, low_freq_factor = 1.0 : f64, high_freq_factor = 4.0 : f64, original_max_position = 8192 : i64}
    : (tensor<1x256xf16>, tensor<1x64xf16>, tensor<1x64xf16>, tensor<16x64xf16>, tensor<16x64xf16>, tensor<1xi32>)
      -> (tensor<1x256xf16>, tensor<16x64xf16>, tensor<16x64xf16>)
  return
}

// -----

func.func @attention_partial_scaling(%q: tensor<1x256xf16>, %k: tensor<1x64xf16>, %c: tensor<16x64xf16>, %p: tensor<1xi32>) {
  // expected-error@+1 {{'qf.attention' op llama3 rope scaling needs all of scaling_factor, low_freq_factor, high_freq_factor and original_max_position}}
  %o, %kc, %vc = qf.attention %q, %k, %k, %c, %c, %p {num_heads = 4 : i64, num_kv_heads = 1 : i64, head_dim = 64 : i64, rope_theta = 500000.0 : f64, scaling_factor = 8.0 : f64}
    : (tensor<1x256xf16>, tensor<1x64xf16>, tensor<1x64xf16>, tensor<16x64xf16>, tensor<16x64xf16>, tensor<1xi32>)
      -> (tensor<1x256xf16>, tensor<16x64xf16>, tensor<16x64xf16>)
  return
}

// -----

func.func @attention_rope_theta_nonpositive(%q: tensor<1x256xf16>, %k: tensor<1x64xf16>, %c: tensor<16x64xf16>, %p: tensor<1xi32>) {
  // expected-error@+1 {{'qf.attention' op rope_theta must be positive}}
  %o, %kc, %vc = qf.attention %q, %k, %k, %c, %c, %p {num_heads = 4 : i64, num_kv_heads = 1 : i64, head_dim = 64 : i64, rope_theta = 0.0 : f64}
    : (tensor<1x256xf16>, tensor<1x64xf16>, tensor<1x64xf16>, tensor<16x64xf16>, tensor<16x64xf16>, tensor<1xi32>)
      -> (tensor<1x256xf16>, tensor<16x64xf16>, tensor<16x64xf16>)
  return
}

// -----

func.func @gptq_values_shape(%w: tensor<64x128xf32>, %u: tensor<128x128xf32>) {
  // expected-error@+1 {{'qf.gptq_block_update' op values must be [64, 128], got 'tensor<64x64xf16>'}}
  %c, %e, %v, %s = qf.gptq_block_update %w, %u {grid = #qf.enc<int4, group = 128, scale = f16>}
    : (tensor<64x128xf32>, tensor<128x128xf32>) -> (tensor<64x128xi8>, tensor<64x128xf32>, tensor<64x1xf32>) values tensor<64x64xf16>
  return
}

// -----

#int4 = #qf.enc<int4, group = 128, scale = f16>
func.func @silu_mul_prologue_without_act_order(%g: tensor<1x256xf16>, %u: tensor<1x256xf16>) {
  %w = qf.weight_ref "down" : !qf.weight<64x256, #int4>
  // expected-error@+1 {{'qf.fused_matmul' op a silu_mul prologue needs an act_order weight, got #qf.enc<int4, group = 128, scale = f16>}}
  %y = qf.fused_matmul %g, %w silu_mul(%u : tensor<1x256xf16>) : tensor<1x256xf16>, !qf.weight<64x256, #int4> -> tensor<1x64xf16>
  return
}

// -----

#ao = #qf.enc<int4, group = 128, scale = f16, act_order>
func.func @silu_mul_prologue_type(%g: tensor<1x256xf16>, %u: tensor<2x256xf16>) {
  %w = qf.weight_ref "down" : !qf.weight<64x256, #ao>
  // expected-error@+1 {{'qf.fused_matmul' op silu_mul prologue's up type 'tensor<2x256xf16>' must match the input type 'tensor<1x256xf16>'}}
  %y = qf.fused_matmul %g, %w silu_mul(%u : tensor<2x256xf16>) : tensor<1x256xf16>, !qf.weight<64x256, #ao> -> tensor<1x64xf16>
  return
}

// -----

#ao = #qf.enc<int4, group = 128, scale = f16, act_order>
func.func @silu_mul_prologue_and_norm(%g: tensor<1x256xf16>, %u: tensor<1x256xf16>, %n: tensor<256xf16>) {
  %w = qf.weight_ref "down" : !qf.weight<64x256, #ao>
  // expected-error@+1 {{'qf.fused_matmul' op a silu_mul prologue cannot be combined with an RMSNorm prologue: the input is one or the other}}
  %y = qf.fused_matmul %g, %w norm(%n : tensor<256xf16>) silu_mul(%u : tensor<1x256xf16>) {norm_eps = 1.0e-05 : f32} : tensor<1x256xf16>, !qf.weight<64x256, #ao> -> tensor<1x64xf16>
  return
}

// -----

// The kernel loops over the columns: they must be known.
func.func @row_min_max_dynamic_columns(%w: tensor<64x?xf32>) {
  // expected-error@+1 {{'qf.row_min_max' op weights must have a static column count, got 'tensor<64x?xf32>'}}
  %mm = qf.row_min_max %w : tensor<64x?xf32> -> tensor<64x2xf32>
  return
}

// -----

func.func @row_min_max_no_columns(%w: tensor<64x0xf32>) {
  // expected-error@+1 {{'qf.row_min_max' op weights must have at least one column, got 'tensor<64x0xf32>'}}
  %mm = qf.row_min_max %w : tensor<64x0xf32> -> tensor<64x2xf32>
  return
}

// -----

func.func @row_min_max_result_shape(%w: tensor<64x128xf32>) {
  // expected-error@+1 {{'qf.row_min_max' op min_max must be [64, 2], got 'tensor<32x2xf32>'}}
  %mm = qf.row_min_max %w : tensor<64x128xf32> -> tensor<32x2xf32>
  return
}
