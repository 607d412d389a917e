// RUN: qfuse-opt %s -split-input-file --qf-to-gpu="batch-sizes=1,8,16,128" -verify-diagnostics | FileCheck %s

// Per-batch tilings (qf.batch_tilings): batches 1 and 8 run the matvec of
// `tiling` on the operand's layout; 16 and 128 each run the tensor-core
// kernel of their own tiling, and their launches name the layout they read
// (the weight's second copy in the artifact).
#int4 = #qf.enc<int4, group = 128, scale = f16>
#l1 = #qf.layout<tiled, tile_n = 1, tile_k = 32>
#l32 = #qf.layout<tiled, tile_n = 32, tile_k = 32>
!w = !qf.weight<4096x4096, #int4, #l1>
// CHECK: #tiled_32x32 = #qf.layout<tiled, tile_n = 32, tile_k = 32>
// CHECK-LABEL: func.func @mixed
// CHECK: qf.launches = [#qf.launch<batch = 1, {{.*}}kernel = @qf_kernels::@qf_matvec_0_m1, params = ["x", "codes", "scales", "y"]
// CHECK-NOT: layout
// CHECK-SAME: #qf.launch<batch = 8, {{.*}}kernel = @qf_kernels::@qf_matvec_0_m8,
// CHECK-NOT: layout
// CHECK-SAME: #qf.launch<batch = 16, {{.*}}grid = [1, 128, 1], kernel = @qf_kernels::@qf_mma_1_m16, layout = #tiled_32x32, params = ["x", "codes", "scales", "y"]
// CHECK-SAME: #qf.launch<batch = 128, {{.*}}grid = [2, 64, 1], kernel = @qf_kernels::@qf_mma_2_m128, layout = #tiled_32x32,
// CHECK-DAG: llvm.func @qf_matvec_0_m1(
// CHECK-DAG: llvm.func @qf_matvec_0_m8(
// CHECK-DAG: llvm.func @qf_mma_1_m16(
// CHECK-DAG: llvm.func @qf_mma_2_m128(
func.func @mixed(%x: tensor<?x4096xf16>) -> tensor<?x4096xf16> {
  %w = qf.weight_ref "q_proj" : !w
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<matvec, block_n = 4, k_unroll = 4>, qf.batch_tilings = [#qf.batch_tiling<batch = 16, tiling = #qf.tiling<mma, block_m = 16, block_n = 32, block_k = 64, split_k = 4, stages = 4>, layout = #l32>, #qf.batch_tiling<batch = 128, tiling = #qf.tiling<mma, block_m = 64, block_n = 64, block_k = 64, split_k = 2, stages = 3>, layout = #l32>]} : tensor<?x4096xf16>, !w -> tensor<?x4096xf16>
  return %y : tensor<?x4096xf16>
}

// -----

// The tensor-core kernel does not fuse the RMSNorm prologue: a normed op
// cannot take an mma batch tiling.
#int4 = #qf.enc<int4, group = 128, scale = f16>
!w = !qf.weight<14336x4096, #int4, #qf.layout<tiled, tile_n = 1, tile_k = 32>>
func.func @normed(%x: tensor<?x4096xf16>, %n: tensor<4096xf16>) -> tensor<?x14336xf16> {
  %g = qf.weight_ref "gate_proj" : !w
  // expected-error@+1 {{batch 16 has the tensor-core (mma) tiling #qf.tiling<mma, block_m = 16, block_n = 32, block_k = 64, split_k = 4, stages = 4> in qf.batch_tilings, but that kernel does not fuse an RMSNorm prologue}}
  %y = qf.fused_matmul %x, %g norm(%n : tensor<4096xf16>) {norm_eps = 1.0e-05 : f32, tiling = #qf.tiling<matvec, block_n = 8, k_unroll = 4>, qf.batch_tilings = [#qf.batch_tiling<batch = 16, tiling = #qf.tiling<mma, block_m = 16, block_n = 32, block_k = 64, split_k = 4, stages = 4>, layout = #qf.layout<tiled, tile_n = 32, tile_k = 32>>]} : tensor<?x4096xf16>, !w -> tensor<?x14336xf16>
  return %y : tensor<?x14336xf16>
}

// -----

#int4 = #qf.enc<int4, group = 128, scale = f16>
!w = !qf.weight<4096x4096, #int4, #qf.layout<tiled, tile_n = 1, tile_k = 32>>
func.func @malformed(%x: tensor<?x4096xf16>) -> tensor<?x4096xf16> {
  %w = qf.weight_ref "q_proj" : !w
  // expected-error@+1 {{qf.batch_tilings entry {batch = 16 : i64} must be a #qf.batch_tiling<...>}}
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<matvec, block_n = 4, k_unroll = 4>, qf.batch_tilings = [{batch = 16 : i64}]} : tensor<?x4096xf16>, !w -> tensor<?x4096xf16>
  return %y : tensor<?x4096xf16>
}

// -----

#int4 = #qf.enc<int4, group = 128, scale = f16>
!w = !qf.weight<4096x4096, #int4, #qf.layout<tiled, tile_n = 1, tile_k = 32>>
func.func @twice(%x: tensor<?x4096xf16>) -> tensor<?x4096xf16> {
  %w = qf.weight_ref "q_proj" : !w
  // expected-error@+1 {{qf.batch_tilings gives batch 16 twice}}
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<matvec, block_n = 4, k_unroll = 4>, qf.batch_tilings = [#qf.batch_tiling<batch = 16, tiling = #qf.tiling<mma, block_m = 16, block_n = 32, block_k = 64, split_k = 4, stages = 4>>, #qf.batch_tiling<batch = 16, tiling = #qf.tiling<mma, block_m = 16, block_n = 32, block_k = 64, split_k = 4, stages = 4>>]} : tensor<?x4096xf16>, !w -> tensor<?x4096xf16>
  return %y : tensor<?x4096xf16>
}
