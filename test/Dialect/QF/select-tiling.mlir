// RUN: qfuse-opt %s -split-input-file --qf-select-tiling -verify-diagnostics | FileCheck %s
// RUN: qfuse-opt %s -split-input-file --qf-select-tiling="batch=2" -verify-diagnostics | FileCheck %s --check-prefix=BATCH2
// RUN: qfuse-opt %s -split-input-file --qf-select-tiling="batch=16" -verify-diagnostics | FileCheck %s --check-prefix=BATCH16
// RUN: qfuse-opt %s -split-input-file --qf-select-tiling="sm-count=64 bandwidth-gbps=2000" -verify-diagnostics | FileCheck %s --check-prefix=SMALL

// How to read the matvec choices (H200: sm-count = 132, so the warp target
// is 4 * 132 * 4 = 2112, reached at >= 1980): a block has 4 warps (8 at
// split_k = 8), a warp handles rows = block_n * split_k / warps rows, and
// the grid has ceil(N / block_n) * warps warps. A row of int4 codes is K / 2
// bytes; one warp iteration is 32 lanes * vec_bytes = 512 bytes.
// qf.predicted_us = bytes / 4300 GB/s + 3 us; e.g. Llama-3-8B q_proj at
// M = 1 moves 8388608 (codes) + 262144 (scales) + 8192 (x) + 8192 (y)
// bytes: 2.016 us + 3 us = 5.016 us.
//
// Qwen2.5-1.5B k_proj at M = 1 (N = 256, K = 1536): a 768-byte row cannot
// split (384 < 512), so 256 warps is the most there is. Llama-3-8B k_proj
// (N = 1024): split_k 2 gives 2048 warps. Down projections (K = 8960,
// 14336): rows of 4480 and 7168 bytes are longer than 4096, so split_k 2.
// At M = 8, 4 rows per warp reuse each activation load where the warp
// target allows it (gate: block_n 16 = 4 rows x 4 warps).

// Qwen2.5-1.5B at M = 1: q (and o), k (and v), gate (and up), down, lm_head.
#int4 = #qf.enc<int4, group = 128, scale = f16>
// CHECK-LABEL: @qwen_m1
func.func @qwen_m1(%h: tensor<1x1536xf16>, %i: tensor<1x8960xf16>) {
  %w_q_proj = qf.weight_ref "q_proj" : !qf.weight<1536x1536, #int4>
  // CHECK: {qf.predicted_us = 3.284000e+00 : f64, tiling = #qf.tiling<matvec, block_n = 2, split_k = 4>} : tensor<1x{{[0-9]+}}xf16>, !qf.weight<1536x1536,
  %y_q_proj = qf.fused_matmul %h, %w_q_proj : tensor<1x1536xf16>, !qf.weight<1536x1536, #int4> -> tensor<1x1536xf16>
  %w_k_proj = qf.weight_ref "k_proj" : !qf.weight<256x1536, #int4>
  // CHECK: {qf.predicted_us = 3.048000e+00 : f64, tiling = #qf.tiling<matvec, block_n = 2, split_k = 4>} : tensor<1x{{[0-9]+}}xf16>, !qf.weight<256x1536,
  %y_k_proj = qf.fused_matmul %h, %w_k_proj : tensor<1x1536xf16>, !qf.weight<256x1536, #int4> -> tensor<1x256xf16>
  %w_gate_proj = qf.weight_ref "gate_proj" : !qf.weight<8960x1536, #int4>
  // CHECK: {qf.predicted_us = 4.655000e+00 : f64, tiling = #qf.tiling<matvec, block_n = 16>} : tensor<1x{{[0-9]+}}xf16>, !qf.weight<8960x1536,
  %y_gate_proj = qf.fused_matmul %h, %w_gate_proj : tensor<1x1536xf16>, !qf.weight<8960x1536, #int4> -> tensor<1x8960xf16>
  %w_down_proj = qf.weight_ref "down_proj" : !qf.weight<1536x8960, #int4>
  // CHECK: {qf.predicted_us = 4.655000e+00 : f64, tiling = #qf.tiling<matvec, block_n = 2, k_unroll = 2, split_k = 4>} : tensor<1x{{[0-9]+}}xf16>, !qf.weight<1536x8960,
  %y_down_proj = qf.fused_matmul %i, %w_down_proj : tensor<1x8960xf16>, !qf.weight<1536x8960, #int4> -> tensor<1x1536xf16>
  %w_lm_head = qf.weight_ref "lm_head" : !qf.weight<151936x1536, #int4>
  // CHECK: {qf.predicted_us = 3.105600e+01 : f64, tiling = #qf.tiling<matvec, block_n = 16>} : tensor<1x{{[0-9]+}}xf16>, !qf.weight<151936x1536,
  %y_lm_head = qf.fused_matmul %h, %w_lm_head : tensor<1x1536xf16>, !qf.weight<151936x1536, #int4> -> tensor<1x151936xf16>
  return
}

// -----

// Qwen2.5-1.5B at M = 8: q (and o), k (and v), gate (and up), down, lm_head.
#int4 = #qf.enc<int4, group = 128, scale = f16>
// CHECK-LABEL: @qwen_m8
func.func @qwen_m8(%h: tensor<8x1536xf16>, %i: tensor<8x8960xf16>) {
  %w_q_proj = qf.weight_ref "q_proj" : !qf.weight<1536x1536, #int4>
  // CHECK: {qf.predicted_us = 3.294000e+00 : f64, tiling = #qf.tiling<mma, block_m = 16, block_n = 32, block_k = 64, split_k = 8, stages = 3>} : tensor<8x{{[0-9]+}}xf16>, !qf.weight<1536x1536,
  %y_q_proj = qf.fused_matmul %h, %w_q_proj : tensor<8x1536xf16>, !qf.weight<1536x1536, #int4> -> tensor<8x1536xf16>
  %w_k_proj = qf.weight_ref "k_proj" : !qf.weight<256x1536, #int4>
  // CHECK: {qf.predicted_us = 3.054000e+00 : f64, tiling = #qf.tiling<mma, block_m = 16, block_n = 32, block_k = 64, split_k = 8, stages = 3>} : tensor<8x{{[0-9]+}}xf16>, !qf.weight<256x1536,
  %y_k_proj = qf.fused_matmul %h, %w_k_proj : tensor<8x1536xf16>, !qf.weight<256x1536, #int4> -> tensor<8x256xf16>
  %w_gate_proj = qf.weight_ref "gate_proj" : !qf.weight<8960x1536, #int4>
  // CHECK: {qf.predicted_us = 4.689000e+00 : f64, tiling = #qf.tiling<mma, block_m = 16, block_n = 32, block_k = 64, split_k = 4, stages = 3>} : tensor<8x{{[0-9]+}}xf16>, !qf.weight<8960x1536,
  %y_gate_proj = qf.fused_matmul %h, %w_gate_proj : tensor<8x1536xf16>, !qf.weight<8960x1536, #int4> -> tensor<8x8960xf16>
  %w_down_proj = qf.weight_ref "down_proj" : !qf.weight<1536x8960, #int4>
  // CHECK: {qf.predicted_us = 4.689000e+00 : f64, tiling = #qf.tiling<mma, block_m = 16, block_n = 64, block_k = 128, split_k = 4, stages = 3, cluster_k = 4>} : tensor<8x{{[0-9]+}}xf16>, !qf.weight<1536x8960,
  %y_down_proj = qf.fused_matmul %i, %w_down_proj : tensor<8x8960xf16>, !qf.weight<1536x8960, #int4> -> tensor<8x1536xf16>
  %w_lm_head = qf.weight_ref "lm_head" : !qf.weight<151936x1536, #int4>
  // CHECK: {qf.predicted_us = 3.155600e+01 : f64, tiling = #qf.tiling<mma, block_m = 16, block_n = 128, block_k = 64, stages = 3>} : tensor<8x{{[0-9]+}}xf16>, !qf.weight<151936x1536,
  %y_lm_head = qf.fused_matmul %h, %w_lm_head : tensor<8x1536xf16>, !qf.weight<151936x1536, #int4> -> tensor<8x151936xf16>
  return
}

// -----

// Qwen2.5-1.5B at M = 64: q (and o), k (and v), gate (and up), down, lm_head.
// The narrow k takes 32-row blocks: two decode each weight tile, but its
// few output tiles leave SMs idle with one.
#int4 = #qf.enc<int4, group = 128, scale = f16>
// CHECK-LABEL: @qwen_m64
func.func @qwen_m64(%h: tensor<64x1536xf16>, %i: tensor<64x8960xf16>) {
  %w_q_proj = qf.weight_ref "q_proj" : !qf.weight<1536x1536, #int4>
  // CHECK: {qf.predicted_us = 3.374000e+00 : f64, tiling = #qf.tiling<mma, block_m = 64, block_n = 32, block_k = 64, split_k = 4, stages = 3, cluster_k = 2>} : tensor<64x{{[0-9]+}}xf16>, !qf.weight<1536x1536,
  %y_q_proj = qf.fused_matmul %h, %w_q_proj : tensor<64x1536xf16>, !qf.weight<1536x1536, #int4> -> tensor<64x1536xf16>
  %w_k_proj = qf.weight_ref "k_proj" : !qf.weight<256x1536, #int4>
  // CHECK: {qf.predicted_us = 3.100000e+00 : f64, tiling = #qf.tiling<mma, block_m = 32, block_n = 32, block_k = 64, split_k = 4, stages = 3, cluster_k = 2>} : tensor<64x{{[0-9]+}}xf16>, !qf.weight<256x1536,
  %y_k_proj = qf.fused_matmul %h, %w_k_proj : tensor<64x1536xf16>, !qf.weight<256x1536, #int4> -> tensor<64x256xf16>
  %w_gate_proj = qf.weight_ref "gate_proj" : !qf.weight<8960x1536, #int4>
  // CHECK: {qf.predicted_us = 4.963000e+00 : f64, tiling = #qf.tiling<mma, block_m = 64, block_n = 64, block_k = 64, stages = 3, cluster_k = 2>} : tensor<64x{{[0-9]+}}xf16>, !qf.weight<8960x1536,
  %y_gate_proj = qf.fused_matmul %h, %w_gate_proj : tensor<64x1536xf16>, !qf.weight<8960x1536, #int4> -> tensor<64x8960xf16>
  %w_down_proj = qf.weight_ref "down_proj" : !qf.weight<1536x8960, #int4>
  // CHECK: {qf.predicted_us = 4.963000e+00 : f64, tiling = #qf.tiling<mma, block_m = 64, block_n = 32, block_k = 64, split_k = 4, stages = 3, cluster_k = 2>} : tensor<64x{{[0-9]+}}xf16>, !qf.weight<1536x8960,
  %y_down_proj = qf.fused_matmul %i, %w_down_proj : tensor<64x8960xf16>, !qf.weight<1536x8960, #int4> -> tensor<64x1536xf16>
  %w_lm_head = qf.weight_ref "lm_head" : !qf.weight<151936x1536, #int4>
  // CHECK: {qf.predicted_us = 3.555300e+01 : f64, tiling = #qf.tiling<mma, block_m = 64, block_n = 128, block_k = 64, stages = 3>} : tensor<64x{{[0-9]+}}xf16>, !qf.weight<151936x1536,
  %y_lm_head = qf.fused_matmul %h, %w_lm_head : tensor<64x1536xf16>, !qf.weight<151936x1536, #int4> -> tensor<64x151936xf16>
  return
}

// -----

// Llama-3-8B at M = 1: q (and o), k (and v), gate (and up), down, lm_head.
#int4 = #qf.enc<int4, group = 128, scale = f16>
// CHECK-LABEL: @llama_m1
// SMALL-LABEL: @llama_m1
func.func @llama_m1(%h: tensor<1x4096xf16>, %i: tensor<1x14336xf16>) {
  %w_q_proj = qf.weight_ref "q_proj" : !qf.weight<4096x4096, #int4>
  // CHECK: {qf.predicted_us = 5.016000e+00 : f64, tiling = #qf.tiling<matvec, block_n = 8, k_unroll = 2>} : tensor<1x{{[0-9]+}}xf16>, !qf.weight<4096x4096,
  %y_q_proj = qf.fused_matmul %h, %w_q_proj : tensor<1x4096xf16>, !qf.weight<4096x4096, #int4> -> tensor<1x4096xf16>
  %w_k_proj = qf.weight_ref "k_proj" : !qf.weight<1024x4096, #int4>
  // CHECK: {qf.predicted_us = 3.505000e+00 : f64, tiling = #qf.tiling<matvec, block_n = 2, split_k = 4>} : tensor<1x{{[0-9]+}}xf16>, !qf.weight<1024x4096,
  // A 64-SM GPU at 2 TB/s needs only 1024 warps: a 2-way split suffices.
  // SMALL: qf.predicted_us = 4.086000e+00 : f64, tiling = #qf.tiling<matvec, block_n = 4, k_unroll = 2, split_k = 2>} : {{.*}}<1024x4096,
  %y_k_proj = qf.fused_matmul %h, %w_k_proj : tensor<1x4096xf16>, !qf.weight<1024x4096, #int4> -> tensor<1x1024xf16>
  %w_gate_proj = qf.weight_ref "gate_proj" : !qf.weight<14336x4096, #int4>
  // CHECK: {qf.predicted_us = 1.005000e+01 : f64, tiling = #qf.tiling<matvec, block_n = 16>} : tensor<1x{{[0-9]+}}xf16>, !qf.weight<14336x4096,
  %y_gate_proj = qf.fused_matmul %h, %w_gate_proj : tensor<1x4096xf16>, !qf.weight<14336x4096, #int4> -> tensor<1x14336xf16>
  %w_down_proj = qf.weight_ref "down_proj" : !qf.weight<4096x14336, #int4>
  // CHECK: {qf.predicted_us = 1.005000e+01 : f64, tiling = #qf.tiling<matvec, block_n = 8, k_unroll = 2>} : tensor<1x{{[0-9]+}}xf16>, !qf.weight<4096x14336,
  %y_down_proj = qf.fused_matmul %i, %w_down_proj : tensor<1x14336xf16>, !qf.weight<4096x14336, #int4> -> tensor<1x4096xf16>
  %w_lm_head = qf.weight_ref "lm_head" : !qf.weight<128256x4096, #int4>
  // CHECK: {qf.predicted_us = 6.605600e+01 : f64, tiling = #qf.tiling<matvec, block_n = 16>} : tensor<1x{{[0-9]+}}xf16>, !qf.weight<128256x4096,
  %y_lm_head = qf.fused_matmul %h, %w_lm_head : tensor<1x4096xf16>, !qf.weight<128256x4096, #int4> -> tensor<1x128256xf16>
  return
}

// -----

// Llama-3-8B at M = 8: q (and o), k (and v), gate (and up), down, lm_head.
#int4 = #qf.enc<int4, group = 128, scale = f16>
// CHECK-LABEL: @llama_m8
func.func @llama_m8(%h: tensor<8x4096xf16>, %i: tensor<8x14336xf16>) {
  %w_q_proj = qf.weight_ref "q_proj" : !qf.weight<4096x4096, #int4>
  // CHECK: {qf.predicted_us = 5.042000e+00 : f64, tiling = #qf.tiling<mma, block_m = 16, block_n = 32, block_k = 128, split_k = 8, stages = 3>} : tensor<8x{{[0-9]+}}xf16>, !qf.weight<4096x4096,
  %y_q_proj = qf.fused_matmul %h, %w_q_proj : tensor<8x4096xf16>, !qf.weight<4096x4096, #int4> -> tensor<8x4096xf16>
  %w_k_proj = qf.weight_ref "k_proj" : !qf.weight<1024x4096, #int4>
  // CHECK: {qf.predicted_us = 3.522000e+00 : f64, tiling = #qf.tiling<mma, block_m = 16, block_n = 64, block_k = 128, split_k = 4, stages = 3, cluster_k = 4>} : tensor<8x{{[0-9]+}}xf16>, !qf.weight<1024x4096,
  %y_k_proj = qf.fused_matmul %h, %w_k_proj : tensor<8x4096xf16>, !qf.weight<1024x4096, #int4> -> tensor<8x1024xf16>
  %w_gate_proj = qf.weight_ref "gate_proj" : !qf.weight<14336x4096, #int4>
  // CHECK: {qf.predicted_us = 1.011000e+01 : f64, tiling = #qf.tiling<mma, block_m = 16, block_n = 128, block_k = 128, split_k = 2, stages = 3>} : tensor<8x{{[0-9]+}}xf16>, !qf.weight<14336x4096,
  %y_gate_proj = qf.fused_matmul %h, %w_gate_proj : tensor<8x4096xf16>, !qf.weight<14336x4096, #int4> -> tensor<8x14336xf16>
  %w_down_proj = qf.weight_ref "down_proj" : !qf.weight<4096x14336, #int4>
  // CHECK: {qf.predicted_us = 1.011000e+01 : f64, tiling = #qf.tiling<mma, block_m = 16, block_n = 32, block_k = 128, split_k = 8, stages = 3>} : tensor<8x{{[0-9]+}}xf16>, !qf.weight<4096x14336,
  %y_down_proj = qf.fused_matmul %i, %w_down_proj : tensor<8x14336xf16>, !qf.weight<4096x14336, #int4> -> tensor<8x4096xf16>
  %w_lm_head = qf.weight_ref "lm_head" : !qf.weight<128256x4096, #int4>
  // CHECK: {qf.predicted_us = 6.648700e+01 : f64, tiling = #qf.tiling<mma, block_m = 16, block_n = 128, block_k = 64, split_k = 2, stages = 3>} : tensor<8x{{[0-9]+}}xf16>, !qf.weight<128256x4096,
  %y_lm_head = qf.fused_matmul %h, %w_lm_head : tensor<8x4096xf16>, !qf.weight<128256x4096, #int4> -> tensor<8x128256xf16>
  return
}

// -----

// Llama-3-8B at M = 64: q (and o), k (and v), gate (and up), down, lm_head.
#int4 = #qf.enc<int4, group = 128, scale = f16>
// CHECK-LABEL: @llama_m64
func.func @llama_m64(%h: tensor<64x4096xf16>, %i: tensor<64x14336xf16>) {
  %w_q_proj = qf.weight_ref "q_proj" : !qf.weight<4096x4096, #int4>
  // CHECK: {qf.predicted_us = 5.256000e+00 : f64, tiling = #qf.tiling<mma, block_m = 64, block_n = 64, block_k = 64, split_k = 2, stages = 3, cluster_k = 2>} : tensor<64x{{[0-9]+}}xf16>, !qf.weight<4096x4096,
  %y_q_proj = qf.fused_matmul %h, %w_q_proj : tensor<64x4096xf16>, !qf.weight<4096x4096, #int4> -> tensor<64x4096xf16>
  %w_k_proj = qf.weight_ref "k_proj" : !qf.weight<1024x4096, #int4>
  // CHECK: {qf.predicted_us = 3.655000e+00 : f64, tiling = #qf.tiling<mma, block_m = 32, block_n = 32, block_k = 64, split_k = 4, stages = 3, cluster_k = 2>} : tensor<64x{{[0-9]+}}xf16>, !qf.weight<1024x4096,
  %y_k_proj = qf.fused_matmul %h, %w_k_proj : tensor<64x4096xf16>, !qf.weight<1024x4096, #int4> -> tensor<64x1024xf16>
  %w_gate_proj = qf.weight_ref "gate_proj" : !qf.weight<14336x4096, #int4>
  // CHECK: {qf.predicted_us = 1.059000e+01 : f64, tiling = #qf.tiling<mma, block_m = 64, block_n = 64, block_k = 64, split_k = 2, stages = 3>} : tensor<64x{{[0-9]+}}xf16>, !qf.weight<14336x4096,
  %y_gate_proj = qf.fused_matmul %h, %w_gate_proj : tensor<64x4096xf16>, !qf.weight<14336x4096, #int4> -> tensor<64x14336xf16>
  %w_down_proj = qf.weight_ref "down_proj" : !qf.weight<4096x14336, #int4>
  // CHECK: {qf.predicted_us = 1.059000e+01 : f64, tiling = #qf.tiling<mma, block_m = 64, block_n = 64, block_k = 64, split_k = 2, stages = 3, cluster_k = 2>} : tensor<64x{{[0-9]+}}xf16>, !qf.weight<4096x14336,
  %y_down_proj = qf.fused_matmul %i, %w_down_proj : tensor<64x14336xf16>, !qf.weight<4096x14336, #int4> -> tensor<64x4096xf16>
  %w_lm_head = qf.weight_ref "lm_head" : !qf.weight<128256x4096, #int4>
  // CHECK: {qf.predicted_us = 6.993400e+01 : f64, tiling = #qf.tiling<mma, block_m = 64, block_n = 128, block_k = 64, stages = 3>} : tensor<64x{{[0-9]+}}xf16>, !qf.weight<128256x4096,
  %y_lm_head = qf.fused_matmul %h, %w_lm_head : tensor<64x4096xf16>, !qf.weight<128256x4096, #int4> -> tensor<64x128256xf16>
  return
}

// -----

// Small N and long K (N = 256, K = 8960): split_k 8 gives 256 * 8 = 2048
// warps, each slice 8960 / 2 / 8 = 560 bytes >= one warp iteration (512).
#int4 = #qf.enc<int4, group = 128, scale = f16>
!w = !qf.weight<256x8960, #int4>
// CHECK-LABEL: @small_n_long_k
func.func @small_n_long_k(%x1: tensor<1x8960xf16>, %x8: tensor<8x8960xf16>) {
  %w = qf.weight_ref "w" : !w
  // CHECK: tiling = #qf.tiling<matvec, block_n = 2, k_unroll = 2, split_k = 4>
  %0 = qf.fused_matmul %x1, %w : tensor<1x8960xf16>, !w -> tensor<1x256xf16>
  // CHECK: tiling = #qf.tiling<mma, block_m = 16, block_n = 64, block_k = 128, split_k = 4, stages = 3, cluster_k = 4>
  %1 = qf.fused_matmul %x8, %w : tensor<8x8960xf16>, !w -> tensor<8x256xf16>
  return
}

// -----

// N not a multiple of the block: the last block has fewer rows (the
// matvec), or padding rows past N that are not stored (the tensor-core
// kernel, whose blocks count whole 32-row tiles: 1000 -> 1024).
#int4 = #qf.enc<int4, group = 128, scale = f16>
// CHECK-LABEL: @n_not_multiple
func.func @n_not_multiple(%x1: tensor<1x4096xf16>, %x8: tensor<8x4096xf16>, %x64: tensor<64x4096xf16>) {
  %w = qf.weight_ref "w" : !qf.weight<1000x4096, #int4>
  %v = qf.weight_ref "v" : !qf.weight<1001x4096, #int4>
  // CHECK: {qf.predicted_us = 3.494000e+00 : f64, tiling = #qf.tiling<matvec, block_n = 2, split_k = 4>} : {{.*}}<1000x4096
  %0 = qf.fused_matmul %x1, %w : tensor<1x4096xf16>, !qf.weight<1000x4096, #int4> -> tensor<1x1000xf16>
  // CHECK: {qf.predicted_us = 3.510000e+00 : f64, tiling = #qf.tiling<mma, block_m = 16, block_n = 64, block_k = 128, split_k = 4, stages = 3, cluster_k = 4>} : {{.*}}<1000x4096
  %1 = qf.fused_matmul %x8, %w : tensor<8x4096xf16>, !qf.weight<1000x4096, #int4> -> tensor<8x1000xf16>
  // M = 64: 32 blocks of 32 padded rows, each a cluster of 2 along K, for
  // each half of the batch (block_m 32: twice the warps of one 64-row block).
  // CHECK: {qf.predicted_us = 3.643000e+00 : f64, tiling = #qf.tiling<mma, block_m = 32, block_n = 32, block_k = 64, split_k = 4, stages = 3, cluster_k = 2>} : {{.*}}<1000x4096
  %2 = qf.fused_matmul %x64, %w : tensor<64x4096xf16>, !qf.weight<1000x4096, #int4> -> tensor<64x1000xf16>
  // N = 1001 with block_n = 2: 501 blocks, the last with one row.
  // CHECK: {qf.predicted_us = 3.494000e+00 : f64, tiling = #qf.tiling<matvec, block_n = 2, split_k = 4>} : {{.*}}<1001x4096
  %3 = qf.fused_matmul %x1, %v : tensor<1x4096xf16>, !qf.weight<1001x4096, #int4> -> tensor<1x1001xf16>
  // M = 8: the tensor-core kernel, which pads N = 1001 to 1024 rows.
  // CHECK: {qf.predicted_us = 3.511000e+00 : f64, tiling = #qf.tiling<mma, block_m = 16, block_n = 64, block_k = 128, split_k = 4, stages = 3, cluster_k = 4>} : {{.*}}<1001x4096
  %4 = qf.fused_matmul %x8, %v : tensor<8x4096xf16>, !qf.weight<1001x4096, #int4> -> tensor<8x1001xf16>
  return
}

// -----

// K that is not a multiple of 16 bytes of codes.
#int4pc = #qf.enc<int4, per_channel, scale = f16>
#int8pc = #qf.enc<int8, per_channel, scale = f16>
// CHECK-LABEL: @odd_k
func.func @odd_k(%a: tensor<1x4104xf16>, %b: tensor<1x4095xf16>, %c: tensor<1x4100xf16>, %d: tensor<1x64xf16>, %e: tensor<8x4095xf16>) {
  %wa = qf.weight_ref "a" : !qf.weight<4096x4104, #int4pc>
  // K = 4104: a 2052-byte row takes 4-byte loads (17 iterations a lane).
  // CHECK: {qf.predicted_us = 4.960000e+00 : f64, tiling = #qf.tiling<matvec, block_n = 8, vec_bytes = 4, k_unroll = 2>} : {{.*}}<4096x4104
  %0 = qf.fused_matmul %a, %wa : tensor<1x4104xf16>, !qf.weight<4096x4104, #int4pc> -> tensor<1x4096xf16>
  %wb = qf.weight_ref "b" : !qf.weight<4096x4095, #int8pc>
  // K = 4095 (int8): no load width divides the row, and the tensor-core
  // kernel needs K % 8 == 0: the dequantize + cuBLAS fallback takes it.
  // CHECK: {qf.predicted_us = 6.906000e+00 : f64, tiling = #qf.tiling<dequant_gemm>} : {{.*}}<4096x4095
  // expected-remark@+2 {{M = 1 would use the matvec kernel, but a weight row of 4095 packed bytes is not a multiple of 4; using #qf.tiling<dequant_gemm>}}
  // expected-remark@+1 {{M = 1 runs the dequantize + cuBLAS fallback (no vec_bytes of 16, 8, 4 divides a row of 4095 packed bytes; dequant_gemm: the tensor-core kernel cannot take it (K = 4095 is not a multiple of 8 (activation rows move in 16-byte copies)))}}
  %1 = qf.fused_matmul %b, %wb : tensor<1x4095xf16>, !qf.weight<4096x4095, #int8pc> -> tensor<1x4096xf16>
  %wc = qf.weight_ref "c" : !qf.weight<4096x4100, #int4pc>
  // K = 4100 (int4): a 2050-byte row, the same.
  // CHECK: {qf.predicted_us = 4.958000e+00 : f64, tiling = #qf.tiling<dequant_gemm>} : {{.*}}<4096x4100
  // expected-remark@+2 {{a weight row of 2050 packed bytes is not a multiple of 4}}
  // expected-remark@+1 {{M = 1 runs the dequantize + cuBLAS fallback}}
  %2 = qf.fused_matmul %c, %wc : tensor<1x4100xf16>, !qf.weight<4096x4100, #int4pc> -> tensor<1x4096xf16>
  %wd = qf.weight_ref "d" : !qf.weight<4096x64, #int4pc>
  // K = 64: a 32-byte row, shorter than one warp iteration; no split.
  // CHECK: {qf.predicted_us = 3.034000e+00 : f64, tiling = #qf.tiling<matvec, block_n = 8>} : {{.*}}<4096x64
  %3 = qf.fused_matmul %d, %wd : tensor<1x64xf16>, !qf.weight<4096x64, #int4pc> -> tensor<1x4096xf16>
  // CHECK: {qf.predicted_us = 6.933000e+00 : f64, tiling = #qf.tiling<dequant_gemm>} : {{.*}}<4096x4095
  // expected-remark@+2 {{M = 8 would use the matvec kernel, but a weight row of 4095 packed bytes}}
  // expected-remark@+1 {{M = 8 runs the dequantize + cuBLAS fallback}}
  %4 = qf.fused_matmul %e, %wb : tensor<8x4095xf16>, !qf.weight<4096x4095, #int8pc> -> tensor<8x4096xf16>
  return
}

// -----

#int4 = #qf.enc<int4, group = 128, scale = f16>
!w = !qf.weight<4096x4096, #int4>
// A dynamic M is planned for the `batch` option (default 1).
// CHECK-LABEL: @dynamic_m
// BATCH2-LABEL: @dynamic_m
// BATCH16-LABEL: @dynamic_m
func.func @dynamic_m(%x: tensor<?x4096xf16>) {
  %w = qf.weight_ref "w" : !w
  // CHECK: {qf.predicted_us = 5.016000e+00 : f64, tiling = #qf.tiling<matvec, block_n = 8, k_unroll = 2>}
  // BATCH2: {qf.predicted_us = 5.019000e+00 : f64, tiling = #qf.tiling<matvec, block_m = 2, block_n = 8, k_unroll = 2>}
  // BATCH16: {qf.predicted_us = 5.073000e+00 : f64, tiling = #qf.tiling<mma, block_m = 16, block_n = 32, block_k = 128, split_k = 8, stages = 3>}
  %0 = qf.fused_matmul %x, %w : tensor<?x4096xf16>, !w -> tensor<?x4096xf16>
  return
}

// -----

// Other encodings at M = 1: the row bytes follow the stored codes (K / 2
// under 2:4), and the predicted time counts scales, 2:4 metadata, tables
// and the fused norm, residual and silu_mul's two weights.
#sp = #qf.enc<f16, sparse = 2:4>
#sp4 = #qf.enc<int4, group = 128, scale = f16, sparse = 2:4>
#nf4 = #qf.enc<nf4, group = 64, scale = f32>
#int8pc = #qf.enc<int8, per_channel, scale = f16>
#cb3 = #qf.enc<codebook, bits = 3, table = "lut" : f16, group = 128, scale = f16>
// CHECK-LABEL: @encodings
func.func @encodings(%x: tensor<1x4096xf16>, %g: tensor<4096xf16>, %r: tensor<1x14336xf16>) {
  %w0 = qf.weight_ref "sp" : !qf.weight<4096x4096, #sp>
  // 2:4 fp16: 2048 kept halves = 4096 bytes a row; 16 MiB codes + 2 MiB positions.
  // CHECK: {qf.predicted_us = 7.393000e+00 : f64, tiling = #qf.tiling<matvec, block_n = 8, k_unroll = 2>}
  %0 = qf.fused_matmul %x, %w0 : tensor<1x4096xf16>, !qf.weight<4096x4096, #sp> -> tensor<1x4096xf16>
  %w1 = qf.weight_ref "sp4" : !qf.weight<4096x4096, #sp4>
  // CHECK: {qf.predicted_us = 4.528000e+00 : f64, tiling = #qf.tiling<matvec, block_n = 8, split_k = 2>}
  %1 = qf.fused_matmul %x, %w1 : tensor<1x4096xf16>, !qf.weight<4096x4096, #sp4> -> tensor<1x4096xf16>
  %w2 = qf.weight_ref "gate" : !qf.weight<14336x4096, #nf4>
  %w2u = qf.weight_ref "up" : !qf.weight<14336x4096, #nf4>
  // Gated: tiled as one weight of 2N rows (block_n counts gate and up rows).
  // CHECK: {activation = #qf<activation silu_mul>, norm_eps = {{.*}}, qf.predicted_us = 1.838000e+01 : f64, tiling = #qf.tiling<matvec, block_n = 16>}
  %2 = qf.fused_matmul %x, %w2 up(%w2u : !qf.weight<14336x4096, #nf4>) norm(%g : tensor<4096xf16>) residual(%r : tensor<1x14336xf16>) {norm_eps = 1.0e-05 : f32, activation = #qf<activation silu_mul>} : tensor<1x4096xf16>, !qf.weight<14336x4096, #nf4> -> tensor<1x14336xf16>
  %w3 = qf.weight_ref "int8" : !qf.weight<4096x4096, #int8pc>
  // CHECK: {qf.predicted_us = 6.907000e+00 : f64, tiling = #qf.tiling<matvec, block_n = 8, k_unroll = 2>}
  %3 = qf.fused_matmul %x, %w3 : tensor<1x4096xf16>, !qf.weight<4096x4096, #int8pc> -> tensor<1x4096xf16>
  %w4 = qf.weight_ref "cb3" : !qf.weight<4096x4096, #cb3>
  // 3-bit codebook: 1536-byte rows, 3 iterations a lane.
  // CHECK: {qf.predicted_us = 4.528000e+00 : f64, tiling = #qf.tiling<matvec, block_n = 8, k_unroll = 2>}
  %4 = qf.fused_matmul %x, %w4 : tensor<1x4096xf16>, !qf.weight<4096x4096, #cb3> -> tensor<1x4096xf16>
  return
}

// -----

#int4 = #qf.enc<int4, group = 128, scale = f16>
!w = !qf.weight<4096x4096, #int4>
// A tiling already there is kept, and nothing is predicted for it.
// CHECK-LABEL: @existing_tiling_kept
func.func @existing_tiling_kept(%x: tensor<1x4096xf16>) {
  %w = qf.weight_ref "w" : !w
  // CHECK: qf.fused_matmul %{{.*}}, %{{.*}} {tiling = #qf.tiling<matvec, block_n = 8, split_k = 2>} :
  %0 = qf.fused_matmul %x, %w {tiling = #qf.tiling<matvec, block_n = 8, split_k = 2>} : tensor<1x4096xf16>, !w -> tensor<1x4096xf16>
  return
}
