// RUN: qfuse-opt %s -split-input-file --qf-fuse-dequant-matmul | FileCheck %s
// RUN: qfuse-opt %s -split-input-file --qf-fuse-dequant-matmul=report-unfused -verify-diagnostics -o /dev/null

// Llama-3-8B q_proj at M = 1: the dequantize fuses and disappears.
#int4 = #qf.enc<int4, group = 128, scale = f16>
!w = !qf.weight<4096x4096, #int4>
// CHECK-LABEL: @llama_q_proj
//  CHECK-SAME: (%[[X:.*]]: tensor<1x4096xf16>)
func.func @llama_q_proj(%x: tensor<1x4096xf16>) -> tensor<1x4096xf16> {
  // CHECK: %[[W:.*]] = qf.weight_ref "model.layers.0.self_attn.q_proj"
  // CHECK-NOT: qf.dequantize
  // CHECK: %[[Y:.*]] = qf.fused_matmul %[[X]], %[[W]] : tensor<1x4096xf16>, !qf.weight<4096x4096, #int4_g128> -> tensor<1x4096xf16>
  // CHECK-NOT: tiling
  // CHECK: return %[[Y]]
  %w = qf.weight_ref "model.layers.0.self_attn.q_proj" : !w
  %d = qf.dequantize %w : !w -> tensor<4096x4096xf16>
  %y = qf.matmul %x, %d : tensor<1x4096xf16>, tensor<4096x4096xf16> -> tensor<1x4096xf16>
  return %y : tensor<1x4096xf16>
}

// -----

// Qwen2.5-1.5B k_proj on a packed weight (already canonical), dynamic M.
#uint4 = #qf.enc<uint4, group = 128, scale = f16, zero = int>
!w = !qf.weight<256x1536, #uint4>
// CHECK-LABEL: @qwen_k_proj_packed
func.func @qwen_k_proj_packed(%x: tensor<?x1536xbf16>) -> tensor<?x256xbf16> {
  // CHECK: %[[W:.*]] = qf.weight_ref
  // CHECK: qf.fused_matmul %{{.*}}, %[[W]] : tensor<?x1536xbf16>, !qf.weight<256x1536, #uint4_g128> -> tensor<?x256xbf16>
  // CHECK-NOT: qf.matmul
  %w = qf.weight_ref "model.layers.0.self_attn.k_proj" : !w
  %y = qf.matmul %x, %w : tensor<?x1536xbf16>, !w -> tensor<?x256xbf16>
  return %y : tensor<?x256xbf16>
}

// -----

// One dequantize feeding Llama-3-8B gate and up (two matmuls, M = 8):
// both fuse, and the dequantize goes once its last user has.
#nf4 = #qf.enc<nf4, group = 64, scale = f32>
!w = !qf.weight<14336x4096, #nf4>
// CHECK-LABEL: @shared_dequantize
func.func @shared_dequantize(%x: tensor<8x4096xf16>, %z: tensor<8x4096xf16>)
    -> (tensor<8x14336xf16>, tensor<8x14336xf16>) {
  // CHECK-NOT: qf.dequantize
  // CHECK: qf.fused_matmul %{{.*}}, %[[W:.*]] : tensor<8x4096xf16>, !qf.weight<14336x4096, #nf4_g64>
  // CHECK: qf.fused_matmul %{{.*}}, %[[W]] : tensor<8x4096xf16>, !qf.weight<14336x4096, #nf4_g64>
  // CHECK-NOT: qf.dequantize
  %w = qf.weight_ref "model.layers.0.mlp.gate_proj" : !w
  %d = qf.dequantize %w : !w -> tensor<14336x4096xf16>
  %a = qf.matmul %x, %d : tensor<8x4096xf16>, tensor<14336x4096xf16> -> tensor<8x14336xf16>
  %b = qf.matmul %z, %d : tensor<8x4096xf16>, tensor<14336x4096xf16> -> tensor<8x14336xf16>
  return %a, %b : tensor<8x14336xf16>, tensor<8x14336xf16>
}

// -----

// A dequantize with a user that needs the dense weight stays for it; the
// matmul still fuses.
#int4 = #qf.enc<int4, group = 128, scale = f16>
!w = !qf.weight<1536x1536, #int4>
// CHECK-LABEL: @dequantize_kept_for_other_user
func.func @dequantize_kept_for_other_user(%x: tensor<1x1536xf16>)
    -> (tensor<1x1536xf16>, tensor<1536x1536xf16>) {
  // CHECK: %[[W:.*]] = qf.weight_ref
  // CHECK: %[[D:.*]] = qf.dequantize %[[W]]
  // CHECK: %[[Y:.*]] = qf.fused_matmul %{{.*}}, %[[W]]
  // CHECK: return %[[Y]], %[[D]]
  %w = qf.weight_ref "model.layers.0.self_attn.o_proj" : !w
  // expected-remark@+1 {{dequantize still materializes the dense weight for its users: 'func.return'}}
  %d = qf.dequantize %w : !w -> tensor<1536x1536xf16>
  %y = qf.matmul %x, %d : tensor<1x1536xf16>, tensor<1536x1536xf16> -> tensor<1x1536xf16>
  return %y, %d : tensor<1x1536xf16>, tensor<1536x1536xf16>
}

// -----

// A dequantize to f32 rounded by a plain truncf folds, then fuses.
#int8 = #qf.enc<int8, per_channel, scale = f16>
!w = !qf.weight<8960x1536, #int8>
// CHECK-LABEL: @plain_truncf_folds
func.func @plain_truncf_folds(%x: tensor<1x1536xf16>) -> tensor<1x8960xf16> {
  // CHECK-NOT: arith.truncf
  // CHECK-NOT: qf.dequantize
  // CHECK: qf.fused_matmul %{{.*}}, %{{.*}} : tensor<1x1536xf16>, !qf.weight<8960x1536, #int8_pc>
  %w = qf.weight_ref "model.layers.0.mlp.up_proj" : !w
  %d = qf.dequantize %w : !w -> tensor<8960x1536xf32>
  %h = arith.truncf %d : tensor<8960x1536xf32> to tensor<8960x1536xf16>
  %y = qf.matmul %x, %h : tensor<1x1536xf16>, tensor<8960x1536xf16> -> tensor<1x8960xf16>
  return %y : tensor<1x8960xf16>
}

// -----

// Not fused: the dequantized element type (f32) differs from the
// activations' and the conversion has a rounding mode, so it cannot fold.
#int4 = #qf.enc<int4, group = 128, scale = f16>
!w = !qf.weight<1536x8960, #int4>
// CHECK-LABEL: @dequantize_type_differs
func.func @dequantize_type_differs(%x: tensor<1x8960xf16>) -> tensor<1x1536xf16> {
  // CHECK: qf.dequantize
  // CHECK: arith.truncf
  // CHECK: qf.matmul
  // CHECK-NOT: qf.fused_matmul
  %w = qf.weight_ref "model.layers.0.mlp.down_proj" : !w
  // expected-remark@+1 {{dequantize still materializes the dense weight for its users: 'arith.truncf'}}
  %d = qf.dequantize %w : !w -> tensor<1536x8960xf32>
  %h = arith.truncf %d to_nearest_away : tensor<1536x8960xf32> to tensor<1536x8960xf16>
  // expected-remark@+1 {{matmul not fused: dequantize element type f32 differs from the activations' f16 (converted by 'arith.truncf', which does not fold into the dequantize)}}
  %y = qf.matmul %x, %h : tensor<1x8960xf16>, tensor<1536x8960xf16> -> tensor<1x1536xf16>
  return %y : tensor<1x1536xf16>
}

// -----

// Not fused: an fp16 weight from the checkpoint is a dense matmul.
// CHECK-LABEL: @dense_fp16_weight
func.func @dense_fp16_weight(%x: tensor<1x4096xf16>) -> tensor<1x1024xf16> {
  // CHECK: qf.matmul
  // CHECK-NOT: qf.fused_matmul
  %w = qf.tensor_ref "model.layers.0.self_attn.v_proj.weight" : tensor<1024x4096xf16>
  // expected-remark@+1 {{matmul not fused: dense weight is not produced by qf.dequantize (it comes from 'qf.tensor_ref'); it stays a dense matmul}}
  %y = qf.matmul %x, %w : tensor<1x4096xf16>, tensor<1024x4096xf16> -> tensor<1x1024xf16>
  return %y : tensor<1x1024xf16>
}

// -----

// Not fused: a dense weight passed in.
// CHECK-LABEL: @dense_block_argument
func.func @dense_block_argument(%x: tensor<1x1536xf16>, %w: tensor<256x1536xf16>) -> tensor<1x256xf16> {
  // CHECK: qf.matmul
  // expected-remark@+1 {{matmul not fused: dense weight is not produced by qf.dequantize (it is a block argument); it stays a dense matmul}}
  %y = qf.matmul %x, %w : tensor<1x1536xf16>, tensor<256x1536xf16> -> tensor<1x256xf16>
  return %y : tensor<1x256xf16>
}

// -----

// 2:4 sparse fp16 (Llama-3-8B o_proj) and an existing fused_matmul, which
// is left as it is.
#sp = #qf.enc<f16, sparse = 2:4>
!w = !qf.weight<4096x4096, #sp>
// CHECK-LABEL: @sparse_and_existing
func.func @sparse_and_existing(%x: tensor<4x4096xf16>) -> tensor<4x4096xf16> {
  // CHECK: %[[A:.*]] = qf.fused_matmul %{{.*}}, %[[W:.*]] : tensor<4x4096xf16>, !qf.weight<4096x4096, #f16_2of4>
  // CHECK: qf.fused_matmul %[[A]], %[[W]] {tiling = #qf.tiling<matvec, block_m = 4, block_n = 8>}
  %w = qf.weight_ref "model.layers.0.self_attn.o_proj" : !w
  %d = qf.dequantize %w : !w -> tensor<4096x4096xf16>
  %a = qf.matmul %x, %d : tensor<4x4096xf16>, tensor<4096x4096xf16> -> tensor<4x4096xf16>
  %b = qf.fused_matmul %a, %w {tiling = #qf.tiling<matvec, block_m = 4, block_n = 8>} : tensor<4x4096xf16>, !w -> tensor<4x4096xf16>
  return %b : tensor<4x4096xf16>
}
