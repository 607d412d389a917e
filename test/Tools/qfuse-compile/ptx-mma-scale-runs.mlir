// REQUIRES: ptxas
// RUN: qfuse-compile %s --emit=ptx --chip=sm_90a --batch-sizes=16 -o %t.ptx
// RUN: FileCheck %s < %t.ptx
// RUN: %ptxas -arch=sm_90a %t.ptx -o %t.cubin

// Small groups on the tensor-core kernel: a lane copies its row's scales of
// a step as one run (TensorCorePlan.h, scaleRunBytes) instead of a word
// per group. NVFP4 (e4m3 scales, groups of 16) at block_k = 128: one
// 8-byte cp.async per lane and step, and no 4-byte one for its scales
// (the kernel has no other 4-byte copies: no zeros). int4-g128 has one
// group per step: a word per row, as before. uint4 with groups of 32 at
// block_k = 128: its four f16 scales one 8-byte run, and its four 4-bit
// zeros, which share an aligned word, one 4-byte copy per step
// (zeroWordPerStep) instead of four: no second 4-byte copy before the
// next step's run (the pipeline's prologue issues steps too).

// CHECK-LABEL: .entry qf_mma_0_m16
// CHECK-NOT: .entry
// CHECK: cp.async.ca.shared.global [%{{.*}}], [%{{.*}}], 8;
// CHECK-NOT: cp.async.ca.shared.global [%{{.*}}], [%{{.*}}], 4;
// CHECK-LABEL: .entry qf_mma_1_m16
// CHECK-NOT: cp.async.ca.shared.global [%{{.*}}], [%{{.*}}], 8;
// CHECK: cp.async.ca.shared.global [%{{.*}}], [%{{.*}}], 4;
// CHECK-LABEL: .entry qf_mma_2_m16
// CHECK: cp.async.ca.shared.global [%{{.*}}], [%{{.*}}], 8;
// CHECK: cp.async.ca.shared.global [%{{.*}}], [%{{.*}}], 4;
// CHECK-NOT: cp.async.ca.shared.global [%{{.*}}], [%{{.*}}], 4;
// CHECK: cp.async.ca.shared.global [%{{.*}}], [%{{.*}}], 8;

func.func @nvfp4(%x: tensor<16x2048xf16>) -> tensor<16x8192xf16> {
  %w = qf.weight_ref "w" : !qf.weight<8192x2048, #qf.enc<fp4e2m1, group = 16, scale = f8E4M3FN, global_scale>>
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<mma, block_m = 16, block_n = 64, block_k = 128, split_k = 2, stages = 3>} : tensor<16x2048xf16>, !qf.weight<8192x2048, #qf.enc<fp4e2m1, group = 16, scale = f8E4M3FN, global_scale>> -> tensor<16x8192xf16>
  return %y : tensor<16x8192xf16>
}

func.func @int4(%x: tensor<16x2048xf16>) -> tensor<16x8192xf16> {
  %w = qf.weight_ref "v" : !qf.weight<8192x2048, #qf.enc<int4, group = 128, scale = f16>>
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<mma, block_m = 16, block_n = 64, block_k = 128, split_k = 2, stages = 3>} : tensor<16x2048xf16>, !qf.weight<8192x2048, #qf.enc<int4, group = 128, scale = f16>> -> tensor<16x8192xf16>
  return %y : tensor<16x8192xf16>
}

func.func @uint4g32(%x: tensor<16x2048xf16>) -> tensor<16x8192xf16> {
  %w = qf.weight_ref "u" : !qf.weight<8192x2048, #qf.enc<uint4, group = 32, scale = f16, zero = int>>
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<mma, block_m = 16, block_n = 64, block_k = 128, split_k = 2, stages = 3>} : tensor<16x2048xf16>, !qf.weight<8192x2048, #qf.enc<uint4, group = 32, scale = f16, zero = int>> -> tensor<16x8192xf16>
  return %y : tensor<16x8192xf16>
}
