// RUN: qfuse-opt %s --qf-select-tiling="chip=sm_90a" | FileCheck %s
// RUN: qfuse-opt %s --qf-select-tiling="chip=sm_90" | FileCheck %s --check-prefix=SM90
// RUN: qfuse-opt %s --qf-select-tiling="chip=sm_90a wgmma-min-rows=4096" | FileCheck %s --check-prefix=ROWS4096

// On sm_90a the cost model takes the wgmma kernel where it was measured
// faster than mma.sync (bench/results/2026-12-01-h200-wgmma,
// 2026-12-04-h200-s26): from M = 128 on weights of 2048 rows and more
// (wgmma-min-rows), from M = 512 on smaller ones. A block
// is one warpgroup per k group; block_m = 128 where its blocks number 64
// or more (bench/results/2026-12-05-h100-s34), else 64; K cut across a cluster when the blocks fill at most half
// the SMs, then into k groups, for about two warpgroups per SM. silu_mul
// (gated) takes a warpgroup each for gate and up and no cluster, from
// M = 64 on gate weights of 32M elements and more: block_m 64 in two k
// groups below M = 128 (bench/results/2026-12-03-h200-s22), from 128 one k
// group, fed by a producer warpgroup (bench/results/2026-12-04-h200-s27),
// mma.sync below 64 and on smaller weights; sm_90 has no wgmma.
#int4 = #qf.enc<int4, group = 128, scale = f16>
// CHECK-LABEL: @prefill
// SM90-LABEL: @prefill
// SM90-NOT: wgmma
func.func @prefill(%x32: tensor<32x4096xf16>, %x64: tensor<64x4096xf16>, %x128: tensor<128x4096xf16>, %x512: tensor<512x4096xf16>) {
  %q = qf.weight_ref "q" : !qf.weight<4096x4096, #int4>
  %k = qf.weight_ref "k" : !qf.weight<1024x4096, #int4>
  %g = qf.weight_ref "g" : !qf.weight<14336x4096, #int4>
  %u = qf.weight_ref "u" : !qf.weight<14336x4096, #int4>
  // CHECK: tiling = #qf.tiling<mma, block_m = 64,
  %0 = qf.fused_matmul %x64, %q : tensor<64x4096xf16>, !qf.weight<4096x4096, #int4> -> tensor<64x4096xf16>
  // CHECK: tiling = #qf.tiling<wgmma, block_m = 64, block_n = 128, block_k = 64, split_k = 2, stages = 4, cluster_k = 2>
  %1 = qf.fused_matmul %x128, %q : tensor<128x4096xf16>, !qf.weight<4096x4096, #int4> -> tensor<128x4096xf16>
  // CHECK: tiling = #qf.tiling<mma, block_m = 64,
  %2 = qf.fused_matmul %x128, %k : tensor<128x4096xf16>, !qf.weight<1024x4096, #int4> -> tensor<128x1024xf16>
  // CHECK: tiling = #qf.tiling<wgmma, block_m = 64, block_n = 128, block_k = 64, split_k = 2, stages = 4, cluster_k = 2>
  %3 = qf.fused_matmul %x512, %k : tensor<512x4096xf16>, !qf.weight<1024x4096, #int4> -> tensor<512x1024xf16>
  // CHECK: tiling = #qf.tiling<wgmma, block_m = 128, block_n = 128, block_k = 64, stages = 4>
  %4 = qf.fused_matmul %x512, %g : tensor<512x4096xf16>, !qf.weight<14336x4096, #int4> -> tensor<512x14336xf16>
  // CHECK: tiling = #qf.tiling<wgmma, block_m = 128, block_n = 128, block_k = 64, stages = 4>
  %5 = qf.fused_matmul %x512, %g up(%u : !qf.weight<14336x4096, #int4>) {activation = #qf<activation silu_mul>} : tensor<512x4096xf16>, !qf.weight<14336x4096, #int4> -> tensor<512x14336xf16>
  // CHECK: tiling = #qf.tiling<wgmma, block_m = 64, block_n = 128, block_k = 64, split_k = 2, stages = 4>
  %6 = qf.fused_matmul %x64, %g up(%u : !qf.weight<14336x4096, #int4>) {activation = #qf<activation silu_mul>} : tensor<64x4096xf16>, !qf.weight<14336x4096, #int4> -> tensor<64x14336xf16>
  // CHECK: tiling = #qf.tiling<wgmma, block_m = 128, block_n = 128, block_k = 64, stages = 4>
  %9 = qf.fused_matmul %x128, %g up(%u : !qf.weight<14336x4096, #int4>) {activation = #qf<activation silu_mul>} : tensor<128x4096xf16>, !qf.weight<14336x4096, #int4> -> tensor<128x14336xf16>
  // CHECK: tiling = #qf.tiling<mma,
  %7 = qf.fused_matmul %x32, %g up(%u : !qf.weight<14336x4096, #int4>) {activation = #qf<activation silu_mul>} : tensor<32x4096xf16>, !qf.weight<14336x4096, #int4> -> tensor<32x14336xf16>
  // CHECK: tiling = #qf.tiling<mma,
  %8 = qf.fused_matmul %x128, %k up(%k : !qf.weight<1024x4096, #int4>) {activation = #qf<activation silu_mul>} : tensor<128x4096xf16>, !qf.weight<1024x4096, #int4> -> tensor<128x1024xf16>
  return
}

// The row bound: 3584 rows take wgmma from M = 128, 1536 keep mma.sync to
// M = 511; wgmma-min-rows=4096 is the rule before the Qwen2.5 shapes.
// CHECK-LABEL: @rows
// ROWS4096-LABEL: @rows
func.func @rows(%x128: tensor<128x3584xf16>, %x256: tensor<256x3584xf16>, %y256: tensor<256x1536xf16>) {
  %q = qf.weight_ref "q" : !qf.weight<3584x3584, #int4>
  %s = qf.weight_ref "s" : !qf.weight<1536x1536, #int4>
  // CHECK: tiling = #qf.tiling<wgmma, block_m = 64, block_n = 128, block_k = 64, split_k = 2, stages = 4, cluster_k = 2>
  // ROWS4096: tiling = #qf.tiling<mma,
  %0 = qf.fused_matmul %x128, %q : tensor<128x3584xf16>, !qf.weight<3584x3584, #int4> -> tensor<128x3584xf16>
  // CHECK: tiling = #qf.tiling<wgmma, block_m = 64, block_n = 128, block_k = 64, split_k = 2, stages = 4>
  // ROWS4096: tiling = #qf.tiling<mma,
  %1 = qf.fused_matmul %x256, %q : tensor<256x3584xf16>, !qf.weight<3584x3584, #int4> -> tensor<256x3584xf16>
  // CHECK: tiling = #qf.tiling<mma,
  // ROWS4096: tiling = #qf.tiling<mma,
  %2 = qf.fused_matmul %y256, %s : tensor<256x1536xf16>, !qf.weight<1536x1536, #int4> -> tensor<256x1536xf16>
  return
}

// block_m 128 from 64 blocks of 128 x 128: 4096 rows from M = 256, 3584
// rows from 384 (block_m 64 decoded the weight twice as often: 4096x14336
// at M = 384 took 1.39x the time).
// CHECK-LABEL: @block_m
func.func @block_m(%x256: tensor<256x4096xf16>, %x384: tensor<384x3584xf16>) {
  %q = qf.weight_ref "q" : !qf.weight<4096x4096, #int4>
  %r = qf.weight_ref "r" : !qf.weight<3584x3584, #int4>
  // CHECK: tiling = #qf.tiling<wgmma, block_m = 128, block_n = 128, block_k = 64, split_k = 2, stages = 4, cluster_k = 2>
  %0 = qf.fused_matmul %x256, %q : tensor<256x4096xf16>, !qf.weight<4096x4096, #int4> -> tensor<256x4096xf16>
  // CHECK: tiling = #qf.tiling<wgmma, block_m = 128, block_n = 128, block_k = 64, split_k = 2, stages = 4>
  %1 = qf.fused_matmul %x384, %r : tensor<384x3584xf16>, !qf.weight<3584x3584, #int4> -> tensor<384x3584xf16>
  return
}
