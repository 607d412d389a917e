// RUN: qfuse-opt %s -split-input-file --qf-choose-layout | FileCheck %s

// A matmul with per-batch tilings reads its weight in two layouts: the
// operand takes the matvec's (tiled 1x32 for int4), and each batch entry
// the layout of its own kernel (the tensor-core fragment order, 32x32).
#int4 = #qf.enc<int4, group = 128, scale = f16>
!w = !qf.weight<4096x4096, #int4>
// CHECK: #tiled_32x32 = #qf.layout<tiled, tile_n = 32, tile_k = 32>
// CHECK-LABEL: @int4_mixed
// CHECK: %[[W:.*]] = qf.weight_ref "q_proj" : !qf.weight<4096x4096, #int4_g128, #tiled_1x32>
// CHECK: qf.fused_matmul %{{.*}}, %[[W]]
// CHECK-SAME: qf.batch_tilings = [#qf.batch_tiling<batch = 16, tiling = #qf.tiling<mma, block_m = 16, block_n = 32, block_k = 64, split_k = 4, stages = 4>, layout = #tiled_32x32>, #qf.batch_tiling<batch = 128, tiling = #qf.tiling<mma, block_m = 64, block_n = 64, block_k = 64, split_k = 2, stages = 3>, layout = #tiled_32x32>]
func.func @int4_mixed(%x: tensor<?x4096xf16>) -> tensor<?x4096xf16> {
  %w = qf.weight_ref "q_proj" : !w
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<matvec, block_n = 4, k_unroll = 4>, qf.batch_tilings = [#qf.batch_tiling<batch = 16, tiling = #qf.tiling<mma, block_m = 16, block_n = 32, block_k = 64, split_k = 4, stages = 4>>, #qf.batch_tiling<batch = 128, tiling = #qf.tiling<mma, block_m = 64, block_n = 64, block_k = 64, split_k = 2, stages = 3>>]} : tensor<?x4096xf16>, !w -> tensor<?x4096xf16>
  return %y : tensor<?x4096xf16>
}

// -----

// nf4 decodes through a table: the matvec keeps row_major, the tensor-core
// batches read the fragment order all the same.
#nf4 = #qf.enc<nf4, group = 64, scale = f32>
!w = !qf.weight<1536x8960, #nf4>
// CHECK-LABEL: @nf4_mixed
// CHECK: %[[W:.*]] = qf.weight_ref "down_proj" : !qf.weight<1536x8960, #nf4_g64>
// CHECK: qf.fused_matmul %{{.*}}, %[[W]]
// CHECK-SAME: qf.batch_tilings = [#qf.batch_tiling<batch = 32, tiling = #qf.tiling<mma, {{.*}}>, layout = #tiled_32x32>]
func.func @nf4_mixed(%x: tensor<?x8960xf16>) -> tensor<?x1536xf16> {
  %w = qf.weight_ref "down_proj" : !w
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<matvec, block_n = 4, split_k = 2>, qf.batch_tilings = [#qf.batch_tiling<batch = 32, tiling = #qf.tiling<mma, block_m = 16, block_n = 32, block_k = 64, split_k = 4, stages = 4>>]} : tensor<?x8960xf16>, !w -> tensor<?x1536xf16>
  return %y : tensor<?x1536xf16>
}

// -----

// A weight that already has a layout keeps it for every batch.
#int4 = #qf.enc<int4, group = 128, scale = f16>
!w = !qf.weight<4096x4096, #int4, #qf.layout<tiled, tile_n = 1, tile_k = 32>>
// CHECK-LABEL: @kept
// CHECK: qf.batch_tilings = [#qf.batch_tiling<batch = 16, tiling = #qf.tiling<mma, {{.*}}>, layout = #tiled_1x32>]
func.func @kept(%x: tensor<?x4096xf16>) -> tensor<?x4096xf16> {
  %w = qf.weight_ref "q_proj" : !w
  %y = qf.fused_matmul %x, %w {tiling = #qf.tiling<matvec, block_n = 4, k_unroll = 4>, qf.batch_tilings = [#qf.batch_tiling<batch = 16, tiling = #qf.tiling<mma, block_m = 16, block_n = 32, block_k = 64, split_k = 4, stages = 4>>]} : tensor<?x4096xf16>, !w -> tensor<?x4096xf16>
  return %y : tensor<?x4096xf16>
}
