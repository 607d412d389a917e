// RUN: qfuse-opt %s -split-input-file --qf-select-tiling="tuning-db=%S/Inputs/tuning-db.json" | FileCheck %s
// RUN: qfuse-opt %s -split-input-file --qf-select-tiling="tuning-db=%S/Inputs/tuning-db.json chip=sm_90a" | FileCheck %s --check-prefix=SM90A

// Tilings from the tuning database override the cost model for the shapes
// it lists: (M, N, K, encoding) must all match. The predicted time is the
// same roofline either way.

#int4 = #qf.enc<int4, group = 128, scale = f16>
!w = !qf.weight<4096x4096, #int4>
// CHECK-LABEL: @listed_shape
func.func @listed_shape(%x: tensor<1x4096xf16>) -> tensor<1x4096xf16> {
  %w = qf.weight_ref "model.layers.0.self_attn.q_proj" : !w
  // CHECK: {qf.predicted_us = 5.016000e+00 : f64, tiling = #qf.tiling<matvec, block_n = 4, split_k = 2>}
  %y = qf.fused_matmul %x, %w : tensor<1x4096xf16>, !w -> tensor<1x4096xf16>
  return %y : tensor<1x4096xf16>
}

// -----

// A dynamic M is looked up as `batch` (1).
#int4 = #qf.enc<int4, group = 128, scale = f16>
!w = !qf.weight<4096x4096, #int4>
// CHECK-LABEL: @dynamic_m
func.func @dynamic_m(%x: tensor<?x4096xf16>) -> tensor<?x4096xf16> {
  %w = qf.weight_ref "model.layers.0.self_attn.o_proj" : !w
  // CHECK: tiling = #qf.tiling<matvec, block_n = 4, split_k = 2>
  %y = qf.fused_matmul %x, %w : tensor<?x4096xf16>, !w -> tensor<?x4096xf16>
  return %y : tensor<?x4096xf16>
}

// -----

// Llama-3-8B k_proj at M = 8 and gate_proj at M = 64 (the entry's encoding
// is written without spaces; it parses to the same attribute). On sm_90a
// gate_proj's "chip": "sm_90a" entry (a wgmma tiling) wins; k_proj has
// none and keeps the entry for every target.
#int4 = #qf.enc<int4, group = 128, scale = f16>
// CHECK-LABEL: @batched
func.func @batched(%x8: tensor<8x4096xf16>, %x64: tensor<64x4096xf16>) {
  %k = qf.weight_ref "model.layers.0.self_attn.k_proj" : !qf.weight<1024x4096, #int4>
  %g = qf.weight_ref "model.layers.0.mlp.gate_proj" : !qf.weight<14336x4096, #int4>
  // CHECK: tiling = #qf.tiling<matvec, block_m = 8, block_n = 4, vec_bytes = 8, k_unroll = 2, split_k = 4>
  // SM90A: tiling = #qf.tiling<matvec, block_m = 8, block_n = 4, vec_bytes = 8, k_unroll = 2, split_k = 4>
  // SM90A: tiling = #qf.tiling<wgmma, block_m = 64, block_n = 128, block_k = 64, split_k = 2, stages = 4>
  %0 = qf.fused_matmul %x8, %k : tensor<8x4096xf16>, !qf.weight<1024x4096, #int4> -> tensor<8x1024xf16>
  // CHECK: tiling = #qf.tiling<mma, block_m = 64, block_n = 128, block_k = 64, stages = 4>
  %1 = qf.fused_matmul %x64, %g : tensor<64x4096xf16>, !qf.weight<14336x4096, #int4> -> tensor<64x14336xf16>
  return
}

// -----

// Not listed: another M, another encoding, another N. The model decides.
#int4 = #qf.enc<int4, group = 128, scale = f16>
#uint4 = #qf.enc<uint4, group = 128, scale = f16, zero = int>
// CHECK-LABEL: @unlisted
func.func @unlisted(%x1: tensor<1x4096xf16>, %x2: tensor<2x4096xf16>) {
  %a = qf.weight_ref "a" : !qf.weight<4096x4096, #int4>
  %b = qf.weight_ref "b" : !qf.weight<4096x4096, #uint4>
  %c = qf.weight_ref "c" : !qf.weight<1024x4096, #int4>
  // CHECK: tiling = #qf.tiling<matvec, block_m = 2, block_n = 8, k_unroll = 2>
  %0 = qf.fused_matmul %x2, %a : tensor<2x4096xf16>, !qf.weight<4096x4096, #int4> -> tensor<2x4096xf16>
  // CHECK: tiling = #qf.tiling<matvec, block_n = 8, k_unroll = 2>
  %1 = qf.fused_matmul %x1, %b : tensor<1x4096xf16>, !qf.weight<4096x4096, #uint4> -> tensor<1x4096xf16>
  // CHECK: tiling = #qf.tiling<matvec, block_n = 2, split_k = 4>
  %2 = qf.fused_matmul %x1, %c : tensor<1x4096xf16>, !qf.weight<1024x4096, #int4> -> tensor<1x1024xf16>
  return
}
