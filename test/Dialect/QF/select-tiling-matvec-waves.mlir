// RUN: qfuse-opt %s -split-input-file --qf-select-tiling | FileCheck %s

// At M <= 2 a matvec of 4-bit codes at 2 rows a warp whose grid its
// resident blocks (MatVecOccupancy.h) hold only in two waves takes 4 rows a
// warp with the same split, where one wave holds that grid
// (MatvecSelection.cpp; docs/defaults.md, "Matvec waves"). On 132 SMs:
// 3584 rows at 2 a warp with K split in 2 make 896 blocks of 4 warps, where
// 6 (M = 1) or 5 (M = 2) blocks an SM reside; at 4 a warp, 448 blocks fit
// in one wave. 4096 rows at 2 a warp, K unsplit, make 512 blocks: one wave
// already. int8 keeps 2 rows (not measured faster), and so does M = 4.
#int4 = #qf.enc<int4, group = 128, scale = f16>
#nf4 = #qf.enc<nf4, group = 64, scale = f32>
#int8 = #qf.enc<int8, per_channel, scale = f16>
// CHECK-LABEL: @waves
func.func @waves(%x1: tensor<1x3584xf16>, %x2: tensor<2x3584xf16>,
                 %y2: tensor<2x4096xf16>, %z2: tensor<2x3584xf16>,
                 %n2: tensor<2x3584xf16>, %x4: tensor<4x3584xf16>) {
  %w = qf.weight_ref "w" : !qf.weight<3584x3584, #int4>
  %big = qf.weight_ref "big" : !qf.weight<4096x4096, #int4>
  %w8 = qf.weight_ref "w8" : !qf.weight<3584x3584, #int8>
  %wn = qf.weight_ref "wn" : !qf.weight<3584x3584, #nf4>
  // CHECK: tiling = #qf.tiling<matvec, block_n = 8, split_k = 2>} : tensor<1x3584xf16>
  %0 = qf.fused_matmul %x1, %w : tensor<1x3584xf16>, !qf.weight<3584x3584, #int4> -> tensor<1x3584xf16>
  // CHECK: tiling = #qf.tiling<matvec, block_m = 2, block_n = 8, split_k = 2>} : tensor<2x3584xf16>
  %1 = qf.fused_matmul %x2, %w : tensor<2x3584xf16>, !qf.weight<3584x3584, #int4> -> tensor<2x3584xf16>
  // CHECK: tiling = #qf.tiling<matvec, block_m = 2, block_n = 8, k_unroll = 2>} : tensor<2x4096xf16>
  %2 = qf.fused_matmul %y2, %big : tensor<2x4096xf16>, !qf.weight<4096x4096, #int4> -> tensor<2x4096xf16>
  // CHECK: tiling = #qf.tiling<matvec, block_m = 2, block_n = 4, k_unroll = 2, split_k = 2>} : tensor<2x3584xf16>, !qf.weight<3584x3584, #int8
  %3 = qf.fused_matmul %z2, %w8 : tensor<2x3584xf16>, !qf.weight<3584x3584, #int8> -> tensor<2x3584xf16>
  // CHECK: tiling = #qf.tiling<matvec, block_m = 2, block_n = 8, split_k = 2>} : tensor<2x3584xf16>, !qf.weight<3584x3584, #nf4
  %4 = qf.fused_matmul %n2, %wn : tensor<2x3584xf16>, !qf.weight<3584x3584, #nf4> -> tensor<2x3584xf16>
  return
}

// -----

// A qf.group runs as one launch, of its first member's tiling, over every
// member's rows, and each member weighs that launch: 3072 + 1024 x 2 rows
// make 1280 blocks at 2 a warp, K split in 2 (two waves), 640 at 4 (one
// wave of 5 blocks an SM at M = 1), so q takes 4 rows (k and v, split 4
// ways on their own, keep theirs). 3072 x 3 rows stay at 2 a warp: 1152
// blocks at 4 rows overflow one wave too.
#g = #qf.enc<int4, group = 128, scale = f16>
// CHECK-LABEL: @group
func.func @group(%x: tensor<1x3072xf16>, %y: tensor<1x3072xf16>) {
  %q = qf.weight_ref "q" : !qf.weight<3072x3072, #g>
  %k = qf.weight_ref "k" : !qf.weight<1024x3072, #g>
  %v = qf.weight_ref "v" : !qf.weight<1024x3072, #g>
  // CHECK: tiling = #qf.tiling<matvec, block_n = 8, split_k = 2>}
  // CHECK-COUNT-2: tiling = #qf.tiling<matvec, block_n = 2, split_k = 4>}
  %0 = qf.fused_matmul %x, %q {qf.group = 0 : i64} : tensor<1x3072xf16>, !qf.weight<3072x3072, #g> -> tensor<1x3072xf16>
  %1 = qf.fused_matmul %x, %k {qf.group = 0 : i64} : tensor<1x3072xf16>, !qf.weight<1024x3072, #g> -> tensor<1x1024xf16>
  %2 = qf.fused_matmul %x, %v {qf.group = 0 : i64} : tensor<1x3072xf16>, !qf.weight<1024x3072, #g> -> tensor<1x1024xf16>
  %q3 = qf.weight_ref "q3" : !qf.weight<3072x3072, #g>
  %k3 = qf.weight_ref "k3" : !qf.weight<3072x3072, #g>
  %v3 = qf.weight_ref "v3" : !qf.weight<3072x3072, #g>
  // CHECK-COUNT-3: tiling = #qf.tiling<matvec, block_n = 4, k_unroll = 2, split_k = 2>}
  %3 = qf.fused_matmul %y, %q3 {qf.group = 1 : i64} : tensor<1x3072xf16>, !qf.weight<3072x3072, #g> -> tensor<1x3072xf16>
  %4 = qf.fused_matmul %y, %k3 {qf.group = 1 : i64} : tensor<1x3072xf16>, !qf.weight<3072x3072, #g> -> tensor<1x3072xf16>
  %5 = qf.fused_matmul %y, %v3 {qf.group = 1 : i64} : tensor<1x3072xf16>, !qf.weight<3072x3072, #g> -> tensor<1x3072xf16>
  return
}
