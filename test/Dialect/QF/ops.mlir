// Round trip of every qf op, through the custom and the generic printer.

// RUN: qfuse-opt %s -split-input-file | qfuse-opt -split-input-file | FileCheck %s
// RUN: qfuse-opt %s -split-input-file --mlir-print-op-generic | qfuse-opt -split-input-file | FileCheck %s
// RUN: qfuse-opt %s -split-input-file --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

#enc = #qf.enc<int4, group = 128, scale = f16>

// CHECK: #int4_g128 = #qf.enc<int4, group = 128, scale = f16>
// CHECK-LABEL: func.func @weight_ref
// CHECK: %[[W:.*]] = qf.weight_ref "model.layers.0.self_attn.q_proj" : !qf.weight<4096x4096, #int4_g128>
// CHECK: return %[[W]]
// GENERIC-LABEL: sym_name = "weight_ref"
// GENERIC: "qf.weight_ref"() <{name = "model.layers.0.self_attn.q_proj"}> : () -> !qf.weight<4096x4096, #int4_g128>
func.func @weight_ref() -> !qf.weight<4096x4096, #enc> {
  %w = qf.weight_ref "model.layers.0.self_attn.q_proj" : !qf.weight<4096x4096, #enc>
  return %w : !qf.weight<4096x4096, #enc>
}

// -----

// CHECK-LABEL: func.func @tensor_ref
// CHECK: %[[G:.*]] = qf.tensor_ref "model.norm.weight" : tensor<4096xf16>
// CHECK: %[[E:.*]] = qf.tensor_ref "model.embed_tokens.weight" {qf.tied} : tensor<32000x4096xbf16>
// CHECK: return %[[G]], %[[E]]
// GENERIC-LABEL: sym_name = "tensor_ref"
// GENERIC: "qf.tensor_ref"() <{name = "model.norm.weight"}> : () -> tensor<4096xf16>
func.func @tensor_ref() -> (tensor<4096xf16>, tensor<32000x4096xbf16>) {
  %g = qf.tensor_ref "model.norm.weight" : tensor<4096xf16>
  %e = qf.tensor_ref "model.embed_tokens.weight" {qf.tied} : tensor<32000x4096xbf16>
  return %g, %e : tensor<4096xf16>, tensor<32000x4096xbf16>
}

// -----

#enc = #qf.enc<uint4, group = 64, scale = f16, zero = int>

// CHECK-LABEL: func.func @dequantize
// CHECK: %[[W:.*]] = qf.weight_ref "w" : !qf.weight<256x1536, #uint4_g64>
// CHECK: %[[H:.*]] = qf.dequantize %[[W]] : !qf.weight<256x1536, #uint4_g64> -> tensor<256x1536xf16>
// CHECK: %[[B:.*]] = qf.dequantize %[[W]] : !qf.weight<256x1536, #uint4_g64> -> tensor<256x1536xbf16>
// CHECK: %[[F:.*]] = qf.dequantize %[[W]] : !qf.weight<256x1536, #uint4_g64> -> tensor<256x1536xf32>
// CHECK: return %[[H]], %[[B]], %[[F]]
// GENERIC-LABEL: sym_name = "dequantize"
// GENERIC: "qf.dequantize"(%{{.*}}) : (!qf.weight<256x1536, #uint4_g64>) -> tensor<256x1536xf16>
func.func @dequantize() -> (tensor<256x1536xf16>, tensor<256x1536xbf16>, tensor<256x1536xf32>) {
  %w = qf.weight_ref "w" : !qf.weight<256x1536, #enc>
  %h = qf.dequantize %w : !qf.weight<256x1536, #enc> -> tensor<256x1536xf16>
  %b = qf.dequantize %w : !qf.weight<256x1536, #enc> -> tensor<256x1536xbf16>
  %f = qf.dequantize %w : !qf.weight<256x1536, #enc> -> tensor<256x1536xf32>
  return %h, %b, %f : tensor<256x1536xf16>, tensor<256x1536xbf16>, tensor<256x1536xf32>
}

// -----

#nvfp4 = #qf.enc<fp4e2m1, group = 16, scale = f8E4M3FN, global_scale>
#int8 = #qf.enc<int8, per_channel, scale = f32>

// CHECK-LABEL: func.func @quantize
// CHECK-SAME: (%[[D:.*]]: tensor<256x1536xf32>, %[[H:.*]]: tensor<256x1536xbf16>)
// CHECK: %[[Q0:.*]] = qf.quantize %[[D]] : tensor<256x1536xf32> -> !qf.weight<256x1536, #fp4e2m1_g16>
// CHECK: %[[Q1:.*]] = qf.quantize %[[H]] : tensor<256x1536xbf16> -> !qf.weight<256x1536, #int8_pc>
// CHECK: return %[[Q0]], %[[Q1]]
// GENERIC-LABEL: sym_name = "quantize"
// GENERIC: "qf.quantize"(%{{.*}}) : (tensor<256x1536xf32>) -> !qf.weight<256x1536, #fp4e2m1_g16>
func.func @quantize(%d: tensor<256x1536xf32>, %h: tensor<256x1536xbf16>)
    -> (!qf.weight<256x1536, #nvfp4>, !qf.weight<256x1536, #int8>) {
  %q0 = qf.quantize %d : tensor<256x1536xf32> -> !qf.weight<256x1536, #nvfp4>
  %q1 = qf.quantize %h : tensor<256x1536xbf16> -> !qf.weight<256x1536, #int8>
  return %q0, %q1 : !qf.weight<256x1536, #nvfp4>, !qf.weight<256x1536, #int8>
}

// -----

#enc = #qf.enc<int4, group = 128, scale = f16>

// Packed weight with a dynamic batch, packed weight with a static batch, and
// a dense [N, K] weight of the activation type.
// CHECK-LABEL: func.func @matmul
// CHECK-SAME: (%[[X:.*]]: tensor<?x4096xf16>, %[[X1:.*]]: tensor<1x4096xf16>, %[[XB:.*]]: tensor<4x4096xbf16>, %[[D:.*]]: tensor<1024x4096xbf16>)
// CHECK: %[[W:.*]] = qf.weight_ref "w" : !qf.weight<1024x4096, #int4_g128>
// CHECK: %[[Y0:.*]] = qf.matmul %[[X]], %[[W]] : tensor<?x4096xf16>, !qf.weight<1024x4096, #int4_g128> -> tensor<?x1024xf16>
// CHECK: %[[Y1:.*]] = qf.matmul %[[X1]], %[[W]] : tensor<1x4096xf16>, !qf.weight<1024x4096, #int4_g128> -> tensor<1x1024xf16>
// CHECK: %[[Y2:.*]] = qf.matmul %[[XB]], %[[D]] : tensor<4x4096xbf16>, tensor<1024x4096xbf16> -> tensor<4x1024xbf16>
// CHECK: return %[[Y0]], %[[Y1]], %[[Y2]]
// GENERIC-LABEL: sym_name = "matmul"
// GENERIC: "qf.matmul"(%{{.*}}, %{{.*}}) : (tensor<?x4096xf16>, !qf.weight<1024x4096, #int4_g128>) -> tensor<?x1024xf16>
// GENERIC: "qf.matmul"(%{{.*}}, %{{.*}}) : (tensor<1x4096xf16>, !qf.weight<1024x4096, #int4_g128>) -> tensor<1x1024xf16>
// GENERIC: "qf.matmul"(%{{.*}}, %{{.*}}) : (tensor<4x4096xbf16>, tensor<1024x4096xbf16>) -> tensor<4x1024xbf16>
func.func @matmul(%x: tensor<?x4096xf16>, %x1: tensor<1x4096xf16>,
                  %xb: tensor<4x4096xbf16>, %d: tensor<1024x4096xbf16>)
    -> (tensor<?x1024xf16>, tensor<1x1024xf16>, tensor<4x1024xbf16>) {
  %w = qf.weight_ref "w" : !qf.weight<1024x4096, #enc>
  %y0 = qf.matmul %x, %w : tensor<?x4096xf16>, !qf.weight<1024x4096, #enc> -> tensor<?x1024xf16>
  %y1 = qf.matmul %x1, %w : tensor<1x4096xf16>, !qf.weight<1024x4096, #enc> -> tensor<1x1024xf16>
  %y2 = qf.matmul %xb, %d : tensor<4x4096xbf16>, tensor<1024x4096xbf16> -> tensor<4x1024xbf16>
  return %y0, %y1, %y2 : tensor<?x1024xf16>, tensor<1x1024xf16>, tensor<4x1024xbf16>
}

// -----

#enc = #qf.enc<int4, group = 128, scale = f16>
#tiled = #qf.layout<tiled, tile_n = 16, tile_k = 64, interleave = 4>

// CHECK-LABEL: func.func @fused_matmul_plain
// CHECK-SAME: (%[[X:.*]]: tensor<?x4096xf16>)
// CHECK: %[[W:.*]] = qf.weight_ref "w" : !qf.weight<1024x4096, #int4_g128, #tiled_16x64>
// CHECK: %[[Y:.*]] = qf.fused_matmul %[[X]], %[[W]] : tensor<?x4096xf16>, !qf.weight<1024x4096, #int4_g128, #tiled_16x64> -> tensor<?x1024xf16>
// CHECK: return %[[Y]]
// GENERIC-LABEL: sym_name = "fused_matmul_plain"
// GENERIC: "qf.fused_matmul"(%{{.*}}, %{{.*}}) <{activation = #qf<activation none>, operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 0, 0>}>
func.func @fused_matmul_plain(%x: tensor<?x4096xf16>) -> tensor<?x1024xf16> {
  %w = qf.weight_ref "w" : !qf.weight<1024x4096, #enc, #tiled>
  %y = qf.fused_matmul %x, %w : tensor<?x4096xf16>, !qf.weight<1024x4096, #enc, #tiled> -> tensor<?x1024xf16>
  return %y : tensor<?x1024xf16>
}

// -----

#enc = #qf.enc<int4, group = 128, scale = f16>

// RMSNorm prologue + residual epilogue (o_proj / down_proj shape), with a
// matvec tiling; the default activation is not printed.
// CHECK-LABEL: func.func @fused_matmul_norm_residual
// CHECK-SAME: (%[[X:.*]]: tensor<1x4096xf16>, %[[G:.*]]: tensor<4096xf16>, %[[R:.*]]: tensor<1x4096xf16>)
// CHECK: %[[Y:.*]] = qf.fused_matmul %[[X]], %{{.*}} norm(%[[G]] : tensor<4096xf16>) residual(%[[R]] : tensor<1x4096xf16>)
// CHECK-SAME: {norm_eps = 9.99999974E-6 : f32, tiling = #qf.tiling<matvec, block_n = 4, k_unroll = 2>}
// CHECK-SAME: : tensor<1x4096xf16>, !qf.weight<4096x4096, #int4_g128> -> tensor<1x4096xf16>
// CHECK: return %[[Y]]
// GENERIC-LABEL: sym_name = "fused_matmul_norm_residual"
// GENERIC: "qf.fused_matmul"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{activation = #qf<activation none>, norm_eps = 9.99999974E-6 : f32, operandSegmentSizes = array<i32: 1, 1, 0, 1, 0, 1, 0>, tiling = #qf.tiling<matvec, block_n = 4, k_unroll = 2>}>
func.func @fused_matmul_norm_residual(%x: tensor<1x4096xf16>, %g: tensor<4096xf16>,
                                      %r: tensor<1x4096xf16>) -> tensor<1x4096xf16> {
  %w = qf.weight_ref "w" : !qf.weight<4096x4096, #enc>
  %y = qf.fused_matmul %x, %w norm(%g : tensor<4096xf16>) residual(%r : tensor<1x4096xf16>)
         {norm_eps = 1.0e-05 : f32, activation = #qf<activation none>,
          tiling = #qf.tiling<matvec, block_n = 4, k_unroll = 2>}
       : tensor<1x4096xf16>, !qf.weight<4096x4096, #enc> -> tensor<1x4096xf16>
  return %y : tensor<1x4096xf16>
}

// -----

#enc = #qf.enc<uint4, group = 128, scale = bf16, zero = int>

// gate and up with silu_mul: two [N, K] weights give an [M, N] result.
// CHECK-LABEL: func.func @fused_matmul_silu_mul
// CHECK-SAME: (%[[X:.*]]: tensor<?x4096xbf16>)
// CHECK: %[[G:.*]] = qf.weight_ref "gate"
// CHECK: %[[U:.*]] = qf.weight_ref "up"
// CHECK: %[[Y:.*]] = qf.fused_matmul %[[X]], %[[G]] up(%[[U]] : !qf.weight<14336x4096, #uint4_g128>)
// CHECK-SAME: {activation = #qf<activation silu_mul>, tiling = #qf.tiling<mma, block_m = 64, block_n = 128, block_k = 64, stages = 3>}
// CHECK-SAME: : tensor<?x4096xbf16>, !qf.weight<14336x4096, #uint4_g128> -> tensor<?x14336xbf16>
// CHECK: return %[[Y]]
// GENERIC-LABEL: sym_name = "fused_matmul_silu_mul"
// GENERIC: operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0, 0>
func.func @fused_matmul_silu_mul(%x: tensor<?x4096xbf16>) -> tensor<?x14336xbf16> {
  %g = qf.weight_ref "gate" : !qf.weight<14336x4096, #enc>
  %u = qf.weight_ref "up" : !qf.weight<14336x4096, #enc>
  %y = qf.fused_matmul %x, %g up(%u : !qf.weight<14336x4096, #enc>)
         {activation = #qf<activation silu_mul>,
          tiling = #qf.tiling<mma, block_m = 64, block_n = 128, block_k = 64, stages = 3>}
       : tensor<?x4096xbf16>, !qf.weight<14336x4096, #enc> -> tensor<?x14336xbf16>
  return %y : tensor<?x14336xbf16>
}

// -----

#enc = #qf.enc<nf4, group = 64, scale = f32>

// Everything at once (silu_mul takes no bias).
// CHECK-LABEL: func.func @fused_matmul_all
// CHECK-SAME: (%[[X:.*]]: tensor<2x1024xf16>, %[[G:.*]]: tensor<1024xf16>, %[[R:.*]]: tensor<2x256xf16>)
// CHECK: qf.fused_matmul %[[X]], %{{.*}} up(%{{.*}} : !qf.weight<256x1024, #nf4_g64>) norm(%[[G]] : tensor<1024xf16>) residual(%[[R]] : tensor<2x256xf16>)
// CHECK-SAME: {activation = #qf<activation silu_mul>, norm_eps = 9.99999997E-7 : f32, tiling = #qf.tiling<matvec, block_m = 2, split_k = 2>}
// CHECK-SAME: : tensor<2x1024xf16>, !qf.weight<256x1024, #nf4_g64> -> tensor<2x256xf16>
// GENERIC-LABEL: sym_name = "fused_matmul_all"
// GENERIC: operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 1, 0>
func.func @fused_matmul_all(%x: tensor<2x1024xf16>, %g: tensor<1024xf16>,
                            %r: tensor<2x256xf16>) -> tensor<2x256xf16> {
  %wg = qf.weight_ref "gate" : !qf.weight<256x1024, #enc>
  %wu = qf.weight_ref "up" : !qf.weight<256x1024, #enc>
  %y = qf.fused_matmul %x, %wg up(%wu : !qf.weight<256x1024, #enc>)
         norm(%g : tensor<1024xf16>) residual(%r : tensor<2x256xf16>)
         {norm_eps = 1.0e-06 : f32, activation = #qf<activation silu_mul>,
          tiling = #qf.tiling<matvec, block_m = 2, split_k = 2>}
       : tensor<2x1024xf16>, !qf.weight<256x1024, #enc> -> tensor<2x256xf16>
  return %y : tensor<2x256xf16>
}

// -----

// Dynamic mode, symmetric grid: codes, error and the block's group scales.
// CHECK-LABEL: func.func @gptq_dynamic_scales
// CHECK-SAME: (%[[W:.*]]: tensor<4096x128xf32>, %[[U:.*]]: tensor<128x128xf32>)
// CHECK: %[[C:.*]], %[[E:.*]], %[[S:.*]] = qf.gptq_block_update %[[W]], %[[U]]
// CHECK-SAME: {column_offset = 256 : i64, grid = #int4_g128}
// CHECK-SAME: : (tensor<4096x128xf32>, tensor<128x128xf32>) -> (tensor<4096x128xi8>, tensor<4096x128xf32>, tensor<4096x1xf32>)
// CHECK: return %[[C]], %[[E]], %[[S]]
// GENERIC-LABEL: sym_name = "gptq_dynamic_scales"
// GENERIC: "qf.gptq_block_update"(%{{.*}}, %{{.*}}) <{column_offset = 256 : i64, grid = #int4_g128, operandSegmentSizes = array<i32: 1, 1, 0, 0, 0>, resultSegmentSizes = array<i32: 1, 1, 0, 1>}>
func.func @gptq_dynamic_scales(%w: tensor<4096x128xf32>, %u: tensor<128x128xf32>)
    -> (tensor<4096x128xi8>, tensor<4096x128xf32>, tensor<4096x1xf32>) {
  %codes, %err, %scales = qf.gptq_block_update %w, %u
      {grid = #qf.enc<int4, group = 128, scale = f16>, column_offset = 256}
    : (tensor<4096x128xf32>, tensor<128x128xf32>)
      -> (tensor<4096x128xi8>, tensor<4096x128xf32>, tensor<4096x1xf32>)
  return %codes, %err, %scales : tensor<4096x128xi8>, tensor<4096x128xf32>, tensor<4096x1xf32>
}

// -----

// With `values`: each code's value as f16, after the group parameters in the
// op's results and written after their types.
// CHECK-LABEL: func.func @gptq_values
// CHECK: %[[C:.*]], %[[E:.*]], %[[V:.*]], %[[S:.*]] = qf.gptq_block_update
// CHECK-SAME: -> (tensor<?x128xi8>, tensor<?x128xf32>, tensor<?x1xf32>) values tensor<?x128xf16>
// CHECK: return %[[C]], %[[E]], %[[V]], %[[S]]
// GENERIC-LABEL: sym_name = "gptq_values"
// GENERIC: resultSegmentSizes = array<i32: 1, 1, 1, 1>
func.func @gptq_values(%w: tensor<?x128xf32>, %u: tensor<128x128xf32>)
    -> (tensor<?x128xi8>, tensor<?x128xf32>, tensor<?x128xf16>, tensor<?x1xf32>) {
  %codes, %err, %values, %scales = qf.gptq_block_update %w, %u
      {grid = #qf.enc<int4, group = 128, scale = f16>}
    : (tensor<?x128xf32>, tensor<128x128xf32>)
      -> (tensor<?x128xi8>, tensor<?x128xf32>, tensor<?x1xf32>)
      values tensor<?x128xf16>
  return %codes, %err, %values, %scales : tensor<?x128xi8>, tensor<?x128xf32>, tensor<?x128xf16>, tensor<?x1xf32>
}

// -----

// Each row's min and max (per-channel GPTQ fits): rows may be dynamic.
// CHECK-LABEL: func.func @row_min_max
// CHECK: %[[R:.*]] = qf.row_min_max %{{.*}} : tensor<?x4096xf32> -> tensor<?x2xf32>
// CHECK: return %[[R]]
// GENERIC-LABEL: sym_name = "row_min_max"
// GENERIC: "qf.row_min_max"(%{{.*}}) : (tensor<?x4096xf32>) -> tensor<?x2xf32>
func.func @row_min_max(%w: tensor<?x4096xf32>) -> tensor<?x2xf32> {
  %mm = qf.row_min_max %w : tensor<?x4096xf32> -> tensor<?x2xf32>
  return %mm : tensor<?x2xf32>
}

// -----

// Dynamic mode, asymmetric grid: scales and zero points, two groups per block;
// the default column_offset is not printed.
// CHECK-LABEL: func.func @gptq_dynamic_scales_zeros
// CHECK: %[[C:.*]], %[[E:.*]], %[[P:.*]]:2 = qf.gptq_block_update %{{.*}}, %{{.*}} {grid = #uint4_g64}
// CHECK-SAME: : (tensor<512x128xf32>, tensor<128x128xf32>) -> (tensor<512x128xi8>, tensor<512x128xf32>, tensor<512x2xf32>, tensor<512x2xf32>)
// CHECK: return %[[C]], %[[E]], %[[P]]#0, %[[P]]#1
func.func @gptq_dynamic_scales_zeros(%w: tensor<512x128xf32>, %u: tensor<128x128xf32>)
    -> (tensor<512x128xi8>, tensor<512x128xf32>, tensor<512x2xf32>, tensor<512x2xf32>) {
  %codes, %err, %scales, %zeros = qf.gptq_block_update %w, %u
      {grid = #qf.enc<uint4, group = 64, scale = f16, zero = int>, column_offset = 0}
    : (tensor<512x128xf32>, tensor<128x128xf32>)
      -> (tensor<512x128xi8>, tensor<512x128xf32>, tensor<512x2xf32>, tensor<512x2xf32>)
  return %codes, %err, %scales, %zeros
      : tensor<512x128xi8>, tensor<512x128xf32>, tensor<512x2xf32>, tensor<512x2xf32>
}

// -----

// Static mode: per-column scales (per channel, static groups or act-order
// gathered through g_idx) are operands; only codes and error come back.
// CHECK-LABEL: func.func @gptq_static
// CHECK-SAME: (%[[W:.*]]: tensor<4096x128xf32>, %[[U:.*]]: tensor<128x128xf32>, %[[S:.*]]: tensor<4096x128xf32>, %[[Z:.*]]: tensor<4096x128xf32>)
// CHECK: %[[C0:.*]], %[[E0:.*]] = qf.gptq_block_update %[[W]], %[[U]] scales(%[[S]] : tensor<4096x128xf32>) {grid = #int8_pc}
// CHECK-SAME: : (tensor<4096x128xf32>, tensor<128x128xf32>) -> (tensor<4096x128xi8>, tensor<4096x128xf32>)
// CHECK: %[[C1:.*]], %[[E1:.*]] = qf.gptq_block_update %[[W]], %[[U]] scales(%[[S]] : tensor<4096x128xf32>) zeros(%[[Z]] : tensor<4096x128xf32>)
// CHECK-SAME: {column_offset = 384 : i64, grid = #uint4_g32}
// CHECK-SAME: : (tensor<4096x128xf32>, tensor<128x128xf32>) -> (tensor<4096x128xi8>, tensor<4096x128xf32>)
// CHECK: return %[[C0]], %[[E0]], %[[C1]], %[[E1]]
// GENERIC-LABEL: sym_name = "gptq_static"
// GENERIC: operandSegmentSizes = array<i32: 1, 1, 1, 0, 0>
// GENERIC: operandSegmentSizes = array<i32: 1, 1, 1, 1, 0>
func.func @gptq_static(%w: tensor<4096x128xf32>, %u: tensor<128x128xf32>,
                       %s: tensor<4096x128xf32>, %z: tensor<4096x128xf32>)
    -> (tensor<4096x128xi8>, tensor<4096x128xf32>, tensor<4096x128xi8>, tensor<4096x128xf32>) {
  %c0, %e0 = qf.gptq_block_update %w, %u scales(%s : tensor<4096x128xf32>)
      {grid = #qf.enc<int8, per_channel, scale = f32>}
    : (tensor<4096x128xf32>, tensor<128x128xf32>) -> (tensor<4096x128xi8>, tensor<4096x128xf32>)
  %c1, %e1 = qf.gptq_block_update %w, %u scales(%s : tensor<4096x128xf32>)
      zeros(%z : tensor<4096x128xf32>)
      {grid = #qf.enc<uint4, group = 32, scale = f16, zero = int, act_order>, column_offset = 384}
    : (tensor<4096x128xf32>, tensor<128x128xf32>) -> (tensor<4096x128xi8>, tensor<4096x128xf32>)
  return %c0, %e0, %c1, %e1
      : tensor<4096x128xi8>, tensor<4096x128xf32>, tensor<4096x128xi8>, tensor<4096x128xf32>
}

// -----

// NVFP4: one global scale per row, in both modes; rows may be dynamic.
// CHECK-LABEL: func.func @gptq_nvfp4
// CHECK-SAME: (%[[W:.*]]: tensor<?x128xf32>, %[[U:.*]]: tensor<128x128xf32>, %[[G:.*]]: tensor<?xf32>, %[[WS:.*]]: tensor<64x128xf32>, %[[S:.*]]: tensor<64x128xf32>, %[[GS:.*]]: tensor<64xf32>)
// CHECK: qf.gptq_block_update %[[W]], %[[U]] global_scale(%[[G]] : tensor<?xf32>) {grid = #fp4e2m1_g16}
// CHECK-SAME: : (tensor<?x128xf32>, tensor<128x128xf32>) -> (tensor<?x128xi8>, tensor<?x128xf32>, tensor<?x8xf32>)
// CHECK: qf.gptq_block_update %[[WS]], %[[U]] scales(%[[S]] : tensor<64x128xf32>) global_scale(%[[GS]] : tensor<64xf32>) {grid = #fp4e2m1_g16}
// CHECK-SAME: : (tensor<64x128xf32>, tensor<128x128xf32>) -> (tensor<64x128xi8>, tensor<64x128xf32>)
// GENERIC-LABEL: sym_name = "gptq_nvfp4"
// GENERIC: operandSegmentSizes = array<i32: 1, 1, 0, 0, 1>
// GENERIC: operandSegmentSizes = array<i32: 1, 1, 1, 0, 1>
func.func @gptq_nvfp4(%w: tensor<?x128xf32>, %u: tensor<128x128xf32>, %g: tensor<?xf32>,
                      %ws: tensor<64x128xf32>, %s: tensor<64x128xf32>, %gs: tensor<64xf32>)
    -> (tensor<?x128xi8>, tensor<?x128xf32>, tensor<?x8xf32>, tensor<64x128xi8>, tensor<64x128xf32>) {
  %c0, %e0, %s0 = qf.gptq_block_update %w, %u global_scale(%g : tensor<?xf32>)
      {grid = #qf.enc<fp4e2m1, group = 16, scale = f8E4M3FN, global_scale>}
    : (tensor<?x128xf32>, tensor<128x128xf32>) -> (tensor<?x128xi8>, tensor<?x128xf32>, tensor<?x8xf32>)
  %c1, %e1 = qf.gptq_block_update %ws, %u scales(%s : tensor<64x128xf32>) global_scale(%gs : tensor<64xf32>)
      {grid = #qf.enc<fp4e2m1, group = 16, scale = f8E4M3FN, global_scale>}
    : (tensor<64x128xf32>, tensor<128x128xf32>) -> (tensor<64x128xi8>, tensor<64x128xf32>)
  return %c0, %e0, %s0, %c1, %e1
      : tensor<?x128xi8>, tensor<?x128xf32>, tensor<?x8xf32>, tensor<64x128xi8>, tensor<64x128xf32>
}

// -----

// CHECK-LABEL: func.func @rms_norm
// CHECK-SAME: (%[[X:.*]]: tensor<?x4096xbf16>, %[[G:.*]]: tensor<4096xbf16>)
// CHECK: %[[Y:.*]] = qf.rms_norm %[[X]], %[[G]] {eps = 9.99999974E-6 : f32} : tensor<?x4096xbf16>, tensor<4096xbf16> -> tensor<?x4096xbf16>
// CHECK: return %[[Y]]
// GENERIC-LABEL: sym_name = "rms_norm"
// GENERIC: "qf.rms_norm"(%{{.*}}, %{{.*}}) <{eps = 9.99999974E-6 : f32}> : (tensor<?x4096xbf16>, tensor<4096xbf16>) -> tensor<?x4096xbf16>
func.func @rms_norm(%x: tensor<?x4096xbf16>, %g: tensor<4096xbf16>) -> tensor<?x4096xbf16> {
  %y = qf.rms_norm %x, %g {eps = 1.0e-05 : f32} : tensor<?x4096xbf16>, tensor<4096xbf16> -> tensor<?x4096xbf16>
  return %y : tensor<?x4096xbf16>
}

// -----

// Plain rotary (Qwen2) and Llama 3 scaled rotary.
// CHECK-LABEL: func.func @rotary
// CHECK-SAME: (%[[X:.*]]: tensor<?x4096xf16>, %[[P:.*]]: tensor<?xi32>)
// CHECK: %[[A:.*]] = qf.rotary %[[X]], %[[P]] {head_dim = 128 : i64, theta = 1.000000e+06 : f64} : tensor<?x4096xf16>, tensor<?xi32> -> tensor<?x4096xf16>
// CHECK: %[[B:.*]] = qf.rotary %[[A]], %[[P]]
// CHECK-SAME: {head_dim = 128 : i64, high_freq_factor = 4.000000e+00 : f64, low_freq_factor = 1.000000e+00 : f64, original_max_position = 8192 : i64, scaling_factor = 8.000000e+00 : f64, theta = 5.000000e+05 : f64}
// CHECK-SAME: : tensor<?x4096xf16>, tensor<?xi32> -> tensor<?x4096xf16>
// CHECK: return %[[B]]
// GENERIC-LABEL: sym_name = "rotary"
// GENERIC: "qf.rotary"(%{{.*}}, %{{.*}}) <{head_dim = 128 : i64, theta = 1.000000e+06 : f64}>
func.func @rotary(%x: tensor<?x4096xf16>, %p: tensor<?xi32>) -> tensor<?x4096xf16> {
  %a = qf.rotary %x, %p {head_dim = 128 : i64, theta = 1.0e+06 : f64}
       : tensor<?x4096xf16>, tensor<?xi32> -> tensor<?x4096xf16>
  %b = qf.rotary %a, %p {head_dim = 128 : i64, theta = 5.0e+05 : f64,
                         scaling_factor = 8.0 : f64, low_freq_factor = 1.0 : f64,
                         high_freq_factor = 4.0 : f64, original_max_position = 8192 : i64}
       : tensor<?x4096xf16>, tensor<?xi32> -> tensor<?x4096xf16>
  return %b : tensor<?x4096xf16>
}

// -----

// Grouped-query attention: 32 query heads over 8 KV heads of 128.
// CHECK-LABEL: func.func @attention
// CHECK-SAME: (%[[Q:.*]]: tensor<1x4096xf16>, %[[K:.*]]: tensor<1x1024xf16>, %[[V:.*]]: tensor<1x1024xf16>, %[[KC:.*]]: tensor<2048x1024xf16>, %[[VC:.*]]: tensor<2048x1024xf16>, %[[P:.*]]: tensor<1xi32>)
// CHECK: %[[O:.*]], %[[KC2:.*]], %[[VC2:.*]] = qf.attention %[[Q]], %[[K]], %[[V]], %[[KC]], %[[VC]], %[[P]]
// CHECK-SAME: {head_dim = 128 : i64, num_heads = 32 : i64, num_kv_heads = 8 : i64}
// CHECK-SAME: : (tensor<1x4096xf16>, tensor<1x1024xf16>, tensor<1x1024xf16>, tensor<2048x1024xf16>, tensor<2048x1024xf16>, tensor<1xi32>) -> (tensor<1x4096xf16>, tensor<2048x1024xf16>, tensor<2048x1024xf16>)
// CHECK: return %[[O]], %[[KC2]], %[[VC2]]
// GENERIC-LABEL: sym_name = "attention"
// GENERIC: "qf.attention"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{head_dim = 128 : i64, num_heads = 32 : i64, num_kv_heads = 8 : i64}>
func.func @attention(%q: tensor<1x4096xf16>, %k: tensor<1x1024xf16>, %v: tensor<1x1024xf16>,
                     %kc: tensor<2048x1024xf16>, %vc: tensor<2048x1024xf16>, %p: tensor<1xi32>)
    -> (tensor<1x4096xf16>, tensor<2048x1024xf16>, tensor<2048x1024xf16>) {
  %o, %kc2, %vc2 = qf.attention %q, %k, %v, %kc, %vc, %p
      {num_heads = 32 : i64, num_kv_heads = 8 : i64, head_dim = 128 : i64}
    : (tensor<1x4096xf16>, tensor<1x1024xf16>, tensor<1x1024xf16>, tensor<2048x1024xf16>,
       tensor<2048x1024xf16>, tensor<1xi32>)
      -> (tensor<1x4096xf16>, tensor<2048x1024xf16>, tensor<2048x1024xf16>)
  return %o, %kc2, %vc2 : tensor<1x4096xf16>, tensor<2048x1024xf16>, tensor<2048x1024xf16>
}

// -----

// CHECK-LABEL: func.func @silu_mul_add
// CHECK-SAME: (%[[G:.*]]: tensor<?x14336xf16>, %[[U:.*]]: tensor<?x14336xf16>)
// CHECK: %[[S:.*]] = qf.silu_mul %[[G]], %[[U]] : tensor<?x14336xf16>
// CHECK: %[[A:.*]] = qf.add %[[S]], %[[U]] : tensor<?x14336xf16>
// CHECK: return %[[A]]
// GENERIC-LABEL: sym_name = "silu_mul_add"
// GENERIC: "qf.silu_mul"(%{{.*}}, %{{.*}}) : (tensor<?x14336xf16>, tensor<?x14336xf16>) -> tensor<?x14336xf16>
// GENERIC: "qf.add"(%{{.*}}, %{{.*}}) : (tensor<?x14336xf16>, tensor<?x14336xf16>) -> tensor<?x14336xf16>
func.func @silu_mul_add(%g: tensor<?x14336xf16>, %u: tensor<?x14336xf16>) -> tensor<?x14336xf16> {
  %s = qf.silu_mul %g, %u : tensor<?x14336xf16>
  %a = qf.add %s, %u : tensor<?x14336xf16>
  return %a : tensor<?x14336xf16>
}

// -----

// CHECK-LABEL: func.func @embedding_argmax
// CHECK-SAME: (%[[T:.*]]: tensor<32000x4096xbf16>, %[[IDS:.*]]: tensor<?xi32>, %[[L:.*]]: tensor<?x32000xbf16>)
// CHECK: %[[E:.*]] = qf.embedding %[[T]], %[[IDS]] : tensor<32000x4096xbf16>, tensor<?xi32> -> tensor<?x4096xbf16>
// CHECK: %[[A:.*]] = qf.argmax %[[L]] : tensor<?x32000xbf16> -> tensor<?xi32>
// CHECK: return %[[E]], %[[A]]
// GENERIC-LABEL: sym_name = "embedding_argmax"
// GENERIC: "qf.embedding"(%{{.*}}, %{{.*}}) : (tensor<32000x4096xbf16>, tensor<?xi32>) -> tensor<?x4096xbf16>
// GENERIC: "qf.argmax"(%{{.*}}) : (tensor<?x32000xbf16>) -> tensor<?xi32>
func.func @embedding_argmax(%t: tensor<32000x4096xbf16>, %ids: tensor<?xi32>, %l: tensor<?x32000xbf16>)
    -> (tensor<?x4096xbf16>, tensor<?xi32>) {
  %e = qf.embedding %t, %ids : tensor<32000x4096xbf16>, tensor<?xi32> -> tensor<?x4096xbf16>
  %a = qf.argmax %l : tensor<?x32000xbf16> -> tensor<?xi32>
  return %e, %a : tensor<?x4096xbf16>, tensor<?xi32>
}

// -----

// CHECK-LABEL: func.func @sample
// CHECK: qf.sample %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<?x32000xf16>, tensor<1x8xi32>, tensor<1x32000xi8>, tensor<?xi32> -> tensor<?xi32>
// CHECK: qf.sample %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<4x1000xbf16>, tensor<4x8xi32>, tensor<4x1000xi8>, tensor<4xi32> -> tensor<4xi32>
// GENERIC-LABEL: sym_name = "sample"
// GENERIC: "qf.sample"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (tensor<?x32000xf16>, tensor<1x8xi32>, tensor<1x32000xi8>, tensor<?xi32>) -> tensor<?xi32>
func.func @sample(%l: tensor<?x32000xf16>, %p: tensor<1x8xi32>, %m: tensor<1x32000xi8>, %c: tensor<?xi32>,
                  %l4: tensor<4x1000xbf16>, %p4: tensor<4x8xi32>, %m4: tensor<4x1000xi8>, %c4: tensor<4xi32>)
    -> (tensor<?xi32>, tensor<4xi32>) {
  %a = qf.sample %l, %p, %m, %c : tensor<?x32000xf16>, tensor<1x8xi32>, tensor<1x32000xi8>, tensor<?xi32> -> tensor<?xi32>
  %b = qf.sample %l4, %p4, %m4, %c4 : tensor<4x1000xbf16>, tensor<4x8xi32>, tensor<4x1000xi8>, tensor<4xi32> -> tensor<4xi32>
  return %a, %b : tensor<?xi32>, tensor<4xi32>
}

// -----

// Ops written in the generic form parse and print in the custom form.
// CHECK-LABEL: func.func @from_generic
// CHECK: %[[W:.*]] = qf.weight_ref "w" : !qf.weight<64x64, #int8_pc>
// CHECK: %[[D:.*]] = qf.dequantize %[[W]] : !qf.weight<64x64, #int8_pc> -> tensor<64x64xf16>
// CHECK: %[[Y:.*]] = qf.fused_matmul %{{.*}}, %[[W]] residual(%{{.*}} : tensor<1x64xf16>) : tensor<1x64xf16>, !qf.weight<64x64, #int8_pc> -> tensor<1x64xf16>
// CHECK: return %[[D]], %[[Y]]
func.func @from_generic(%x: tensor<1x64xf16>) -> (tensor<64x64xf16>, tensor<1x64xf16>) {
  %w = "qf.weight_ref"() <{name = "w"}> : () -> !qf.weight<64x64, #qf.enc<int8, per_channel, scale = f16>>
  %d = "qf.dequantize"(%w) : (!qf.weight<64x64, #qf.enc<int8, per_channel, scale = f16>>) -> tensor<64x64xf16>
  %y = "qf.fused_matmul"(%x, %w, %x) <{operandSegmentSizes = array<i32: 1, 1, 0, 0, 0, 1, 0>}>
       : (tensor<1x64xf16>, !qf.weight<64x64, #qf.enc<int8, per_channel, scale = f16>>, tensor<1x64xf16>) -> tensor<1x64xf16>
  return %d, %y : tensor<64x64xf16>, tensor<1x64xf16>
}
