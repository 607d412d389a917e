// RUN: qfuse-opt %s -split-input-file --qf-select-tiling="batch=1 batch-sizes=1,2,4,8,16,32,128" | FileCheck %s
// RUN: qfuse-opt %s -split-input-file --qf-select-tiling="batch=1 batch-sizes=1,2" | FileCheck %s --check-prefix=SMALL
// RUN: qfuse-opt %s -split-input-file --qf-select-tiling="batch=1 batch-sizes=1,2,4,8" | FileCheck %s --check-prefix=CROSS
// RUN: qfuse-opt %s -split-input-file --qf-select-tiling="batch=128 batch-sizes=16,32,128" | FileCheck %s --check-prefix=LARGE

// A dynamic-M matmul compiled for batches on both sides of the matvec /
// tensor-core crossover (M = 3 for int4 codes on a weight this large,
// docs/defaults.md): `tiling` is the matvec chosen for the smallest batch,
// which batch 2 shares, and each batch from 4 up gets its own tensor-core
// tiling, chosen for that batch, in qf.batch_tilings: b4, b32 and b128 get
// different mma tiles (block_m follows M, split_k while the output tiles
// alone leave SMs idle). A list below the crossover has no entries; a list
// with no matvec batch plans
// `batch` (its largest) and gives the others their own tiles. (b32: the
// time model since its per-format decode terms, docs/cost-model.md, takes
// 64-row blocks in clusters of 2, measured 9.8 us against 9.4 for the
// 32-row split-8 tiles it took before; the sweep's best is 9.1.)
#int4 = #qf.enc<int4, group = 128, scale = f16>
// CHECK-LABEL: @q_proj
// CHECK: qf.fused_matmul
// CHECK-SAME: qf.batch_tilings = [#qf.batch_tiling<batch = 4, tiling = #qf.tiling<mma, block_m = 16, block_n = 32, block_k = 128, split_k = 8, stages = 3>>, #qf.batch_tiling<batch = 8, tiling = #qf.tiling<mma, block_m = 16, block_n = 32, block_k = 128, split_k = 8, stages = 3>>, #qf.batch_tiling<batch = 16, tiling = #qf.tiling<mma, block_m = 16, block_n = 32, block_k = 128, split_k = 8, stages = 3>>, #qf.batch_tiling<batch = 32, tiling = #qf.tiling<mma, block_m = 32, block_n = 64, block_k = 64, split_k = 4, stages = 4, cluster_k = 2>>, #qf.batch_tiling<batch = 128, tiling = #qf.tiling<mma, block_m = 128, block_n = 64, block_k = 64, split_k = 2, stages = 3, cluster_k = 2>>]
// CHECK-SAME: qf.predicted_us = 5.016000e+00 : f64, tiling = #qf.tiling<matvec, block_n = 8, k_unroll = 2>
// SMALL-LABEL: @q_proj
// SMALL-NOT: qf.batch_tilings
// SMALL: tiling = #qf.tiling<matvec, block_n = 8, k_unroll = 2>
// CROSS-LABEL: @q_proj
// CROSS: qf.batch_tilings = [#qf.batch_tiling<batch = 4, tiling = #qf.tiling<mma, block_m = 16, block_n = 32, block_k = 128, split_k = 8, stages = 3>>, #qf.batch_tiling<batch = 8, tiling = #qf.tiling<mma, block_m = 16, block_n = 32, block_k = 128, split_k = 8, stages = 3>>]
// CROSS-SAME: tiling = #qf.tiling<matvec, block_n = 8, k_unroll = 2>
// LARGE-LABEL: @q_proj
// LARGE: qf.batch_tilings = [#qf.batch_tiling<batch = 16, tiling = #qf.tiling<mma, block_m = 16, block_n = 32, block_k = 128, split_k = 8, stages = 3>>, #qf.batch_tiling<batch = 32, tiling = #qf.tiling<mma, block_m = 32, block_n = 64, block_k = 64, split_k = 4, stages = 4, cluster_k = 2>>]
// LARGE-SAME: tiling = #qf.tiling<mma, block_m = 128, block_n = 64, block_k = 64, split_k = 2, stages = 3, cluster_k = 2>
func.func @q_proj(%x: tensor<?x4096xf16>) -> tensor<?x4096xf16> {
  %w = qf.weight_ref "q_proj" : !qf.weight<4096x4096, #int4>
  %y = qf.fused_matmul %x, %w : tensor<?x4096xf16>, !qf.weight<4096x4096, #int4> -> tensor<?x4096xf16>
  return %y : tensor<?x4096xf16>
}

// -----

// A static M has one batch: its own tiling, no per-batch entries.
#int4 = #qf.enc<int4, group = 128, scale = f16>
// CHECK-LABEL: @static_m
// CHECK-NOT: qf.batch_tilings
// CHECK: tiling = #qf.tiling<matvec,
func.func @static_m(%x: tensor<1x4096xf16>) -> tensor<1x4096xf16> {
  %w = qf.weight_ref "q_proj" : !qf.weight<4096x4096, #int4>
  %y = qf.fused_matmul %x, %w : tensor<1x4096xf16>, !qf.weight<4096x4096, #int4> -> tensor<1x4096xf16>
  return %y : tensor<1x4096xf16>
}

// -----

// A tiling given in the input is kept, batch entries included.
#int4 = #qf.enc<int4, group = 128, scale = f16>
// CHECK-LABEL: @given
// CHECK-NOT: qf.batch_tilings
// CHECK: tiling = #qf.tiling<matvec, block_n = 8>
func.func @given(%x: tensor<?x4096xf16>) -> tensor<?x4096xf16> {
  %w = qf.weight_ref "q_proj" : !qf.weight<4096x4096, #int4>
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<matvec, block_n = 8>} : tensor<?x4096xf16>, !qf.weight<4096x4096, #int4> -> tensor<?x4096xf16>
  return %y : tensor<?x4096xf16>
}
